"""A value's shape as the ACP schema sees it: two values of one shape get the same
verdict from it, so the conformance check validates each shape once.

A flood of 200,000 `session/update`s took jsonschema 280 s, one validation per frame,
though they differed only in their text. What a JSON Schema without format assertions
(jsonschema's default) can tell of a string is: whether it equals one of the schema's
`const`/`enum` strings, how its length compares with a `minLength`/`maxLength` bound,
and which `pattern`s it matches. The shape keeps exactly that of every string (and keys,
numbers with their JSON type, booleans, null and the nesting as they are), so it is
exact, not a heuristic: one shape, one verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

_OTHER = object()
"""Stands for a string that equals none of the schema's constants."""


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (keyword, value) pair in a schema, depth first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                yield key, value
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


class Shapes:
    """The shape function of one schema (see the module doc)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        constants: set[str] = set()
        bound = 0
        patterns: list[str] = []
        for key, value in _walk(dict(schema)):
            if key == "const" and isinstance(value, str):
                constants.add(value)
            elif key == "enum" and isinstance(value, list):
                constants.update(v for v in value if isinstance(v, str))
            elif key in ("minLength", "maxLength") and isinstance(value, int):
                bound = max(bound, value)
            elif key == "pattern" and isinstance(value, str):
                patterns.append(value)
        self.constants = frozenset(constants)
        self.bound = bound + 1
        """Lengths from here up compare alike with every bound."""
        self.patterns = [re.compile(p) for p in sorted(set(patterns))]

    def of(self, value: Any) -> Any:
        """`value`'s shape: hashable, equal for values the schema cannot tell apart.
        (Written for speed: a flood takes it for every frame.)"""
        if isinstance(value, str):
            if value in self.constants:
                return value
            size = len(value)
            return (
                _OTHER,
                size if size < self.bound else self.bound,
                tuple([p.search(value) is not None for p in self.patterns])
                if self.patterns
                else (),
            )
        if isinstance(value, dict):
            of = self.of
            return ("{", tuple([(k, of(value[k])) for k in sorted(value)]))
        if isinstance(value, list):
            return ("[", tuple(map(self.of, value)))
        # bool before int: `true` is no integer to JSON Schema; 1 and 1.0 differ too.
        return (type(value).__name__, value)
