"""Driver overhead per run against the trivial echo agent.

    python -m bench.bench_driver [--runs N]

Each round times two things back to back, so drift hits both alike:
- `raw`: the agent's own time. A minimal blocking client spawns the echo fixture
  agent, writes initialize / session/new / session/prompt, reads each answer, closes
  stdin and waits for the exit. Nothing is recorded.
- `driver`: `run_scenario` with the same three steps: run directory, allow-listed env,
  process group, every frame recorded, shutdown ladder, directory removed.
The overhead is the difference of the medians; the goal is at most 30 ms. Wall
times move with machine load, so the harness process's own CPU time per run (agent
excluded) is reported beside them: it is the part of the overhead load cannot fake.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from parity.driver.run import run_scenario, wait_for_cleanup
from parity.driver.state import RunPaths
from parity.scenario.model import Scenario, Step, Where
from parity.targets.launch import Launch

AGENT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agents" / "echo_agent.py"
GOAL_MS = 30.0


def raw_run(workdir: str) -> tuple[float, float]:
    """Wall and harness CPU seconds for one run with the least client work possible."""
    started, cpu = time.perf_counter(), time.process_time()
    proc = subprocess.Popen(
        [sys.executable, str(AGENT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=workdir,
    )
    assert proc.stdin is not None and proc.stdout is not None
    requests = [
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
        ("session/new", {"cwd": workdir, "mcpServers": []}),
        ("session/prompt", {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "hi"}]}),
    ]
    for id_, (method, params) in enumerate(requests):
        line = json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        while json.loads(proc.stdout.readline()).get("id") != id_:
            pass
    proc.stdin.close()
    proc.wait()
    return time.perf_counter() - started, time.process_time() - cpu


def scenario() -> Scenario:
    def step(kind: str, **params: object) -> Step:
        return Step(kind, dict(params), Where("bench"))

    steps = [
        step("initialize"),
        step("new_session", **{"as": "s1"}),
        step("prompt", session="s1", text="hi"),
    ]
    return Scenario(name="bench/echo", path=Path("bench.yaml"), description="", steps=steps)


def launch(paths: RunPaths) -> Launch:
    return Launch([sys.executable, str(AGENT)], {})


async def driver_run(sc: Scenario, n: int) -> tuple[float, float]:
    """Wall and harness CPU seconds for one `run_scenario` (the run directory's
    removal, which a worker thread does after the run, is waited for untimed)."""
    started, cpu = time.perf_counter(), time.process_time()
    t = await run_scenario(sc, launch, llm_run=None, run_id=f"bench-{n}", target="echo")
    elapsed, cpu_used = time.perf_counter() - started, time.process_time() - cpu
    wait_for_cleanup()  # so the removal does not overlap the next raw run
    if t.problems or any(s.problem for s in t.steps) or len(t.frames) != 7:
        raise SystemExit(f"bench run {n} did not go cleanly: {t.problems} {t.steps}")
    return elapsed, cpu_used


def ms(values: list[float]) -> tuple[float, float]:
    """Median and p90 of `values` (seconds), in milliseconds."""
    return statistics.median(values) * 1000, statistics.quantiles(values, n=10)[-1] * 1000


async def bench(runs: int) -> dict[str, float]:
    sc = scenario()
    raw: list[tuple[float, float]] = []
    drv: list[tuple[float, float]] = []
    for n in range(runs + 2):
        r = raw_run("/tmp")
        d = await driver_run(sc, n)
        if n >= 2:  # the first rounds warm caches (imports, page cache)
            raw.append(r)
            drv.append(d)
    out: dict[str, float] = {"runs": runs}
    for key, rows in (("raw", raw), ("driver", drv)):
        out[f"{key}_median_ms"], out[f"{key}_p90_ms"] = ms([wall for wall, _ in rows])
        out[f"{key}_cpu_ms"] = ms([cpu for _, cpu in rows])[0]
    out["overhead_ms"] = out["driver_median_ms"] - out["raw_median_ms"]
    out["ratio"] = out["driver_median_ms"] / out["raw_median_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    r = asyncio.run(bench(args.runs))
    print(f"echo agent, {r['runs']:.0f} runs (initialize, session/new, prompt), medians:")
    rows = [("agent alone (raw client)", "raw"), ("through the driver", "driver")]
    for label, key in rows:
        median, p90, cpu = r[f"{key}_median_ms"], r[f"{key}_p90_ms"], r[f"{key}_cpu_ms"]
        print(f"  {label:<24} {median:7.1f} ms   p90 {p90:6.1f} ms   harness CPU {cpu:5.1f} ms")
    verdict = "within" if r["overhead_ms"] <= GOAL_MS else "OVER"
    print(
        f"  driver overhead          {r['overhead_ms']:7.1f} ms   ratio {r['ratio']:.2f}x"
        f"   ({verdict} the {GOAL_MS:.0f} ms goal)"
    )


if __name__ == "__main__":
    main()
