"""`parity explore` where Hypothesis starts without its caches, against the user cache.

Run from the repository root: `python -m bench.bench_explore_storage [--rounds N]`.

Hypothesis computes its Unicode character map once per storage folder. Before
`parity.explore.hypothesis_env`, that folder was `.hypothesis/` in the current
directory, so every new project paid for it; now it is `$XDG_CACHE_HOME/acp-parity/
hypothesis`, once per machine. Each round runs the same short seeded exploration
(`plus,plus-full --additive --seed 2 --max-runs 2 --no-database`, a `parity explore`
process: seed 2 draws text of a codec's characters within those runs, which needs the
map, and not every seed does that early) twice, in alternating order: once with
`HYPOTHESIS_STORAGE_DIRECTORY` naming a new empty folder (what a new project paid
before), once with the user cache (warmed by one uncounted run). It prints the medians
of CPU (the process and its children) and wall time, their ratios and the median of the
per-round CPU ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMAND = [
    sys.executable, "-m", "parity.cli", "explore", "--targets", "plus,plus-full",
    "--additive", "--seed", "2", "--max-runs", "2", "--no-database", "--budget", "120",
]  # fmt: skip


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(storage: str | None) -> tuple[float, float]:
    """(CPU, wall) seconds of one exploration; `storage` names Hypothesis's folder."""
    env = dict(os.environ)
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    if storage is not None:
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = storage
    with tempfile.TemporaryDirectory() as out:
        cpu, start = _children_cpu(), time.monotonic()
        done = subprocess.run(
            [*COMMAND, "-o", out], env=env, capture_output=True, text=True, check=False
        )
        wall, cpu = time.monotonic() - start, _children_cpu() - cpu
    if done.returncode not in (0, 1):  # 1: a finding, still a full run
        raise SystemExit(f"parity explore failed:\n{done.stderr[-2000:]}")
    return cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_explore_storage")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    timed(None)  # warm the user cache: its one computation is not what is measured
    fresh: list[tuple[float, float]] = []
    cached: list[tuple[float, float]] = []
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory() as empty:
            order = [("fresh", empty), ("cached", None)]
            for name, storage in order if n % 2 == 0 else order[::-1]:
                (fresh if name == "fresh" else cached).append(timed(storage))
    cpu_f, cpu_c = (statistics.median(c for c, _ in runs) for runs in (fresh, cached))
    wall_f, wall_c = (statistics.median(w for _, w in runs) for runs in (fresh, cached))
    per_round = statistics.median(c / f for (f, _), (c, _) in zip(fresh, cached, strict=True))
    print(f"{'':<28} {'CPU s':>8} {'wall s':>8}")
    print(f"{'new storage folder (before)':<28} {cpu_f:>8.2f} {wall_f:>8.2f}")
    print(f"{'user cache (now)':<28} {cpu_c:>8.2f} {wall_c:>8.2f}")
    print(
        f"ratio now/before: CPU {cpu_c / cpu_f:.2f}x, wall {wall_c / wall_f:.2f}x; "
        f"median of per-round CPU ratios {per_round:.2f}x ({args.rounds} rounds)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
