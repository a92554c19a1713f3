"""The cost of the project's known differences in the parity diff.

Run: `python -m bench.bench_known [--rounds N]`. For every shipped scenario whose
reference and compared targets both have a recorded snapshot, `compare` the two
recorded views as a parity item does, once without and once with the project's known
differences (selection, version ranges and the pinned sides of every entry that
applies), alternating in each round so both see the same machine. Prints the median
per round of each, and their ratio. Pure CPU, no agent runs: it measures the harness's
own work after the runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from parity.checks.diff import compare
from parity.config.project import load_config
from parity.engine.store import read_view
from parity.scenario.known import load_known
from parity.scenario.load import discover, load_scenario
from parity.scenario.model import Rule, Scenario

Pair = tuple[Scenario, str, str, dict[str, Any], dict[str, Any]]


def pairs() -> list[Pair]:
    """(scenario, reference, other, reference view, other view) for every recorded pair."""
    config = load_config()
    out: list[Pair] = []
    for path in discover(config.scenarios_dir):
        scenario = load_scenario(path, config.scenarios_dir)
        if scenario.compare == "none":
            continue
        views = {}
        for target in scenario.targets:
            view = read_view(config.snapshots_dir, scenario.name, target)
            if view is not None:
                views[target] = view
        ref = scenario.targets[0]
        for other in scenario.targets[1:]:
            if ref in views and other in views:
                out.append((scenario, ref, other, views[ref], views[other]))
    return out


def one_round(all_pairs: list[Pair], known: list[Rule]) -> float:
    start = time.perf_counter()
    for scenario, ref, other, ref_view, other_view in all_pairs:
        compare(
            ref_view,
            other_view,
            profile=scenario.profile,
            diverge=scenario.diverge,
            ref_name=ref,
            other_name=other,
            scenario=scenario.name,
            known=known,
        )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    config = load_config()
    known = load_known(config.known_differences, config.targets)
    all_pairs = pairs()
    without: list[float] = []
    with_known: list[float] = []
    for _ in range(args.rounds):
        without.append(one_round(all_pairs, []))
        with_known.append(one_round(all_pairs, known))
    a, b = statistics.median(without), statistics.median(with_known)
    print(f"{len(all_pairs)} recorded pairs, {len(known)} known differences, {args.rounds} rounds")
    print(f"parity diff of every pair, without known differences: median {a * 1000:.1f} ms")
    print(f"parity diff of every pair, with known differences:    median {b * 1000:.1f} ms")
    print(f"ratio with/without: {b / a:.2f}x; per pair: +{(b - a) / len(all_pairs) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
