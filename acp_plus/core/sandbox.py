"""The sandbox modes and the path judgements every layer shares. Pure.

Modes follow the usual coding-agent ladder: `read-only`, `workspace-write` (writes under
the session cwd, and the temp areas), `danger-full-access` (anything). The file tools
apply them as native's file sandbox does (`core/tools/fs_family.py`), `bash` inside an
OS sandbox (`core/confine.py`); both ask only for an escalation the model requests, with
a reason starting `escalate sandbox to ` (which the directory pre-approval, §6.2, reads).

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
