"""Smoke test: the driver benchmark still runs and reports what docs/driver.md shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_driver_reports_medians_ratio_and_cpu() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_driver", "--runs", "3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "echo agent, 3 runs (initialize, session/new, prompt), medians:"
    assert lines[1].lstrip().startswith("agent alone (raw client)")
    assert lines[2].lstrip().startswith("through the driver")
    assert "harness CPU" in lines[1] and "harness CPU" in lines[2]
    assert lines[3].lstrip().startswith("driver overhead") and "ratio" in lines[3]


def test_bench_flood_answers_the_prompt_and_validates_per_shape() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_flood", "--updates", "2000"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "flood of 2000 updates: 2006 frames recorded"
    assert lines[1].startswith("  prompt answered: True;")
    assert "(one per shape)" in lines[2]
    assert lines[-1].lstrip().startswith("end to end")
    assert "verdicts: no snapshot fail, matches pass, drifted fail" in done.stdout
