"""How deep a JSON value may nest before the harness stops following it.

Python's JSON parser accepts arrays nested hundreds of levels deep, but everything the
harness does with a value afterwards recurses once or more per level (normalization,
the parity diff, the schema check, YAML), and Python's stack ends near 1,000 frames: a
frame nested 500 levels deep crashed the normalizer. So a value deeper than `MAX_DEPTH`
is cut where it passes that depth (its subtree replaced by `CUT`); the line itself stays
whole in the frame's `raw`, and the driver names the frame as a run problem. No ACP
message needs more than a few dozen levels.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 100
"""Levels of arrays and objects the harness follows in one value."""

CUT = f"<nested deeper than {MAX_DEPTH} levels>"
"""What stands for a subtree past `MAX_DEPTH`."""


def may_be_deeper(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON `text` can nest deeper than `limit`: it has more opening brackets
    than that (counted in C, so every frame of a flood pays almost nothing)."""
    return text.count("[") + text.count("{") > limit


def depth(value: Any) -> int:
    """Levels of arrays and objects in `value` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            items: Any = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in items)
    return deepest


def cut(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value` with every array or object below `limit` levels replaced by `CUT` (a new
    value; recursion stays within `limit` frames)."""
    if not isinstance(value, dict | list):
        return value
    if limit <= 0:
        return CUT
    if isinstance(value, dict):
        return {k: cut(v, limit - 1) for k, v in value.items()}
    return [cut(v, limit - 1) for v in value]
