"""Run directories and session caches of a killed harness go at the next start; those
of live harnesses stay."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from parity.driver import run as run_module
from parity.driver.stale import owned_name, owner, pid_alive, remove_stale, stale
from tests.support.driver import BASIC, run


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_owner_is_read_from_the_name() -> None:
    assert owned_name("test-abc", pid=42, ns=7) == "parity-p0000042n0000000007-test-abc"
    assert owner(owned_name("test-abc", pid=42, ns=7)) == 42
    # Every name has one length, whatever the pid: a run's paths never vary in length.
    assert len(owned_name("x", pid=1, ns=1)) == len(owned_name("x", pid=4194304, ns=4026531836))
    assert owner("parity-p42n7-test-abc") == 42
    assert owner("parity-p42-test-abc") == 42  # written before namespaces were named
    assert owner("parity-test-abc") is None  # not owner-encoded: never ours to remove
    assert owner("pytest-of-root") is None


def test_only_dead_owners_are_stale() -> None:
    names = ["parity-p1-a", "parity-p2-b", "parity-x-c", "other"]
    assert stale(names, alive=lambda pid: pid == 1) == ["parity-p2-b"]


def test_another_pid_namespaces_directories_are_never_judged() -> None:
    """A harness in another container (or under `unshare --pid`) sharing /tmp: its
    pids are not ours to look up, so its directories stay whatever our pids say."""
    names = ["parity-p5n1-ours", "parity-p5n2-theirs", "parity-p6-old"]
    assert stale(names, alive=lambda pid: False, ns=1) == ["parity-p5n1-ours", "parity-p6-old"]


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())


def test_remove_stale_keeps_live_owners_and_foreign_names(tmp_path: Path) -> None:
    dead = tmp_path / owned_name("run-x", pid=dead_pid())
    (dead / "workdir").mkdir(parents=True)
    (dead / "workdir" / "f.txt").write_text("left by a killed harness")
    live = tmp_path / owned_name("run-y")
    live.mkdir()
    foreign = tmp_path / "parity-run-z"
    foreign.mkdir()
    assert remove_stale(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, foreign.name])


async def test_the_first_run_removes_a_stale_run_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stale_dir = Path(tempfile.mkdtemp(prefix=owned_name("killed-", pid=dead_pid())))
    (stale_dir / "home").mkdir()
    monkeypatch.setattr(run_module, "_swept", False)
    await run(BASIC)
    assert not stale_dir.exists()
    run_module.wait_for_cleanup()
