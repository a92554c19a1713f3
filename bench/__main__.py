"""`python -m bench` (`make bench`): run every benchmark in turn, each in its own process.

Each module prints its own medians and goals; see docs/performance.md for the figures
and how to read them. A benchmark that fails to run makes the whole command fail.
"""

from __future__ import annotations

import subprocess
import sys

MODULES = (
    "bench.bench_fakellm",
    "bench.bench_driver",
    "bench.bench_plus",
    "bench.bench_suite",
    "bench.bench_known",
    "bench.bench_sandbox",
    "bench.bench_explore",
    "bench.bench_explore_storage",
    "bench.bench_native",
    "bench.bench_natives",
    "bench.bench_shards",
    "bench.bench_flood",
)


def main() -> int:
    failed = []
    for module in MODULES:
        print(f"\n== {module}", flush=True)
        if subprocess.call([sys.executable, "-m", module]) != 0:
            failed.append(module)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
