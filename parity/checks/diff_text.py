"""The parity diff as text: each difference's two values side by side.

Scalars on one line each, structures as a unified diff of their YAML, long strings as a
window around their first differing character. `ParityReport.render`
(`parity.checks.diff`) lays these out per step.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import yaml

from parity.checks.differences import ABSENT

LONG_TEXT = 160
"""Strings longer than this are shown as a window around their first difference."""
TEXT_WINDOW = 80


def side_by_side(a: Any, b: Any, ref_name: str, other_name: str, max_lines: int) -> list[str]:
    """Scalars on one line each; structures as a unified diff of their YAML."""
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) > LONG_TEXT:
        return _long_texts(a, b, ref_name, other_name)
    if not isinstance(a, dict | list) and not isinstance(b, dict | list):
        return [f"- {ref_name}: {_scalar(a)}", f"+ {other_name}: {_scalar(b)}"]
    ta, tb = _yaml(a), _yaml(b)
    raw = list(difflib.unified_diff(ta, tb, n=2, lineterm=""))[2:]  # no file headers
    diff = [f"{line[0]} {line[1:]}" for line in raw if not line.startswith("@@")]
    if len(diff) > max_lines:
        diff = [*diff[:max_lines], f"... {len(diff) - max_lines} more line(s)"]
    return diff


def _long_texts(a: str, b: str, ref_name: str, other_name: str) -> list[str]:
    """Two long strings (system prompts, file contents): a window around the first
    character that differs, so the difference is visible without the whole text."""
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - TEXT_WINDOW // 2)

    def window(text: str) -> str:
        head = "..." if start else ""
        tail = "..." if start + TEXT_WINDOW < len(text) else ""
        return head + json.dumps(text[start : start + TEXT_WINDOW]) + tail

    return [
        f"  first difference at character {at} (lengths {len(a)} and {len(b)})",
        f"- {ref_name}: {window(a)}",
        f"+ {other_name}: {window(b)}",
    ]


def _scalar(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, default=str)
    return text if len(text) <= LONG_TEXT else text[:LONG_TEXT] + f"... ({len(text)} chars)"


def _yaml(value: Any) -> list[str]:
    if value is ABSENT:
        return []
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=100).splitlines()
