"""Native start-up: a native run with and without the launch kit's compile cache.

Run from the repository root with a DSH checkout: `PARITY_DSH_RC8=<checkout> PARITY_NODE=<node>
python -m bench.bench_native [--rounds N]`. Without DSH it says so and exits 0 (`make
bench` on a machine without it).

Each round runs `baseline/handshake` (spawn, `initialize`, shutdown: the run is the
start-up) on `native-rc8` (the checkout, whose TypeScript the cache is for) twice,
in alternating order: once with `PARITY_NATIVE_CACHE=off`
(every run transforms DSH's TypeScript anew, as before the cache) and once with a cache
directory of the bench's own, warmed by one uncounted run (`parity.targets.native_cache`).
It prints the medians, their ratio and the median of the per-round ratios, and the cold
run that filled the cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from parity.config.project import load_config
from parity.engine.runner import Runner
from parity.scenario.load import load_scenario

SCENARIO = "baseline/handshake"


def timed(runner: Runner, cache: str) -> float:
    """One native run of the scenario, with `PARITY_NATIVE_CACHE` set to `cache`."""
    config = runner.config
    scenario = load_scenario(config.scenarios_dir / f"{SCENARIO}.yaml")
    os.environ["PARITY_NATIVE_CACHE"] = cache
    start = time.monotonic()
    transcript, _ = runner.run_once(scenario, "native-rc8")
    elapsed = time.monotonic() - start
    if transcript.problems:
        raise SystemExit(f"bench_native: the run had problems: {transcript.problems}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    config = load_config(Path.cwd())
    with Runner(config) as runner, tempfile.TemporaryDirectory(prefix="bench-native-") as d:
        why = runner.unavailable("native-rc8")
        if why is not None:
            print(f"bench_native: native cannot run here ({why}); nothing measured")
            return 0
        cache = str(Path(d) / "cache")
        cold = timed(runner, cache)  # fills the bench's own cache
        timed(runner, "off")  # the same warm-up for the other side (the OS's file cache)
        on: list[float] = []
        off: list[float] = []
        for i in range(args.rounds):
            order = [(on, cache), (off, "off")]
            for side, value in order if i % 2 == 0 else reversed(order):
                side.append(timed(runner, value))
    ratios = [a / b for a, b in zip(on, off, strict=True)]
    print(f"native {SCENARIO}, {args.rounds} rounds, alternating (wall seconds a run)")
    print(f"  no cache (as before)  median {statistics.median(off):.3f} s  min {min(off):.3f}")
    print(f"  compile cache, warm   median {statistics.median(on):.3f} s  min {min(on):.3f}")
    print(f"  cold run filling the cache: {cold:.3f} s")
    print(
        f"  ratio of medians {statistics.median(on) / statistics.median(off):.2f}x; "
        f"median of per-round ratios {statistics.median(ratios):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
