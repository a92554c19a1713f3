"""Built-in tools: `read`, `write`, `edit` (here) and `bash` (`bash.py`), working in the
session cwd.

Effects outside the sandbox are not refused outright: each file tool reports the
escalation it needs (`approval_reason`) and the loop asks the approval chain; reads
outside the workspace ask like writes do. `bash` runs in an OS sandbox instead and asks
only when the model requests an escalation. The agent's own files are the exception:
its /proc entries and its home are refused in every mode with a tool error, nobody
asked (`sandbox.agent_private`). Paths are resolved (symlinks followed) before any decision,
and again right before the file is touched. `write` and `edit` replace a file by atomic
rename (`fileio.replace_file`). Reads are capped so one call cannot flood the model context.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from acp_plus.core.sandbox import (
    agent_private,
    read_escalation,
    resolve_path,
    write_escalation,
)
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.bash_family import bash_tools
from acp_plus.core.tools.file_text import decode_text, encode_text, is_crlf, split_bom, to_crlf
from acp_plus.core.tools.fileio import open_regular, read_regular, replace_file
from acp_plus.core.tools.job_table import JobTable
from acp_plus.core.tools.jobs_family import job_tools
from acp_plus.core.tools.proctree import agent_pids
from acp_plus.core.tools.todo_family import todo_tools

READ_CAP = 256 * 1024


def _path_arg(args: dict[str, Any]) -> str:
    value = args.get("file_path")
    if not isinstance(value, str) or not value:
        raise ValueError("file_path must be a non-empty string")
    return value


class Refused(ValueError):
    """A path no tool may touch; raised from `approval_reason`, so the call fails
    without a permission request, and from `run`, so it fails even when called alone."""


class _FileTool:
    """What the file tools share: the agent's homes, and resolving a path argument."""

    def __init__(self, homes: Sequence[Path] = ()) -> None:
        self.homes = tuple(home.resolve(strict=False) for home in homes)

    def target(self, args: dict[str, Any], ctx: ToolContext) -> Path:
        """The resolved `file_path`; `Refused` when it is the agent's own."""
        given = _path_arg(args)
        path = resolve_path(given, ctx.cwd)
        what = agent_private(path, self.homes, agent_pids())
        if what is not None:
            raise Refused(f"refused: {given} is {what}; no tool may read or change it")
        return path


def _str_arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


class ReadTool(_FileTool):
    """Read a text file, optionally a window of lines."""

    name = "read"
    description = (
        "Read a text file. Arguments: file_path, optional offset (0-based line) and limit (lines)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Absolute, or relative to the working directory.",
            },
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["file_path"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Reads inside the workspace are allowed in every mode; outside it they need an
        escalation below `danger-full-access`."""
        return read_escalation(self.target(args, ctx), ctx.sandbox, ctx.cwd)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Return the file's text, or the `offset`/`limit` window of its lines, capped.

        The window is taken first and the `READ_CAP` size cap applies to the window, so
        any part of a large file can be read; the file is streamed, never loaded whole.
        """
        try:
            path = self.target(args, ctx)
        except Refused as exc:
            return ToolResult.text(str(exc), is_error=True)
        offset, limit = args.get("offset"), args.get("limit")
        windowed = isinstance(offset, int) or isinstance(limit, int)
        start = offset if isinstance(offset, int) and offset >= 0 else 0
        count = limit if isinstance(limit, int) and limit > 0 else None
        try:
            if windowed:
                data, more = await asyncio.to_thread(_read_window, path, start, count)
            else:
                data, more = await asyncio.to_thread(_read_head, path)
        except OSError as exc:
            return ToolResult.text(f"cannot read {path}: {exc.strerror or exc}", is_error=True)
        text = data.decode("utf-8", "replace")
        if more:
            text += f"\n[{'window' if windowed else 'file'} truncated: {more} more bytes]"
        return ToolResult.text(text)


def _read_head(path: Path) -> tuple[bytes, int]:
    """The first `READ_CAP` bytes and how many bytes follow them."""
    with open_regular(path) as fh:
        data = fh.read(READ_CAP)
        size = os.fstat(fh.fileno()).st_size
    return data, max(0, size - len(data))


def _read_window(path: Path, start: int, count: int | None) -> tuple[bytes, int]:
    """Lines `start` .. `start + count` (all when `count` is None), at most `READ_CAP`
    bytes of them, and how many bytes of the window were cut off."""
    kept = bytearray()
    dropped = 0
    with open_regular(path) as fh:
        for index, line in enumerate(fh):
            if index < start:
                continue
            if count is not None and index >= start + count:
                break
            room = READ_CAP - len(kept)
            kept += line[:room]
            dropped += max(0, len(line) - room)
    return bytes(kept), dropped


class WriteTool(_FileTool):
    """Create or overwrite a file."""

    name = "write"
    description = "Write a file (creating parent directories). Arguments: file_path, content."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Writes outside the sandbox need an escalation."""
        return write_escalation(self.target(args, ctx), ctx.sandbox, ctx.cwd)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the content.

        The content replaces the file as given, line endings included (the model chose
        them); only a byte-order mark the existing file had is kept, in the encoding it
        names, so rewriting a BOM file does not silently change its encoding. `edit`, by
        contrast, also keeps the file's line endings. The file is replaced atomically,
        keeping its permission bits.
        """
        try:
            path = self.target(args, ctx)
        except Refused as exc:
            return ToolResult.text(str(exc), is_error=True)
        content = _str_arg(args, "content")

        def write() -> int:
            path.parent.mkdir(parents=True, exist_ok=True)
            bom = b""
            with contextlib.suppress(OSError), open_regular(path) as fh:
                bom, _ = split_bom(fh.read(4))
            data = encode_text(content.removeprefix("\ufeff") if bom else content, bom)
            replace_file(path, data)
            return len(data)

        try:
            size = await asyncio.to_thread(write)
        except OSError as exc:
            return ToolResult.text(f"cannot write {path}: {exc.strerror or exc}", is_error=True)
        return ToolResult.text(f"wrote {size} bytes to {path}")


class EditTool(_FileTool):
    """Replace an exact string in a file."""

    name = "edit"
    description = (
        "Replace old_string with new_string in file_path. old_string must occur exactly once "
        "unless replace_all is true."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["file_path", "old_string", "new_string"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Edits outside the sandbox need an escalation."""
        return write_escalation(self.target(args, ctx), ctx.sandbox, ctx.cwd)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the replacement, keeping the file's encoding and line endings.

        A byte-order mark (UTF-8 or UTF-16) stays, and the file is re-encoded as it was.
        In a CRLF file, `old_string` matches with either line ending and `new_string` is
        written with CRLF; lines the edit does not touch keep theirs (a mixed file stays
        mixed). The file is replaced atomically, keeping its permission bits.
        """
        try:
            path = self.target(args, ctx)
        except Refused as exc:
            return ToolResult.text(str(exc), is_error=True)
        old, new = _str_arg(args, "old_string"), _str_arg(args, "new_string")
        replace_all = args.get("replace_all") is True
        if not old:
            return ToolResult.text("old_string must not be empty", is_error=True)
        try:
            text, bom = decode_text(await asyncio.to_thread(read_regular, path))
        except (OSError, UnicodeDecodeError) as exc:
            return ToolResult.text(f"cannot read {path}: {exc}", is_error=True)
        if is_crlf(text):
            new = to_crlf(new)
            crlf_old = to_crlf(old)
            if crlf_old in text or old not in text:
                old = crlf_old
        count = text.count(old)
        if count == 0:
            return ToolResult.text(f"old_string not found in {path}", is_error=True)
        if count > 1 and not replace_all:
            return ToolResult.text(
                f"old_string occurs {count} times in {path}; give more context or set replace_all",
                is_error=True,
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        try:
            await asyncio.to_thread(replace_file, path, encode_text(updated, bom))
        except OSError as exc:
            return ToolResult.text(f"cannot write {path}: {exc.strerror or exc}", is_error=True)
        return ToolResult.text(f"replaced {count if replace_all else 1} occurrence(s) in {path}")


def builtin_tools(home: Path | None = None, jobs: JobTable | None = None) -> list[Tool]:
    """The built-in tools: the file tools, `bash` and the job tools over `jobs` (a table
    of their own when none is given), `todo_write`; the file tools refuse everything
    under `home` (the agent's state directory), and `bash` cannot see it."""
    homes = () if home is None else (home,)
    table = JobTable() if jobs is None else jobs
    return [
        ReadTool(homes),
        WriteTool(homes),
        EditTool(homes),
        *bash_tools(table, homes),
        *job_tools(table),
        *todo_tools(),
    ]


__all__ = [
    "READ_CAP",
    "EditTool",
    "ReadTool",
    "Refused",
    "WriteTool",
    "builtin_tools",
]
