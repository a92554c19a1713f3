"""The repeated-tool-call reminder (acp_plus/core/repeats.py), pure."""

from __future__ import annotations

from acp_plus.core.repeats import GENTLE, RepeatTracker, canonical_arguments, preview


def test_reminders_at_the_third_fifth_and_eighth_identical_call() -> None:
    tracker = RepeatTracker()
    texts = [tracker.observe("grep", '{"b": 1, "a": [2, {"d": 3, "c": 4}]}') for _ in range(8)]
    assert [i + 1 for i, t in enumerate(texts) if t is not None] == [3, 5, 8]
    assert texts[2] == GENTLE
    fifth = texts[4]
    assert fifth is not None and fifth.startswith("Repeated tool call detected:\n- tool: grep\n")
    assert "- consecutive_calls: 5\n" in fifth
    assert '- arguments: {"a":[2,{"c":4,"d":3}],"b":1}\n' in fifth


def test_key_order_does_not_break_a_chain_but_other_arguments_do() -> None:
    tracker = RepeatTracker()
    assert tracker.observe("t", '{"a": 1, "b": 2}') is None
    assert tracker.observe("t", '{"b": 2, "a": 1}') is None
    assert tracker.observe("t", '{"a":1,"b":2}') == GENTLE
    assert tracker.observe("t", '{"a": 2}') is None  # a new chain starts at 1
    assert tracker.observe("u", '{"a": 2}') is None
    assert tracker.observe("u", '{"a": 2}') is None
    assert tracker.observe("u", '{"a": 2}') == GENTLE


def test_a_user_message_resets_the_count() -> None:
    tracker = RepeatTracker()
    tracker.observe("t", "{}")
    tracker.observe("t", "{}")
    tracker.reset()
    assert tracker.observe("t", "{}") is None
    assert tracker.observe("t", "{}") is None
    assert tracker.observe("t", "{}") == GENTLE


def test_canonical_form_and_preview() -> None:
    assert canonical_arguments('{"x": 1.0, "a": "é"}') == '{"a":"é","x":1}'
    assert canonical_arguments("not json") == "not json"
    assert preview("abc", 5) == "abc"
    assert preview("abcdefgh", 3) == "abc… (+5 more chars)"
