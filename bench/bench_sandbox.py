"""What the OS sandbox costs a `bash` call: a trivial command inside and outside it.

    python -m bench.bench_sandbox [--rounds N] [--command CMD]

Each round runs the same command through acp-plus's `BashTool.run` twice, back to back
and in alternating order, so drift hits both alike:
- `sandboxed`: the standing `workspace-write` mode (bubblewrap, the supervisor);
- `unsandboxed`: `danger-full-access` (the supervisor alone, no bubblewrap).
Both go through the same supervisor, scrubbed environment and output handling, so the
difference is bubblewrap (namespaces, mounts) and its teardown. The ratio is taken pair
by pair and its median reported, with the medians of both sides. One-time costs (the
backend probe) are paid in a warm-up round that is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools.backend import find_backend
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.bash import BashTool


async def _once(tool: BashTool, workspace: Path, mode: SandboxMode, command: str) -> float:
    ctx = ToolContext("bench", workspace, "call", 1, mode)
    started = time.perf_counter()
    result = await tool.run({"command": command}, ctx)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{mode}: {result.content[0]['text']}")
    return elapsed


async def measure(rounds: int, command: str) -> dict[str, list[float]]:
    """Seconds per call of each side, and the per-pair ratio sandboxed / unsandboxed."""
    tool = BashTool()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for mode in ("workspace-write", "danger-full-access"):  # warm-up, not counted
            await _once(tool, workspace, mode, command)
        inside: list[float] = []
        outside: list[float] = []
        for index in range(rounds):
            first_inside = index % 2 == 0
            for sandboxed in (first_inside, not first_inside):
                mode: SandboxMode = "workspace-write" if sandboxed else "danger-full-access"
                (inside if sandboxed else outside).append(
                    await _once(tool, workspace, mode, command)
                )
    ratios = [a / b for a, b in zip(inside, outside, strict=True)]
    return {"sandboxed": inside, "unsandboxed": outside, "ratio": ratios}


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    backend = find_backend()
    if backend is None:
        print("no usable bubblewrap on PATH: nothing to compare", file=sys.stderr)
        return 1
    print(f"bubblewrap: {backend.executable} (user namespace: {backend.userns})")
    figures = asyncio.run(measure(args.rounds, args.command))
    print(f"bash call `{args.command}`, {args.rounds} interleaved pairs (medians, p90):")
    for side in ("sandboxed", "unsandboxed"):
        values = figures[side]
        median, p90 = statistics.median(values) * 1000, _p90(values) * 1000
        print(f"  {side:<12} {median:7.1f} ms   p90 {p90:7.1f} ms")
    ratio = statistics.median(figures["ratio"])
    extra = statistics.median(figures["sandboxed"]) - statistics.median(figures["unsandboxed"])
    print(f"  ratio        {ratio:7.2f}x   (+{extra * 1000:.1f} ms a call)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
