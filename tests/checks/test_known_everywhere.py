"""What holds in the shipped scenarios holds in generated ones too: `parity explore
--targets native,plus` found native 0.2.1-rc.2's cancelled-tool text ("Error: [object
Object]") in its own cancelled turns, where the entries declaring it were scoped to two
shipped scenarios. acp-plus now gives native's text, so the recordings of those
scenarios, compared under another scenario's name, differ in nothing, and no known
difference is needed for it; a changed text is still a difference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.checks.diff import compare
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
    assert not [k for k in report.known_used if "cancel" in k]


def test_another_text_is_a_difference() -> None:
    scenario = "tools/hang-cancelled"
    plus = recorded(scenario, "plus")
    changed = 0
    for step in plus["steps"]:
        for update in step.get("updates", []):
            content = update.get("content")
            for item in content if isinstance(content, list) else []:
                inner = item.get("content")
                if isinstance(inner, dict) and inner.get("text") == "Error: [object Object]":
                    inner["text"] = "Tool call was cancelled."
                    changed += 1
    assert changed
    report = judge(recorded(scenario, "native"), plus)
    assert not report.ok
