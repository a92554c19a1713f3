"""`parity explore` throughput: examples per minute per target pair, and the share of
time in the agents (their runs: processes, driver, fake LLM) versus the engine
(generation, validation, normalization, the diff, Hypothesis).

Run: `python -m bench.bench_explore [--budget SECONDS] [--pairs plus,plus-full ...]`.
Each pair is explored for the budget with a fixed seed and no database; findings are
counted, not written. A pair whose target cannot run here is skipped and said so.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from parity.checks.acp_schema import def_names
from parity.config.project import load_config
from parity.engine.runner import Runner
from parity.explore.engine import Explorer, Options

PAIRS = ("plus,plus-full", "plus,plus-openai")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_explore")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--pairs", nargs="*", default=list(PAIRS))
    args = parser.parse_args()
    config = load_config()
    known = config.known_rules(def_names())
    print(f"{'pair':<22} {'examples':>8} {'per min':>8} {'agents':>7} {'engine':>7} findings")
    for pair in args.pairs:
        a, b = pair.split(",")
        with Runner(config) as runner, tempfile.TemporaryDirectory() as out:
            why = runner.unavailable(a) or runner.unavailable(b)
            if why is not None:
                print(f"{pair:<22} skipped: {why}")
                continue
            options = Options((a, b), Path(out), budget=args.budget, max_examples=10_000,
                              seed=1, additive=b == "plus-full")  # fmt: skip
            explorer = Explorer(config, options, runner, known)
            findings = explorer.explore()
        p = explorer.progress
        share = p.agent_seconds / p.elapsed if p.elapsed else 0.0
        print(
            f"{pair:<22} {p.ran:>8} {60 * p.ran / p.elapsed:>8.1f} {share:>7.0%} "
            f"{1 - share:>7.0%} {len(findings)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
