"""The snapshot store: every read, write and delete of a snapshot file, and of a
pending one.

Layout: `<snapshots dir>/<scenario name>/<target>.yaml`, e.g.
`snapshots/baseline/text-turn/plus.yaml`, holding the exact YAML of the normalized view
(`parity.view.dump.dump_view`): UTF-8, `\n` line ends, the bytes syrupy's text mode
wrote. Pending snapshots (what a run that could not write them leaves for `parity
review --from DIR`, insta's `.snap.new`) have the same layout under their own folder.

No pytest and no syrupy here: `parity show`, `diff`, `calibrate`, `review`, capture and
explore read snapshots without loading either, and the pytest side
(`parity.suite.snapshots`, syrupy's extension) reads and writes its files through this
module, so there is one format and one place that touches the files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parity.view.dump import load_view

SUFFIX = ".yaml"


def scenario_dir(snapshots_dir: Path, scenario: str) -> Path:
    """The folder of a scenario's snapshots, one file per target."""
    return snapshots_dir / scenario


def snapshot_path(snapshots_dir: Path, scenario: str, target: str) -> Path:
    """Where the snapshot of `target` running `scenario` lives."""
    return scenario_dir(snapshots_dir, scenario) / f"{target}{SUFFIX}"


def read_text(path: Path) -> str | None:
    """A snapshot file's text, or None when there is none."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def read_view(snapshots_dir: Path, scenario: str, target: str) -> Any | None:
    """The recorded view, or None when no snapshot was recorded."""
    return read_view_at(snapshot_path(snapshots_dir, scenario, target))


def read_view_at(path: Path) -> Any | None:
    """The view recorded in `path`, or None when there is none."""
    text = read_text(path)
    return None if text is None else load_view(text)


def write_text(path: Path, text: str) -> None:
    """Write a snapshot (or pending) file atomically: a reader, another xdist worker or
    `parity review` running beside a record, never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def remove(path: Path) -> None:
    """Remove a snapshot (or pending) file; one already gone is no error."""
    path.unlink(missing_ok=True)


def write_pending(folder: Path, scenario: str, target: str, text: str) -> Path:
    """Keep a run's new snapshot text under `folder` for `parity review --from`."""
    path = snapshot_path(folder, scenario, target)
    write_text(path, text)
    return path


def pending_snapshots(folder: Path) -> list[tuple[str, str, Path]]:
    """(scenario, target, file) of every pending snapshot under `folder`, sorted by file."""
    return [
        (path.parent.relative_to(folder).as_posix(), path.stem, path)
        for path in sorted(folder.rglob(f"*{SUFFIX}"))
    ]


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
