"""The whole parity suite serial, on every core (`-n auto`), and as 3 shards, side by side.

    python -m bench.bench_shards [--rounds N] [--shards 3]   (figures: docs/performance.md)

On a temporary copy of the project (`bench.bench_suite.copy_project`: scenarios,
snapshots, parity.toml, the installed peers), every available target, as `make parity`
runs it. Each round runs, in an order rotated round by round: `parity run` serially,
`parity run -n auto`, and each of the shards `parity run --shard K/N` one after another
(what N CI machines would run at once: the slowest shard is the sharded wall time),
then `parity merge` of them. The shards balance by the durations the first serial run
stored (`--store-durations`), as the committed parity-durations.json would. Prints each
wall time's median and the ratios to serial.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_suite import copy_project


def timed(project: Path, *args: str) -> float:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "parity.cli", *args],
        cwd=project,
        env={k: v for k, v in os.environ.items() if k not in ("PARITY_DSH", "PARITY_NODE")},
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"bench_shards: parity {' '.join(args)}: {done.stdout[-2000:]}")
    print(f"  parity {' '.join(args)}: {elapsed:.1f} s", flush=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--shards", type=int, default=3)
    args = parser.parse_args()
    n = args.shards
    serial: list[float] = []
    auto: list[float] = []
    slowest: list[float] = []
    total: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as d:
        project = copy_project(Path(d))
        # The durations the split balances by, from a serial run (not counted).
        timed(project, "run", "-q", "--store-durations")

        def shards() -> None:
            walls = [
                timed(project, "run", "-q", "--shard", f"{k}/{n}", "--out", f"s{k}")
                for k in range(1, n + 1)
            ]
            timed(project, "merge", *(f"s{k}" for k in range(1, n + 1)))
            slowest.append(max(walls))
            total.append(sum(walls))

        sides = [
            lambda: serial.append(timed(project, "run", "-q")),
            lambda: auto.append(timed(project, "run", "-q", "-n", "auto")),
            shards,
        ]
        for i in range(args.rounds):
            for side in sides[i % 3 :] + sides[: i % 3]:
                side()
    med = statistics.median
    print(f"whole suite, {args.rounds} round(s), {os.cpu_count()} cores")
    print(f"  serial               {med(serial):7.1f} s")
    print(f"  -n auto              {med(auto):7.1f} s  ({med(auto) / med(serial):.2f}x serial)")
    print(
        f"  {n} shards, slowest   {med(slowest):7.1f} s  ({med(slowest) / med(serial):.2f}x "
        f"serial; all {n} one after another {med(total):.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
