"""The selector grammar: parse, select and format paths into a normalized view.

A selector names values in a view (`steps[*].updates.*.usage_update.used`). Scenario files
write them in `masks` and `diverge` rules, so the grammar lives with the scenario (which
checks every selector when it loads); masks apply them to views (`parity.view.masks`) and
diverge rules to differences (`parity.checks.diff`). `docs/transcript.md` is the
grammar's reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from parity.core.exact import json_equal

Path = tuple[str | int, ...]
"""A concrete location in a view: dict keys and list indexes from the root."""


@dataclass(frozen=True)
class _Seg:
    kind: str  # key | any | deep | index | each | where
    key: str = ""
    index: int = 0
    value: Any = None
    """`where` only: the value the item's `key` path must have (`json_equal`), or with
    `contains`, a string its value must contain (`[error.message~=still open]`)."""
    contains: bool = False


# Dict fields that name what a node is; a selector segment equal to one of their values
# selects the node itself (`*.usage_update.used`, `*.session/request_permission.params`).
FILTER_KEYS = ("sessionUpdate", "method")

_TOKEN = re.compile(
    r"""\.?(\*\*|\*|[^.\[\]]+)|\[(\*|-?\d+|"(?:[^"\\]|\\.)*"|'[^']*')\]"""
    r"""|\[([^\[\]=]+)=([^\[\]]*)\]"""
)


def parse_selector(selector: str) -> list[_Seg]:
    """Parse a selector; raises ValueError with the offending position."""
    segs: list[_Seg] = []
    pos = 0
    text = selector.strip()
    if not text:
        raise ValueError("empty selector")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or (pos == 0 and text.startswith(".")):
            raise ValueError(f"bad selector {selector!r} at column {pos + 1}")
        name, bracket, where_key, where_value = m.groups()
        if where_key is not None:
            # `steps[send.method=session/list]`: the items whose field equals the value.
            # `[error.message~=still open]`: the items whose string field contains it.
            keys = where_key.strip()
            contains = keys.endswith("~")
            keys = keys.removesuffix("~").strip()
            value = _literal(where_value)
            if not all(keys.split(".")) or (contains and not (isinstance(value, str) and value)):
                raise ValueError(f"bad filter {m.group(0)!r} at column {pos + 1}")
            segs.append(_Seg("where", key=keys, value=value, contains=contains))
        elif name == "**":
            segs.append(_Seg("deep"))
        elif name == "*":
            # A leading `*` anchors anywhere: `*.usage_update.used` reads naturally.
            segs.append(_Seg("deep" if not segs else "any"))
        elif name is not None:
            segs.append(_Seg("key", key=name))
        elif bracket == "*":
            segs.append(_Seg("each"))
        elif bracket[0] == '"':
            # A JSON string: `format_path` writes odd keys so (quotes, backslashes).
            segs.append(_Seg("key", key=_json_key(bracket, selector, pos)))
        elif bracket[0] == "'":
            segs.append(_Seg("key", key=bracket[1:-1]))
        else:
            segs.append(_Seg("index", index=int(bracket)))
        pos = m.end()
    return segs


def _json_key(quoted: str, selector: str, pos: int) -> str:
    try:
        key = json.loads(quoted)
    except ValueError:
        raise ValueError(f"bad selector {selector!r} at column {pos + 1}") from None
    assert isinstance(key, str)
    return key


def select(root: Any, selector: str) -> list[Path]:
    """Concrete paths in `root` matched by `selector`, in document order, deduplicated."""
    segs = parse_selector(selector)
    found: dict[Path, None] = {}

    def walk(node: Any, path: Path, i: int) -> None:
        if i == len(segs):
            found.setdefault(path, None)
            return
        seg = segs[i]
        if seg.kind == "deep":
            walk(node, path, i + 1)
            for k, child in _children(node):
                walk(child, (*path, k), i)
        elif seg.kind == "any":
            for k, child in _children(node):
                walk(child, (*path, k), i + 1)
        elif seg.kind == "each":
            if isinstance(node, list):
                for k, child in enumerate(node):
                    walk(child, (*path, k), i + 1)
        elif seg.kind == "where":
            for k, child in _children(node):
                if _field_matches(child, seg):
                    walk(child, (*path, k), i + 1)
        elif seg.kind == "index":
            if isinstance(node, list) and -len(node) <= seg.index < len(node):
                k = seg.index % len(node)
                walk(node[k], (*path, k), i + 1)
        elif isinstance(node, dict):
            if seg.key in node:
                walk(node[seg.key], (*path, seg.key), i + 1)
            if any(node.get(f) == seg.key for f in FILTER_KEYS):
                walk(node, path, i + 1)

    walk(root, (), 0)
    return list(found)


def _literal(text: str) -> Any:
    """A filter's value: quoted -> that string; JSON (`3`, `true`, `null`) -> that value;
    anything else -> the bare text (`session/list`)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _field_matches(node: Any, seg: _Seg) -> bool:
    for key in seg.key.split("."):
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    if seg.contains:
        return isinstance(node, str) and seg.value in node
    return json_equal(node, seg.value)


def _children(node: Any) -> Iterator[tuple[str | int, Any]]:
    if isinstance(node, dict):
        yield from node.items()
    elif isinstance(node, list):
        yield from enumerate(node)


def format_path(path: Path) -> str:
    """`("steps", 2, "updates", 0)` -> `steps[2].updates[0]` (a valid selector)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[^.\[\]*]+", part) and part == part.strip():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "<root>"


def get_path(root: Any, path: Path) -> Any:
    """The value at `path` (raises KeyError/IndexError when absent)."""
    node = root
    for part in path:
        node = node[part]
    return node
