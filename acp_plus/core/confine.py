"""The OS sandbox a `bash` call runs in: its bubblewrap profile (and the Landlock
helper's arguments where bubblewrap is missing), escalation, and what the model reads
about it. Pure functions; `core/tools/backend.py` finds and probes the backend,
`core/tools/landlock_exec.py` applies a Landlock profile, `core/tools/bash.py` runs the
command.

The boundaries are native 0.1.0-rc.8's (docs/contract-notes.md, "The bash sandbox"): the
whole filesystem read-only, `/dev` and `/proc` fresh, and under `workspace-write` a private
`/tmp` plus the workspace writable; `read-only` writes nowhere but `/dev`. The network is
shared, as on native. acp-plus adds what native leaves open, none of which narrows what a
command may write or read of the user's files:

- a PID namespace (`--unshare-pid`): the agent's own process, and its `/proc/<pid>/environ`
  with the provider key, is not visible; everything the command starts dies with it;
- no capabilities and no new user namespaces (`--cap-drop ALL`, `--unshare-user
  --disable-userns`): as root, native's sandbox keeps every capability, so `mount -o
  remount,rw,bind /` re-opens the whole filesystem; here `mount`, `chroot` and `unshare`
  fail;
- the agent's home (session logs, attachments) covered by an empty read-only tmpfs;
- `--new-session`, so a command cannot push input into a terminal it inherited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_plus.core.js_json import js_trim
from acp_plus.core.sandbox import SandboxMode

WIDER_MODES: dict[SandboxMode, tuple[SandboxMode, ...]] = {
    "read-only": ("workspace-write", "danger-full-access"),
    "workspace-write": ("danger-full-access",),
}
"""What a call under the key may escalate to (native's strictly-wider ladder)."""

ESCALATION_TARGETS: tuple[SandboxMode, ...] = ("workspace-write", "danger-full-access")

DENIAL_SIGNATURE = "read-only file system"
"""What a write bubblewrap's mounts refuse prints (case-insensitive), as native matches it."""

RUNNER_PREFIX = "bwrap: "


@dataclass(frozen=True)
class Profile:
    """One confined run: the mode, the workspace made writable, the paths hidden."""

    mode: SandboxMode
    workspace: Path
    hidden: tuple[Path, ...] = ()
    userns: bool = True
    """Whether the kernel lets bubblewrap create a user namespace (then nested ones are
    refused with `--disable-userns`); without one, `--cap-drop ALL` still holds."""
    workdir: Path | None = None
    """Where the command starts (`bash`'s `workdir`); the workspace when None."""


def bwrap_args(profile: Profile) -> list[str]:
    """bubblewrap's arguments for `profile`, up to and including the `--` before the command.

    Order matters: later mounts cover earlier ones, so the workspace is bound after the
    private `/tmp` (a workspace under `/tmp` stays reachable) and the hidden paths come
    last (a home inside the workspace is still covered).
    """
    if profile.mode == "danger-full-access":
        raise ValueError("danger-full-access runs without a sandbox")
    args = ["--unshare-user", "--disable-userns"] if profile.userns else []
    args += ["--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if profile.mode == "workspace-write":
        workspace = str(profile.workspace)
        args += ["--tmpfs", "/tmp", "--bind", workspace, workspace]
    for path in profile.hidden:
        args += ["--tmpfs", str(path), "--remount-ro", str(path)]
    return [*args, "--chdir", str(profile.workdir or profile.workspace), "--"]


LANDLOCK_DEVICES: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
"""The devices a Landlock-confined command may write (not create): bubblewrap's fresh
`/dev` has these, and nothing else there is the command's to write."""

LANDLOCK_SIGNATURES = (DENIAL_SIGNATURE, "permission denied")
"""Landlock refuses with EACCES, not EROFS: its denials read `Permission denied`."""

LANDLOCK_PREFIX = "acp-plus-landlock: "


def landlock_args(profile: Profile, tmpdir: Path | None) -> list[str]:
    """`landlock_exec.py`'s arguments for `profile`, up to and including the `--`.

    The closest Landlock comes to `bwrap_args`: reads everywhere but the hidden paths,
    writes beneath the workspace and the call's private `tmpdir` (exported as `TMPDIR`;
    `/tmp` itself stays read-only) under `workspace-write`, and to `LANDLOCK_DEVICES`.
    A hidden path inside the workspace stays reachable (docs/contract-notes.md).
    """
    if profile.mode == "danger-full-access":
        raise ValueError("danger-full-access runs without a sandbox")
    args: list[str] = []
    for path in profile.hidden:
        # A home inside the workspace cannot be hidden: a Landlock rule grants a whole
        # hierarchy, so the workspace root would lose its listing and its writes.
        if profile.workspace not in path.parents:
            args += ["--hide", str(path)]
    if profile.mode == "workspace-write":
        args += ["--write", str(profile.workspace)]
        if tmpdir is not None:
            args += ["--tmpdir", str(tmpdir)]
    for device in LANDLOCK_DEVICES:
        args += ["--write-file", device]
    return [*args, "--"]


def probe_args(userns: bool) -> list[str]:
    """The arguments of the one-time check that bubblewrap can build a profile here."""
    return [*bwrap_args(Profile("read-only", Path("/"), userns=userns)), "true"]


def escalation(args: dict[str, Any], standing: SandboxMode) -> SandboxMode | None:
    """The mode a call asks to run under (`sandbox_permissions` with a `justification`),
    or None; `ValueError` with native's text for a malformed or non-widening request.
    As native's `bash` reads them: asking for the mode the call already has is no
    request at all (no justification needed), and a blank justification alone is none."""
    wanted, why = args.get("sandbox_permissions"), args.get("justification")
    if wanted is not None and wanted == standing:
        return None
    if wanted is None and isinstance(why, str) and not js_trim(why):
        why = None
    if wanted is not None and why is None:
        raise ValueError("invalid escalation: sandbox_permissions requires a justification")
    if why is not None and wanted is None:
        raise ValueError(
            "invalid escalation: justification is only valid together with sandbox_permissions"
        )
    if wanted is None:
        return None
    if not isinstance(why, str) or not why.strip():
        raise ValueError("invalid justification: expected a non-empty sentence")
    for mode in WIDER_MODES.get(standing, ()):
        if wanted == mode:
            return mode
    raise ValueError(
        f'sandbox escalation to "{wanted}" is not strictly wider than this call\'s '
        f'current "{standing}" mode'
    )


def escalation_reason(mode: SandboxMode, justification: str) -> str:
    """The approval reason of an escalation: native's, the model's sentence verbatim."""
    return f"escalate sandbox to {mode}: {justification}"


def unavailable(mode: SandboxMode, detail: str | None = None) -> str:
    """Native's refusal when no backend can confine the command: it never runs unconfined."""
    text = (
        f'sandbox mode "{mode}" is requested but no sandbox backend is usable on this host; '
        "refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing "
        "kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL "
        "restricted-token runner can start (Windows) — otherwise switch the consumer to "
        "danger-full-access."
    )
    return text if detail is None else f"{text} Runner failure: {detail}"


def runner_failure(code: int, output: str, prefix: str = RUNNER_PREFIX) -> str | None:
    """The runner's own error line when it refused to start the command, else None.

    bubblewrap reports its failures on stderr as `bwrap: ...` (the Landlock helper as
    `LANDLOCK_PREFIX...`) and exits 1 before the command runs, so only the first line of
    the merged output can be its.
    """
    first = output.split("\n", 1)[0]
    return first if code == 1 and first.startswith(prefix) else None


def denial_notes(
    mode: SandboxMode, code: int, output: str, signatures: Sequence[str] = (DENIAL_SIGNATURE,)
) -> list[str]:
    """Native's markers after a failed command whose output shows a refused access."""
    if code == 0 or not any(signature in output.lower() for signature in signatures):
        return []
    return [
        f"[sandbox: file access denied under {mode} mode]",
        "[sandbox: escalation available — retry this exact command once with "
        "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
        "approval prompt asks the user]",
    ]


def hidden_paths(homes: Sequence[Path], workspace: Path) -> tuple[Path, ...]:
    """The agent homes to cover, except one that holds the workspace (covering it would
    hide the workspace too; the file tools still refuse it)."""
    return tuple(home for home in homes if home != workspace and home not in workspace.parents)


__all__ = [
    "DENIAL_SIGNATURE",
    "ESCALATION_TARGETS",
    "LANDLOCK_DEVICES",
    "LANDLOCK_PREFIX",
    "LANDLOCK_SIGNATURES",
    "WIDER_MODES",
    "Profile",
    "bwrap_args",
    "denial_notes",
    "escalation",
    "escalation_reason",
    "hidden_paths",
    "landlock_args",
    "probe_args",
    "runner_failure",
    "unavailable",
]
