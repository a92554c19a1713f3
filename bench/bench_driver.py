"""Driver overhead per run against the trivial echo agent.

    python -m bench.bench_driver [--runs N]

Each round times two things back to back, so drift hits both alike:
- `raw`: the agent's own time. A minimal blocking client spawns the echo fixture
  agent, writes initialize / session/new / session/prompt, reads each answer, closes
  stdin and waits for the exit. Nothing is recorded.
- `driver`: `run_scenario` with the same three steps: run directory, scrubbed env,
  process group, every frame recorded, shutdown ladder, directory removed.
The overhead is the difference of the medians; the goal is at most 30 ms.
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

from parity.driver import Launch, RunPaths, run_scenario
from parity.scenario import Scenario, Step, Where

AGENT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agents" / "echo_agent.py"
GOAL_MS = 30.0


def raw_run(workdir: str) -> float:
    """The agent's own time for one run, with the least client work possible."""
    started = time.perf_counter()
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
    return time.perf_counter() - started


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


async def driver_run(sc: Scenario, n: int) -> float:
    started = time.perf_counter()
    t = await run_scenario(sc, launch, llm_run=None, run_id=f"bench-{n}", target="echo")
    elapsed = time.perf_counter() - started
    if t.problems or any(s.problem for s in t.steps) or len(t.frames) != 7:
        raise SystemExit(f"bench run {n} did not go cleanly: {t.problems} {t.steps}")
    return elapsed


async def bench(runs: int) -> dict[str, float]:
    sc = scenario()
    raw: list[float] = []
    drv: list[float] = []
    for n in range(runs + 2):
        r = raw_run("/tmp")
        d = await driver_run(sc, n)
        if n >= 2:  # the first rounds warm caches (imports, page cache)
            raw.append(r)
            drv.append(d)
    raw_ms = statistics.median(raw) * 1000
    drv_ms = statistics.median(drv) * 1000
    return {
        "runs": runs,
        "raw_median_ms": raw_ms,
        "driver_median_ms": drv_ms,
        "raw_p90_ms": statistics.quantiles(raw, n=10)[-1] * 1000,
        "driver_p90_ms": statistics.quantiles(drv, n=10)[-1] * 1000,
        "overhead_ms": drv_ms - raw_ms,
        "ratio": drv_ms / raw_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    r = asyncio.run(bench(args.runs))
    print(f"echo agent, {r['runs']:.0f} runs (initialize, session/new, prompt), medians:")
    rows = [("agent alone (raw client)", "raw"), ("through the driver", "driver")]
    for label, key in rows:
        median, p90 = r[f"{key}_median_ms"], r[f"{key}_p90_ms"]
        print(f"  {label:<24} {median:7.1f} ms   p90 {p90:.1f} ms")
    verdict = "within" if r["overhead_ms"] <= GOAL_MS else "OVER"
    print(
        f"  driver overhead          {r['overhead_ms']:7.1f} ms   ratio {r['ratio']:.2f}x"
        f"   ({verdict} the {GOAL_MS:.0f} ms goal)"
    )


if __name__ == "__main__":
    main()
