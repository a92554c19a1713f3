"""Whole parity suite: wall time at -n 1 and -n 2, and the harness's own share.

    python -m bench.bench_suite [--rounds N] [--out FILE]   (figures: docs/performance.md)

Runs on a temporary copy of the project's scenarios, snapshots and parity.toml, so
nothing is written into the checkout, with every available target.

1. Wall time of `parity run -q -n 1` and `-n 2` (the command `make parity` runs), each
   the median of `--rounds` rounds, with pytest's start-up and collection alone
   (`--collect-only`) measured beside them.
2. The harness's share, measured serially in this process for every (scenario,
   available target): the agent run itself (`Runner.execute`: the driver and the fake
   LLM serving the agent), then the harness-only steps after it (normalization,
   snapshot serialization and comparison, the parity diff). During the agent run, the
   harness's CPU time (this process: driver, fake LLM thread) is told apart from the
   agent's (reaped children) with getrusage. Harness share = (start-up and collection
   + harness-only steps + harness CPU during runs) / serial wall time. Goal: <= 10 %.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from parity.checks.diff import compare
from parity.config.project import load_config
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.engine.store import read_text, snapshot_path
from parity.scenario.known import load_known
from parity.scenario.load import discover, load_scenario
from parity.scenario.model import Scenario
from parity.view.dump import dump_view

REPO = Path(__file__).resolve().parents[1]
GOAL_SHARE = 0.10


def copy_project(dest: Path) -> Path:
    """A throwaway project with the checkout's scenarios, snapshots and targets."""
    for name in ("scenarios", "snapshots"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name)
    shutil.copy(REPO / "parity.toml", dest / "parity.toml")
    # Peers installed in the checkout (`make peers`) take part, as in `make parity`.
    if (REPO / ".cache" / "peers").is_dir():
        (dest / ".cache").mkdir()
        (dest / ".cache" / "peers").symlink_to(REPO / ".cache" / "peers")
    return dest


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def wall(argv: list[str], root: Path, *, ci: bool = True) -> tuple[float, int, str, float]:
    """(seconds, exit code, last line of output, CPU seconds of the process and its
    children) of one `parity` invocation."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CI"))}
    if ci:
        env["CI"] = "true"
    cpu0 = _cpu()[1]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "parity.cli", "--root", str(root), *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    tail = (done.stdout.strip().splitlines() or [""])[-1].strip("= ")
    return elapsed, done.returncode, tail, _cpu()[1] - cpu0


@dataclass
class Split:
    """Serial, in-process accounting of one whole pass over the suite."""

    runs: int = 0
    execute_wall: float = 0.0
    harness_cpu_in_runs: float = 0.0
    agent_cpu: float = 0.0
    after_run: float = 0.0
    """normalize + snapshot dump/compare + parity diff, summed."""
    total_wall: float = 0.0
    unavailable: dict[str, str] = field(default_factory=dict)


def split(root: Path) -> Split:
    """Run every (scenario, available target) once and attribute the time."""
    config = load_config(root)
    out = Split()
    started = time.perf_counter()
    scenarios: list[Scenario] = [
        load_scenario(p, config.scenarios_dir) for p in discover(config.scenarios_dir)
    ]
    known = load_known(config.known_differences, config.targets)
    with Runner(config) as runner:
        for scenario in scenarios:
            views = {}
            for target in scenario.targets:
                why = runner.unavailable(target)
                if why is not None:
                    out.unavailable[target] = why
                    continue
                cpu0 = _cpu()
                t0 = time.perf_counter()
                transcript = runner.execute(scenario, target)
                t1 = time.perf_counter()
                cpu1 = _cpu()
                view = normalized(scenario, transcript)
                # What a target item does after the run: serialize, compare texts.
                recorded = read_text(snapshot_path(config.snapshots_dir, scenario.name, target))
                _ = recorded == dump_view(view)
                views[target] = view
                out.after_run += time.perf_counter() - t1
                out.runs += 1
                out.execute_wall += t1 - t0
                out.harness_cpu_in_runs += cpu1[0] - cpu0[0]
                out.agent_cpu += cpu1[1] - cpu0[1]
            reference = scenario.targets[0]
            t2 = time.perf_counter()
            for other in scenario.targets[1:]:
                if reference in views and other in views and scenario.compare != "none":
                    compare(
                        views[reference],
                        views[other],
                        profile=scenario.profile,
                        diverge=scenario.diverge,
                        ref_name=reference,
                        other_name=other,
                        scenario=scenario.name,
                        known=known,
                    )
            out.after_run += time.perf_counter() - t2
    out.total_wall = time.perf_counter() - started
    return out


def markdown(results: dict[str, object]) -> str:
    """The markdown report (its figures are quoted in docs/performance.md)."""
    lines = [
        "# Parity suite performance",
        "",
        "Measured by `python -m bench.bench_suite` "
        f"({results['when']}, {results['machine']}). Numbers move with machine load; "
        "rerun the bench rather than trusting these as constants.",
        "",
        "## Wall time of `parity run` (the command `make parity` runs)",
        "",
        "| workers | median wall (s) | rounds | outcome |",
        "|---|---|---|---|",
    ]
    for row in results["walls"]:  # type: ignore[attr-defined]
        lines.append(f"| {row[0]} | {row[1]:.2f} | {row[2]} | {row[3]} |")
    s: Split = results["split"]  # type: ignore[assignment]
    startup = float(results["startup"])  # type: ignore[arg-type]
    startup_cpu = float(results["startup_cpu"])  # type: ignore[arg-type]
    harness = startup + s.after_run + s.harness_cpu_in_runs
    serial = startup + s.total_wall
    share = harness / serial if serial else 0.0
    harness_cpu = startup_cpu + s.after_run + s.harness_cpu_in_runs
    cpu_share = harness_cpu / (harness_cpu + s.agent_cpu) if s.agent_cpu else 0.0
    lines += [
        "",
        f"pytest start-up and collection alone (`--collect-only`): {startup:.2f} s wall, "
        f"{startup_cpu:.2f} s CPU.",
        "",
        "## Where the time goes (serial, one pass, in process)",
        "",
        f"- (scenario, target) runs: {s.runs}; unavailable targets: "
        + (", ".join(f"{k} ({v})" for k, v in sorted(s.unavailable.items())) or "none"),
        f"- agent runs (`Runner.execute`, wall): {s.execute_wall:.2f} s",
        f"  - harness CPU inside them (driver, fake LLM): {s.harness_cpu_in_runs:.2f} s",
        f"  - agent CPU (the agent processes): {s.agent_cpu:.2f} s",
        f"- after each run (normalize, snapshot compare, parity diff): {s.after_run:.2f} s",
        f"- pass total: {s.total_wall:.2f} s; with start-up: {serial:.2f} s",
        "",
        f"**Harness share: {share:.1%}** of the serial wall time "
        f"(start-up + after-run steps + harness CPU during runs; goal <= {GOAL_SHARE:.0%}).",
        f"By CPU time, which machine load distorts less: **{cpu_share:.1%}** harness "
        f"({harness_cpu:.2f} s: start-up, after-run steps, driver and fake LLM) against "
        f"{s.agent_cpu:.2f} s in the agents.",
        "The rest is the agents: their start-up (Python imports for acp-plus) and turns.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="parity-bench-") as tmp:
        root = copy_project(Path(tmp))
        # Snapshots missing from the checkout are recorded in the copy first (untimed),
        # so the timed runs are passing runs, not failure reports.
        wall(["record", "-q", "-n", "2"], root, ci=False)
        collects = [wall(["run", "-q", "--", "--collect-only"], root) for _ in range(args.rounds)]
        startup = statistics.median(c[0] for c in collects)
        startup_cpu = statistics.median(c[3] for c in collects)
        walls = []
        for workers in ("1", "2"):
            rounds = [wall(["run", "-q", "-n", workers], root) for _ in range(args.rounds)]
            median = statistics.median(r[0] for r in rounds)
            walls.append((workers, median, args.rounds, rounds[-1][2]))
            print(f"-n {workers}: {median:.2f} s  ({rounds[-1][2]})", flush=True)
        result = split(root)
    results: dict[str, object] = {
        "when": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs",
        "walls": walls,
        "startup": startup,
        "startup_cpu": startup_cpu,
        "split": result,
    }
    text = markdown(results)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
