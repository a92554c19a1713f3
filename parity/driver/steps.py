"""Client steps as JSON-RPC params: labels, placeholders, and the params each step sends.

Pure functions of a step's parameters and what the run knows (session ids, the last
list cursor, the scenario's `client` section); the step handlers
(`parity.driver.dispatch`) send what they build and record the answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from parity.driver.step_errors import ScriptError
from parity.driver.triggers import after_text
from parity.scenario.model import Step

PROTOCOL_VERSION = 1
CLIENT_INFO = {"name": "acp-parity", "version": "0.1.0"}

_PLACEHOLDER = re.compile(r"\{(workdir|home|tmp|(?:session|request):[^{}\s]+)\}")


def substitute(value: Any, lookup: Callable[[str], str]) -> Any:
    """`value` with every `{workdir}`, `{home}`, `{tmp}`, `{session:NAME}` and
    `{request:NAME}` in its strings replaced through `lookup` (recursively). Other
    braces are left alone, so JSON-looking text survives."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: lookup(m.group(1)), value)
    if isinstance(value, list):
        return [substitute(v, lookup) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, lookup) for k, v in value.items()}
    return value


def step_label(step: Step) -> str:
    """A short human label for a step, e.g. `prompt s1 "go"`, with its trigger when it
    waits for one: `prompt s2 "go" (after agent_request session/request_permission)`."""
    label = _kind_label(step)
    return f"{label} ({after_text(step.after)})" if step.after is not None else label


def _kind_label(step: Step) -> str:
    p = step.params if isinstance(step.params, dict) else {}
    if step.kind == "prompt":
        text = p.get("text")
        shown = f' "{text[:40]}"' if isinstance(text, str) else " <content>"
        return f"prompt {p.get('session', '?')}{shown}"
    if step.kind in ("request", "notify"):
        return f"{step.kind} {p.get('method', '?')}"
    if step.kind == "new_session":
        return f"new_session {p.get('as', '')}".rstrip()
    if step.kind == "wait":  # every key: `wait s1` would hide what it waits for
        return "wait " + ", ".join(f"{k}={v}" for k, v in sorted(p.items()))
    if "session" in p:
        return f"{step.kind} {p['session']}"
    return step.kind


def trigger_text(trigger: Mapping[str, Any]) -> str:
    """A prompt's cancel trigger in words: `after update tool_call, count 2`,
    `after llm_request 1`, `after ms 500` (with `via cancel_request` when not the
    default session/cancel)."""
    text = after_text(trigger.get("after"))
    if trigger.get("via", "session_cancel") != "session_cancel":
        text += f" via {trigger['via']}"
    return text


def prompt_outcome(response: Any) -> str:
    """How a prompt's response ended it, in words: `with stopReason end_turn`, or
    `with error -32602 (Invalid params)`."""
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        error = response["error"]
        return f"with error {error.get('code')} ({error.get('message')})"
    result = response.get("result") if isinstance(response, dict) else None
    reason = result.get("stopReason") if isinstance(result, dict) else None
    return f"with stopReason {reason}" if reason is not None else "without a stopReason"


def initialize_params(p: Mapping[str, Any], client: Mapping[str, Any]) -> dict[str, Any]:
    """Params of an `initialize` step: the step's `capabilities` (or the scenario's
    `client.capabilities`), with `fs` and `terminal` set from what the client serves."""
    caps = dict(p.get("capabilities", client.get("capabilities")) or {})
    fs = client.get("fs")
    if isinstance(fs, dict):
        caps["fs"] = {
            **(caps.get("fs") or {}),
            "readTextFile": bool(fs.get("read")),
            "writeTextFile": bool(fs.get("write")),
        }
    if client.get("terminal"):
        caps["terminal"] = True
    return {
        "protocolVersion": p.get("protocol_version", PROTOCOL_VERSION),
        "clientCapabilities": caps,
        "clientInfo": CLIENT_INFO,
    }


SESSION_METHODS = {
    "new_session": "session/new",
    "load_session": "session/load",
    "resume_session": "session/resume",
}
"""The method each session-opening step kind sends."""


def session_params(
    kind: str, p: Mapping[str, Any], session_id: Any, workdir: Path, mcp_servers: list[Any]
) -> dict[str, Any]:
    """Params of a `new_session`, `load_session` or `resume_session` step (`session_id`
    is ignored for `new_session`, which has none yet)."""
    params: dict[str, Any] = {}
    if kind != "new_session":
        params["sessionId"] = session_id
    params["cwd"] = p.get("cwd", str(workdir))
    params["mcpServers"] = mcp_servers
    if "additional_directories" in p:
        params["additionalDirectories"] = p["additional_directories"]
    return params


def list_params(p: Mapping[str, Any], last_cursor: Any) -> dict[str, Any]:
    """Params of a `list_sessions` step; `cursor: next` sends `last_cursor`, the
    previous list's nextCursor (a `ScriptError` if there was none)."""
    params: dict[str, Any] = {}
    if "cwd" in p:
        params["cwd"] = p["cwd"]
    if p.get("cursor") == "next":
        if not isinstance(last_cursor, str):
            raise ScriptError("cursor: next, but the previous list had no nextCursor")
        params["cursor"] = last_cursor
    elif "cursor" in p:
        params["cursor"] = p["cursor"]
    return params
