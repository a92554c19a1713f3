"""Request parameter readers for the ACP methods (pure).

Handlers read the top-level `params` keys only, so `_meta` can never override a
parameter (§1.0). A failure mimics the ACP SDK's schema rejection: bare
`Invalid params` with the issues as `data`, or the bridge's own `Invalid params: <detail>`
text where native checks a value itself.
"""

from __future__ import annotations

import re
from typing import Any

from acp_plus.wire.errors import RpcError, invalid_params

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str from JSON holds pairs combined


def schema_error(key: str, problem: str) -> RpcError:
    """The SDK's answer to a schema failure of one key: "Invalid params", issues as data."""
    return invalid_params(data={"_errors": [], key: {"_errors": [problem]}})


def as_object(params: Any) -> dict[str, Any]:
    """The request's `params` as an object; absent params read as `{}`."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(data={"_errors": ["Expected object"]})
    return params


def required_str(params: dict[str, Any], key: str) -> str:
    """A string parameter that must be present."""
    value = params.get(key)
    if value is None:
        raise schema_error(key, "Required")
    if not isinstance(value, str):
        raise schema_error(key, f"Expected string, received {js_type(value)}")
    return value


def optional_str(params: dict[str, Any], key: str) -> str | None:
    """A string parameter that may be absent or null."""
    value = params.get(key)
    if value is not None and not isinstance(value, str):
        raise schema_error(key, f"Expected string, received {js_type(value)}")
    return value


def js_type(value: Any) -> str:
    """The JavaScript type name the SDK's schema messages use for `value`."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string" if isinstance(value, str) else "null"


def absolute_cwd(cwd: str) -> str:
    """`cwd` when it is absolute, else the bridge's -32602 text."""
    # Node's path.isAbsolute on POSIX: a leading slash.
    if not cwd.startswith("/"):
        raise invalid_params(f"cwd must be an absolute path: {cwd}")
    # JSON can carry a lone surrogate ("\ud800"), a file name cannot: refused before
    # the session log's header is written (docs/contract-notes.md, "Hardening").
    if lone := _LONE_SURROGATE.search(cwd):
        raise invalid_params(f"cwd contains a lone surrogate (U+{ord(lone.group()):04X})")
    return cwd


def no_additional_directories(params: dict[str, Any]) -> None:
    """Refuse `additionalDirectories` (the increment is off in the baseline)."""
    extra = params.get("additionalDirectories")
    if extra is not None and extra != []:
        raise invalid_params("additionalDirectories is not supported")


def protocol_version(params: dict[str, Any]) -> int:
    """`initialize`'s `protocolVersion`: the SDK's uint16 schema."""
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 65536:
        raise schema_error("protocolVersion", "Expected number")
    return version


def prompt_blocks(params: dict[str, Any]) -> list[Any]:
    """`session/prompt`'s `prompt` array (its blocks are admitted later, §5)."""
    blocks = params.get("prompt")
    if not isinstance(blocks, list):
        raise schema_error("prompt", "Required" if blocks is None else "Expected array")
    return blocks
