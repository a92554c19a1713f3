"""`write` and `edit` replace a file by atomic rename: a hardlink into the workspace no
longer carries a write to the file outside it, permission bits survive, encodings and
line endings survive, and a writer killed at any moment leaves the old content or the
new one, never a mix (checked against a real process, SIGKILLed mid-stream)."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_plus.core.tools.base import Tool, ToolContext
from acp_plus.core.tools.fs_family import fs_tools

REPO = Path(__file__).resolve().parents[3]


def _ctx(cwd: Path) -> ToolContext:
    return ToolContext("s", cwd, "c1", 1, "workspace-write")


async def _tools(cwd: Path, *seen: str) -> tuple[Tool, Tool]:
    """`write` and `edit` of a session that has read `seen` (native's policy wants it)."""
    read, write, edit = fs_tools()
    for path in seen:
        assert not (await read.run({"file_path": path}, _ctx(cwd))).is_error
    return write, edit


def _linked(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace holding a hardlink to a file outside it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"\xef\xbb\xbfkeep me\r\nline two\r\n")
    link = ws / "link.txt"
    os.link(outside, link)
    return ws, outside, link


async def test_write_through_a_hardlink_leaves_the_outside_file_alone(tmp_path: Path) -> None:
    ws, outside, link = _linked(tmp_path)
    before = outside.read_bytes()
    write, _ = await _tools(ws, "link.txt")
    result = await write.run({"file_path": "link.txt", "content": "new\n"}, _ctx(ws))
    assert not result.is_error, result.content
    assert outside.read_bytes() == before
    assert link.read_bytes() == b"new\n"  # the content as given
    assert os.stat(outside).st_nlink == 1
    assert os.stat(outside).st_ino != os.stat(link).st_ino


async def test_edit_through_a_hardlink_keeps_crlf_and_the_outside_file(
    tmp_path: Path,
) -> None:
    ws, outside, link = _linked(tmp_path)
    before = outside.read_bytes()
    _, edit = await _tools(ws, "link.txt")
    result = await edit.run(
        {"file_path": "link.txt", "old_string": "keep me\n", "new_string": "edited\nadded\n"},
        _ctx(ws),
    )
    assert not result.is_error, result.content
    assert outside.read_bytes() == before
    # As native decodes it, the byte-order mark is gone; the CRLF endings stay.
    assert link.read_bytes() == b"edited\r\nadded\r\nline two\r\n"


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o444])
async def test_permission_bits_survive(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "f.sh"
    target.write_text("echo one\n")
    target.chmod(mode)
    write, edit = await _tools(tmp_path, "f.sh")
    wrote = await write.run({"file_path": "f.sh", "content": "echo two\n"}, _ctx(tmp_path))
    assert not wrote.is_error, wrote.content
    assert stat.S_IMODE(target.stat().st_mode) == mode
    edited = await edit.run(
        {"file_path": "f.sh", "old_string": "two", "new_string": "three"}, _ctx(tmp_path)
    )
    assert not edited.is_error, edited.content
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert target.read_text() == "echo three\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.sh"]  # no temp file left


async def test_a_new_file_is_the_owners_alone_and_a_symlink_stays_a_symlink(
    tmp_path: Path,
) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    write, _ = await _tools(tmp_path)
    wrote = await write.run({"file_path": "d/new.txt", "content": "x"}, _ctx(tmp_path))
    assert not wrote.is_error
    # Native creates a file 0600 (its staging file's mode).
    assert stat.S_IMODE((tmp_path / "d" / "new.txt").stat().st_mode) == 0o600 & ~umask
    (tmp_path / "alias.txt").symlink_to("d/new.txt")
    # The alias is the same file (its real path), which this session wrote: no read needed.
    await write.run({"file_path": "alias.txt", "content": "y"}, _ctx(tmp_path))
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "d" / "new.txt").read_text() == "y"


async def test_a_failed_write_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old\n")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    write, _ = await _tools(tmp_path, "f.txt")
    monkeypatch.setattr(os, "fsync", disk_full)
    result = await write.run({"file_path": "f.txt", "content": "new\n"}, _ctx(tmp_path))
    assert result.is_error and "No space left on device" in result.content[0]["text"]
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


# A writer process that rewrites one file as fast as it can, alternating two contents of
# the same size; a reader that catches a torn file proves the write was not atomic.
WRITER = """
import sys
from pathlib import Path
from acp_plus.core.tools.fileio import replace_file
path, size, atomic = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "atomic"
contents = [b"a" * size, b"b" * size]
print("ready", flush=True)
i = 0
while True:
    data = contents[i % 2]
    replace_file(path, data) if atomic else path.write_bytes(data)
    i += 1
"""
SIZE = 4 << 20


async def _torn_reads(target: Path, atomic: bool, seconds: float) -> tuple[int, int, bytes]:
    """Run the writer for `seconds` while reading, SIGKILL it; (reads, torn, final)."""
    target.write_bytes(b"a" * SIZE)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(SIZE), "atomic" if atomic else "plain"],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
    reads = torn = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            data = target.read_bytes()
            reads += 1
            if data not in (b"a" * SIZE, b"b" * SIZE):
                torn += 1
            await asyncio.sleep(0)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
    return reads, torn, target.read_bytes()


async def test_a_killed_writer_never_leaves_half_a_file(tmp_path: Path) -> None:
    reads, torn, final = await _torn_reads(tmp_path / "f.bin", atomic=True, seconds=1.5)
    assert reads > 10
    assert torn == 0
    assert final in (b"a" * SIZE, b"b" * SIZE)
    # What a crash may leave is a temp file beside it, never a torn target.
    assert all(p.name.startswith(".f.bin.") for p in tmp_path.iterdir() if p.name != "f.bin")


async def test_the_torn_read_check_catches_a_plain_write(tmp_path: Path) -> None:
    # The control: the same reader sees torn files when the writer writes in place, so
    # the check above can fail.
    _, torn, _ = await _torn_reads(tmp_path / "f.bin", atomic=False, seconds=1.5)
    assert torn > 0
