"""`parity calibrate`: what differs between runs of one target, as a masks proposal.

Pure functions over views: the leaf paths where two runs of the same target disagree,
and a `masks:` block (scenario YAML) covering them, to review before pasting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from parity.scenario.selectors import format_path
from parity.view.exact import json_equal

PathT = tuple[str | int, ...]


def differing_paths(a: Any, b: Any, path: PathT = ()) -> list[PathT]:
    """Leaf paths where two views disagree, type included (`json_equal`: `1` is not
    `1.0`); a key or item present on one side only counts at its own path; document
    order."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[PathT] = []
        for key in [*a, *(k for k in b if k not in a)]:
            if key in a and key in b:
                out += differing_paths(a[key], b[key], (*path, key))
            else:
                out.append((*path, key))
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            if i < len(a) and i < len(b):
                out += differing_paths(a[i], b[i], (*path, i))
            else:
                out.append((*path, i))
        return out
    return [] if json_equal(a, b) else [path]


def mask_proposal(paths: Sequence[PathT], target: str, runs: int) -> str:
    """A `masks:` block (scenario YAML) covering `paths`, to review before pasting."""
    # Imported here: the pytest plugin imports this module for every test run.

    if not paths:
        return f"# {target}: no field differed across {runs} runs; no mask needed"
    lines = [f"# {target}: {len(paths)} field(s) differed across {runs} runs", "masks:"]
    for path in paths:
        lines.append(f"  - path: {json.dumps(format_path(path))}")
        lines.append(f"    reason: nondeterministic in {target} (parity calibrate, {runs} runs)")
        lines.append(f"    targets: [{target}]")
    return "\n".join(lines)
