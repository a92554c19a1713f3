"""The script engine, without sockets: entries -> canonical chunks, consumption, matching.

The expected chunk lists are written out from the helpers of docs/contract.md §7.2
(`textResponse`, `maxTokensResponse`, `errorResponse`, `'hang'`, `toolCallResponse`,
`reasoningToolCallScript`), so the fake feeds DSH-family targets exactly what the
native parity suite's MockAdapter would.
"""

from __future__ import annotations

from typing import Any

from parity.fakellm.script import RequestView, Script, arguments_json, build_response, matches


def text_response(t: str) -> list[dict[str, Any]]:
    """§7.2 textResponse(t)."""
    return [
        {"type": "block-start", "index": 0, "blockType": "text"},
        *({"type": "text-delta", "index": 0, "text": c} for c in t),
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": t}},
        {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": len(t)}},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]


def test_text_response_equals_contract_helper() -> None:
    got = build_response({"text": "hello there", "usage": {"input": 5, "output": 11}})
    assert list(got.chunks) == text_response("hello there")
    assert not got.hang and got.error_status is None and got.delay == 0


def test_max_tokens_response_has_no_usage() -> None:
    # §7.2 maxTokensResponse: same start, deltas and end, no usage, finish max-tokens.
    got = build_response({"text": "cut short", "finish": "max-tokens"})
    expected = [
        *text_response("cut short")[:-2],
        {"type": "finish", "reason": {"kind": "max-tokens"}},
    ]
    assert list(got.chunks) == expected


def test_error_response_streams_partial_without_block_end() -> None:
    # §7.2 errorResponse(m): one "partial" delta, no block-end, finish error PROVIDER_ERROR.
    got = build_response({"text": "partial", "deltas": 7, "error": {"message": "provider blew up"}})
    assert list(got.chunks) == [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "partial"},
        {
            "type": "finish",
            "reason": {
                "kind": "error",
                "failure": {"message": "provider blew up", "code": "PROVIDER_ERROR"},
            },
        },
    ]
    assert got.error_status is None and not got.hang


def test_hang_streams_open_text_block_then_holds() -> None:
    # §7.2 'hang': block-start, one "partial" delta, then wait for the abort.
    got = build_response({"text": "partial", "deltas": 0, "then": "hang"})
    assert list(got.chunks) == [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "partial"},
    ]
    assert got.hang


def test_tool_call_response_equals_contract_helper() -> None:
    # §7.2 toolCallResponse(name, id, args): no usage chunk, finish tool-calls.
    args = {"path": "a.txt", "n": 1}
    got = build_response({"tool_calls": [{"id": "c9", "name": "read", "arguments": args}]})
    raw = '{"path":"a.txt","n":1}'
    assert list(got.chunks) == [
        {"type": "block-start", "index": 0, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 0, "id": "c9", "name": "read", "argumentsDelta": raw},
        {
            "type": "block-end",
            "index": 0,
            "block": {"type": "tool-call", "id": "c9", "name": "read", "arguments": raw},
        },
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


def test_reasoning_tool_call_script_equals_contract_helper() -> None:
    # §7.2 reasoningToolCallScript(), with the reasoning in one delta.
    got = build_response(
        {
            "reasoning": "inspect first",
            "deltas": 0,
            "tool_calls": [{"id": "call-1", "name": "echo", "arguments": {}}],
            "usage": {"input": 8, "output": 2, "reasoning": 1},
            "finish": "tool-calls",
        }
    )
    assert list(got.chunks) == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "inspect first"},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "inspect first"}},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {
            "type": "tool-call-delta",
            "index": 1,
            "id": "call-1",
            "name": "echo",
            "argumentsDelta": "{}",
        },
        {
            "type": "block-end",
            "index": 1,
            "block": {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
        },
        {"type": "usage", "usage": {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


def test_deltas_cut_text_into_pieces_of_n_characters() -> None:
    got = build_response({"text": "abcdefg", "deltas": 3})
    pieces = [c["text"] for c in got.chunks if c["type"] == "text-delta"]
    assert pieces == ["abc", "def", "g"]


def test_block_order_is_reasoning_text_tools_with_rising_indexes() -> None:
    got = build_response(
        {
            "reasoning": "r",
            "text": "t",
            "tool_calls": [{"id": "a", "name": "x"}, {"id": "b", "name": "y", "arguments": "{bad"}],
        }
    )
    starts = [(c["index"], c["blockType"]) for c in got.chunks if c["type"] == "block-start"]
    assert starts == [(0, "reasoning"), (1, "text"), (2, "tool-call"), (3, "tool-call")]
    # a string argument is sent raw, even when it is not valid JSON
    assert got.chunks[-2]["block"]["arguments"] == "{bad"
    assert got.chunks[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}


def test_error_with_status_fails_before_any_chunk() -> None:
    got = build_response(
        {"text": "x", "error": {"message": "slow down", "code": "RATE", "status": 429}}
    )
    assert got.error_status == 429
    failure = {"message": "slow down", "code": "RATE", "status": 429}
    assert list(got.chunks) == [{"type": "finish", "reason": {"kind": "error", "failure": failure}}]


def test_raw_chunks_pass_through_with_hang_and_delay() -> None:
    raw = [{"type": "block-start", "index": 0, "blockType": "text"}]
    got = build_response({"chunks": raw, "then": "hang", "delay_ms": 25})
    assert list(got.chunks) == raw and got.hang and got.delay == 0.025


def test_arguments_json_is_compact_and_keeps_unicode() -> None:
    assert arguments_json({"a": [1, 2], "é": "ü"}) == '{"a":[1,2],"é":"ü"}'
    assert arguments_json('{"raw": true}') == '{"raw": true}'


def test_script_consumes_in_order_then_reports_exhausted() -> None:
    script = Script([{"text": "one"}, {"text": "two"}])
    view = RequestView(has_tools=True)
    first, second, third = (script.answer(view) for _ in range(3))
    assert (first.entry, second.entry) == (0, 1)
    assert first.response is not None and first.response.chunks[1]["text"] == "o"
    assert third.response is None and third.problem == "script exhausted"


def test_side_entries_answer_without_consuming() -> None:
    script = Script(
        [
            {"text": "turn one"},
            {"match": {"tools": "none"}, "text": "A title"},
            {"text": "turn two"},
        ]
    )
    title = RequestView(has_tools=False)
    turn = RequestView(has_tools=True)
    answers = [script.answer(v) for v in (title, turn, title, turn, turn)]
    assert [(a.entry, a.side) for a in answers[:4]] == [
        (1, True),
        (0, False),
        (1, True),
        (2, False),
    ]
    assert answers[4].problem == "script exhausted"


def test_entries_of_a_prompt_answer_only_while_it_is_in_flight() -> None:
    # p1's turn never asked the model (an agent refused it): its entry stays unused and
    # p2 still gets its own, where an unbound script would have handed p1's to p2.
    script = Script(
        [
            {"text": "for p1", "prompt": "p1"},
            {"text": "anyone"},
            {"text": "for p2", "prompt": "p2"},
        ]
    )
    turn = RequestView(has_tools=True)
    script.in_flight = frozenset({"p2"})
    assert [script.answer(turn).entry for _ in range(2)] == [1, 2]
    left = script.answer(turn)
    assert left.response is None and left.problem == (
        "no entry matched: the unused entries are for prompt(s) p1; in flight: p2"
    )
    script.in_flight = frozenset()
    assert script.answer(turn).problem is not None
    script.in_flight = frozenset({"p1"})
    assert script.answer(turn).entry == 0
    assert script.answer(turn).problem == "script exhausted"


def test_only_side_entries_and_no_match_is_reported_as_such() -> None:
    script = Script([{"match": {"purpose": "title"}, "text": "T"}])
    assert script.answer(RequestView(has_tools=False, purpose="title")).side
    assert script.answer(RequestView(has_tools=False, purpose="turn")).problem == "no entry matched"


def test_match_conditions_all_have_to_hold() -> None:
    view = RequestView(has_tools=True, purpose="turn", texts=("please say hello",))
    assert matches({"tools": "any", "purpose": "turn", "contains": "hello"}, view)
    assert not matches({"tools": "none"}, view)
    assert not matches({"tools": "any", "contains": "goodbye"}, view)
    assert not matches({"purpose": "title"}, view)
    assert matches({"tools": "none"}, RequestView(has_tools=False))
    assert not matches({"tools": "any"}, RequestView(has_tools=False))


def test_a_job_token_in_an_answer_names_the_runs_nth_job() -> None:
    # Job ids are random per run: a script points at them by their order in the request.
    call = {"id": "c", "name": "job_output", "arguments": {"job_id": "<job:2>", "n": "<job:3>"}}
    script = Script([{"tool_calls": [call]}])
    texts = (
        "started background job bash-00000000000000aa",
        "started background job bash-00000000000000bb; bash-00000000000000aa again",
    )
    answer = script.answer(RequestView(has_tools=True, texts=texts))
    assert answer.response is not None
    sent = "".join(str(c.get("argumentsDelta", "")) for c in answer.response.chunks)
    assert '"job_id":"bash-00000000000000bb"' in sent and '"n":"<job:3>"' in sent


def test_a_goal_token_in_an_answer_names_the_runs_nth_goal() -> None:
    # A goal id (`goal-` + a random UUID) is read back from the result that named it.
    first = "goal-0f8b6a8e-6a0e-4d3c-9a51-2c1e5b7d9f00"
    second = "goal-1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"
    args = {"goal_id": "<goal:2>", "other": "<goal:3>", "job": "<job:1>"}
    script = Script([{"tool_calls": [{"id": "c", "name": "update_goal", "arguments": args}]}])
    texts = (f'{{"goal":{{"id":"{first}"}}}}', f"{second}; {first}; xgoal-{first[5:]}")
    answer = script.answer(RequestView(has_tools=True, texts=texts))
    assert answer.response is not None
    sent = "".join(str(c.get("argumentsDelta", "")) for c in answer.response.chunks)
    assert f'"goal_id":"{second}"' in sent
    assert '"other":"<goal:3>"' in sent and '"job":"<job:1>"' in sent


def test_a_child_agents_entries_answer_only_that_child() -> None:
    # Parent and child interleave differently from run to run: each takes its own
    # entries in its own order, whoever asks first.
    script = Script(
        [
            {"text": "parent 1"},
            {"text": "child 1 first", "agent": 1},
            {"text": "parent 2"},
            {"text": "child 1 second", "agent": 1},
            {"text": "child 2", "agent": 2},
        ]
    )
    turn = RequestView(has_tools=True)
    assert script.answer(turn, agent=1).entry == 1
    assert script.answer(turn, agent=2).entry == 4
    assert script.answer(turn).entry == 0
    assert script.answer(turn).entry == 2
    assert script.answer(turn, agent=1).entry == 3
    assert script.answer(turn).problem == "script exhausted"


def test_a_child_with_no_entry_left_is_a_clear_problem() -> None:
    script = Script([{"text": "parent"}, {"text": "for p1's child", "agent": 1, "prompt": "p1"}])
    turn = RequestView(has_tools=True)
    nothing = script.answer(turn, agent=2)
    assert nothing.response is None and nothing.problem is not None
    assert nothing.problem.startswith("no entry matched: a request of child agent 2")
    assert nothing.problem.endswith("no `agent: 2` entry is left")
    waiting = script.answer(turn, agent=1)  # p1 is not in flight
    assert waiting.problem is not None and "prompts not in flight" in waiting.problem
    # The main agent never takes a child's entry, nor a child the main agent's.
    assert script.answer(turn).entry == 0
    assert script.answer(turn).problem == "script exhausted"


def test_side_entries_answer_child_agents_too() -> None:
    script = Script([{"match": {"contains": "child task"}, "text": "side"}])
    asked = script.answer(RequestView(has_tools=True, texts=("the child task",)), agent=1)
    assert asked.side and asked.entry == 0


def test_an_agent_token_names_a_child_the_request_names() -> None:
    parent, child = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a", "7a1e2f3d-4c5b-4a69-8877-665544332211"
    script = Script([{"text": "to <agent:1>, not <agent:2>"}], client_sessions=(parent,))
    view = RequestView(has_tools=True, texts=(f"session {parent}", f"started subagent {child}"))
    answer = script.answer(view)
    assert answer.response is not None
    (end,) = [c for c in answer.response.chunks if c["type"] == "block-end"]
    assert end["block"]["text"] == f"to {child}, not <agent:2>"


def test_a_session_token_names_the_nth_session_the_client_used() -> None:
    parent = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a"
    script = Script([{"text": "to <session:1>, not <session:2>"}], client_sessions=(parent,))
    answer = script.answer(RequestView(has_tools=True))
    assert answer.response is not None
    (end,) = [c for c in answer.response.chunks if c["type"] == "block-end"]
    assert end["block"]["text"] == f"to {parent}, not <session:2>"
