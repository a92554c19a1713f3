"""Sandbox decisions of the file tools: which effects need an escalation approval. Pure.

Modes follow the usual coding-agent ladder: `read-only` (reads inside the session cwd),
`workspace-write` (also writes there), `danger-full-access` (anything). A denied effect
is not an error by itself: it becomes an approval request whose reason starts with
`escalate sandbox to ` and names the mode that would allow it, so the approval chain
(and the directory pre-approval feature, §6.2) can decide.

`bash` is decided elsewhere: it runs inside an OS sandbox and asks only for an escalation
the model requests (`core/confine.py`).

One class of path is never a question: the agent's own process files under /proc (its
environment holds the provider key) and its home (every session's log). The file tools
refuse those in every mode (`agent_private`), without asking; a user who wants them has
a shell.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("read-only", "workspace-write", "danger-full-access")


def resolve_path(path: str, cwd: Path) -> Path:
    """The absolute, symlink-resolved form of `path` (relative paths are from `cwd`)."""
    expanded = Path(os.path.expanduser(path))
    return (expanded if expanded.is_absolute() else cwd / expanded).resolve(strict=False)


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it (both taken as already resolved)."""
    return path == root or root in path.parents


def read_escalation(path: Path, mode: SandboxMode, workspace: Path) -> str | None:
    """The escalation reason a read of resolved `path` needs, or None when allowed:
    inside the workspace every mode reads; outside it only `danger-full-access` does."""
    if mode == "danger-full-access" or is_inside(path, workspace.resolve(strict=False)):
        return None
    return f"escalate sandbox to danger-full-access: read outside the workspace: {path}"


def agent_private(path: Path, homes: Sequence[Path], own_pids: Collection[int]) -> str | None:
    """Why resolved `path` belongs to the agent itself (never to a tool), or None.

    `/proc/<n>` for `n` in `own_pids` (the agent's pid and its thread ids; `/proc/self`
    and `/proc/thread-self` resolve to those) is its process: environment, memory,
    open files. Anything under one of `homes` (already resolved) is its state.
    """
    parts = path.parts
    if len(parts) >= 3 and parts[:2] == ("/", "proc"):
        entry = parts[2]
        if entry in ("self", "thread-self") or (entry.isdigit() and int(entry) in own_pids):
            return "the agent's own process"
    for home in homes:
        if is_inside(path, home):
            return "the agent's home (session logs and attachments)"
    return None


def write_escalation(path: Path, mode: SandboxMode, workspace: Path) -> str | None:
    """The escalation reason a write to resolved `path` needs, or None when allowed."""
    if mode == "danger-full-access":
        return None
    inside = is_inside(path, workspace.resolve(strict=False))
    if inside and mode == "workspace-write":
        return None
    if inside:
        return f"escalate sandbox to workspace-write: write {path}"
    return f"escalate sandbox to danger-full-access: write outside the workspace: {path}"
