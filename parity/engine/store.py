"""The snapshot store: where each (scenario, target) snapshot lives, and reading it.

Layout: `<snapshots dir>/<scenario name>/<target>.yaml`, e.g.
`snapshots/baseline/text-turn/plus.yaml`, holding the exact YAML of the normalized view
(`parity.view.dump.dump_view`). No pytest and no syrupy here: `parity show`, `diff`,
`calibrate`, `review`, capture and explore read snapshots without loading either, and
the pytest side (`parity.suite.snapshots`) locates its files through this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parity.view.dump import load_view

SUFFIX = ".yaml"


def snapshot_path(snapshots_dir: Path, scenario: str, target: str) -> Path:
    """Where the snapshot of `target` running `scenario` lives."""
    return snapshots_dir / scenario / f"{target}{SUFFIX}"


def read_view(snapshots_dir: Path, scenario: str, target: str) -> Any | None:
    """The recorded view, or None when no snapshot was recorded."""
    path = snapshot_path(snapshots_dir, scenario, target)
    try:
        return load_view(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def unused_snapshots(
    snapshots_dir: Path,
    scenarios: Mapping[str, list[str]],
    whole_suite: bool,
    joinable: Mapping[str, set[str]] | None = None,
) -> list[Path]:
    """Snapshot files no collected scenario target claims: targets dropped from a
    scenario, and (when the whole suite was collected) scenarios that no longer exist.
    `scenarios` maps each collected scenario to its targets, run or skipped: a skipped
    target's recording is used (its parity checks compare against it). A recording of
    a target `--targets +NAME` could add to the scenario (`joinable`) is a user's own
    agent's, recorded by `parity record --targets +NAME`: used, whether or not it was
    added this time (recording one added agent must not delete another's)."""
    if not snapshots_dir.is_dir():
        return []
    joinable = joinable or {}
    unused = []
    for path in sorted(snapshots_dir.rglob(f"*{SUFFIX}")):
        scenario = path.parent.relative_to(snapshots_dir).as_posix()
        if scenario in scenarios:
            if path.stem not in scenarios[scenario] and path.stem not in joinable.get(scenario, ()):
                unused.append(path)
        elif whole_suite:
            unused.append(path)
    return unused
