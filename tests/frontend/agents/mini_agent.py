"""A minimal ACP agent for the front end's own tests (stdlib only, starts fast).

It speaks just enough ACP to carry a text turn: `initialize`, `session/new`, and
`session/prompt`, which it answers by streaming the fake LLM's parity-stream response
(`$PARITY_BASE/stream`) and sending one `agent_message_chunk` per committed text block.
Session ids are random, so runs exercise normalization. The mutation test copies this
file and edits one output field with a text replace; that must make `parity run` fail.

Test hooks: `$MINI_LOG` (a file: one line appended per started session, to count runs),
`$MINI_NOISE=1` (a random `_meta.nonce` in the initialize result: nondeterminism for
`parity calibrate` to find), `$MINI_SLIP=1` (a `tool_call_update` for a tool call no
`tool_call` announced: one conformance finding per prompt), `$MINI_HANG=1` (never answer
`session/prompt`, ignoring SIGTERM: only SIGKILL ends it), `$MINI_IGNORE_EOF=1` (stay
alive after stdin closes, like codex-acp, until a signal ends it).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request
import uuid
from typing import Any

STOP_REASONS = {"stop": "end_turn", "max-tokens": "max_tokens", "tool-calls": "end_turn"}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def stream(text: str) -> list[dict[str, Any]]:
    body = {
        "provider": "mock",
        "model": "mock",
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "tools": [],
    }
    request = urllib.request.Request(
        os.environ["PARITY_BASE"] + "/stream",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return [json.loads(line) for line in response if line.strip()]


def notify_update(session_id: str, update: dict[str, Any]) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


def prompt(session_id: str, params: dict[str, Any]) -> dict[str, Any]:
    if os.environ.get("MINI_HANG"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(60)
    if os.environ.get("MINI_SLIP"):
        slip = {"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "completed"}
        notify_update(session_id, slip)
    text = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text")
    reason = "end_turn"
    for chunk in stream(text):
        if chunk["type"] == "block-end" and chunk["block"]["type"] == "text":
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": chunk["block"]["text"]},
            }
            notify_update(session_id, update)
        elif chunk["type"] == "finish":
            reason = STOP_REASONS.get(chunk["reason"]["kind"], "refusal")
    return {"stopReason": reason}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params, ident = (
            message.get("method"),
            message.get("params") or {},
            message.get("id"),
        )
        if ident is None:
            continue
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": False},
                "authMethods": [],
            }
            if os.environ.get("MINI_NOISE"):
                result["_meta"] = {"nonce": uuid.uuid4().hex}
        elif method == "session/new":
            if os.environ.get("MINI_LOG"):
                with open(os.environ["MINI_LOG"], "a") as log:
                    log.write(f"{os.getpid()}\n")
            result = {"sessionId": f"mini-{uuid.uuid4().hex}"}
        elif method == "session/prompt":
            result = prompt(params["sessionId"], params)
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})
    while os.environ.get("MINI_IGNORE_EOF"):
        time.sleep(60)


if __name__ == "__main__":
    main()
