"""The /proc reader every process killer uses: descendants, liveness, stat parsing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from plus_agent import wait_for

from acp_plus.core.tools import proctree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_stat_fields_start_after_the_last_parenthesis() -> None:
    # A command name may hold spaces and ")": only the last ")" ends it.
    stat = b"4242 (evil) S 1 (name) R 17 4242 4242 0 -1"
    assert proctree._state_and_parent(stat) == (b"R", 17)
    assert proctree._state_and_parent(b"4242 (truncated)") is None


async def test_descendants_reach_grandchildren_and_dead_ones_drop_out() -> None:
    shell = subprocess.Popen(["sh", "-c", "sleep 30 & echo $!; wait"], stdout=subprocess.PIPE)
    try:
        assert shell.stdout is not None
        grandchild = int(shell.stdout.readline())
        assert {shell.pid, grandchild} <= set(proctree.descendants(os.getpid()))
        assert proctree.descendants(shell.pid) == [grandchild]
        assert proctree.alive(grandchild)
        os.kill(grandchild, signal.SIGKILL)
        # Killed but not yet reaped by the shell is dead all the same.
        await wait_for(lambda: not proctree.alive(grandchild))
        await wait_for(lambda: grandchild not in proctree.descendants(shell.pid))
    finally:
        shell.kill()
        shell.wait()
    assert not proctree.alive(shell.pid)
