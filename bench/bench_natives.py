"""Two natives and acp-plus, side by side: what one run costs on each.

Run from the repository root: `python -m bench.bench_natives [--rounds N]`. `native` is
DSH 0.2.1-rc.2 from the registry wheel in .venv (one executable); `native-rc8` runs only
where `PARITY_DSH_RC8` names a 0.1.0-rc.8 checkout (TypeScript from source through tsx,
with the launch kit's compile cache warm); `plus` is acp-plus. A target that cannot run
here is named and left out.

Each round runs, for every target in an order rotated per round, `baseline/handshake`
(spawn, `initialize`, `session/new`, shutdown: the run is the start-up),
`baseline/text-exchange` (one text turn) and `tools/bash-exit-stderr` (six `bash` calls,
in each agent's own sandbox). It prints each target's median seconds per
scenario and the ratio of each native's median to plus's, the goal being at most 2x.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from parity.config.project import load_config
from parity.engine.runner import Runner
from parity.scenario.load import load_scenario

SCENARIOS = ("baseline/handshake", "baseline/text-exchange", "tools/bash-exit-stderr")
BASH = "tools/bash-exit-stderr"
"""Six built-in `bash` calls, each its own model turn: its median less text-exchange's,
over the calls, is what one `bash` call costs on each target (issue 31)."""
TARGETS = ("plus", "native", "native-rc8")


def timed(runner: Runner, scenario: str, target: str) -> float:
    """Seconds of one run of `scenario` on `target`, from spawn to the agent's exit."""
    loaded = load_scenario(runner.config.scenarios_dir / f"{scenario}.yaml")
    start = time.monotonic()
    transcript, _ = runner.run_once(loaded, target)
    elapsed = time.monotonic() - start
    if transcript.problems:
        raise SystemExit(
            f"bench_natives: {scenario} on {target} had problems: {transcript.problems}"
        )
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    config = load_config(Path.cwd())
    with Runner(config) as runner:
        targets = []
        for target in TARGETS:
            why = runner.unavailable(target)
            if why is None:
                targets.append(target)
            else:
                print(f"bench_natives: {target} left out ({why})")
        if "plus" not in targets:
            print("bench_natives: plus cannot run here; nothing measured")
            return 0
        for target in targets:  # one uncounted run each: the OS's file cache, tsx's cache
            for scenario in SCENARIOS:
                timed(runner, scenario, target)
        times: dict[tuple[str, str], list[float]] = {}
        for i in range(args.rounds):
            order = targets[i % len(targets) :] + targets[: i % len(targets)]
            for target in order:
                for scenario in SCENARIOS:
                    times.setdefault((scenario, target), []).append(timed(runner, scenario, target))
    print(f"{args.rounds} rounds, medians in seconds (ratio to plus):")
    for scenario in SCENARIOS:
        base = statistics.median(times[(scenario, "plus")])
        cells = []
        for target in targets:
            median = statistics.median(times[(scenario, target)])
            cells.append(
                f"{target} {median:.2f}" + ("" if target == "plus" else f" ({median / base:.2f}x)")
            )
        print(f"  {scenario:24} " + ", ".join(cells))
    calls = bash_calls(config.scenarios_dir / f"{BASH}.yaml")
    per_call = {
        target: (
            statistics.median(times[(BASH, target)])
            - statistics.median(times[("baseline/text-exchange", target)])
        )
        / calls
        for target in targets
    }
    cells = [
        f"{target} {1000 * cost:.0f} ms"
        + ("" if target == "plus" else f" ({cost / per_call['plus']:.2f}x)")
        for target, cost in per_call.items()
    ]
    print(f"  one bash call (of {calls})     " + ", ".join(cells))
    return 0


def bash_calls(path: Path) -> int:
    """How many built-in `bash` calls the scenario's model makes."""
    loaded = load_scenario(path)
    return sum(
        1
        for entry in loaded.llm
        for call in entry.params.get("tool_calls") or []
        if isinstance(call, dict) and call.get("name") == "bash" and call.get("builtin")
    )


if __name__ == "__main__":
    raise SystemExit(main())
