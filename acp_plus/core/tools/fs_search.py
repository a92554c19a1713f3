"""Native's fs-search family, `glob` and `grep`: their definitions, guidance and results
(docs/acp-plus.md, "The search tools").

Like native, both run ripgrep with a fixed argument vector (no shell; every model value
one argument, the search root after `--`, `--no-config` so no configuration file can add
a preprocessor) in the session's cwd, and word what it prints the way native does.
Native ships its own `rg` (15.0.0); acp-plus runs the one of the `ripgrep` wheel it
depends on (14.1: ripgrep's messages follow its version, and a system's may be older),
else the one on PATH, and without either each call fails with native's launch-failure
text. A result over the inline cap keeps its first page, and the whole result goes to a
file in the spill directory (`spill.save_text`, as native's spill store) that the
page's footer names.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
from typing import Any, ClassVar

from acp_plus.core.js_json import js_trim
from acp_plus.core.tools.arg_schema import invalid_arguments
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.spill import HINT, save_text

FS_SEARCH_GUIDANCE: tuple[str, ...] = (
    "Use the glob tool — not shell find — to discover files by path pattern.",
    "Use the grep tool — not shell grep or rg — to search file contents. Use read on a "
    "matched file when you need surrounding context.",
)
"""The system-prompt paragraphs native's fs-search family adds (with `read` present)."""

GLOB_MAX_RESULTS = 100
GREP_MAX_MATCHES = 250
GREP_MAX_LINE_BYTES = 2000
RAW_OUTPUT_MAX_BYTES = 20_000_000
SEARCH_TIMEOUT = 30.0
VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")


class SearchError(Exception):
    """A search that failed: native's text."""


def _error(message: str) -> ToolResult:
    return ToolResult.text(f"Error: {message}", is_error=True)


def workdir_relative(path: str, workdir: str) -> str:
    """An absolute path inside the workdir shown relative to it; anything else as is."""
    if not os.path.isabs(path):
        return path
    rel = os.path.relpath(path, workdir)
    if rel == ".":
        return "."
    if rel == ".." or rel.startswith("../"):
        return path
    return rel


@functools.cache
def ripgrep() -> str | None:
    """The `rg` of the installed `ripgrep` distribution (wherever pip put its scripts:
    a venv, `--user`, pipx), else the first on PATH, else None."""
    # Imported here, on the first search: importlib.metadata is a noticeable part of the
    # agent's start-up, and most sessions never search.
    from importlib import metadata

    try:
        dist = metadata.distribution("ripgrep")
    except metadata.PackageNotFoundError:
        return shutil.which("rg")
    for file in dist.files or ():
        if file.name in ("rg", "rg.exe"):
            path = str(dist.locate_file(file))
            if os.access(path, os.X_OK):
                return os.path.normpath(path)
    return shutil.which("rg")


async def run_rg(tool: str, argv: list[str], cwd: str) -> tuple[str, bool]:
    """ripgrep's complete stdout and whether it found nothing (exit 1)."""
    rg = ripgrep()
    if rg is None:
        raise SearchError(f"{tool} could not start its search command (ripgrep launch failed)")
    try:
        proc = await asyncio.create_subprocess_exec(
            rg,
            "--no-config",
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError):
        raise SearchError(
            f"{tool} could not start its search command (ripgrep launch failed)"
        ) from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), SEARCH_TIMEOUT)
    except (TimeoutError, asyncio.CancelledError) as exc:
        proc.kill()
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise SearchError(
            f"{tool} was aborted before completion (tool timeout or caller cancellation)"
        ) from None
    code = proc.returncode
    if code is None or code < 0:
        raise SearchError(f"{tool} search command was killed by signal {-(code or 0)}")
    if code not in (0, 1):
        stderr = err.decode("utf-8", "replace").strip()
        lowered = stderr.lower()
        if "regex parse error" in lowered or "error parsing glob" in lowered:
            raise SearchError(f"{tool} pattern rejected by ripgrep: {stderr}")
        raise SearchError(f"{tool} search failed (exit {code})" + (f": {stderr}" if stderr else ""))
    if len(out) > RAW_OUTPUT_MAX_BYTES:
        raise SearchError(
            f"{tool} produced {len(out)} bytes of raw output, over the {RAW_OUTPUT_MAX_BYTES}"
            "-byte cap; narrow pattern, path, or include and retry"
        )
    return out.decode("utf-8", "replace"), code == 1


class GlobTool:
    """Native's `glob`: files whose paths match a pattern, oldest first."""

    name = "glob"
    description = (
        "Find files, not directories, whose paths match a glob pattern, including hidden and "
        f"ignored files. Returns up to {GLOB_MAX_RESULTS} paths in modification-time order; a "
        "larger result keeps the first paths and reports where the complete list was saved."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": 'Glob pattern to match file paths against (e.g. "**/*.ts", '
                '"src/**/*.test.js"). A pattern with no "/" matches the basename at any depth, '
                'so "*" and "*.ts" both search the whole tree; include a separator to anchor '
                "the depth.",
            },
            "path": {
                "type": "string",
                "description": "Directory to search in. Defaults to the session workspace; a "
                "relative path resolves against it.",
            },
        },
        "required": ["pattern"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """A search is never a question."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """`rg --files` with the pattern, rendered as native renders it."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return _error(invalid)
        pattern, path = args["pattern"], args.get("path")
        if not js_trim(pattern):
            return _error("pattern must be a non-empty string")
        if path is not None and not js_trim(path):
            return _error("path must be a non-empty string when given")
        argv = ["--files", f"--glob={pattern}", "--sort=modified", "--no-ignore", "--hidden"]
        for name in VCS_DIRS:
            argv += [f"--glob=!**/{name}", f"--glob=!**/{name}/**"]
        if path is not None:
            argv += ["--", path]
        workdir = str(ctx.cwd)
        try:
            out, none = await run_rg("glob", argv, workdir)
        except SearchError as exc:
            return _error(str(exc))
        paths = [] if none else [workdir_relative(p, workdir) for p in out.split("\n") if p]
        if not paths:
            return ToolResult.text("No files found")
        if len(paths) <= GLOB_MAX_RESULTS:
            return ToolResult.text("\n".join(paths))
        page = paths[:GLOB_MAX_RESULTS]
        saved = save_text(ctx.session_id, "glob-results.txt", "\n".join(paths))
        recovery = (
            "The complete result could not be saved; narrow pattern or path to see more."
            if saved is None
            else f"Full sorted result stored at: {saved}. {HINT}"
        )
        return ToolResult.text(
            "\n".join(page) + f"\n\n(Showing {len(page)} of {len(paths)} paths. {recovery})"
        )


def _preview(line: str) -> str:
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= GREP_MAX_LINE_BYTES:
        return line
    return data[:GREP_MAX_LINE_BYTES].decode("utf-8", "ignore") + " (line truncated)"


def _include_error(include: str) -> str | None:
    if not js_trim(include):
        return "include must be a non-empty glob when given"
    if include.startswith("!"):
        return 'include must be a positive glob filter; negated patterns ("!…") are not supported'
    depth = 0
    for char in include:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            return (
                "include must be one glob, not a comma-separated list (use {a,b} "
                "alternation instead)"
            )
    return None


def parse_matches(stdout: str) -> list[tuple[str, int, str]]:
    """(path, line number, line) of each `match` record of `rg --json` output."""
    found = []
    for raw in stdout.split("\n"):
        if not raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            raise SearchError(
                "grep received malformed ripgrep --json output (a line is not JSON)"
            ) from None
        if not isinstance(record, dict) or record.get("type") != "match":
            continue
        data = record.get("data") or {}
        path = (data.get("path") or {}).get("text")
        number = data.get("line_number")
        lines = data.get("lines") or {}
        if not isinstance(path, str) or not isinstance(number, int):
            raise SearchError("grep received malformed ripgrep --json output (a match record)")
        text = lines.get("text")
        if isinstance(text, str):
            text = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
        else:
            text = "(line is not valid UTF-8)"
        found.append((path, number, text))
    return found


def _grouped(matches: list[tuple[str, int, str]]) -> str:
    groups: dict[str, list[str]] = {}
    for path, number, line in matches:
        groups.setdefault(path, []).append(f"Line {number}: {_preview(line)}")
    return "\n\n".join(f"{path}\n" + "\n".join(rows) for path, rows in groups.items())


def format_grep(matches: list[tuple[str, int, str]], session_id: str = "") -> str:
    """Native's grep text: a count, the kept matches grouped by file, and, if capped, a
    footer naming the file that holds every match (saved for `session_id`)."""
    seen = len(matches)
    if not matches:
        return "No matches found"
    if seen <= GREP_MAX_MATCHES:
        return f"Found {seen} {'match' if seen == 1 else 'matches'}\n\n{_grouped(matches)}"
    everything = f"Found {seen} matches\n\n{_grouped(matches)}"
    saved = save_text(session_id, "grep-results.txt", everything)
    recovery = (
        "The complete result could not be saved; narrow pattern, path, or include to see more."
        if saved is None
        else f"Full grep result stored at: {saved}. {HINT}"
    )
    body = _grouped(matches[:GREP_MAX_MATCHES])
    return f"Found {GREP_MAX_MATCHES} of {seen} matches\n\n{body}\n\n({recovery})"


class GrepTool:
    """Native's `grep`: matching lines, grouped by file."""

    name = "grep"
    description = (
        "Search file contents with a ripgrep regular expression. Returns matching lines with "
        f"line numbers, grouped by file. Returns up to {GREP_MAX_MATCHES} matches; a larger "
        "result reports where the complete match list was saved."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression to search for (ripgrep syntax).",
            },
            "path": {
                "type": "string",
                "description": "File or directory to search. Defaults to the session workspace; "
                "a relative path resolves against it.",
            },
            "include": {
                "type": "string",
                "description": 'One glob filter for which files to search (e.g. "*.ts", '
                '"*.{js,jsx}"). Not a list; negation is not supported.',
            },
        },
        "required": ["pattern"],
    }

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """A search is never a question."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """`rg --json` with the pattern, rendered as native renders it."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return _error(invalid)
        pattern, path, include = args["pattern"], args.get("path"), args.get("include")
        if not pattern:
            return _error("pattern must be a non-empty string")
        if path is not None and not js_trim(path):
            return _error("path must be a non-empty string when given")
        problem = None if include is None else _include_error(include)
        if problem is not None:
            return _error(problem)
        argv = ["--json", f"--regexp={pattern}"]
        if include is not None:
            argv.append(f"--glob={include}")
        if path is not None:
            argv += ["--", path]
        workdir = str(ctx.cwd)
        try:
            out, none = await run_rg("grep", argv, workdir)
            found = [] if none else parse_matches(out)
        except SearchError as exc:
            return _error(str(exc))
        matches = [(workdir_relative(p, workdir), n, line) for p, n, line in found]
        return ToolResult.text(format_grep(matches, ctx.session_id))


def fs_search_tools() -> list[Tool]:
    """Native's fs-search family: `glob`, `grep`."""
    return [GlobTool(), GrepTool()]


__all__ = [
    "FS_SEARCH_GUIDANCE",
    "GlobTool",
    "GrepTool",
    "SearchError",
    "format_grep",
    "fs_search_tools",
    "parse_matches",
    "workdir_relative",
]
