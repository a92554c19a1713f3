"""Built-in tools: `read`, `write`, `edit`, `bash`, working in the session cwd.

Effects outside the sandbox are not refused outright: each tool reports the escalation
it needs (`approval_reason`) and the loop asks the approval chain. Output is capped so
one call cannot flood the model context.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any, ClassVar

from acp_plus.core.sandbox import command_escalation, resolve_path, write_escalation
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult

OUTPUT_CAP = 64 * 1024
"""Characters of tool output the model sees at most."""
READ_CAP = 256 * 1024
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    """Cut `text` to `limit` characters, saying how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated: {len(text) - limit} more characters]"


def _path_arg(args: dict[str, Any]) -> str:
    value = args.get("file_path")
    if not isinstance(value, str) or not value:
        raise ValueError("file_path must be a non-empty string")
    return value


def _str_arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


class ReadTool:
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
        """Reads are allowed in every sandbox mode."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Return the file's text (capped)."""
        path = resolve_path(_path_arg(args), ctx.cwd)
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            return ToolResult.text(f"cannot read {path}: {exc.strerror or exc}", is_error=True)
        text = data[:READ_CAP].decode("utf-8", "replace")
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            start = offset if isinstance(offset, int) and offset >= 0 else 0
            end = start + limit if isinstance(limit, int) and limit > 0 else len(lines)
            text = "".join(lines[start:end])
        if len(data) > READ_CAP:
            text += f"\n[file truncated: {len(data) - READ_CAP} more bytes]"
        return ToolResult.text(text)


class WriteTool:
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
        return write_escalation(resolve_path(_path_arg(args), ctx.cwd), ctx.sandbox, ctx.cwd)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the content."""
        path = resolve_path(_path_arg(args), ctx.cwd)
        content = _str_arg(args, "content")

        def write() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")

        try:
            await asyncio.to_thread(write)
        except OSError as exc:
            return ToolResult.text(f"cannot write {path}: {exc.strerror or exc}", is_error=True)
        return ToolResult.text(f"wrote {len(content.encode())} bytes to {path}")


class EditTool:
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
        return write_escalation(resolve_path(_path_arg(args), ctx.cwd), ctx.sandbox, ctx.cwd)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the replacement."""
        path = resolve_path(_path_arg(args), ctx.cwd)
        old, new = _str_arg(args, "old_string"), _str_arg(args, "new_string")
        replace_all = args.get("replace_all") is True
        if not old:
            return ToolResult.text("old_string must not be empty", is_error=True)
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return ToolResult.text(f"cannot read {path}: {exc}", is_error=True)
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
            await asyncio.to_thread(path.write_text, updated, encoding="utf-8")
        except OSError as exc:
            return ToolResult.text(f"cannot write {path}: {exc.strerror or exc}", is_error=True)
        return ToolResult.text(f"replaced {count if replace_all else 1} occurrence(s) in {path}")


class BashTool:
    """Run a shell command in the session cwd, with a timeout and an output cap."""

    name = "bash"
    description = (
        "Run a bash command in the working directory. Arguments: command, optional timeout (s)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number", "minimum": 1, "maximum": MAX_TIMEOUT},
        },
        "required": ["command"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Commands need an escalation unless the sandbox is `danger-full-access`."""
        return command_escalation(_str_arg(args, "command"), ctx.sandbox)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command; a timeout or cancellation kills its whole process group."""
        command = _str_arg(args, "command")
        timeout = args.get("timeout")
        limit = (
            min(float(timeout), MAX_TIMEOUT)
            if isinstance(timeout, int | float)
            else DEFAULT_TIMEOUT
        )
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=ctx.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # its own group, so a kill reaches its children too
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # The child may already be running: get its handle so it can be killed.
            with contextlib.suppress(Exception):
                await _kill_group(await spawn)
            raise
        try:
            out, _ = await asyncio.wait_for(_read_capped(proc), timeout=limit)
        except TimeoutError:
            await _kill_group(proc)
            return ToolResult.text(f"command timed out after {limit:g}s", is_error=True)
        except asyncio.CancelledError:
            await asyncio.shield(_kill_group(proc))
            raise
        code = await proc.wait()
        text = cap(out) + ("" if out.endswith("\n") or not out else "\n") + f"exit code: {code}"
        return ToolResult.text(text, is_error=code != 0)


async def _read_capped(proc: asyncio.subprocess.Process) -> tuple[str, None]:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while block := await proc.stdout.read(65536):
        if size <= OUTPUT_CAP * 4:  # keep enough to cap by characters; drop the rest
            chunks.append(block)
        size += len(block)
    await proc.wait()
    return b"".join(chunks).decode("utf-8", "replace"), None


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=2.0)


def builtin_tools() -> list[Tool]:
    """The built-in tools, in the order the model sees them."""
    return [ReadTool(), WriteTool(), EditTool(), BashTool()]


__all__ = ["BashTool", "EditTool", "ReadTool", "WriteTool", "builtin_tools", "cap"]
