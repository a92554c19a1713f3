"""Equality of wire values as JSON carries them: type and value.

Python's `==` is type-blind where JSON is not: `2 == 2.0`, `True == 1`, `0 == False`.
A parity harness must see what the wire carries, so every judgement of two wire values
(the parity diff, stale rules, calibration, the semantic profile's merges, id tokens)
goes through `json_equal` instead: `true` is not `1`, `2` is not `2.0`, `"1"` is not
`1`, and `null` is not an absent key (absence is a missing key, never a value here).
"""

from __future__ import annotations

from typing import Any


def json_type(value: Any) -> str:
    """The JSON type of a value, with numbers split as the wire writes them:
    `null`, `boolean`, `integer`, `float`, `string`, `array`, `object`, or the Python
    type's name for anything JSON cannot carry."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Whether two values are the same JSON: the same type (as `json_type` names it) and
    the same value, all the way down. Floats are equal when they print the same
    (`-0.0` is not `0.0`); objects are equal when they have the same keys."""
    if a is b:
        return True
    kind = json_type(a)
    if kind != json_type(b):
        return False
    if kind == "object":
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if kind == "array":
        return len(a) == len(b) and all(map(json_equal, a, b))
    if kind == "float":
        return bool(repr(a) == repr(b))
    return bool(a == b)


def exact_key(value: Any) -> Any:
    """A hashable key for a scalar (or a tuple of scalars) that tells JSON types apart,
    for tables keyed by wire values (`1`, `1.0` and `True` hash alike in Python)."""
    if isinstance(value, tuple):
        return tuple(exact_key(v) for v in value)
    return (json_type(value), repr(value) if isinstance(value, float) else value)
