"""The selector grammar: parse, select and format paths into a normalized view; masks.

A selector names values in a view (`steps[*].updates.*.usage_update.used`); masks
(`apply_masks`, used by `parity.normalize.view`) and diverge rules (`parity.diff`)
share it. `docs/transcript.md` is the grammar's reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only annotations: keeps this module free of the scenario import chain
    from parity.scenario import Rule

MASKED = "<masked>"

Path = tuple[str | int, ...]
"""A concrete location in a view: dict keys and list indexes from the root."""


@dataclass(frozen=True)
class _Seg:
    kind: str  # key | any | deep | index | each
    key: str = ""
    index: int = 0


# Dict fields that name what a node is; a selector segment equal to one of their values
# selects the node itself (`*.usage_update.used`, `*.session/request_permission.params`).
FILTER_KEYS = ("sessionUpdate", "method")

_TOKEN = re.compile(r"""\.?(\*\*|\*|[^.\[\]]+)|\[(\*|-?\d+|"[^"]*"|'[^']*')\]""")


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
        name, bracket = m.group(1), m.group(2)
        if name == "**":
            segs.append(_Seg("deep"))
        elif name == "*":
            # A leading `*` anchors anywhere: `*.usage_update.used` reads naturally.
            segs.append(_Seg("deep" if not segs else "any"))
        elif name is not None:
            segs.append(_Seg("key", key=name))
        elif bracket == "*":
            segs.append(_Seg("each"))
        elif bracket[0] in "\"'":
            segs.append(_Seg("key", key=bracket[1:-1]))
        else:
            segs.append(_Seg("index", index=int(bracket)))
        pos = m.end()
    return segs


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
        elif re.fullmatch(r"[^.\[\]*]+", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or "<root>"


def get_path(root: Any, path: Path) -> Any:
    """The value at `path` (raises KeyError/IndexError when absent)."""
    node = root
    for part in path:
        node = node[part]
    return node


def apply_masks(root: dict[str, Any], masks: Sequence[Rule]) -> dict[str, int]:
    """Replace every value matched by a mask with `<masked>` in place; count per path.

    Paths are evaluated before any replacement so masks never mask each other's
    results away; a value under an already masked ancestor is not counted twice. A mask
    matching nothing keeps count 0 (see `unmatched_masks`).
    """
    counts: dict[str, int] = {}
    done: set[Path] = set()
    matched = [(m.path, select(root, m.path)) for m in masks]
    for selector, paths in matched:
        counts.setdefault(selector, 0)
        for path in sorted(paths, key=len):
            if any(path[:n] in done for n in range(len(path) + 1)):
                continue
            _set_path(root, path, MASKED)
            done.add(path)
            counts[selector] += 1
    return counts


def _set_path(root: Any, path: Path, value: Any) -> None:
    if not path:
        return
    parent = get_path(root, path[:-1])
    parent[path[-1]] = value


def unmatched_masks(normalized: Mapping[str, Any]) -> list[str]:
    """Selectors of masks that matched nothing in this view (to be reported)."""
    return [path for path, n in normalized.get("masked", {}).items() if n == 0]
