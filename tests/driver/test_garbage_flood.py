"""A garbage-printing agent yields a bounded record: the first `MAX_GARBAGE_FRAMES`
unusable lines and a count, its real answers still acted on, in bounded memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parity.driver.recording import MAX_GARBAGE_FRAMES
from tests.support.driver import BASIC, run

ROOT = Path(__file__).resolve().parents[2]


async def test_garbage_past_the_cap_is_counted_and_the_answers_still_count() -> None:
    t = await run(BASIC, "garbage_stdout", env={"FLOOD": str(MAX_GARBAGE_FRAMES + 300)})
    assert [s.problem for s in t.steps] == [None, None]  # initialize came after the flood
    assert sum(1 for f in t.frames if f.parse_error) == MAX_GARBAGE_FRAMES
    # The banner and 500 noise lines: 301 past the cap.
    assert (
        f"garbage limit ({MAX_GARBAGE_FRAMES}) reached: 301 later unusable line(s)"
        " from the agent were counted, not recorded"
    ) in t.problems


MEASURE = """\
import asyncio, json, re, sys, time
sys.path[:0] = [{root!r}]
from parity.view.normalize import view
from tests.support.driver import BASIC, run, st
started = time.monotonic()
steps = [*BASIC, st("prompt", session="s1", text="hi")]
env = {{"FLOOD": "500000", "FLOOD_PAD": "x" * 90}}  # 500,000 lines, 50 MB
t = asyncio.run(run(steps, "garbage_stdout", env=env, timeouts={{"startup": 60}}))
print(json.dumps({{
    "secs": time.monotonic() - started,
    "frames": len(t.frames),
    "problems": t.problems,
    "steps": [s.problem for s in t.steps],
    "view_bytes": len(json.dumps(view(t, "exact", []))),
    # VmHWM, not getrusage's ru_maxrss: Linux carries that one over exec from the
    # forking process (a pytest worker may be at 200 MB already).
    "peak_rss_mb": int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read())[1]) / 1024,
}}))
"""


def test_fifty_megabytes_of_garbage_stay_small_and_fast() -> None:
    # A child of its own, so the peak RSS is this run's alone (not pytest's).
    done = subprocess.run(
        [sys.executable, "-c", MEASURE.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    m = json.loads(done.stdout)
    # The banner, the flood, and four unusable lines around the prompt.
    assert m["steps"] == [None, None, None]
    assert m["frames"] < MAX_GARBAGE_FRAMES + 20
    counted = f"garbage limit ({MAX_GARBAGE_FRAMES}) reached: {500_005 - MAX_GARBAGE_FRAMES} later"
    assert any(p.startswith(counted) for p in m["problems"])
    assert m["view_bytes"] < 100_000  # was 24 MB: every line a frame, up to 200,000
    assert m["peak_rss_mb"] < 120  # was 239 MB
    assert m["secs"] < 60  # within the startup timeout (was: the timeout, then a failure)
