"""The environment allow-list and the shutdown ladder, on real processes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from parity.driver import process
from parity.driver.process import Ladder, group_members, passed
from tests.support.driver import AGENTS, alive


@pytest.mark.parametrize("name", ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER"])
def test_what_a_process_needs_to_run_is_passed(name: str) -> None:
    assert passed(name)


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "DATABASE_URL", "SENTRY_DSN", "HTTPS_PROXY", "PYTHONPATH", "HOME", "LCX"],
)
def test_everything_else_stays_with_the_harness(name: str) -> None:
    assert not passed(name)


async def spawn_script(code: str, tmp_path: Path) -> process.AgentProcess:
    return await process.spawn([sys.executable, "-c", code], {"PATH": "/usr/bin:/bin"}, tmp_path)


async def test_ladder_stops_at_eof_for_a_well_behaved_process(tmp_path: Path) -> None:
    proc = await spawn_script(
        "import sys; sys.stdin.read(); print('bye', file=sys.stderr)", tmp_path
    )
    record = await proc.shutdown(Ladder(eof=5, term=5, kill=5))
    assert (record.stopped_by, record.exit_code, record.signal) == ("eof", 0, None)
    assert record.stderr_tail == "bye\n"
    assert proc.pid not in process._live_groups


async def test_ladder_uses_sigterm_when_eof_is_ignored(tmp_path: Path) -> None:
    proc = await spawn_script("import time; time.sleep(60)", tmp_path)
    record = await proc.shutdown(Ladder(eof=0.2, term=5, kill=5))
    assert (record.stopped_by, record.exit_code, record.signal) == ("sigterm", None, 15)


async def test_ladder_kills_the_whole_group_when_sigterm_is_ignored(tmp_path: Path) -> None:
    script = AGENTS / "ignores_eof_and_sigterm.py"
    proc = await process.spawn([sys.executable, str(script)], {"PATH": "/usr/bin:/bin"}, tmp_path)
    while "child pid" not in proc.stderr_tail():
        await asyncio.sleep(0.01)
    child = int(proc.stderr_tail().split("child pid ")[1].split()[0])
    assert alive(child)
    record = await proc.shutdown(Ladder(eof=0.2, term=0.2, kill=5))
    assert (record.stopped_by, record.signal) == ("sigkill", 9)
    await asyncio.sleep(0.05)
    assert group_members(proc.pid) == []
    assert not alive(child)


async def test_ladder_reports_a_process_that_already_exited(tmp_path: Path) -> None:
    proc = await spawn_script(
        "import sys; sys.stderr.write('x' * 20000 + 'END'); sys.exit(3)", tmp_path
    )
    await proc.wait_exit(5)
    record = await proc.shutdown(Ladder())
    assert (record.stopped_by, record.exit_code) == ("exit", 3)
    assert len(record.stderr_tail) == process.STDERR_TAIL
    assert record.stderr_tail.endswith("END")
    assert proc.status() == "exit code 3"


async def test_atexit_net_kills_registered_groups(tmp_path: Path) -> None:
    proc = await spawn_script("import time; time.sleep(60)", tmp_path)
    assert proc.pid in process._live_groups
    process.kill_registered_groups()
    assert await proc.wait_exit(5)
    assert proc.proc.returncode == -9
    assert process._live_groups == set()
