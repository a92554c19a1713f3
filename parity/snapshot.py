"""Snapshots: one readable YAML file per (scenario, target) holding the normalized view.

Layout: `<snapshots dir>/<scenario name>/<target>.yaml`, e.g.
`snapshots/baseline/text-turn/plus.yaml`. `ParitySnapshotExtension` plugs that layout
into syrupy, so `--snapshot-update` writes and prunes, and unused snapshots are reported
by syrupy's own machinery. `dump_view` / `load_view` are the pure (de)serializers; the
parity checks also read snapshots through `read_view` when a target cannot run here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from parity.scenario.load import scenario_name
from parity.view.dump import dump_view, load_view

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


class ParitySnapshotExtension(SingleFileSnapshotExtension):
    """syrupy extension storing a scenario item's view at `<snapshots>/<scenario>/<target>.yaml`.

    syrupy rebuilds test locations from a worker's bare node data under pytest-xdist, so
    the location is derived only from the item's path and name (the target); the two
    directories are class settings made by the plugin at configure time.
    """

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"
    snapshots_dir: ClassVar[Path] = Path("snapshots")
    scenarios_dir: ClassVar[Path] = Path("scenarios")

    def serialize(self, data: Any, **_: Any) -> str:
        return data if isinstance(data, str) else dump_view(data)

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        name = scenario_name(Path(test_location.filepath), cls.scenarios_dir)
        return str(cls.snapshots_dir / name)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return str(test_location.testname)

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Nothing, on purpose: syrupy's unused-snapshot logic only knows Python test
        items, so it would call a skipped target's recording (a native snapshot on a
        machine without DSH) unused and delete it. The plugin finds unused snapshot
        files itself, from the scenarios it collected (`parity.plugin.unused_snapshots`)."""
        return SnapshotCollections()
