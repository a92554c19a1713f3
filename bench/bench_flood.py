"""A hostile flood judged in seconds: 200,000 `session/update`s during one prompt.

Run: `python -m bench.bench_flood [--updates N]`. The fixture agent
`tests/fixtures/agents/update_flood.py` answers one prompt after N
agent_message_chunk updates (each its own text). Timed, in turn: the run through the
driver (every frame recorded up to the frame limit, the answer past it still), the
conformance check (one validation per shape, `parity.checks.shapes`; it took 280 s
validating frame by frame), the normalized view (exact and semantic profiles) and its
YAML. Prints each stage's seconds and the total; the goal is a total of seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from parity.checks.acp_schema import load_schema
from parity.checks.conformance import SchemaIndex, findings
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.scenario.model import Scenario, Step, Where
from parity.targets.launch import Launch
from parity.view.dump import dump_view
from parity.view.normalize import view

AGENT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agents" / "update_flood.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000)
    args = parser.parse_args()
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
        timeouts={"response": 600, "run": 900},
    )

    def launch(paths: RunPaths) -> Launch:
        return Launch([sys.executable, str(AGENT)], {"FLOOD": str(args.updates)})

    times: dict[str, float] = {}
    start = time.perf_counter()
    t = asyncio.run(
        run_scenario(
            scenario, launch, llm_run=None, run_id="flood", target="flood", ladder=Ladder()
        )
    )
    times["run (driver)"] = time.perf_counter() - start
    index = SchemaIndex(load_schema())
    mark = time.perf_counter()
    found = findings(t, {}, schema=index)
    times["conformance"] = time.perf_counter() - mark
    mark = time.perf_counter()
    exact = view(t, "exact", [])
    semantic = view(t, "semantic", [])
    times["views (exact, semantic)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    dump_view(semantic)
    times["semantic view's YAML"] = time.perf_counter() - mark
    answered = t.steps[2].response is not None and t.steps[2].problem is None
    print(f"flood of {args.updates} updates: {len(t.frames)} frames recorded")
    print(f"  prompt answered: {answered}; problems: {len(t.problems)}; findings: {len(found)}")
    print(f"  schema validations: {index.validated} (one per shape)")
    print(f"  exact view entries under the prompt: {len(exact['steps'][2].get('updates', []))}")
    for stage, seconds in times.items():
        print(f"  {stage:<26} {seconds:7.2f} s")
    print(f"  {'total':<26} {sum(times.values()):7.2f} s")
    return 0 if answered else 1


if __name__ == "__main__":
    sys.exit(main())
