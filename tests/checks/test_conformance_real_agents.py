"""Findings on real runs: one conforming fixture agent, and one per defect, each
tripping exactly the finding its file name says (the acp-tck pattern)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from parity.checks.acp_schema import fetch, load_schema
from parity.checks.conformance import SchemaIndex, findings
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.scenario.model import Scenario, Step, Where
from parity.targets.launch import Launch

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


@pytest.fixture(scope="module")
def index() -> SchemaIndex:
    return SchemaIndex(load_schema(fetch()))


def st(kind: str, params: Any) -> Step:
    return Step(kind, params, Where("real.yaml", 1))


TURN = [
    st("initialize", {}),
    st("new_session", {"as": "s1"}),
    st("prompt", {"session": "s1", "text": "stream 2"}),
    st("wait", {"ms": 200}),
]


async def kinds_for(agent: str, index: SchemaIndex) -> list[tuple[str, int | None]]:
    """(kind, step) of each finding."""

    def launch(_paths: RunPaths) -> Launch:
        return Launch([sys.executable, str(AGENTS / f"{agent}.py")], {})

    scenario = Scenario(name="unit/real", path=Path("real.yaml"), description="", steps=TURN)
    t = await run_scenario(
        scenario,
        launch,
        llm_run=None,
        run_id=f"conf-{agent}",
        target=agent,
        ladder=Ladder(eof=1.0, term=1.0, kill=2.0),
    )
    caps = t.steps[0].request["params"]["clientCapabilities"]
    return [(f.kind, f.step) for f in findings(t, caps, schema=index)]


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("echo_agent", []),
        # Trailing output is shown (and found) in the prompt it trails, whichever step's
        # time range it fell in.
        ("late_updates", [("late_update", 3), ("late_update", 3)]),
        ("fs_without_capability", [("unadvertised_call", 3), ("unadvertised_call", 3)]),
        (
            "garbage_stdout",
            [
                ("not_json", 1),
                ("not_jsonrpc", 3),
                ("not_jsonrpc", 3),
                ("not_json", 3),
                ("not_json", 3),
            ],
        ),
        ("oversized_frame", [("oversize", 3)]),
    ],
)
async def test_each_fixture_agent_trips_exactly_its_finding(
    agent: str, expected: list[tuple[str, int | None]], index: SchemaIndex
) -> None:
    assert await kinds_for(agent, index) == expected
