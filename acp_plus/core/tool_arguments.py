"""A tool call's arguments as native's agent loop reads them (pure).

The model streams arguments as text; native parses it with `JSON.parse` and checks that
the value survives a JSON round trip before it looks the tool up
(docs/contract-notes.md, "JSON text").
"""

from __future__ import annotations

import math
from typing import Any

from acp_plus.core.js_json import js_parse


def parse_arguments(raw: str) -> Any:
    """A tool call's raw arguments as native reads them: `""` is `{}`, JSON text its
    value (JavaScript number semantics: `1.0` is `1`), anything else the text itself."""
    if raw == "":
        return {}
    try:
        return js_parse(raw, negative_zero=True)
    except (ValueError, RecursionError):
        return raw


def lossless(value: Any) -> bool:
    """Whether `value` survives a JSON round trip unchanged: native refuses a call whose
    arguments hold `-0` or a non-finite number (`1e400` parses as Infinity)."""
    if isinstance(value, float):
        return math.isfinite(value) and not (value == 0 and math.copysign(1.0, value) < 0)
    if isinstance(value, dict):
        return all(lossless(item) for item in value.values())
    if isinstance(value, list):
        return all(lossless(item) for item in value)
    return True


NOT_LOSSLESS_TEXT = "Error: tool execution arguments must be losslessly JSON-serializable"
NOT_AN_OBJECT_TEXT = 'Error: invalid arguments: "arguments" must be an object'
