"""Snapshots: one readable YAML file per (scenario, target) holding the normalized view.

Layout: `<snapshots dir>/<scenario name>/<target>.yaml`, e.g.
`snapshots/baseline/text-turn/plus.yaml`. `ParitySnapshotExtension` is the syrupy
extension: it serializes a view (`parity.view.dump.dump_view`, the file's exact bytes),
locates its file, compares texts and renders the text diff, so syrupy asserts, writes
under `--snapshot-update` and counts passed/new/failed snapshots in its own report.

Two things syrupy cannot do for scenario items (parity/ARCHITECTURE.md, "Snapshots and
syrupy"): a scenario item is no test function, so it gets no `snapshot` fixture and
`check_snapshot` builds the assertion the way that fixture does; and syrupy's
unused-snapshot detection only knows test functions, so the store's `unused_snapshots`
(`parity.engine.store`) finds unused files from the scenarios collected (`unused_fail`:
under CI they fail a whole-suite run, as syrupy's unused snapshots fail its runs).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.data import SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from parity.engine.store import SUFFIX, read_text, remove, scenario_dir, write_text
from parity.scenario.load import scenario_name
from parity.view.dump import dump_view, text_diff


class ParitySnapshotExtension(SingleFileSnapshotExtension):
    """syrupy extension comparing a scenario item's view with its snapshot file, which
    the store (`parity.engine.store`) locates, reads, writes and deletes.

    syrupy rebuilds test locations from a worker's bare node data under pytest-xdist, so
    the location is derived only from the item's path and name (the target); the two
    directories are class settings made by the plugin at configure time.
    """

    _write_mode = WriteMode.TEXT
    file_extension = SUFFIX.lstrip(".")
    snapshots_dir: ClassVar[Path] = Path("snapshots")
    scenarios_dir: ClassVar[Path] = Path("scenarios")
    recordings_dir: ClassVar[Path | None] = None
    """A shipped suite's recordings, read where `snapshots_dir` has none (`Config.recording`)."""

    shown_as = "snapshot"
    """What the text diff's headers call the file (`check_snapshot` sets the path)."""

    def serialize(self, data: Any, **_: Any) -> str:
        return data if isinstance(data, str) else dump_view(data)

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """syrupy's reporter: the recorded snapshot against this run (`text_diff`, the
        diff the engine's judgement shows)."""
        return iter(text_diff(str(snapshot_data), str(serialized_data), self.shown_as))

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        name = scenario_name(Path(test_location.filepath), cls.scenarios_dir)
        return str(scenario_dir(cls.snapshots_dir, name))

    # The file itself is the store's: one format and one writer, with or without pytest.

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> str | None:
        own = read_text(Path(snapshot_location))
        if own is not None or self.recordings_dir is None:
            return own
        relative = Path(snapshot_location).relative_to(self.snapshots_dir)
        return read_text(self.recordings_dir / relative)

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: Any = None
    ) -> None:
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"a snapshot is text, got {type(data).__name__}")
        write_text(Path(snapshot_collection.location), data)

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        remove(Path(snapshot_location))

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return str(test_location.testname)

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Nothing, on purpose: syrupy's unused-snapshot logic only knows test functions
        (`pytest.Function`), so it would call a skipped target's recording (a native
        snapshot on a machine without DSH) unused and delete it. The store's
        `unused_snapshots` finds unused files from the scenarios the plugin collected."""
        return SnapshotCollections()


@dataclass(frozen=True)
class SnapshotCheck:
    """How one run's view compared with its snapshot."""

    text: str
    """This run's snapshot text (what `parity record` writes)."""
    matched: bool
    """Equal to the recording, or written because snapshots are being updated."""
    created: bool
    """Written now where there was no snapshot."""
    recorded: str | None
    """The snapshot file's text; None when there was none."""
    diff: list[str]
    """syrupy's diff lines (`ParitySnapshotExtension.diff_lines`) when a recorded
    snapshot did not match."""


def check_snapshot(item: pytest.Item, text: str, *, update: bool, shown_as: str) -> SnapshotCheck:
    """Assert a view's snapshot `text` (`dump_view`) against the item's snapshot through
    syrupy (writing it when `update`). A scenario item is no test function and has no
    `snapshot` fixture, so the assertion is built here the way that fixture builds one;
    syrupy's session records it for its report. `shown_as` names the file in the diff."""
    assertion = SnapshotAssertion(
        session=item.config._syrupy,  # type: ignore[attr-defined]
        extension_class=ParitySnapshotExtension,
        test_location=PyTestLocation(item),
        update_snapshots=update,
    )
    extension = assertion.extension
    assert isinstance(extension, ParitySnapshotExtension)
    extension.shown_as = shown_as
    matched = assertion == text
    execution = assertion.executions[0]
    recorded = None if execution.recalled_data is None else str(execution.recalled_data)
    diff = assertion.get_assert_diff() if not matched and recorded is not None else []
    return SnapshotCheck(text, matched, execution.created, recorded, diff)


def under_ci(env: Mapping[str, str]) -> bool:
    """`CI` set to anything but empty, 0 or false (CI services set `true`)."""
    return env.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unused_fail(unused: list[Path], whole_suite: bool, option: Any) -> bool:
    """Whether unused snapshot files fail the session: under CI a whole-suite run fails
    on them, as syrupy fails a run on its unused snapshots. Only a whole-suite run can
    call a scenario's directory unused, so a partial run lists them and passes; locally
    they are listed too (a renamed scenario is work in progress). `parity record`
    deletes them; `--snapshot-warn-unused` (syrupy's flag) keeps them."""
    return bool(
        unused
        and whole_suite
        and under_ci(os.environ)
        and not option.update_snapshots
        and not getattr(option, "warn_unused_snapshots", False)
    )
