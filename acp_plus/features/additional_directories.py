"""M3 `additionalDirectories` (docs/contract.md §6.2): a session's extra roots, and the one
kind of approval the bridge answers itself because of them.

- `validate` turns a request's list into the session's roots: at most 16 absolute
  entries, each an existing directory, identified by its `realpath` (so a symlink names
  the directory it points to, and `..` segments are gone), duplicates and the cwd itself
  dropped. It runs on new, resume and load alike; nothing is persisted, so a load or
  resume gets exactly the roots its own request declares, never ones an earlier
  activation had (docs/contract-notes.md, "additionalDirectories").
- `preapproved` is the self-approval rule: a `write`/`edit` escalation whose target,
  resolved through symlinks, lies inside a root, in a `workspace-write` session.
  Everything else (bash, other tools, paths outside every root, `read-only` or
  `danger-full-access` sessions) still goes to the client (§4).

Both take the file-system lookups as parameters, so the rules are testable as data; the
defaults are the real `realpath`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp_plus.core.approvals import ApprovalRequest, Responder
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.sandbox import is_inside, resolve_path
from acp_plus.wire.errors import invalid_params

FIELD = "additionalDirectories"
MAX_ENTRIES = 16
ESCALATION_PREFIX = "escalate sandbox to "
SELF_APPROVED_TOOLS = ("write", "edit")
"""The tools with exactly one target path (`file_path`): only their escalation can be
checked for containment as a whole."""

Resolve = Callable[[str], str | None]
"""An absolute entry's canonical path when it is an existing directory, else None."""


def existing_directory(entry: str) -> str | None:
    """`realpath` of `entry` when it names an existing directory, else None (reads the
    file system)."""
    try:
        real = os.path.realpath(entry, strict=True)
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return None
    return real if os.path.isdir(real) else None


def _lexical_or_real(path: str) -> str:
    # The cwd need not exist (native accepts any absolute cwd); realpath keeps what exists.
    try:
        return os.path.realpath(path)
    except ValueError:
        return os.path.normpath(path)


def validate(
    value: Any,
    cwd: str,
    *,
    resolve: Resolve = existing_directory,
    canonical_cwd: Callable[[str], str] = _lexical_or_real,
) -> tuple[str, ...]:
    """The roots a request's `additionalDirectories` gives a session in `cwd`, in order.

    Absent and `[]` give none. The ACP schema parse (`schema_check.py`) has already
    made it an array of strings (anything else reads as `[]`, a non-string entry is
    dropped); the bridge's own checks (§6.2) answer -32602 with their texts.
    """
    if value is None:
        return ()
    if len(value) > MAX_ENTRIES:
        raise invalid_params(f"{FIELD} accepts at most {MAX_ENTRIES} entries")
    seen = {canonical_cwd(cwd)}
    roots: list[str] = []
    for entry in value:
        # Node's path.isAbsolute on POSIX, as for cwd: a leading slash.
        if not entry.startswith("/"):
            raise invalid_params(f"{FIELD} entries must be absolute paths: {entry}")
        real = resolve(entry)
        if real is None:
            raise invalid_params(f"{FIELD} entry is not an existing directory: {entry}")
        if real not in seen:
            seen.add(real)
            roots.append(real)
    return tuple(roots)


def preapproved(
    request: ApprovalRequest,
    roots: Sequence[str],
    sandbox: str,
    cwd: str,
    *,
    resolve: Callable[[str, Path], Path] = resolve_path,
) -> bool:
    """Whether the bridge may answer this approval `allowed-once` itself (§6.2).

    `resolve` is the same resolution the file tools apply (relative to the cwd, symlinks
    followed), so the path checked is the path the tool writes.
    """
    if not roots or sandbox != "workspace-write":
        return False
    if request.tool not in SELF_APPROVED_TOOLS:
        return False
    if not request.reason.startswith(ESCALATION_PREFIX):
        return False
    target = request.arguments.get("file_path")
    if not isinstance(target, str) or not target:
        return False
    try:
        path = resolve(target, Path(cwd))
    except (OSError, ValueError, RuntimeError):  # a symlink loop, a NUL byte
        return False
    return any(is_inside(path, Path(root)) for root in roots)


def responder(
    session_id: str, roots: Sequence[str], cwd: str, sandbox: Callable[[], str]
) -> Responder:
    """The approval responder that goes before the client's (`ApprovalChain`): answers
    `allowed-once` for a pre-approved request of this session, passes on anything else.

    `sandbox` is read per request: the standing mode at the time of the call counts.
    """
    frozen = tuple(roots)

    async def answer(request: ApprovalRequest) -> ApprovalOutcome | None:
        if request.session_id != session_id:
            return None
        if preapproved(request, frozen, sandbox(), cwd):
            return "allowed-once"
        return None

    return answer


def runtime_note(roots: Sequence[str]) -> str:
    """What the model is told about the roots, appended to the runtime context (§6.2:
    the roots reach the model as runtime context, never the wire). JSON-quoted like the
    workspace root in the runtime context."""
    listed = ", ".join(json.dumps(root, ensure_ascii=False) for root in roots)
    return (
        f"Additional workspace roots for this session: {listed}. Under workspace-write, "
        "write and edit calls for files inside them are approved without asking; every "
        "other operation there follows the file and approval policy above."
    )
