"""Categorized parity diffs of hand-built normalized views."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parity.checks.diff import ParityReport, compare
from parity.checks.differences import (
    ABSENT,
    CHANGED_FIELD,
    CHUNKING_ONLY,
    ERROR,
    EXTRA_UPDATE,
    MISSING_UPDATE,
    MODEL_REQUEST,
    ORDERING_ONLY,
    STOP_REASON,
)
from parity.scenario.model import Rule


def msg(text: str, mid: str = "<message:2>", kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": mid}


def base() -> dict[str, Any]:
    """The reference view of a tool turn (docs/contract.md §7.4 scenario 4)."""
    return {
        "steps": [
            {
                "step": 1,
                "do": "new_session",
                "label": "new_session s1",
                "send": {"method": "session/new", "params": {"cwd": "<workdir>", "mcpServers": []}},
                "result": {"sessionId": "<session:1>", "configOptions": []},
            },
            {
                "step": 2,
                "do": "prompt",
                "label": 'prompt s1 "go"',
                "send": {"method": "session/prompt", "params": {"sessionId": "<session:1>"}},
                "result": {"stopReason": "end_turn"},
                "updates": [
                    msg("inspect first", "<message:1>", "agent_thought_chunk"),
                    {"sessionUpdate": "usage_update", "used": 10, "size": 1024},
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "call-1",
                        "title": "echo",
                        "kind": "other",
                        "status": "in_progress",
                        "rawInput": {},
                    },
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "call-1",
                        "status": "completed",
                    },
                    msg("done"),
                    {"sessionUpdate": "usage_update", "used": 20, "size": 1024},
                ],
            },
        ],
        "after": [],
        "model": [
            {"path": "/stream", "body": {"messages": [{"role": "user", "content": "go"}]}},
            {"path": "/stream", "body": {"messages": [{"role": "tool", "content": "tool result"}]}},
        ],
        "process": {"exit": [{"by": "eof", "code": 0}]},
        "masked": {},
    }


def run(
    other: dict[str, Any], diverge: list[Rule] | None = None, profile: str = "exact"
) -> ParityReport:
    return compare(
        base(),
        other,
        profile=profile,
        diverge=diverge or [],
        ref_name="native",
        other_name="plus",
        scenario="baseline/tool-turn",
    )


def updates(view: dict[str, Any]) -> list[Any]:
    result: list[Any] = view["steps"][1]["updates"]
    return result


def only(report: ParityReport) -> Any:
    assert len(report.differences) == 1, report.render()
    return report.differences[0]


def test_identical_views_are_ok_even_with_different_masks() -> None:
    other = base()
    other["masked"] = {"*.usage_update.used": 2}
    report = run(other)
    assert report.ok
    assert report.differences == []


def test_stop_reason() -> None:
    other = base()
    other["steps"][1]["result"]["stopReason"] = "cancelled"
    d = only(run(other))
    assert (d.category, d.path, d.ref, d.other) == (
        STOP_REASON,
        "steps[1].result.stopReason",
        "end_turn",
        "cancelled",
    )
    assert (d.step, d.step_kind, d.step_label) == (2, "prompt", 'prompt s1 "go"')


def test_error_instead_of_result() -> None:
    other = base()
    del other["steps"][1]["result"]
    other["steps"][1]["error"] = {"code": -32603, "message": "Internal error: turn failed: boom"}
    d = only(run(other))
    assert d.category == ERROR
    assert d.other == {"error": {"code": -32603, "message": "Internal error: turn failed: boom"}}


def test_changed_error_message() -> None:
    ref = base()
    del ref["steps"][1]["result"]
    ref["steps"][1]["error"] = {"code": -32602, "message": "Invalid params: unknown session: x"}
    other = copy.deepcopy(ref)
    other["steps"][1]["error"]["message"] = "Invalid params: no such session"
    report = compare(ref, other, profile="exact", diverge=[], ref_name="native", other_name="plus")
    d = only(report)
    assert (d.category, d.path) == (ERROR, "steps[1].error")


def test_missing_update() -> None:
    other = base()
    del updates(other)[1]
    d = only(run(other))
    assert (d.category, d.path, d.other) == (MISSING_UPDATE, "steps[1].updates[1]", d.other)
    assert d.ref == {"sessionUpdate": "usage_update", "used": 10, "size": 1024}


def test_extra_update() -> None:
    other = base()
    updates(other).insert(4, {"sessionUpdate": "plan", "entries": []})
    d = only(run(other))
    assert (d.category, d.other_path, d.ref_path) == (
        EXTRA_UPDATE,
        ("steps", 1, "updates", 4),
        None,
    )
    assert d.path == "steps[1].updates[4]"


def test_changed_field_is_reported_at_the_leaf() -> None:
    other = base()
    updates(other)[2]["kind"] = "execute"
    d = only(run(other))
    assert (d.category, d.path, d.ref, d.other) == (
        CHANGED_FIELD,
        "steps[1].updates[2].kind",
        "other",
        "execute",
    )


def test_ordering_only() -> None:
    other = base()
    ups = updates(other)
    ups[2], ups[3] = ups[3], ups[2]
    d = only(run(other))
    assert (d.category, d.path) == (ORDERING_ONLY, "steps[1].updates")


def test_chunking_only_in_exact_profile() -> None:
    other = base()
    ups = updates(other)
    ups[4:5] = [msg("do"), msg("ne")]
    d = only(run(other))
    assert (d.category, d.path) == (CHUNKING_ONLY, "steps[1].updates")
    assert d.other[4:6] == ['agent_message_chunk "do"', 'agent_message_chunk "ne"']


def test_model_request_differences() -> None:
    other = base()
    other["model"][1]["body"]["messages"][0]["content"] = "different"
    other["model"].append({"path": "/stream", "body": {"purpose": "title"}, "side": True})
    report = run(other)
    assert [(d.category, d.path) for d in report.differences] == [
        (MODEL_REQUEST, "model[1].body.messages[0].content"),
        (MODEL_REQUEST, "model[2]"),
    ]
    assert all(d.step is None for d in report.differences)


def test_missing_step_and_process_difference() -> None:
    other = base()
    other["steps"].pop()
    other["process"] = {"exit": [{"by": "sigkill", "signal": 9}]}
    report = run(other)
    cats = sorted((d.category, d.path) for d in report.differences)
    assert (MISSING_UPDATE, "steps[1]") in cats
    assert any(c == CHANGED_FIELD and p.startswith("process.exit[0]") for c, p in cats)


def test_diverge_suppresses_and_unused_rules_are_stale() -> None:
    other = base()
    updates(other)[1]["used"] = 11
    updates(other)[5]["used"] = 23
    rules = [
        Rule(path="*.usage_update.used", reason="token meters differ"),
        Rule(path="*.plan", reason="plus sends a plan"),
        Rule(path="steps[*].result", reason="only for codex", targets=["codex"]),
    ]
    report = run(other, rules)
    assert report.differences == []
    assert [d.path for d, _ in report.suppressed] == [
        "steps[1].updates[1].used",
        "steps[1].updates[5].used",
    ]
    assert [r.path for r in report.stale] == ["*.plan"]  # the codex rule does not apply
    assert not report.ok
    assert (
        "stale diverge rule: '*.plan' (plus sends a plan) matched no difference" in report.render()
    )


def test_diverge_does_not_swallow_a_whole_missing_update() -> None:
    other = base()
    del updates(other)[5]
    report = run(other, [Rule(path="*.usage_update.used", reason="meters differ")])
    assert [d.category for d in report.differences] == [MISSING_UPDATE]
    assert report.stale  # the rule explained nothing


def test_extra_update_is_suppressed_by_a_rule_matching_it_in_the_other_view() -> None:
    other = base()
    updates(other).append({"sessionUpdate": "available_commands_update", "availableCommands": []})
    report = run(other, [Rule(path="*.available_commands_update", reason="plus has commands")])
    assert report.ok


def test_render_names_scenario_step_path_and_values() -> None:
    other = base()
    updates(other)[4]["content"]["text"] = "done!"
    del updates(other)[1]
    text = run(other).render()
    assert text.splitlines()[0].startswith(
        "baseline/tool-turn: plus vs native (reference), exact profile: 2 difference(s)"
    )
    assert '  step 2 prompt: prompt s1 "go"' in text
    assert "    [missing update] steps[1].updates[1]" in text
    assert "    [changed field] steps[1].updates[4].content.text" in text
    assert '      - native: "done"' in text
    assert '      + plus: "done!"' in text
    assert "      - sessionUpdate: usage_update" in text


@pytest.mark.parametrize("profile", ["exact", "semantic"])
def test_semantic_profile_does_not_call_rechunking_chunking_only(profile: str) -> None:
    other = base()
    updates(other)[4:5] = [msg("do"), msg("ne")]
    cats = {d.category for d in run(other, profile=profile).differences}
    assert cats == ({CHUNKING_ONLY} if profile == "exact" else {CHANGED_FIELD, EXTRA_UPDATE})


def test_no_response_on_one_side_is_an_error() -> None:
    other = base()
    del other["steps"][0]["result"]
    other["steps"][0]["notes"] = [{"problem": "agent closed its stdout during session/new"}]
    report = run(other)
    assert [(d.category, d.path, d.detail) for d in report.differences] == [
        (ERROR, "steps[0]", "one side got no response"),
        (EXTRA_UPDATE, "steps[0].notes[0]", ""),
    ]
    first = report.differences[0]
    assert first.ref == {"result": {"sessionId": "<session:1>", "configOptions": []}}
    assert first.other is ABSENT
    assert "      - result:" in report.render()


def test_a_long_run_that_differs_everywhere_is_counted_in_full_and_rendered_short() -> None:
    # Pairing is linear: a quadratic pairing of 10,000 items would not finish in CI time.
    ref, other = base(), base()
    updates(ref)[:] = [msg("a") for _ in range(10_000)]
    updates(other)[:] = [msg("b") for _ in range(10_000)]
    report = compare(ref, other, profile="exact", diverge=[], ref_name="native", other_name="plus")
    assert len(report.differences) == 10_000
    text = report.render(max_differences=5)
    assert text.count("[changed field]") == 5
    assert text.endswith("... and 9995 more difference(s): 9995 changed field")


def test_long_texts_show_a_window_around_the_first_difference() -> None:
    ref, other = base(), base()
    system = "You are a careful agent. " * 40
    ref["model"][0]["body"]["system"] = system + "Working directory: <workdir>."
    other["model"][0]["body"]["system"] = system + "Working dir: <workdir>."
    text = compare(
        ref, other, profile="exact", diverge=[], ref_name="native", other_name="plus"
    ).render()
    assert f"first difference at character {len(system) + 11} (lengths 1029 and 1023)" in text
    assert '- native: ..."' in text and 'directory: <workdir>."' in text
    assert '+ plus: ..."' in text and 'dir: <workdir>."' in text
    assert max(len(line) for line in text.splitlines()) < 200
