"""The snapshot store (`parity.engine.store`): the one place snapshot files are read,
written and deleted, with the bytes syrupy's text mode wrote before it."""

from __future__ import annotations

from pathlib import Path

from syrupy.data import Snapshot, SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from parity.engine.store import (
    pending_snapshots,
    read_text,
    read_view,
    remove,
    snapshot_path,
    write_pending,
    write_text,
)
from parity.suite.snapshots import ParitySnapshotExtension
from parity.view.dump import dump_view

VIEW = {
    "steps": [{"send": {"method": "session/prompt", "text": "héllo\tworld — ✓"}}],
    "masked": {},
}


class SyrupyText(SingleFileSnapshotExtension):
    """syrupy's own single-file extension in text mode, as the suite used it before."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


def _collection(path: Path, text: str) -> SnapshotCollection:
    collection = SnapshotCollection(location=str(path))
    collection.add(Snapshot(name=path.stem, data=text))
    return collection


def test_the_store_writes_the_bytes_syrupy_wrote(tmp_path: Path) -> None:
    text = dump_view(VIEW)
    theirs, ours, extension = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    SyrupyText.write_snapshot_collection(snapshot_collection=_collection(theirs, text))
    write_text(ours, text)
    ParitySnapshotExtension.write_snapshot_collection(
        snapshot_collection=_collection(extension, text)
    )
    assert ours.read_bytes() == theirs.read_bytes() == extension.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml", "c.yaml"]


def test_reads_writes_and_removes_go_through_one_layout(tmp_path: Path) -> None:
    path = snapshot_path(tmp_path, "baseline/text-turn", "plus")
    assert path == tmp_path / "baseline" / "text-turn" / "plus.yaml"
    assert read_text(path) is None and read_view(tmp_path, "baseline/text-turn", "plus") is None
    write_text(path, dump_view(VIEW))
    assert read_view(tmp_path, "baseline/text-turn", "plus") == VIEW
    extension = ParitySnapshotExtension()
    recalled = extension.read_snapshot_data_from_location(
        snapshot_location=str(path), snapshot_name="plus", session_id="s"
    )
    assert recalled == dump_view(VIEW)
    extension.delete_snapshots(snapshot_location=str(path), snapshot_names={"plus"})
    assert not path.exists()
    remove(path)  # already gone: no error


def test_pending_snapshots_keep_the_snapshot_layout(tmp_path: Path) -> None:
    written = write_pending(tmp_path, "tools/echo", "native", "a: 1\n")
    write_pending(tmp_path, "baseline/handshake", "plus", "b: 2\n")
    assert written == snapshot_path(tmp_path, "tools/echo", "native")
    assert pending_snapshots(tmp_path) == [
        ("baseline/handshake", "plus", tmp_path / "baseline/handshake/plus.yaml"),
        ("tools/echo", "native", written),
    ]
