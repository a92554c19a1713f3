"""Helpers the increment tests share: a raw client that answers the agent's requests,
and readers for the frames and model requests a run leaves behind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plus_agent import RawAgent, World

Answer = Callable[[dict[str, Any]], Any]
"""Maps an agent->client request frame to the `result` to answer it with."""

FORMS = {"elicitation": {"form": {}}}
"""`clientCapabilities` of a client that shows elicitation forms."""


def reject_all(frame: dict[str, Any]) -> Any:
    """Answer every permission request `reject-once` (any other request: cancel)."""
    if frame["method"] == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "reject-once"}}
    return {"action": "cancel"}


async def exchange(
    agent: RawAgent, msg_id: int, answer: Answer = reject_all, timeout: float = 10.0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read until the response to `msg_id`, answering the agent's requests on the way;
    returns the response and every frame before it (the agent's requests included)."""
    before: list[dict[str, Any]] = []
    while True:
        frame = await agent.recv(timeout)
        if frame.get("id") == msg_id and "method" not in frame:
            return frame, before
        before.append(frame)
        if "method" in frame and "id" in frame:
            await agent.send({"jsonrpc": "2.0", "id": frame["id"], "result": answer(frame)})


async def open_session(
    agent: RawAgent, w: World, capabilities: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """initialize (with `capabilities`) and session/new; the session id and new's result.
    The command list that follows the answer is read too, so later reads start clean."""
    params: dict[str, Any] = {"protocolVersion": 1}
    if capabilities is not None:
        params["clientCapabilities"] = capabilities
    await agent.call("initialize", params)
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    follow = await agent.recv()
    assert updates([follow]) and updates([follow])[0]["sessionUpdate"] == (
        "available_commands_update"
    ), follow
    result: dict[str, Any] = new["result"]
    return result["sessionId"], result


async def prompt(
    agent: RawAgent, session_id: str, text: str, answer: Answer = reject_all
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One text prompt to its answer: (response, frames before it)."""
    msg_id = await agent.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    return await exchange(agent, msg_id, answer)


def updates(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `update` objects of the session/update notifications among `frames`."""
    return [f["params"]["update"] for f in frames if f.get("method") == "session/update"]


def kinds(frames: list[dict[str, Any]]) -> list[str]:
    """The `sessionUpdate` kinds of the updates among `frames`, in order."""
    return [u["sessionUpdate"] for u in updates(frames)]


def requests_of(frames: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The agent->client requests of `method` among `frames`."""
    return [f for f in frames if f.get("method") == method and "id" in f]


def texts(message: dict[str, Any]) -> list[str]:
    """The text blocks of one model-request message."""
    return [b["text"] for b in message.get("content", []) if b.get("type") == "text"]
