"""The file work of native's `read`, `write` and `edit` (`fs_family.py`), run in a worker
thread: decoding a file as native does, and the guarded write and edit (the version
check, the atomic replacement, the no-clobber create). Native's refusal texts, as
`FsError`s the tools turn into results.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

from acp_plus.core.js_json import node_utf8
from acp_plus.core.tools.fileio import open_regular, publish_new, replace_file
from acp_plus.core.tools.fs_paths import Target, probe
from acp_plus.core.tools.fs_text import FsError, apply_edit

BINARY_SAMPLE = 8192
"""Bytes at a file's start that `read` checks for a NUL (a binary file)."""
CHUNK = 1 << 20


def decoded(target: Target) -> Iterator[str]:
    """The file's text in chunks, as native decodes it: NUL in the first bytes is a binary
    file, invalid UTF-8 is refused, a leading byte-order mark is dropped."""
    try:
        fh = open_regular(Path(target.key))
    except OSError as exc:
        raise FsError(f'cannot read "{target.display}": {exc.strerror or exc}') from None
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    sampled = 0
    with fh:
        while True:
            data = fh.read(CHUNK)
            if sampled < BINARY_SAMPLE and b"\0" in data[: BINARY_SAMPLE - sampled]:
                raise FsError(f'cannot read "{target.display}": binary file', "FS_NOT_TEXT")
            sampled += len(data)
            try:
                yield decoder.decode(data, final=not data)
            except UnicodeDecodeError:
                raise FsError(
                    f'cannot read "{target.display}": invalid UTF-8 text', "FS_NOT_TEXT"
                ) from None
            if not data:
                return


def write_file(target: Target, data: bytes, expected: str | None) -> tuple[bool, str | None]:
    """Replace the file at `expected` (the version read) or create it where none was
    read; whether it was created, and its new version."""
    existing = probe(target.key)
    if existing is not None and existing.kind != "file":
        raise FsError(f'cannot write "{target.display}": not a regular file')
    path = Path(target.key)
    if expected is not None:
        if existing is None:
            raise FsError(
                f'cannot write "{target.display}": file no longer exists', "FS_STALE_VERSION"
            )
        if existing.version != expected:
            raise FsError(
                f'cannot write "{target.display}": file changed since it was read',
                "FS_STALE_VERSION",
            )
    elif existing is not None:
        raise FsError("", "FS_NOT_OBSERVED")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if expected is None:
            publish_new(path, data)
        else:
            replace_file(path, data)
    except FileExistsError:
        raise FsError("", "FS_NOT_OBSERVED") from None
    except OSError as exc:
        raise FsError(f'cannot write "{target.display}": {exc.strerror or exc}') from None
    after = probe(target.key)
    return existing is None, after.version if after else None


def edit_file(target: Target, expected: str, old: str, new: str, replace_all: bool) -> str | None:
    """The edit of the file at version `expected`; its new version."""
    changed = f'cannot edit "{target.display}": file changed since it was read'
    existing = probe(target.key)
    if existing is None:
        raise FsError(changed, "FS_STALE_VERSION")
    if existing.kind != "file":
        raise FsError(f'cannot edit "{target.display}": not a regular file')
    if existing.version != expected:
        raise FsError(changed, "FS_STALE_VERSION")
    path = Path(target.key)
    try:
        with open_regular(path) as fh:
            data = fh.read()
    except OSError as exc:
        raise FsError(f'cannot edit "{target.display}": {exc.strerror or exc}') from None
    if b"\0" in data:
        raise FsError(f'cannot edit "{target.display}": binary file', "FS_NOT_TEXT")
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FsError(
            f'cannot edit "{target.display}": invalid UTF-8 text', "FS_NOT_TEXT"
        ) from None
    edited, _ = apply_edit(raw, old, new, replace_all, target.display)
    try:
        replace_file(path, node_utf8(edited))
    except OSError as exc:
        raise FsError(f'cannot edit "{target.display}": {exc.strerror or exc}') from None
    after = probe(target.key)
    return after.version if after else None


__all__ = ["BINARY_SAMPLE", "CHUNK", "decoded", "edit_file", "write_file"]
