"""The agent's own requests are answered whatever limit a flood reaches: past the frame
limit as the scenario says (up to a reserve), then with an error, and over the line
limit with an error; the limit is the first problem, and no side waits in vain (issue
33). A response over the line limit fails its step with that reason, not a timeout."""

from __future__ import annotations

import re

import pytest

from parity.checks.problems import run_problems
from parity.driver import jsonrpc, recording
from tests.support.driver import BASIC, run, scenario, st

PROMPT = [*BASIC, st("prompt", session="s1", text="go")]
ALLOW = {"permission": "allow-once"}


async def test_requests_past_the_frame_limit_and_over_the_line_limit_are_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recording, "MAX_FRAMES", 300)
    monkeypatch.setattr(recording, "MAX_REQUESTS_PAST_LIMIT", 2)
    env = {"FLOOD": "1000", "ASKS": "3", "BIG": str(jsonrpc.FRAME_LIMIT + 10)}
    t = await run(PROMPT, "requests_after_flood", env=env, client=ALLOW, timeouts={"response": 20})
    assert t.steps[2].problem is None
    result = t.steps[2].response["result"]
    refused = "the test client did not handle this request: "
    answers = result["_meta"]["answers"]
    allowed, third, big = answers[:2], answers[2], answers[3]
    assert len(answers) == 4
    # The reserve: answered as the scenario says, and recorded with their answers.
    assert allowed == ["allow", "allow"]
    assert third == [jsonrpc.REFUSED, refused + "past the frame limit"]
    assert big[0] == jsonrpc.REFUSED
    assert big[1].startswith(refused + "a line past a recording limit")
    problems = run_problems(scenario(PROMPT, client=ALLOW), t)
    assert [p.kind for p in problems[:2]] == ["frame-limit", "frame-limit"]
    assert problems[0].message.startswith("frame limit (300) reached: ")
    assert problems[1].message.startswith(
        "requests refused: 2 request(s) of the agent were answered with error -32603"
        " for a limit, not as the scenario says: session/request_permission (past the frame"
        " limit); fs/write_text_file (a line past a recording limit, "
    )


async def test_a_request_over_the_line_limit_is_answered_with_an_error() -> None:
    env = {"FLOOD": "0", "ASKS": "0", "BIG": str(jsonrpc.FRAME_LIMIT + 10)}
    t = await run(PROMPT, "requests_after_flood", env=env, timeouts={"response": 20})
    assert t.steps[2].problem is None
    [big] = t.steps[2].response["result"]["_meta"]["answers"]
    oversize = next(f for f in t.frames if f.oversize)
    assert big[0] == jsonrpc.REFUSED
    assert re.fullmatch(
        f"the test client did not handle this request: frame {oversize.seq}, \\d+ bytes over"
        f" the line limit \\({jsonrpc.FRAME_LIMIT}\\)",
        big[1],
    )
    # The error answer is recorded right after the request's head.
    answer = t.frames[oversize.seq + 1]
    assert answer.direction == "out" and answer.message["error"]["code"] == jsonrpc.REFUSED
    problems = run_problems(scenario(PROMPT), t)
    assert [p.kind for p in problems] == ["frame-limit", "garbage"]


async def test_a_response_over_the_line_limit_fails_its_step_with_that_reason() -> None:
    env = {"FLOOD": "0", "ASKS": "0", "BIG": "0", "PAD": str(jsonrpc.FRAME_LIMIT)}
    t = await run(PROMPT, "requests_after_flood", env=env, timeouts={"response": 60})
    oversize = next(f for f in t.frames if f.oversize)
    assert t.steps[2].problem is not None
    assert re.fullmatch(
        f'the answer to prompt s1 "go" could not be read: frame {oversize.seq} is \\d+ bytes,'
        f" over the line limit \\({jsonrpc.FRAME_LIMIT}\\)",
        t.steps[2].problem,
    )
    # At once, not after the response timeout.
    assert t.frames[-1].t < 30
    kinds = [p.kind for p in run_problems(scenario(PROMPT), t)]
    assert kinds[0] == "garbage" and "timeout" not in kinds


def test_head_members_reads_the_scalars_before_the_bulk_and_stops_where_the_head_ends() -> None:
    read = jsonrpc.head_members
    head = b'{"jsonrpc":"2.0","id":7,"method":"fs/write_text_file","params":{"content":"xx'
    assert read(head) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "fs/write_text_file",
        "params": jsonrpc.UNREAD,
    }
    assert read(b'{"a\\"]":["]"],"id":"x","result":"xxxx') == {
        'a"]': jsonrpc.UNREAD,
        "id": "x",
        "result": jsonrpc.UNREAD,
    }
    # A number the head may cut is not read; nor is anything but an object.
    assert read(b'{"jsonrpc":"2.0","id":12') == {"jsonrpc": "2.0", "id": jsonrpc.UNREAD}
    assert read(b"[1,2") == {} and read(b"") == {} and read(b'{"id":x,') == {"id": jsonrpc.UNREAD}
