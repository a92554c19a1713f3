"""A fact of a native version holds in every scenario that shows it, generated ones
too: `parity explore --targets native,plus` found native 0.2.1-rc.2's cancelled-tool
text ("Error: [object Object]") in its own cancelled turns, where the entries scoped to
two shipped scenarios did not apply. The recordings of those scenarios, compared under
another scenario's name with the shipped known differences, differ in nothing; and a
text no agent should send anywhere else is still a difference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.checks.diff import compare
from parity.checks.differences import DRIFT
from parity.scenario.known import load_known
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[2]
KNOWN = load_known(REPO / "known-differences.yaml")


def recorded(scenario: str, target: str) -> dict[str, Any]:
    view: dict[str, Any] = load_view((REPO / "snapshots" / scenario / f"{target}.yaml").read_text())
    return view


def judge(native: dict[str, Any], plus: dict[str, Any]) -> Any:
    return compare(
        native,
        plus,
        profile="exact",
        diverge=[],
        ref_name="native",
        other_name="plus",
        scenario="found/explore",  # no shipped scenario: what explore's runs are named
        known=KNOWN,
    )


@pytest.mark.parametrize("scenario", ["tools/hang-cancelled", "tools/cancel-tool-running"])
def test_the_cancelled_tool_text_is_explained_in_any_scenario(scenario: str) -> None:
    report = judge(recorded(scenario, "native"), recorded(scenario, "plus"))
    assert report.ok, report.render()
    assert "native-021-cancelled-tool-object-error" in report.known_used


def test_another_agent_saying_it_is_drift() -> None:
    scenario = "tools/hang-cancelled"
    plus = recorded(scenario, "plus")
    for step in plus["steps"]:
        for update in step.get("updates", []):
            content = update.get("content")
            for item in content if isinstance(content, list) else []:
                inner = item.get("content")
                if isinstance(inner, dict) and inner.get("text") == "Tool call was cancelled.":
                    inner["text"] = "Error: [object Object]"
    report = judge(recorded(scenario, "native"), plus)
    drift = [d for d in report.differences if d.category == DRIFT]
    assert drift and "native-021-cancelled-tool-object-error" in drift[0].detail
