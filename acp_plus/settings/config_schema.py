"""The configuration's one schema and its validator (pure).

`SCHEMA` (a JSON Schema subset) is the single source of truth: `--dump-config-schema`
prints it and `check` validates a parsed TOML document against it, a tiny validator so
that start-up never pays for importing `jsonschema`. `acp_plus/settings/config.py` builds the
frozen `Config` from a document that passed.
"""

from __future__ import annotations

import math
from typing import Any

from acp_plus.core.context import DEFAULT_IDENTITY, DEFAULT_PERSONA
from acp_plus.core.tools.families import FAMILY_NAMES
from acp_plus.settings.approvals_schema import APPROVALS_SCHEMA


class ConfigError(Exception):
    """A user-caused configuration problem; the message names the file and key."""


APIS = ("openai-chat", "parity-stream")
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
# `plus` (default): the increments of docs/contract.md §6 are on; `native`: all off, so the
# wire is exactly native dsh-acp's (acp_plus/features/__init__.py reads it).
PROFILES = ("native", "plus")

_EFFORT: dict[str, Any] = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to id."},
        "description": {"type": "string"},
    },
}

_MODEL: dict[str, Any] = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "Model id sent to the API."},
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to id."},
        "description": {"type": "string"},
        "context_window": {"type": "integer", "minimum": 1},
        "input_modalities": {
            "type": "array",
            "items": {"type": "string", "enum": ["text", "image"]},
            "default": ["text"],
        },
        "reasoning_efforts": {"type": "array", "items": _EFFORT},
        "default_effort": {"type": "string", "description": "One of reasoning_efforts ids."},
    },
}

_PROVIDER: dict[str, Any] = {
    "type": "object",
    "required": ["api"],
    "additionalProperties": False,
    "properties": {
        "api": {"type": "string", "enum": list(APIS)},
        "base_url": {"type": "string", "minLength": 1},
        "api_key_env": {
            "type": "string",
            "minLength": 1,
            "description": "Environment variable holding the API key (openai-chat).",
        },
        "name": {"type": "string", "minLength": 1, "description": "Label; defaults to route."},
        "models": {"type": "array", "items": _MODEL},
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "description": "openai-chat: `max_tokens` sent with every request (default: not "
            "sent, the provider's limit). Rejected for parity-stream (the protocol has no "
            "such field).",
        },
        "request_timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds per attempt to connect, send and get the answer's status "
            "(openai-chat: the SDK timeout, also each read; default 600). parity-stream "
            "default: no limit (connect 10).",
        },
        "stream_idle_timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds to wait for the next streamed chunk before the turn fails "
            "(default: 600 openai-chat, no limit parity-stream).",
        },
        "retries": {
            "type": "integer",
            "minimum": 0,
            "description": "openai-chat: the SDK's retries (connection errors, timeouts, 408, "
            "409, 429, 5xx; default 2). parity-stream: transport errors before any answer "
            "only, never a protocol failure (default 0).",
        },
    },
}

_WORKSPACE_CONTEXT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "description": "Workspace instructions (AGENTS.md and friends) sent to the model once "
    "per session, as native does.",
    "properties": {
        "max_bytes": {
            "type": "integer",
            "minimum": 0,
            "default": 65536,
            "description": "Budget of the rendered instructions in UTF-8 bytes (broadest files "
            "dropped first, then the most specific cut); 0 turns loading off.",
        },
        "max_source_bytes": {
            "type": "integer",
            "minimum": 1,
            "default": 1048576,
            "description": "An instruction file larger than this is ignored.",
        },
        "files": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": ["AGENTS.md", "CLAUDE.md"],
            "description": "File names read in each directory from the project root to the cwd.",
        },
        "local_files": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": ["AGENTS.local.md", "CLAUDE.local.md"],
            "description": "Local overlays, read after `files` in each directory.",
        },
        "root_markers": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [".git"],
            "description": "Entries that mark the project root (searched upward from the cwd; "
            "without one, the cwd is the root).",
        },
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "acp-plus configuration (TOML)",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "provider": {"type": "string", "minLength": 1, "description": "Initial route."},
        "model": {"type": "string", "minLength": 1, "description": "Initial model."},
        "session_list_page_size": {"type": "integer", "minimum": 1, "default": 100},
        "profile": {
            "type": "string",
            "enum": list(PROFILES),
            "default": "plus",
            "description": "`plus`: the acp-plus increments (docs/contract.md §6) are on, each "
            "narrowed by its own flag below; `native`: every increment is off and the wire is "
            "exactly native dsh-acp's.",
        },
        "enable_session_load": {
            "type": "boolean",
            "default": True,
            "description": "plus profile: advertise and serve `session/load` (§6.1); off, the "
            "method answers -32602 `session/load is not enabled by this deployment`.",
        },
        "enable_additional_directories": {
            "type": "boolean",
            "default": True,
            "description": "plus profile: accept and advertise `additionalDirectories` (§6.2); "
            "off, a non-empty list gets native's `additionalDirectories is not supported`.",
        },
        "sandbox": {"type": "string", "enum": list(SANDBOXES), "default": "workspace-write"},
        "builtin_tools": {
            "anyOf": [
                {"type": "boolean"},
                {"type": "array", "items": {"type": "string", "enum": list(FAMILY_NAMES)}},
            ],
            "default": True,
            "description": "The built-in tool families the model is shown (docs/acp-plus.md, "
            "Built-in tools): true, every family acp-plus implements; false, none; or a list "
            "of native's family names (a family acp-plus lacks offers nothing, and says so).",
        },
        "hooks": {
            "type": "boolean",
            "default": False,
            "description": "Run the Claude Code `hooks.json` and Codex `codex-hooks.json` of "
            "the launch directory around every tool call (PreToolUse, PostToolUse), as native "
            "0.1.0-rc.8 does; off, as 0.2.1-rc.2, which mounts no hooks (docs/acp-plus.md).",
        },
        "identity": {
            "type": "string",
            "default": DEFAULT_IDENTITY,
            "description": "First section of the system prompt (native's harness identity); "
            "empty leaves it out.",
        },
        "persona": {
            "type": "string",
            "default": DEFAULT_PERSONA,
            "description": "Second section of the system prompt: a template with {{model}} and "
            "{{cwd}} (native's shipped persona by default); empty leaves it out.",
        },
        "runtime_context": {
            "type": "boolean",
            "default": True,
            "description": "Send the runtime context (file and approval policy) as a user "
            "message whenever it changes, as native does.",
        },
        "workspace_context": _WORKSPACE_CONTEXT,
        "approvals": APPROVALS_SCHEMA,
        "mcp_startup_timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "default": 30,
            "description": "Seconds an MCP server of session/new or session/resume gets to "
            "answer initialize and list its tools; then the request fails naming it.",
        },
        "max_frame_bytes": {
            "type": "integer",
            "minimum": 1024,
            "default": 67108864,
            "description": "Largest incoming JSON-RPC line in bytes; a longer one is "
            "discarded unread and answered -32600.",
        },
        "providers": {
            "type": "object",
            "description": "Routes by id. When present it replaces the default `deepseek` "
            "route. A parity-stream table registers every catalog provider under its "
            "catalog id, plus the catalog's fixture tools.",
            "additionalProperties": _PROVIDER,
        },
    },
}


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def check(value: Any, schema: dict[str, Any], where: str) -> None:
    if "anyOf" in schema:
        schema = _branch(value, schema["anyOf"], where)
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _TYPES[kind])
        if kind in ("integer", "number") and isinstance(value, bool):
            ok = False  # TOML true is not a number
        if not ok:
            raise ConfigError(f"{where}: expected {kind}, got {type(value).__name__}")
    if kind == "number" and not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"])
        raise ConfigError(f"{where}: {value!r} is not one of {choices}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ConfigError(f"{where}: must be >= {schema['minimum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        raise ConfigError(f"{where}: must be > {schema['exclusiveMinimum']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise ConfigError(f"{where}: must not be empty")
    if kind == "array":
        for i, item in enumerate(value):
            check(item, schema.get("items", {}), f"{where}[{i}]")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise ConfigError(f"{where}: missing required key {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            path = f"{where}.{key}" if where else key
            if key in props:
                check(item, props[key], path)
            elif extra is False:
                raise ConfigError(f"{path}: unknown key")
            elif isinstance(extra, dict):
                check(item, extra, path)


def _branch(value: Any, branches: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """The `anyOf` branch whose type the value has (its errors are the ones to report)."""
    for branch in branches:
        kinds = _TYPES[branch["type"]]
        if isinstance(value, kinds) and not (
            branch["type"] != "boolean" and isinstance(value, bool)
        ):
            return branch
    wanted = " or ".join(str(b["type"]) for b in branches)
    raise ConfigError(f"{where}: expected {wanted}, got {type(value).__name__}")
