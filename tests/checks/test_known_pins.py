"""A pin of a known difference states the fact, never one recording's value (issue 31):
native 0.1.0-rc.8's permission request was pinned to follow 0 updates, false whenever
the model speaks before the gated call; steps were pinned whole, with the harness's own
label and request, where the fact is the agent's answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parity.checks.diff import compare
from parity.scenario.known import load_known
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[2]
KNOWN = load_known(REPO / "known-differences.yaml")


def recorded(scenario: str, target: str) -> dict[str, Any]:
    view: dict[str, Any] = load_view((REPO / "snapshots" / scenario / f"{target}.yaml").read_text())
    return view


def test_rc8_asks_after_the_text_the_model_spoke_first() -> None:
    scenario = "tools/permission-after-text"
    rc8 = recorded(scenario, "native-rc8")
    assert rc8["steps"][2]["agent_requests"][0]["after_updates"] == 1  # the text came first
    report = compare(
        recorded(scenario, "native"),
        rc8,
        profile="exact",
        diverge=[],
        ref_name="native",
        other_name="native-rc8",
        scenario=scenario,
        known=KNOWN,
    )
    assert report.ok, report.render()
    assert "native-permission-without-tool-call" in report.known_used


def test_no_pin_equals_a_whole_recorded_step() -> None:
    # A step's number, label and request are the scenario's, not the agent's: a pin that
    # equals the whole step pins a recording, and drifts when the scenario is edited.
    whole = [
        f"{rule.id} ({side})"
        for rule in KNOWN
        for side, pin in (rule.sides or {}).items()
        if isinstance(pin, dict)
        and isinstance(pin.get("equals"), dict)
        and {"step", "label"} <= set(pin["equals"])
    ]
    assert whole == []
