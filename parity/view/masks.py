"""Masks: scenario `masks` rules replace values in a view with `<masked>`, counted.

Every mask is counted in the view (`masked`: selector -> values replaced) so masking never
hides an assertion silently; a mask that matched nothing keeps count 0 and is reported
(`unmatched_masks`, the summary's mask lines).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.scenario.model import Rule
from parity.scenario.selectors import Path, get_path, select

MASKED = "<masked>"


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
