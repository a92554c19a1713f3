"""The checks after a run follow any JSON value an agent can send (issue 33): Hypothesis
draws frames of arbitrary JSON (lone surrogates in keys and values, integers of hundreds
of digits, infinities from overflowing literals, YAML's own words as keys, ids that are
objects) under a prompt, and every stage after the run takes them: both profiles with
no frame set aside, a snapshot YAML that reads back exactly, conformance, the judgement
against a snapshot (the diff and its rendering) and the failure text."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from parity.core.exact import json_equal
from parity.core.transcript import Frame, StepRecord, Transcript
from parity.engine.judge import Policy, Shown, judge_run
from parity.engine.postrun import check_run
from parity.engine.runner import RunResult
from parity.view.dump import dump_view, load_view
from tests.support.driver import BASIC, scenario
from tests.support.driver import st as step

PROMPT = [*BASIC, step("prompt", session="s1", text="go")]
WORKDIR = "/tmp/parity-run/workdir"

TEXT = st.text(st.characters(codec=None, categories=None), max_size=12) | st.sampled_from(
    ["sess-1", "<<", "~", "null", "true", "? x", "- a", "\ud83d", "\x85", "a\nb", "1e3", ".inf"]
)
NUMBER = (
    st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=False)
    | st.sampled_from([float("inf"), -0.0, 2**64])
)
KEY = TEXT | st.sampled_from(
    ["sessionUpdate", "content", "text", "type", "toolCallId", "sessionId", "messageId", "title"]
)
VALUE = st.recursive(
    st.none() | st.booleans() | NUMBER | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEY, inner, max_size=4),
    max_leaves=16,
)
KINDS = st.sampled_from(
    ["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]
)
UPDATE = st.fixed_dictionaries(
    {"sessionUpdate": KINDS},
    optional={"content": VALUE, "toolCallId": VALUE, "title": VALUE, "messageId": VALUE},
)


def _message(params: Any, method: str = "session/update") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


MESSAGE = (
    st.builds(
        lambda u, s: _message({"sessionId": s, "update": u}), UPDATE, st.just("sess-1") | VALUE
    )
    | st.builds(
        lambda i, m, p: {**_message(p, m), "id": i},
        VALUE,
        st.sampled_from(["fs/read_text_file", "session/request_permission", "x"]),
        VALUE,
    )
    | st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, VALUE, VALUE)
    | VALUE
)


def transcript(messages: list[Any]) -> Transcript:
    """A run of initialize, session/new and a prompt whose updates are `messages`."""
    sent = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": WORKDIR}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "sess-1"}},
    ]
    answers = [
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "sess-1"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}},
    ]
    wire = [sent[0], answers[0], sent[1], answers[1], sent[2], *messages, answers[2]]
    frames = [
        Frame(n, 0.01 * n, "out" if msg in sent else "in", repr(msg), msg)
        for n, msg in enumerate(wire)
    ]
    labels = ("initialize", "new_session s1", 'prompt s1 "go"')
    steps = [
        StepRecord(i, s.kind, labels[i], request=sent[i], response=answers[i])
        for i, s in enumerate(PROMPT)
    ]
    steps[0].frames, steps[1].frames = [0, 1], [2, 3]
    steps[2].frames = list(range(4, len(frames)))
    return Transcript("fuzz", "t", "r", frames=frames, steps=steps, paths={"workdir": WORKDIR})


BASE = check_run(scenario(PROMPT), transcript([])).view
CRASHED = [
    _message({"sessionId": "sess-2", "update": {"sessionUpdate": "tool_call", "toolCallId": "a"}}),
    _message({"sessionId": {"": None}, "update": {"sessionUpdate": "tool_call", "toolCallId": 0}}),
]
"""What crashed the semantic profile (an object for a sessionId, with two sessions)."""


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(MESSAGE, min_size=1, max_size=4), st.sampled_from(["exact", "semantic"]))
@example(CRASHED, "semantic")
def test_every_check_after_a_run_follows_any_json_value(messages: list[Any], compare: str) -> None:
    t = transcript(messages)
    s = scenario(PROMPT, compare=compare)
    checked = check_run(s, t)
    assert t.problems == []
    # The snapshot YAML reads back exactly (the judgement compares the view itself).
    assert checked.text is not None and json_equal(load_view(checked.text), checked.view)
    result = RunResult("fuzz", "t", checked.view, t, checked.findings, text=checked.text)
    shown = Shown("snap.yaml", "fuzz.yaml")
    for recorded in (None, dump_view(BASE)):
        verdict = judge_run(s, "t", result, recorded, Policy(conformance="fail"), shown)
        if verdict.snapshot.drift is not None:
            verdict.snapshot.drift.report.render()
