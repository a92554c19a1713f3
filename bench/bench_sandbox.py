"""What the OS sandbox costs a `bash` call: a trivial command under each backend and outside.

    python -m bench.bench_sandbox [--rounds N] [--command CMD]

Each round runs the same command through acp-plus's `BashTool.run` once per side, back
to back, the order rotated every round so drift hits all sides alike:
- `bwrap`: the standing `workspace-write` mode with bubblewrap (namespaces, mounts);
- `landlock`: the same mode with the Landlock helper (`landlock_exec.py`: a second
  Python start, the ruleset, a private `TMPDIR` made and removed);
- `none`: `danger-full-access` (the supervisor alone, no sandbox).
`ACP_PLUS_SANDBOX_BACKEND` picks the backend per call. All sides go through the same
supervisor, scrubbed environment and output handling, so the differences are the
backends. A side this host cannot run (no bubblewrap, no Landlock) is left out. Ratios
are taken round by round against `none` and their medians reported, with the medians
of each side. One-time costs (the backend probes) are paid in an uncounted warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools.backend import SWITCH, find_backend
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.job_table import JobTable

SIDES = ("bwrap", "landlock", "none")


async def _once(tool: BashTool, workspace: Path, side: str, command: str) -> float:
    mode: SandboxMode = "danger-full-access" if side == "none" else "workspace-write"
    if side != "none":
        os.environ[SWITCH] = side
    ctx = ToolContext("bench", workspace, "call", 1, mode)
    started = time.perf_counter()
    result = await tool.run({"description": "Benchmark command", "command": command}, ctx)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{side}: {result.content[0]['text']}")
    return elapsed


def usable_sides() -> list[str]:
    """The sides this host can run."""
    sides = []
    for side in SIDES[:-1]:
        os.environ[SWITCH] = side
        if find_backend() is not None:
            sides.append(side)
    return [*sides, "none"]


async def measure(rounds: int, command: str, sides: list[str]) -> dict[str, list[float]]:
    """Seconds per call of each side, and per-round ratios `<side>/none`."""
    tool = BashTool(JobTable())
    times: dict[str, list[float]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for side in sides:  # warm-up, not counted
            await _once(tool, workspace, side, command)
        for index in range(rounds):
            shift = index % len(sides)
            for side in sides[shift:] + sides[:shift]:
                times[side].append(await _once(tool, workspace, side, command))
    for side in sides[:-1]:
        times[f"{side}/none"] = [a / b for a, b in zip(times[side], times["none"], strict=True)]
    return times


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    saved = os.environ.get(SWITCH)
    try:
        sides = usable_sides()
        if len(sides) == 1:
            print("no usable sandbox backend: nothing to compare", file=sys.stderr)
            return 1
        figures = asyncio.run(measure(args.rounds, args.command, sides))
    finally:
        if saved is None:
            os.environ.pop(SWITCH, None)
        else:
            os.environ[SWITCH] = saved
    print(f"bash call `{args.command}`, {args.rounds} rotated rounds (medians, p90):")
    for side in sides:
        values = figures[side]
        median, p90 = statistics.median(values) * 1000, _p90(values) * 1000
        print(f"  {side:<9} {median:7.1f} ms   p90 {p90:7.1f} ms")
    base = statistics.median(figures["none"])
    for side in sides[:-1]:
        ratio = statistics.median(figures[f"{side}/none"])
        extra = statistics.median(figures[side]) - base
        print(f"  {side}/none {ratio:6.2f}x   (+{extra * 1000:.1f} ms a call)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
