"""`compare` with the project's known differences, on the shipped recordings (pure).

Both recorded views of `baseline/handshake` (native's from the real DSH 0.2.1-rc.2) and
the shipped `known-differences.yaml`: the facts explain every difference; an edit on
either side inside a declared difference is drift naming the entry; outside the
versions an entry does not apply. The same for rc.8's recording (DSH 0.1.0-rc.8) against
native's, the `native-rc8~native` check.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from parity.checks.diff import compare
from parity.checks.differences import DRIFT
from parity.checks.known_ledger import Use, judge, ledger_lines
from parity.scenario.known import check_known_text, load_known
from parity.scenario.model import Rule
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[2]


def recorded(target: str) -> dict[str, Any]:
    text = (REPO / "snapshots/baseline/handshake" / f"{target}.yaml").read_text()
    view: dict[str, Any] = load_view(text)
    return view


KNOWN = load_known(REPO / "known-differences.yaml")


def run(
    native: dict[str, Any],
    plus: dict[str, Any],
    known: list[Rule] = KNOWN,
    scenario: str = "baseline/handshake",
    other_name: str = "plus",
) -> Any:
    return compare(
        native,
        plus,
        profile="exact",
        diverge=[],
        ref_name="native",
        other_name=other_name,
        scenario=scenario,
        known=known,
    )


def test_the_shipped_facts_explain_every_difference() -> None:
    report = run(recorded("native"), recorded("plus"))
    assert report.ok, report.render()
    assert set(report.known_used) == {"native-021-agent-info"}
    assert report.suppressed


@pytest.mark.parametrize(
    ("side", "edit", "entry"),
    [
        (
            "native",
            lambda v: v["steps"][0]["result"]["agentInfo"].update(version="0.0.2"),
            "native-021-agent-info",
        ),
        (
            "plus",
            lambda v: v["steps"][0]["result"]["agentInfo"].pop("version"),
            "native-021-agent-info",
        ),
        (
            "native",
            lambda v: v["steps"][0]["result"]["agentCapabilities"].update(loadSession=True),
            "native-021-no-load-session-capability",
        ),
        (
            "native",
            lambda v: v["steps"][0]["result"]["agentCapabilities"]["sessionCapabilities"].update(
                additionalDirectories={}
            ),
            "native-021-no-additional-directories-capability",
        ),
    ],
)
def test_an_edit_inside_a_declared_difference_is_drift(side: str, edit: Any, entry: str) -> None:
    views = {"native": recorded("native"), "plus": recorded("plus")}
    edit(views[side])
    report = run(views["native"], views["plus"])
    drift = [d for d in report.differences if d.category == DRIFT]
    assert not report.ok
    assert [d.detail.split(",")[0] for d in drift] == [f"known difference {entry!r}"], drift
    assert f"{side} side" in drift[0].detail


def test_a_version_outside_the_range_is_compared_without_the_entries() -> None:
    native = recorded("native")
    native["agent"]["version"] = "0.2.2"
    report = run(native, recorded("plus"))
    assert report.known_applied == []
    assert {d.path for d in report.differences} >= {
        "steps[0].result.agentInfo.name",
        "steps[0].result.agentInfo.version",
    }


def test_an_unknown_version_is_unjudged_not_applied() -> None:
    native = recorded("native")
    del native["agent"]
    native["steps"][0]["result"]["agentInfo"].pop("version")
    report = run(native, recorded("plus"))
    assert "native-021-agent-info" in report.known_unjudged
    assert not report.ok


def test_the_shipped_facts_explain_rc8_against_native() -> None:
    report = run(recorded("native"), recorded("native-rc8"), other_name="native-rc8")
    assert report.ok, report.render()
    assert "native-prompt-capabilities-only" in report.known_used


@pytest.mark.parametrize(
    ("edit", "entry"),
    [
        (
            lambda v: v["steps"][0]["result"]["agentCapabilities"].update(x=1),
            "native-prompt-capabilities-only",
        ),
        (
            lambda v: v["steps"][0]["result"].update(configOptions=[]),
            "native-session-new-only-session-id",
        ),
    ],
)
def test_an_edit_inside_an_rc8_difference_is_drift(edit: Any, entry: str) -> None:
    rc8 = recorded("native-rc8")
    edit(rc8)
    report = run(recorded("native"), rc8, other_name="native-rc8")
    drift = [d for d in report.differences if d.category == DRIFT]
    assert not report.ok
    assert [d.detail.split(",")[0] for d in drift] == [f"known difference {entry!r}"], drift
    assert "native-rc8 side" in drift[0].detail


def test_an_rc8_outside_its_versions_is_compared_without_its_entries() -> None:
    rc8 = recorded("native-rc8")
    rc8["agent"]["version"] = "0.2.0"
    report = run(recorded("native"), rc8, other_name="native-rc8")
    rc8_entries = {r.id for r in KNOWN if r.targets == ["native-rc8"]}
    assert not rc8_entries & set(report.known_applied)
    assert {d.path for d in report.differences} >= {
        "steps[0].result.agentCapabilities.mcpCapabilities",
        "steps[0].result.agentCapabilities.sessionCapabilities",
    }


def test_type_exact_pins() -> None:
    text = (
        "differences:\n  - id: n\n    target: native\n    path: steps[*].result.n\n"
        "    sides: {native: {equals: 2}, others: {one_of: [true, '1']}}\n    reason: r\n"
    )
    findings, known = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert findings == []

    def views(a: Any, b: Any) -> Any:
        return run({"steps": [{"result": {"n": a}}]}, {"steps": [{"result": {"n": b}}]}, known)

    assert views(2, True).ok and views(2, "1").ok
    for a, b in [(2.0, True), (2, 1), (2, 1.0), ("2", True), (None, True)]:
        assert any(d.category == DRIFT for d in views(a, b).differences), (a, b)


def test_the_ledger_fails_only_a_complete_run() -> None:
    used = Use(("a", "b"), ("a",))
    rules = [Rule("x", "r", ["native"], id="a"), Rule("y", "r", ["native"], id="b")]
    complete = judge(rules, [used], None)
    assert [r.id for r in complete.stale] == ["b"] and not complete.ok
    partial = judge(rules, [used], "partial run: 1 item(s) deselected")
    assert partial.ok and [(r.id, why) for r, why in partial.unchecked] == [
        ("b", "partial run: 1 item(s) deselected")
    ]
    versioned = Rule("z", "r", ["native"], id="c", versions="==0.1.0rc8")
    out_of_range = judge([versioned], [Use((), ())], None)
    assert (
        out_of_range.ok
        and "no run of native in versions ==0.1.0rc8" in out_of_range.unchecked[0][1]
    )
    assert (
        ledger_lines(complete, 2)[0] == "known differences: 1 of 2 explained a difference, 1 stale"
    )


def test_scenario_rules_pin_sides_too() -> None:
    rule = Rule(
        "steps[0]",
        "r",
        ["native"],
        sides={
            "native": {"equals": {"error": {"code": -32601}}},
            "others": {"equals": {"result": {}}},
        },
    )
    native = {"steps": [{"error": {"code": -32601}}]}
    assert compare(
        native,
        {"steps": [{"result": {}}]},
        profile="exact",
        diverge=[rule],
        ref_name="native",
        other_name="plus",
    ).ok
    drifted = compare(
        copy.deepcopy(native) | {"steps": [{"error": {"code": -32600}}]},
        {"steps": [{"result": {}}]},
        profile="exact",
        diverge=[rule],
        ref_name="native",
        other_name="plus",
    )
    assert [d.category for d in drifted.differences] == [DRIFT]


def test_an_entry_scoped_to_scenarios_applies_only_there() -> None:
    text = (
        "differences:\n  - id: s\n    target: native\n    scenarios: [protocol/raw-*]\n"
        "    path: steps[0].result.n\n    sides: {native: {equals: 1}, others: {equals: 2}}\n"
        "    reason: r\n"
    )
    findings, known = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert findings == []
    native, plus = {"steps": [{"result": {"n": 1}}]}, {"steps": [{"result": {"n": 2}}]}

    assert run(native, plus, known, "protocol/raw-garbage").ok
    elsewhere = run(native, plus, known, "baseline/handshake")
    assert not elsewhere.ok and elsewhere.known_applied == []


def test_a_side_key_must_be_a_declared_target() -> None:
    text = (
        "differences:\n  - id: s\n    target: native\n    path: a\n"
        "    sides: {native: absent, others: absent, plu: absent}\n    reason: r\n"
    )
    findings, _ = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert [f.message for f in findings] == ["side 'plu' is not a known target"]
    assert findings[0].line == 5


def test_the_ledger_counts_a_long_id_list_when_asked() -> None:
    rules = [Rule("x", "r", ["native"], id=f"id-{i}") for i in range(10)]
    partial = judge(rules, [Use((), ())], "partial run: 1 item(s) deselected")
    listed = ledger_lines(partial, 10)
    assert "id-9" in listed[-1]
    assert ledger_lines(partial, 10, ids_shown=8)[-1] == (
        "  not checked (partial run: 1 item(s) deselected): 10 ids (-v lists them)"
    )
    assert "id-9" in ledger_lines(partial, 10, ids_shown=10)[-1]


FOLLOWS = """differences:
  - id: cause
    target: native
    path: "steps[error.message=turn left open]"
    sides: {native: {schema: {required: [error]}}, others: absent}
    reason: the fact
  - id: consequence
    target: native
    follows: cause
    path: "model[*]"
    sides: {native: {schema: {type: object}}, others: {schema: {type: object}}}
    reason: the model requests the failed turn never made
"""


def test_an_entry_that_follows_applies_only_where_its_cause_explained_a_difference() -> None:
    findings, known = check_known_text(FOLLOWS, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert findings == []
    failed = {"error": {"message": "turn left open"}}
    answered = {"result": {"stopReason": "end_turn"}}
    native = {"steps": [answered, failed], "model": [{"path": "/stream"}]}
    plus = {"steps": [answered, answered], "model": [{"path": "/stream"}] * 2}
    report = run(native, plus, known)
    assert report.ok, report.render()
    assert sorted(report.known_used) == ["cause", "consequence"]
    # Without the cause, the same extra model request is a difference: nothing follows.
    report = run({**native, "steps": [answered, answered]}, plus, known)
    assert not report.ok
    assert [d.path for d in report.differences] == ["model[1]"]
    assert report.known_used == []


@pytest.mark.parametrize(
    ("follows", "message"),
    [
        ("consequence", "an entry cannot follow from itself"),
        ("cuase", "no entry 'cuase' to follow from"),
        ("other", "'other' is a fact of another target"),
        ("chained", "'chained' follows, down its chain, from this entry: a cycle"),
    ],
)
def test_follows_names_a_cause_of_the_same_target(follows: str, message: str) -> None:
    text = FOLLOWS.replace("follows: cause", f"follows: {follows}") + (
        "  - id: other\n    target: plus\n    path: a\n"
        "    sides: {plus: absent, others: absent}\n    reason: r\n"
        "  - id: chained\n    target: native\n    follows: consequence\n    path: b\n"
        "    sides: {native: absent, others: absent}\n    reason: r\n"
    )
    findings, _ = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert (findings[0].key, findings[0].message) == ("differences[1].follows", message)
    # A cycle is named at each of its entries: here `chained` (entry 4) follows back too.
    also = ["differences[3].follows"] if "cycle" in message else []
    assert [f.key for f in findings[1:]] == also


def test_a_late_update_differs_as_its_update_and_the_update_rules_explain_it() -> None:
    # Updates after the last step (`after`) are wrapped ({update: U}); a lone one differs
    # at `after[i].update`, where a step's own updates are, so `*.tool_call_update`
    # reaches it as it reaches a step's.
    text = (
        "differences:\n  - id: no-update\n    target: native\n    path: '*.tool_call_update'\n"
        "    sides: {native: absent, others: {schema: {type: object}}}\n    reason: r\n"
    )
    _, known = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    late = {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1"}}
    native = {"after": [{"response": {"id": 1}}]}
    plus = {"after": [late, {"response": {"id": 1}}]}
    bare = run(native, plus, [])
    assert [(d.path, d.other) for d in bare.differences] == [("after[0].update", late["update"])]
    assert run(native, plus, known).ok
    # A lone response stays whole: only the update wrapper is looked through.
    assert [d.path for d in run({"after": []}, native, []).differences] == ["after[0]"]


def test_every_entry_covering_a_difference_has_explained_one() -> None:
    # Two natives' facts at one place (each entry also states the other's side): the first
    # claims the difference, and neither is stale for want of one of its own.
    text = (
        "differences:\n"
        "  - id: a\n    target: native\n    path: steps[*].result.n\n"
        "    sides: {native: {equals: 2}, others: {equals: 1}}\n    reason: r\n"
        "  - id: b\n    target: native\n    path: steps[*].result\n"
        "    sides: {native: {schema: {type: object}}, others: {schema: {type: object}}}\n"
        "    reason: r\n"
    )
    findings, known = check_known_text(text, "k.yaml", {"native": "dsh", "plus": "dsh"})
    assert findings == []
    report = run({"steps": [{"result": {"n": 2}}]}, {"steps": [{"result": {"n": 1}}]}, known)
    assert report.ok
    assert [rule.id for _, rule in report.suppressed] == ["a"]
    assert sorted(report.known_used) == ["a", "b"]
