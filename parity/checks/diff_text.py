"""The parity diff as text: each difference's two values side by side.

Scalars on one line each, structures as a unified diff of their YAML, long strings as a
window around their first differing character; differences that are one fact repeated
in every later model request's history grouped (`facts`). `ParityReport.render`
(`parity.checks.diff`) lays these out per step.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

from parity.checks.differences import ABSENT, Difference

LONG_TEXT = 160
"""Strings longer than this are shown as a window around their first difference."""
TEXT_WINDOW = 80


_MODEL_REQUEST = re.compile(r"model\[(\d+)\]")
"""The head of a path in a model request: `model[3].body.messages[2].content`."""


def fact_groups(differences: Sequence[Difference]) -> list[list[Difference]]:
    """The differences as facts, in order: each model request carries the conversation
    so far, so one message that differs in the history differs again in every later
    request, at the same place with the same values. Each group is a fact: its first
    occurrence, then its repeats in later model requests (the text report and the HTML
    report show a group once)."""
    out: list[list[Difference]] = []
    first: dict[tuple[str, ...], int] = {}
    for d in differences:
        head = _MODEL_REQUEST.match(d.path)
        if head is None:
            out.append([d])
            continue
        key = (d.category, d.path[head.end() :], d.detail, _exact(d.ref), _exact(d.other))
        if key in first:
            out[first[key]].append(d)
        else:
            first[key] = len(out)
            out.append([d])
    return out


def request_index(d: Difference) -> int:
    """The model request a difference is in (`model[3]...` -> 3); -1 outside them."""
    head = _MODEL_REQUEST.match(d.path)
    return int(head.group(1)) if head else -1


def facts(differences: Sequence[Difference]) -> list[tuple[Difference, list[int]]]:
    """Each fact (`fact_groups`) as its first occurrence and the indexes of the later
    model requests it recurs in."""
    return [(group[0], [request_index(d) for d in group[1:]]) for group in fact_groups(differences)]


def again_in(requests: Sequence[int], shown: int = 6) -> str:
    """`  (the same in model[4], model[5])`: where a fact recurs; "" when it does not."""
    if not requests:
        return ""
    named = ", ".join(f"model[{i}]" for i in requests[:shown])
    more = f" and {len(requests) - shown} more" if len(requests) > shown else ""
    return f"  (the same in {named}{more})"


def _exact(value: Any) -> str:
    """A value as a key that tells apart what JSON tells apart (`1`, `1.0`, `true`)."""
    return "\0absent" if value is ABSENT else json.dumps(value, sort_keys=True, default=repr)


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
