"""Backups and undo: exact bytes back, created files removed, later changes refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_plus.core.approvals import backups


def _commit(events: list[dict[str, object]], pending: backups.Pending, tool: str) -> None:
    events.append(backups.saved_event(pending, 1, f"call-{pending.n}", tool))


def test_undo_restores_exact_bytes_and_removes_created_files(tmp_path: Path) -> None:
    ws, store = tmp_path / "ws", tmp_path / "store"
    ws.mkdir()
    old = b"a\r\nb \xe2\x80\x93 \xc3\xbc\x00tail"
    (ws / "a.bin").write_bytes(old)
    events: list[dict[str, object]] = []
    pending = backups.save(ws / "a.bin", store, 1, 1 << 20)
    (ws / "a.bin").write_bytes(b"new")
    _commit(events, pending, "write")
    created = backups.save(ws / "c.txt", store, 2, 1 << 20)
    assert created.blob is None
    (ws / "c.txt").write_text("made")
    _commit(events, created, "write")
    found = backups.entries(events)
    assert [(e.n, e.existed, e.undone) for e in found] == [(1, True, False), (2, False, False)]
    latest = backups.pick(found, "")
    assert isinstance(latest, backups.Entry) and latest.n == 2
    assert backups.restore(latest, store, ws) is None
    assert not (ws / "c.txt").exists()
    events.append(backups.restored_event(latest))
    first = backups.pick(backups.entries(events), "")
    assert isinstance(first, backups.Entry) and first.n == 1
    assert backups.restore(first, store, ws) is None
    assert (ws / "a.bin").read_bytes() == old
    events.append(backups.restored_event(first))
    assert backups.pick(backups.entries(events), "") == "Nothing to undo in this session."


def test_a_file_changed_since_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("v1")
    events: list[dict[str, object]] = []
    pending = backups.save(tmp_path / "f", tmp_path / "store", 1, 100)
    (tmp_path / "f").write_text("v2")
    _commit(events, pending, "write")
    (tmp_path / "f").write_text("v3 by bash")
    entry = backups.entries(events)[0]
    problem = backups.restore(entry, tmp_path / "store", tmp_path)
    assert problem is not None and problem.startswith("Refused: f changed since backup 1")
    assert (tmp_path / "f").read_text() == "v3 by bash"


def test_save_refuses_over_the_cap_and_non_files(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(backups.BackupFailed, match="over the backup cap of 10"):
        backups.save(tmp_path / "big", tmp_path / "store", 1, 10)
    (tmp_path / "dir").mkdir()
    with pytest.raises(backups.BackupFailed, match="not a regular file"):
        backups.save(tmp_path / "dir", tmp_path / "store", 1, 10)


def test_pick_and_texts(tmp_path: Path) -> None:
    assert backups.pick([], "x") == "Usage: /undo [n], n a backup number from /backups (got 'x')."
    assert backups.pick([], "3") == "No backup 3 in this session."
    text = backups.list_text([], tmp_path)
    assert text.startswith("No backups in this session.") and backups.NOT_COVERED in text
    assert backups.next_number([{"type": backups.SAVED, "n": 4}]) == 5
