"""A lone surrogate (JSON `"\\ud800"`, valid JSON, not valid Unicode) in prompt text or in
a `cwd` is refused with -32602 before anything is written: no half-written turn in the
session log, no header for a session that was never made, and the session keeps working.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from plus_agent import WorldFactory, log_events, raw_agent

from acp_plus.protocol.content import ContentError, admit

LONE = "Invalid params: prompt text contains a lone surrogate (U+D800); text must be valid Unicode"


def _text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize(
    ("blocks", "code_point"),
    [
        ([_text("a\ud800b")], "D800"),
        ([_text("ok"), _text("\udfff")], "DFFF"),
        ([_text("\ude00\ud83d")], "DE00"),  # low before high is no pair
        ([_text("x\ud83d"), {"type": "resource_link", "name": "n", "uri": "u"}], "D83D"),
    ],
)
def test_lone_surrogates_in_prompt_text_are_refused(
    blocks: list[dict[str, str]], code_point: str
) -> None:
    with pytest.raises(ContentError) as refused:
        admit(blocks, image_advertised=False)
    assert refused.value.kind == "invalid"
    assert f"lone surrogate (U+{code_point})" in refused.value.message


def test_a_pair_split_across_blocks_is_one_character_as_in_javascript() -> None:
    assert admit([_text("smile \ud83d"), _text("\ude00")], image_advertised=False) == [
        _text("smile \U0001f600")
    ]
    # In a resource link a surrogate is rendered escaped, like JSON.stringify: valid text.
    (rendered,) = admit(
        [{"type": "resource_link", "name": "a\ud800", "uri": "u"}], image_advertised=False
    )
    assert "\\ud800" in rendered["text"]


def _sessions(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*.jsonl"))


async def test_a_prompt_with_a_lone_surrogate_leaves_no_half_turn(world: WorldFactory) -> None:
    w = world(llm=[{"text": "fine"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        # Written by hand: the escape must reach the agent as JSON text.
        await agent.send_line(
            '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"'
            + session_id
            + '","prompt":[{"type":"text","text":"bad \\ud800 text"}]}}'
        )
        refused, _ = await agent.until_response(7)
        assert refused["error"] == {"code": -32602, "message": LONE}
        assert not [e for e in log_events(w.home, session_id) if "turn" in e]
        ok = await agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [_text("good text")]},
            timeout=30,
        )
        assert ok["result"] == {"stopReason": "end_turn"}
    events = log_events(w.home, session_id)
    assert [e["type"] for e in events][:2] == ["turn/start", "user/message"]
    assert events[0]["turn"] == 1  # the refused prompt took no turn number
    assert events[1]["content"] == [_text("good text")]


@pytest.mark.parametrize("method", ["session/new", "session/resume", "session/list"])
async def test_a_cwd_with_a_lone_surrogate_is_refused_before_any_write(
    world: WorldFactory, method: str
) -> None:
    w = world()
    params = {
        "session/new": '{"cwd":"/tmp/x\\ud800","mcpServers":[]}',
        "session/resume": '{"sessionId":"00000000-0000-4000-8000-000000000000",'
        '"cwd":"/tmp/x\\ud800","mcpServers":[]}',
        "session/list": '{"cwd":"/tmp/x\\ud800"}',
    }[method]
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        await agent.send_line(f'{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{params}}}')
        refused, _ = await agent.until_response(9)
        assert refused["error"] == {
            "code": -32602,
            "message": "Invalid params: cwd contains a lone surrogate (U+D800)",
        }
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        assert "result" in new
    assert len(_sessions(w.home)) == 1  # only the good session has a log
