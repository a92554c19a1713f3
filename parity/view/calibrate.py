"""`parity calibrate`: what differs between runs of one target, as a masks proposal.

Pure functions over views: the leaf paths where two runs of the same target disagree,
and a `masks:` block (scenario YAML) covering them, to review before pasting. A field
that shows how a run ended or that it went wrong (`shows_run_health`: the `process`
section with exits, signals and teardown problems, any `problem`, a model request's
HTTP `status`) is never proposed: runs that differ there are a race or a failure to
fix, which a mask would hide. The proposal lists those fields apart, unmasked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from parity.core.exact import json_equal
from parity.scenario.selectors import format_path

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


_PROBLEM_KEYS = frozenset({"problem", "problems"})
_ABSENT = object()


def _at(view: Any, path: PathT) -> Any:
    for key in path:
        listed = isinstance(view, list) and isinstance(key, int) and 0 <= key < len(view)
        if not (listed or (isinstance(view, dict) and key in view)):
            return _ABSENT
        view = view[key]
    return view


def _holds_problem(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in _PROBLEM_KEYS or _holds_problem(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_problem(v) for v in value)
    return False


def shows_run_health(path: PathT, a: Any, b: Any) -> bool:
    """Whether `path`, where views `a` and `b` differ, shows how the run ended or that it
    went wrong: anything under `process` (exit codes, signals, how teardown stopped the
    agent, run problems), a `problem` anywhere (a step's, a model request's), a model
    request's HTTP `status`, or a list item or key, present on one side only, holding
    one of those. Never a mask: a run that ends differently is not noise."""
    if path and path[0] == "process":
        return True
    if any(isinstance(key, str) and key in _PROBLEM_KEYS for key in path):
        return True
    if len(path) >= 3 and path[0] == "model" and path[2] == "status":
        return True
    return _holds_problem(_at(a, path)) or _holds_problem(_at(b, path))


def mask_proposal(
    paths: Sequence[PathT], target: str, runs: int, withheld: Sequence[PathT] = ()
) -> str:
    """A `masks:` block (scenario YAML) covering `paths`, to review before pasting;
    `withheld` (fields that showed how a run ended, `shows_run_health`) are listed as
    comments, never as masks."""
    lines: list[str] = []
    if not paths:
        lines.append(f"# {target}: no field differed across {runs} runs; no mask needed")
    else:
        lines += [f"# {target}: {len(paths)} field(s) differed across {runs} runs", "masks:"]
    for path in paths:
        lines.append(f"  - path: {json.dumps(format_path(path))}")
        lines.append(f"    reason: nondeterministic in {target} (parity calibrate, {runs} runs)")
        lines.append(f"    targets: [{target}]")
    if withheld:
        lines.append(
            f"# not proposed: {len(withheld)} field(s) showing an exit, teardown or run "
            "problem differed; runs that end differently are a race or a failure to fix "
            "(a trigger that cannot race, a longer timeout), never a mask:"
        )
        lines += [f"#   {format_path(path)}" for path in withheld]
    return "\n".join(lines)
