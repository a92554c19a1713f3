"""The shared core of the one-problem fixture agents (stdlib only, starts fast).

`serve(prompt)` speaks just enough ACP: `initialize`, `session/new`, `session/list`
(empty), and `session/prompt`, which `prompt(session_id, text)` answers (the default,
`model_turn`, is a small model loop over the fake LLM's parity-stream wire:
`$PARITY_BASE/stream`, a `/tools/call` per tool-call block, then the next request).
Each `*_agent.py` beside this file changes one thing, to cause one run problem.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

Prompt = Callable[[str, str], str]
"""(session id, prompt text) -> stopReason."""

_ids = iter(range(1000, 10**9))


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def update(session_id: str, body: dict[str, Any]) -> None:
    params = {"sessionId": session_id, "update": body}
    send({"jsonrpc": "2.0", "method": "session/update", "params": params})


def say(session_id: str, text: str) -> None:
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def ask_client(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client and return its response (other lines are dropped:
    the harness sends nothing else while a prompt runs)."""
    ident = next(_ids)
    send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == ident and "method" not in message:
            return dict(message)
    raise SystemExit(0)


def post(path: str, body: Any) -> tuple[int, Any]:
    """POST JSON to the run's base URL: (status, parsed body or list of NDJSON lines)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        os.environ["PARITY_BASE"] + path, data=data, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return status, lines[0] if len(lines) == 1 and path != "/stream" else lines


def model_turn(
    session_id: str, text: str, *, before_tool: Callable[[str, dict[str, Any]], None] | None = None
) -> str:
    """Stream the script's answers, calling fixture tools, until a turn without tools."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": text}]}]
    for _ in range(10):
        body = {"provider": "mock", "model": "mock", "messages": messages, "tools": []}
        status, chunks = post("/stream", body)
        if status != 200:
            return "refusal"
        calls = []
        reason = "end_turn"
        for chunk in chunks:
            if chunk["type"] == "block-end" and chunk["block"]["type"] == "text":
                say(session_id, chunk["block"]["text"])
            elif chunk["type"] == "block-end" and chunk["block"]["type"] == "tool-call":
                calls.append(chunk["block"])
            elif chunk["type"] == "finish" and chunk["reason"]["kind"] == "max-tokens":
                reason = "max_tokens"
        if not calls:
            return reason
        for call in calls:
            if before_tool is not None:
                before_tool(session_id, call)
            body = {"name": call["name"], "callId": call["id"], "arguments": {}}
            post("/tools/call", body)
            messages.append({"role": "tool", "content": [{"type": "text", "text": "done"}]})
    return "max_turn_requests"


def serve(prompt: Prompt = model_turn) -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params, ident = (
            message.get("method"),
            message.get("params") or {},
            message.get("id"),
        )
        if ident is None:
            continue
        result: dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "session/new":
            result = {"sessionId": "stub-session"}
        elif method == "session/list":
            result = {"sessions": []}
        elif method == "session/prompt":
            texts = [b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"]
            result = {"stopReason": prompt(params["sessionId"], " ".join(texts))}
        else:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": ident, "error": error})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    serve()
