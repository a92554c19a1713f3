"""Images over the openai-chat provider, through the real process: the stored bytes go
out as a data URL, also after a resume in a new process (the log holds digests only)."""

from __future__ import annotations

import base64
from typing import Any

from acp import PROTOCOL_VERSION, image_block, text_block
from plus_agent import World, WorldFactory, conversation, sdk_agent

GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00"
GIF_B64 = base64.b64encode(GIF).decode("ascii")
DATA_URL = f"data:image/gif;base64,{GIF_B64}"


def chat_world(world: WorldFactory) -> World:
    """A world whose only provider is openai-chat on the fake, with an image model."""
    w = world(llm=[{"text": "one"}, {"text": "two"}])
    w.config.write_text(
        f"""provider = "chat"
model = "vision"
builtin_tools = false
[providers.chat]
api = "openai-chat"
base_url = "{w.run.base_url}/v1"
api_key_env = "FAKE_KEY"
[[providers.chat.models]]
id = "vision"
name = "Vision"
input_modalities = ["text", "image"]
""",
        encoding="utf-8",
    )
    return w


def chat_requests(w: World) -> list[dict[str, Any]]:
    return [r.body for r in w.run.requests if r.path == "/v1/chat/completions"]


async def test_openai_chat_receives_the_image_as_a_data_url_before_and_after_resume(
    world: WorldFactory,
) -> None:
    w = chat_world(world)
    env = {**w.env(), "FAKE_KEY": "local"}
    w.env = lambda: env  # type: ignore[method-assign]
    async with sdk_agent(w) as s:
        init = await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.prompt_capabilities is not None
        assert init.agent_capabilities.prompt_capabilities.image is True
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        first = await s.conn.prompt(
            session_id=new.session_id,
            prompt=[text_block("look"), image_block(GIF_B64, "image/gif")],
        )
    assert first.stop_reason == "end_turn"
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await s.conn.resume_session(session_id=new.session_id, cwd=str(w.workdir))
        second = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
    assert second.stop_reason == "end_turn"
    user_turn = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": DATA_URL}},
        ],
    }
    requests = chat_requests(w)
    assert [conversation(r["messages"])[0] for r in requests] == [user_turn, user_turn]
    assert requests[1]["messages"][-1] == {"role": "user", "content": "again"}
