"""The Landlock helper on its own: rights per ABI, the read cover that hides a path, its
argument parsing, and that only children are ever restricted (never the agent)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_plus.core.tools import landlock_exec as ll
from acp_plus.core.tools.backend import SWITCH, chosen, find_backend

HELPER = [sys.executable, "-I", "-S", str(ll.__file__)]
offered = pytest.mark.skipif(
    not sys.platform.startswith("linux") or ll.abi_version() < ll.MIN_ABI,
    reason="the kernel offers no Landlock ABI >= 3",
)


def test_rights_grow_with_the_abi() -> None:
    assert ll.fs_rights(1) == (1 << 13) - 1
    assert ll.fs_rights(2) & ll.REFER and not ll.fs_rights(2) & ll.TRUNCATE
    assert ll.fs_rights(4) == ll.fs_rights(3) == ll.fs_rights(2) | ll.TRUNCATE
    assert ll.fs_rights(7) == ll.fs_rights(5) == (1 << 16) - 1
    assert ll.scopes(5) == 0
    assert ll.scopes(6) == ll.SCOPE_SIGNAL | ll.SCOPE_ABSTRACT_UNIX_SOCKET


def test_cover_leaves_out_a_hidden_path_and_its_ancestors_only(tmp_path: Path) -> None:
    for directory in ("a/home/x", "a/sib", "b"):
        (tmp_path / directory).mkdir(parents=True)
    (tmp_path / "a" / "f").write_text("f")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "a" / "home")
    root, home = str(tmp_path), str(tmp_path / "a" / "home")
    assert ll.cover(root, []) == [root]
    assert ll.cover(root, [home]) == [f"{root}/a/f", f"{root}/a/sib", f"{root}/b"]
    assert ll.cover(home, [home]) == []
    assert ll.cover(f"{root}/b", [home]) == [f"{root}/b"]
    # A sibling whose name merely starts like the hidden one is not hidden.
    (tmp_path / "a" / "home2").mkdir()
    assert f"{root}/a/home2" in ll.cover(root, [home])


def test_bad_arguments_fail_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="no command"):
        ll._parse(["--write", "/tmp", "--"])
    with pytest.raises(ValueError, match="bad argument"):
        ll._parse(["--read", "/", "--", "true"])
    options, command = ll._parse(["--hide", "/var/../var/h", "--", "bash", "-c", "x"])
    assert options["--hide"] == ["/var/h"] and command == ["bash", "-c", "x"]


def test_the_switch_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SWITCH, "Landlock ")
    assert chosen() == "landlock"
    monkeypatch.setenv(SWITCH, "seccomp")
    with pytest.raises(ValueError, match="expected one of auto, bwrap, landlock, none"):
        find_backend()


def test_bubblewrap_comes_first_in_the_default_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SWITCH, "bwrap")
    bwrap = find_backend()
    monkeypatch.delenv(SWITCH)
    auto = find_backend()
    if bwrap is not None:
        assert auto == bwrap and auto.kind == "bwrap"
    elif ll.abi_version() >= ll.MIN_ABI:
        assert auto is not None and auto.kind == "landlock"
    monkeypatch.setenv(SWITCH, "none")
    assert find_backend() is None


@offered
def test_the_probe_restricts_a_child_never_this_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    probe = subprocess.run([*HELPER, "--probe"], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == str(ll.abi_version())
    monkeypatch.setenv(SWITCH, "landlock")
    backend = find_backend()
    assert backend is not None and backend.kind == "landlock"
    # The probe's ruleset grants writes to /dev/null only: had it restricted this
    # process, this write would fail, and NO_NEW_PRIVS would be set.
    (tmp_path / "still-writable").write_text("x")
    assert "NoNewPrivs:\t0" in Path(f"/proc/{os.getpid()}/status").read_text()


@offered
def test_a_confined_command_keeps_no_capability_and_no_terminal(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *HELPER,
            "--write",
            str(tmp_path),
            "--",
            "sh",
            "-c",
            "grep ^Cap /proc/self/status; ps -o sid= -p $$; echo $$",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    lines = done.stdout.split("\n")
    assert all(line.endswith("0000000000000000") for line in lines[:5]), done.stdout
    assert lines[5].strip() == lines[6].strip()  # its own session


@offered
def test_a_helper_failure_is_reported_with_its_prefix(tmp_path: Path) -> None:
    done = subprocess.run(
        [*HELPER, "--", str(tmp_path / "missing")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 127
    assert done.stderr.startswith(f"{ll.PREFIX}{tmp_path / 'missing'}: No such file")
