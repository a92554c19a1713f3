"""Image prompts through the real `acp-plus` process (§5, §8.2) against the fake LLM."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, image_block, text_block
from plus_agent import RawAgent, World, WorldFactory, conversation, raw_agent, sdk_agent

from parity.scenario.model import DEFAULT_CATALOG

# A real 1x1 PNG: small, so the fake's recorded bodies stay readable.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode("ascii")
PNG_DIGEST = hashlib.sha256(PNG).hexdigest()
GIF = b"GIF89a\x01\x00\x01\x00"
GIF_B64 = base64.b64encode(GIF).decode("ascii")


def vision_catalog() -> dict[str, Any]:
    """The default catalog, its `mock` model image-capable, plus a text-only `plain`."""
    catalog = copy.deepcopy(DEFAULT_CATALOG)
    models = catalog["providers"][0]["models"]
    models[0]["inputModalities"] = ["text", "image"]
    models.append({"id": "plain", "name": "Mock Plain", "inputModalities": ["text"]})
    return catalog


def log_lines(home: Path, session_id: str) -> list[str]:
    return (home / "sessions" / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines()


def events(home: Path, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_lines(home, session_id)[1:]]


def stored(home: Path) -> list[str]:
    root = home / "attachments"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


async def _new(agent: RawAgent, w: World) -> str:
    init = await agent.call("initialize", {"protocolVersion": 1})
    assert init["result"]["agentCapabilities"]["promptCapabilities"]["image"] is True
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


async def _prompt_error(agent: RawAgent, session_id: str, prompt: list[Any]) -> dict[str, Any]:
    response = await agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


async def test_image_is_stored_logged_by_digest_and_sent_to_the_model(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "a pixel"}], catalog=vision_catalog())
    async with sdk_agent(w) as s:
        init = await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.prompt_capabilities is not None
        assert init.agent_capabilities.prompt_capabilities.image is True
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = await s.conn.prompt(
            session_id=new.session_id,
            prompt=[text_block("what is "), image_block(PNG_B64, "image/png"), text_block("?")],
        )
    assert result.stop_reason == "end_turn"
    assert stored(w.home) == [PNG_DIGEST]
    assert (w.home / "attachments" / PNG_DIGEST).read_bytes() == PNG
    user = [e for e in events(w.home, new.session_id) if e["type"] == "user/message"]
    content = [
        {"type": "text", "text": "what is "},
        {"type": "image", "mimeType": "image/png", "digest": PNG_DIGEST},
        {"type": "text", "text": "?"},
    ]
    assert user[0]["content"] == content
    # Base64 never reaches the session log (§5).
    assert not any(PNG_B64 in line for line in log_lines(w.home, new.session_id))
    # parity-stream carries the digest form its spec allows, not the bytes.
    assert conversation(w.model_requests()[0]["messages"]) == [{"role": "user", "content": content}]


async def test_admission_refusals_are_exact_and_save_nothing(world: WorldFactory) -> None:
    w = world(catalog=vision_catalog())
    png = {"type": "image", "mimeType": "image/png", "data": PNG_B64}
    cases: list[tuple[list[Any], int, str]] = [
        (
            [png, {"type": "image", "mimeType": "image/bmp", "data": GIF_B64}],
            -32602,
            "Invalid params: image mimeType must be image/png, image/jpeg, image/webp, or "
            "image/gif",
        ),
        (
            [png, {"type": "image", "mimeType": "image/gif", "data": GIF_B64.rstrip("=")}],
            -32602,
            "Invalid params: image data must be canonical base64",
        ),
        (
            # URL-safe alphabet: decodes in lenient decoders, but is not canonical.
            [{"type": "image", "mimeType": "image/png", "data": "-_-_"}],
            -32602,
            "Invalid params: image data must be canonical base64",
        ),
        # The store's policy: its message is kept (§5).
        ([png, {"type": "image", "mimeType": "image/gif", "data": ""}], -32602, ""),
    ]
    async with raw_agent(w) as agent:
        session_id = await _new(agent, w)
        for prompt, code, message in cases:
            error = await _prompt_error(agent, session_id, prompt)
            expected = message or "Invalid params: image 2 is empty"
            assert error == {"code": code, "message": expected}
    assert stored(w.home) == []
    assert w.model_requests() == []
    assert events(w.home, session_id) == []


async def test_text_only_catalog_does_not_advertise_images(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert init["result"]["agentCapabilities"]["promptCapabilities"]["image"] is False
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        error = await _prompt_error(
            agent,
            new["result"]["sessionId"],
            [{"type": "image", "mimeType": "image/png", "data": PNG_B64}],
        )
    assert error == {
        "code": -32602,
        "message": "Invalid params: inline image prompts were not advertised by this connection",
    }
    assert stored(w.home) == []


async def test_store_failure_is_an_internal_error_and_the_slot_is_freed(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "fine"}], catalog=vision_catalog())
    w.home.mkdir()
    (w.home / "attachments").write_text("not a directory")
    async with raw_agent(w) as agent:
        session_id = await _new(agent, w)
        error = await _prompt_error(
            agent, session_id, [{"type": "image", "mimeType": "image/png", "data": PNG_B64}]
        )
        assert error == {
            "code": -32603,
            "message": "Internal error: unable to persist the prompt image batch",
        }
        # Admission failed, so the slot is free for the next prompt.
        ok = await agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
        )
    assert ok["result"] == {"stopReason": "end_turn"}


async def test_text_only_model_refuses_images_and_sees_history_images_as_text(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "seen"}, {"text": "plain answer"}], catalog=vision_catalog())
    async with raw_agent(w) as agent:
        session_id = await _new(agent, w)
        first = await agent.call(
            "session/prompt",
            {
                "sessionId": session_id,
                "prompt": [{"type": "image", "mimeType": "image/png", "data": PNG_B64}],
            },
        )
        assert first["result"] == {"stopReason": "end_turn"}
        switched = await agent.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": '["mock","plain"]'},
        )
        assert "result" in switched, switched
        error = await _prompt_error(
            agent, session_id, [{"type": "image", "mimeType": "image/gif", "data": GIF_B64}]
        )
        assert error == {
            "code": -32602,
            "message": 'Invalid params: model "plain" does not declare image input',
        }
        second = await agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "and now?"}]},
        )
        assert second["result"] == {"stopReason": "end_turn"}
    assert stored(w.home) == [PNG_DIGEST]  # the refused GIF was never written
    request = w.model_requests()[1]
    assert request["model"] == "plain"
    assert request["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "[image omitted: model has no image input]"}],
    }


async def test_resumed_session_still_sends_the_image(world: WorldFactory) -> None:
    w = world(llm=[{"text": "one"}, {"text": "two"}], catalog=vision_catalog())
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        await s.conn.prompt(session_id=new.session_id, prompt=[image_block(PNG_B64, "image/png")])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await s.conn.resume_session(session_id=new.session_id, cwd=str(w.workdir))
        result = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
    assert result.stop_reason == "end_turn"
    messages = conversation(w.model_requests()[1]["messages"])
    assert messages[0] == {
        "role": "user",
        "content": [{"type": "image", "mimeType": "image/png", "digest": PNG_DIGEST}],
    }
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": "again"}]}
