"""Native's file tools, `read`, `write` and `edit`: their definitions, the guidance they
add to the system prompt, and what they do (docs/acp-plus.md, "Built-in tools").

The three are DeepSeek Harness 0.2.1-rc.2's, text for text: the same schemas, result
envelopes, error texts (`Error: ...`, failed), limits (`fs_text.py`) and policies:

- **fs-observation-policy** (`fs_paths.Observations`): `edit` needs a read (or a write or
  edit) of the file in this session; `write` over an existing file needs a read; both
  are refused when the file changed since (its version differs).
- **The file sandbox** of `write` and `edit`: under `workspace-write` they act under the
  session's cwd, `/tmp` and the temp directory; elsewhere (and anywhere under
  `read-only`) they are refused without asking, with bash's `[sandbox: ...]` marker and
  the hint to retry with `sandbox_permissions` + `justification`. Such a retry asks the
  client (`approval_reason`) and runs in the wider mode once allowed. `read` reads
  anywhere, in every mode, unasked.

acp-plus keeps one protection native lacks, which no ordinary session meets: the agent's
own files (its home with every session's log, its /proc entries) are refused to all
three tools (`sandbox.agent_private`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from acp_plus.core.confine import WIDER_MODES, escalation_reason
from acp_plus.core.js_json import js_trim, node_utf8
from acp_plus.core.sandbox import SandboxMode, agent_private
from acp_plus.core.tools.arg_schema import invalid_arguments
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.fs_io import decoded, edit_file, write_file
from acp_plus.core.tools.fs_paths import (
    Observations,
    Target,
    is_under,
    probe,
    resolve_target,
    writable_roots,
)
from acp_plus.core.tools.fs_text import (
    FsError,
    build_window,
    check_path,
    edit_args,
    format_edit,
    format_read,
    format_write,
    read_window_args,
)
from acp_plus.core.tools.proctree import agent_pids

FS_GUIDANCE: tuple[str, ...] = (
    "Use the read tool — not shell commands like cat — to inspect text files. Use offset "
    "and limit to continue reading large files.",
    "Read an existing file before overwriting it with write (the default "
    "fs-observation-policy requires it) and prefer edit for targeted changes.",
    "Read a file before editing it (the default fs-observation-policy requires it), unless "
    "you just created or edited it in this session.",
)
"""The system-prompt paragraphs native's fs family adds, in its order."""

_ESCALATION_FIELDS: dict[str, Any] = {
    "sandbox_permissions": {
        "type": "string",
        "description": "The narrowest wider sandbox mode for a one-shot retry of the exact "
        "operation the sandbox just denied; the retry asks the user for approval.",
        "enum": ["workspace-write", "danger-full-access"],
    },
    "justification": {
        "type": "string",
        "description": "Required with sandbox_permissions: one sentence for the user "
        "explaining why this exact file operation needs the wider access. Use the language "
        "of the user\u2019s current request.",
    },
}


class Refused(ValueError):
    """A path no tool may touch (the agent's own), refused in every mode."""


def _error(message: str) -> ToolResult:
    return ToolResult.text(f"Error: {message}", is_error=True)


def _remedy(exc: FsError, display: str) -> str:
    # Native appends the only way out to the two guarded-mutation refusals.
    if exc.code == "FS_NOT_OBSERVED":
        return f'cannot modify "{display}": file has not been read — read the file, then retry'
    if exc.code == "FS_STALE_VERSION":
        return f"{exc.message} — re-read the file, then retry"
    return exc.message


def _wanted(args: dict[str, Any]) -> str | None:
    """The mode a call asks for, after native's pairing checks (`ValueError`)."""
    wanted, why = args.get("sandbox_permissions"), args.get("justification")
    if wanted is not None and why is None:
        raise ValueError("invalid escalation: sandbox_permissions requires a justification")
    if why is not None and wanted is None:
        raise ValueError(
            "invalid escalation: justification is only valid together with sandbox_permissions"
        )
    if isinstance(why, str) and not js_trim(why):
        raise ValueError("invalid justification: expected a non-empty sentence")
    return wanted if isinstance(wanted, str) else None


def _call_mode(args: dict[str, Any], standing: SandboxMode) -> SandboxMode:
    """The mode this call runs in: the standing one, or the wider one it asked for (the
    loop runs it only once that was allowed); `ValueError` with native's text."""
    wanted = _wanted(args)
    if wanted is None or wanted == standing:
        return standing
    for mode in WIDER_MODES.get(standing, ()):
        if mode == wanted:
            return mode
    raise ValueError(
        f'sandbox escalation to "{wanted}" is not strictly wider than this call\'s '
        f'current "{standing}" mode'
    )


class _FsTool:
    """What the three share: the agent's homes, the observations, resolving a path."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]

    def __init__(self, observations: Observations, homes: Sequence[Path] = ()) -> None:
        self.seen = observations
        self.homes = tuple(home.resolve(strict=False) for home in homes)

    def target(self, file_path: str, ctx: ToolContext) -> Target:
        """The resolved `file_path`; `Refused` when it is the agent's own."""
        target = resolve_target(str(ctx.cwd), file_path)
        what = agent_private(Path(target.key), self.homes, agent_pids())
        if what is not None:
            raise Refused(f"refused: {file_path} is {what}; no tool may read or change it")
        return target

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Only an escalation the model asks for, once its arguments hold, is a question;
        anything wrong with the call is its result instead (`run`)."""
        if not self.parameters["properties"].get("sandbox_permissions"):
            return None
        if invalid_arguments(self.parameters, args) is not None:
            return None
        try:
            check_path(args["file_path"])
            mode = _call_mode(args, ctx.sandbox)
            self.target(args["file_path"], ctx)
        except (FsError, ValueError):
            return None
        if mode == ctx.sandbox:
            return None
        return escalation_reason(mode, str(args["justification"]))

    def refusal(self, args: dict[str, Any], outcome: str) -> str | None:
        """The result of an escalation the client did not allow (native's texts); None for
        another question (a guard rule's), which the loop words as usual."""
        mode = args.get("sandbox_permissions")
        if mode is None:
            return None
        if outcome == "rejected":
            return (
                f'Error: the user rejected escalating this operation to "{mode}"; it stays '
                "denied, so stop and explain instead of working around it"
            )
        if outcome == "cancelled":
            return f'Error: approval for escalating to "{mode}" was cancelled'
        return (
            f'Error: sandbox escalation to "{mode}" requires approval, but no approval '
            "channel is available"
        )

    def fence(self, target: Target, mode: SandboxMode, ctx: ToolContext) -> Target:
        """The target a mutation may act on under `mode`, resolved again now (a symlink
        swapped since counts); the sandbox's marker and hint when it may not."""
        if mode == "danger-full-access":
            return target
        if mode == "workspace-write":
            fresh = resolve_target(str(ctx.cwd), target.display)
            if any(is_under(fresh.key, root) for root in writable_roots(ctx.cwd)):
                return fresh
        raise FsError(
            f"[sandbox: file access denied under {mode} mode]\n[sandbox: escalation "
            "available — retry this exact operation once with sandbox_permissions (the "
            "narrowest wider mode that suffices) + justification; the approval prompt "
            "asks the user]",
            "FS_SANDBOX_DENIED",
        )


class ReadTool(_FsTool):
    """Native's `read`: a numbered window of a UTF-8 text file."""

    name = "read"
    concurrency_safe = True  # native runs it beside its neighbours (tool_schedule.py)
    description = "Read a UTF-8 text file and return line-numbered content."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path to read, resolved by the filesystem backend.",
            },
            "offset": {
                "type": "number",
                "description": "1-based first line to return. Defaults to 1.",
            },
            "limit": {
                "type": "number",
                "description": "Maximum number of lines to return. Defaults to 2000.",
            },
        },
        "required": ["file_path"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The window, recorded as this session's observation of the file."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return _error(invalid)
        try:
            check_path(args["file_path"])
            offset, limit = read_window_args(args.get("offset"), args.get("limit"))
            target = self.target(args["file_path"], ctx)
            info = probe(target.key)
            if info is None:
                self.seen.record(ctx.session_id, target.key, None)
                raise FsError(f'cannot read "{target.display}": not found', "FS_NOT_FOUND")
            if info.kind != "file":
                raise FsError(f'cannot read "{target.display}": not a regular file')
            window = await asyncio.to_thread(
                lambda: build_window(decoded(target), offset, limit, target.display)
            )
        except (FsError, Refused) as exc:
            return _error(str(exc))
        self.seen.record(ctx.session_id, target.key, info.version)
        return ToolResult.text(format_read(target.key, offset, limit, window))


class WriteTool(_FsTool):
    """Native's `write`: create a file, or replace one this session has read."""

    name = "write"
    description = "Create or fully replace a UTF-8 text file."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path to write, resolved by the filesystem backend. Provide "
                "`file_path` before `content` in the arguments.",
            },
            "content": {"type": "string", "description": "Full UTF-8 text content to write."},
            **_ESCALATION_FIELDS,
        },
        "required": ["file_path", "content"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the content (UTF-8, as given) and record the version left behind."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return _error(invalid)
        target: Target | None = None
        try:
            check_path(args["file_path"])
            mode = _call_mode(args, ctx.sandbox)
            target = self.target(args["file_path"], ctx)
            seen = self.seen.get(ctx.session_id, target.key)
            expected = seen.version if seen is not None else None
            fresh = self.fence(target, mode, ctx)
            created, version = await asyncio.to_thread(
                write_file, fresh, node_utf8(args["content"]), expected
            )
        except FsError as exc:
            return _error(_remedy(exc, target.display if target else ""))
        except (Refused, ValueError) as exc:
            return _error(str(exc))
        self.seen.record(ctx.session_id, target.key, version)
        return ToolResult.text(format_write(target.key, created))


class EditTool(_FsTool):
    """Native's `edit`: a literal replacement in a file this session has read."""

    name = "edit"
    description = "Edit an existing UTF-8 text file by replacing literal text."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path to edit, resolved by the filesystem backend. Provide "
                "`file_path` before `old_string` and `new_string` in the arguments.",
            },
            "old_string": {"type": "string", "description": "Literal text to replace."},
            "new_string": {
                "type": "string",
                "description": "Literal replacement text. Use an empty string to delete the match.",
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace all matches. Defaults to false; when false, old_string "
                "must appear exactly once.",
            },
            **_ESCALATION_FIELDS,
        },
        "required": ["file_path", "old_string", "new_string"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the replacement in the file's own line endings, record its new version."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return _error(invalid)
        replace_all = args.get("replace_all") is True
        target: Target | None = None
        try:
            check_path(args["file_path"])
            edit_args(args["old_string"], args["new_string"])
            mode = _call_mode(args, ctx.sandbox)
            target = self.target(args["file_path"], ctx)
            seen = self.seen.get(ctx.session_id, target.key)
            if seen is None:
                raise FsError("", "FS_NOT_OBSERVED")
            if seen.version is None:
                raise FsError(f'cannot edit "{target.display}": not found', "FS_NOT_FOUND")
            fresh = self.fence(target, mode, ctx)
            version = await asyncio.to_thread(
                edit_file, fresh, seen.version, args["old_string"], args["new_string"], replace_all
            )
        except FsError as exc:
            return _error(_remedy(exc, target.display if target else ""))
        except (Refused, ValueError) as exc:
            return _error(str(exc))
        self.seen.record(ctx.session_id, target.key, version)
        return ToolResult.text(format_edit(target.key, replace_all))


def fs_tools(home: Path | None = None) -> list[Tool]:
    """Native's fs family in its order, sharing one memory of what each session has
    seen; everything under `home` (the agent's state) is refused."""
    homes = () if home is None else (home,)
    seen = Observations()
    return [ReadTool(seen, homes), WriteTool(seen, homes), EditTool(seen, homes)]


__all__ = [
    "FS_GUIDANCE",
    "EditTool",
    "ReadTool",
    "Refused",
    "WriteTool",
    "fs_tools",
]
