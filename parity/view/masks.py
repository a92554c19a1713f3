"""Masks: scenario `masks` rules replace values in a view with `<masked>`, counted.

Every mask is counted in the view (`masked`: selector -> values replaced) so masking never
hides an assertion silently; a mask that matched nothing keeps count 0 and is reported
(`unmatched_masks`, the summary's mask lines).

A mask hides an unstable value, not its type: a string, object or list becomes
`<masked>`, a number, boolean or null `<masked:integer>`, `<masked:float>`,
`<masked:boolean>`, `<masked:null>` (`masked_value`), so a counter that turns into a
float, or a flag into `1`, is still a difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.core.exact import json_type
from parity.scenario.model import Rule
from parity.scenario.selectors import Path, get_path, select

MASKED = "<masked>"


def masked_value(value: Any) -> str:
    """What a mask leaves of `value`: `<masked>`, naming the JSON type of a scalar that
    is not a string (objects and lists stay `<masked>`, as recorded snapshots hold them)."""
    kind = json_type(value)
    return f"<masked:{kind}>" if kind in ("integer", "float", "boolean", "null") else MASKED


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
            _set_path(root, path, masked_value(get_path(root, path)))
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
