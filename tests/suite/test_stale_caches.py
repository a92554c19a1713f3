"""A session cache left by a killed `parity` run goes at the next start; one whose
owner still runs stays."""

from __future__ import annotations

import os
import subprocess
import sys

from parity.driver.stale import owned_name
from tests.support.project import TEXT_SCENARIO, Project


def test_a_killed_sessions_cache_is_removed_at_the_next_start(project: Project) -> None:
    reaped = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    base = project.root / ".cache" / "parity-runs"
    dead = base / owned_name("0123456789ab", pid=int(reaped.stdout))
    live = base / owned_name("ba9876543210", pid=os.getpid())
    for d in (dead, live):
        d.mkdir(parents=True)
        (d / "demo__text-mini.json").write_text("{}")
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    done = project.parity("record")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in base.iterdir()) == [live.name]
