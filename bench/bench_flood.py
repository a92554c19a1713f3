"""A hostile flood judged in seconds: 200,000 `session/update`s during one prompt, end to
end, as `parity run` judges a target.

Run: `python -m bench.bench_flood [--updates N] [--compare exact|semantic]`; with
`--against CHECKOUT [--rounds N]`, this bench runs in that checkout (another revision)
and in this one, alternating, and prints each stage's medians side by side. The fixture
agent `tests/fixtures/agents/update_flood.py` answers one prompt after N
agent_message_chunk updates (each its own text). Timed, in turn, through the harness's
own paths: the run through the driver (every frame recorded up to the frame limit, the
answer past it still); the checks after it (`parity.engine.postrun.check_run`: the view
in the scenario's profile, its snapshot YAML, the conformance check, one validation per
shape, `parity.checks.shapes`; it took 280 s validating frame by frame), within their
allowance; then the judgement (`parity.engine.judge.judge_run`, inside the same
`deadline` as `parity run`'s, the garbage collector paused) three ways: no snapshot yet
(the failure text with the whole view), a snapshot it matches, and one it drifted from
(the categorized diff and the text diff). Prints each stage's seconds, the total, and
the allowance the checks had."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from parity.checks.acp_schema import load_schema
from parity.checks.conformance import SchemaIndex, findings
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.engine.judge import Policy, Shown, judge_run
from parity.engine.postrun import allowance, check_run, deadline, judge_allowance
from parity.engine.runner import RunResult
from parity.scenario.model import Scenario, Step, Where
from parity.targets.launch import Launch
from parity.view.dump import dump_view

AGENT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agents" / "update_flood.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--compare", choices=("exact", "semantic"), default="exact")
    parser.add_argument(
        "--against",
        type=Path,
        help="a checkout of another revision: run this bench there and here, alternating"
        " (--rounds each), and print each stage's median CPU seconds side by side",
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.against is not None:
        return side_by_side(args.against, args.rounds, [f"--updates={args.updates}"])
    steps = [
        Step("initialize", {}, Where("bench.yaml", 1)),
        Step("new_session", {"as": "s1"}, Where("bench.yaml", 2)),
        Step("prompt", {"session": "s1", "text": "go"}, Where("bench.yaml", 3)),
    ]
    scenario = Scenario(
        name="bench/flood",
        path=Path("bench.yaml"),
        description="",
        steps=steps,
        compare=args.compare,
        timeouts={"response": 600, "run": 900},
    )

    def launch(paths: RunPaths) -> Launch:
        return Launch([sys.executable, str(AGENT)], {"FLOOD": str(args.updates)})

    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    """The harness's own CPU seconds per stage: on a loaded machine wall time is mostly
    waiting for a core."""
    start, used = time.perf_counter(), time.process_time()
    t = asyncio.run(
        run_scenario(
            scenario, launch, llm_run=None, run_id="flood", target="flood", ladder=Ladder()
        )
    )
    times["run (driver)"] = time.perf_counter() - start
    cpu["run (driver)"] = time.process_time() - used
    seconds = allowance(t)
    mark, used = time.perf_counter(), time.process_time()
    checked = check_run(scenario, t)
    times[f"checks ({args.compare} view, conformance)"] = time.perf_counter() - mark
    cpu[f"checks ({args.compare} view, conformance)"] = time.process_time() - used
    result = RunResult(
        scenario.name, "flood", checked.view, t, checked.findings, checked.seconds, checked.text
    )
    shown = Shown("snapshots/bench/flood/flood.yaml", "bench.yaml")
    text = checked.text or dump_view(checked.view)
    drifted = text.replace("t7 ", "t7, changed ", 1)
    verdicts = {}
    for name, recorded in (("no snapshot", None), ("matches", text), ("drifted", drifted)):
        mark, used = time.perf_counter(), time.process_time()
        # As `parity run` judges (`parity.suite.target_item`): within what is left of
        # the allowance, the collector paused.
        with deadline(judge_allowance(t, checked.seconds)):
            verdicts[name] = judge_run(scenario, "flood", result, recorded, Policy(), shown)
        times[f"judgement, {name}"] = time.perf_counter() - mark
        cpu[f"judgement, {name}"] = time.process_time() - used
    index = SchemaIndex(load_schema())
    findings(t, {}, schema=index)  # untimed: how many validations the shapes saved
    answered = t.steps[2].response is not None and t.steps[2].problem is None
    print(f"flood of {args.updates} updates: {len(t.frames)} frames recorded")
    found = len(checked.findings)
    print(f"  prompt answered: {answered}; problems: {len(t.problems)}; findings: {found}")
    print(f"  schema validations: {index.validated} (one per shape)")
    updates = checked.view["steps"][2].get("updates", []) if checked.view["steps"] else []
    print(f"  {args.compare} view entries under the prompt: {len(updates)}")
    # Every verdict fails for the frame limit the flood reached (the first problem).
    print(f"  verdicts: {', '.join(f'{k} {v.status}' for k, v in verdicts.items())}")
    print(f"  first problem: {t.problems[0] if t.problems else None}")
    print(f"  {'stage':<36} {'wall':>9} {'CPU':>9}")
    for stage, took in times.items():
        print(f"  {stage:<36} {took:7.2f} s {cpu[stage]:7.2f} s")
    # End to end, as `parity run` judges one target: the run, its checks, the slowest
    # judgement; the checks and the judgement share the allowance.
    slowest = max((k for k in times if k.startswith("judgement")), key=times.__getitem__)
    checks = checked.seconds + times[slowest]
    checks_cpu = sum(v for k, v in cpu.items() if k.startswith("checks")) + cpu[slowest]
    print(
        f"  {'checks + slowest judgement':<36} {checks:7.2f} s {checks_cpu:7.2f} s"
        f" (allowance {seconds:.0f} s)"
    )
    run_cpu = cpu["run (driver)"]
    print(
        f"  {'end to end':<36} {times['run (driver)'] + checks:7.2f} s"
        f" {run_cpu + checks_cpu:7.2f} s"
    )
    return 0 if answered and not any("check limit" in p for p in t.problems) else 1


STAGE = re.compile(r"^  (\S.*?)\s+([\d.]+) s\s+([\d.]+) s")
"""A stage line of this bench's output: name, wall, CPU."""


def side_by_side(other: Path, rounds: int, extra: list[str]) -> int:
    """This bench in `other`'s checkout and in this one, alternating, in fresh
    interpreters (each imports its own `parity`); each stage's median CPU, and wall."""
    here = Path(__file__).resolve().parents[1]
    sides = {"before": other.resolve(), "after": here}
    seen: dict[str, dict[str, list[tuple[float, float]]]] = {name: {} for name in sides}
    for n in range(rounds):
        for name, root in sides.items():
            env = {**os.environ, "PYTHONPATH": str(root)}
            command = [sys.executable, "-m", "bench.bench_flood", *extra]
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
            print(f"round {n + 1} {name}: exit {done.returncode}", flush=True)
            for line in done.stdout.splitlines():
                if match := STAGE.match(line):
                    stage = match[1].strip()
                    seen[name].setdefault(stage, []).append((float(match[2]), float(match[3])))
    print(f"  {'stage (median of ' + str(rounds) + ')':<36} {'CPU before':>11} {'CPU after':>10}"
          f" {'ratio':>6} {'wall before':>12} {'wall after':>11}")  # fmt: skip
    for stage, runs in seen["after"].items():
        before = seen["before"].get(stage)
        if not before:
            continue
        cpu_b, cpu_a = (statistics.median(c for _, c in x) for x in (before, runs))
        wall_b, wall_a = (statistics.median(w for w, _ in x) for x in (before, runs))
        ratio = f"{cpu_a / cpu_b:.2f}x" if cpu_b else "-"
        print(f"  {stage:<36} {cpu_b:9.2f} s {cpu_a:8.2f} s {ratio:>6}"
              f" {wall_b:10.2f} s {wall_a:9.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
