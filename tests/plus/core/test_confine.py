"""The bash sandbox's pure parts: the bubblewrap profile, the Landlock helper's arguments,
escalation, native's texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_plus.core.confine import (
    LANDLOCK_DEVICES,
    LANDLOCK_PREFIX,
    LANDLOCK_SIGNATURES,
    Profile,
    bwrap_args,
    denial_notes,
    escalation,
    hidden_paths,
    landlock_args,
    runner_failure,
)

WS = Path("/tmp/run/ws")


def _after(args: list[str], first: str, then: str) -> bool:
    return args.index(first) < args.index(then)


def test_workspace_write_binds_the_workspace_after_the_private_tmp() -> None:
    args = bwrap_args(Profile("workspace-write", WS, (Path("/tmp/run/home"),)))
    assert args[-3:] == ["--chdir", str(WS), "--"]
    # The workspace (under /tmp here) stays reachable: bound after /tmp is replaced.
    assert _after(args, "/tmp", str(WS)) and args[args.index(str(WS)) - 1] == "--bind"
    # The home is covered last, read-only.
    assert args[-7:-3] == ["--tmpfs", "/tmp/run/home", "--remount-ro", "/tmp/run/home"]
    for flag in ("--unshare-pid", "--unshare-user", "--disable-userns", "--new-session"):
        assert flag in args
    assert args[args.index("--cap-drop") + 1] == "ALL"
    assert args[args.index("--ro-bind") + 1 : args.index("--ro-bind") + 3] == ["/", "/"]


def test_read_only_binds_nothing_writable() -> None:
    args = bwrap_args(Profile("read-only", WS))
    assert "--bind" not in args and "--tmpfs" not in args
    assert "--unshare-user" in args


def test_without_user_namespaces_the_rest_of_the_profile_holds() -> None:
    args = bwrap_args(Profile("read-only", WS, userns=False))
    assert "--unshare-user" not in args and "--disable-userns" not in args
    assert "--cap-drop" in args and "--unshare-pid" in args


def test_danger_full_access_has_no_profile() -> None:
    with pytest.raises(ValueError):
        bwrap_args(Profile("danger-full-access", WS))


def test_escalation_is_strictly_wider() -> None:
    ask = {"sandbox_permissions": "danger-full-access", "justification": "why"}
    assert escalation({}, "workspace-write") is None
    assert escalation(ask, "workspace-write") == "danger-full-access"
    assert escalation(ask, "read-only") == "danger-full-access"
    wider = {"sandbox_permissions": "workspace-write", "justification": "why"}
    assert escalation(wider, "read-only") == "workspace-write"
    with pytest.raises(ValueError, match="not strictly wider"):
        escalation(wider, "danger-full-access")


def test_asking_for_the_mode_the_call_has_is_no_request() -> None:
    # Native's bash: the call's own mode needs no justification and asks nobody; a
    # blank justification alone is ignored (explore found the first, seed 42).
    assert escalation({"sandbox_permissions": "workspace-write"}, "workspace-write") is None
    same = {"sandbox_permissions": "workspace-write", "justification": "why"}
    assert escalation(same, "workspace-write") is None
    assert escalation({"justification": "  "}, "workspace-write") is None
    with pytest.raises(ValueError, match="requires a justification"):
        escalation({"sandbox_permissions": "danger-full-access"}, "workspace-write")
    with pytest.raises(ValueError, match="only valid together"):
        escalation({"justification": "why"}, "workspace-write")
    with pytest.raises(ValueError, match="not strictly wider"):
        escalation({"sandbox_permissions": "root", "justification": "why"}, "read-only")


def test_denial_notes_need_a_failure_and_the_signature() -> None:
    assert denial_notes("workspace-write", 1, "x: Read-only file system\n")[0] == (
        "[sandbox: file access denied under workspace-write mode]"
    )
    assert denial_notes("read-only", 0, "Read-only file system") == []
    assert denial_notes("read-only", 1, "No such file or directory") == []


def test_runner_failure_is_bubblewraps_first_line_and_exit_1() -> None:
    assert runner_failure(1, "bwrap: Can't mount proc\n") == "bwrap: Can't mount proc"
    assert runner_failure(2, "bwrap: x") is None
    assert runner_failure(1, "ok\nbwrap: printed by the command") is None


def test_a_home_holding_the_workspace_is_not_covered() -> None:
    assert hidden_paths([Path("/tmp/run"), Path("/h")], WS) == (Path("/h"),)
    assert hidden_paths([WS], WS) == ()


def test_landlock_args_write_the_workspace_and_private_tmp_and_hide_the_home() -> None:
    home, tmp = Path("/tmp/run/home"), Path("/tmp/acp-plus-bash-x")
    args = landlock_args(Profile("workspace-write", WS, (home,)), tmp)
    assert args[:6] == ["--hide", str(home), "--write", str(WS), "--tmpdir", str(tmp)]
    assert args[-1] == "--"
    assert args[6:-1] == [a for d in LANDLOCK_DEVICES for a in ("--write-file", d)]


def test_landlock_args_under_read_only_write_only_devices() -> None:
    args = landlock_args(Profile("read-only", WS), Path("/tmp/ignored"))
    assert "--write" not in args and "--tmpdir" not in args
    assert set(args[1:-1:2]) == set(LANDLOCK_DEVICES)
    with pytest.raises(ValueError, match="without a sandbox"):
        landlock_args(Profile("danger-full-access", WS), None)


def test_landlock_denials_and_runner_failures_are_recognised() -> None:
    denied = "bash: line 1: /etc/x: Permission denied\n"
    assert denial_notes("workspace-write", 1, denied) == []  # bubblewrap's signature only
    assert len(denial_notes("workspace-write", 1, denied, LANDLOCK_SIGNATURES)) == 2
    failure = f"{LANDLOCK_PREFIX}landlock_restrict_self: Operation not permitted\n"
    assert runner_failure(1, failure) is None
    assert runner_failure(1, failure, LANDLOCK_PREFIX) == failure.rstrip("\n")
    assert runner_failure(2, failure, LANDLOCK_PREFIX) is None


def test_landlock_args_leave_a_home_inside_the_workspace_reachable() -> None:
    inside, beside = WS / ".home", Path("/tmp/run/home")
    args = landlock_args(Profile("workspace-write", WS, (inside, beside)), None)
    assert args[:4] == ["--hide", str(beside), "--write", str(WS)]
    assert str(inside) not in args
