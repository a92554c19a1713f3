"""`parity explore`: the command line over `parity.explore.engine` (docs/explore.md).

Runs without pytest: one `Runner`, Hypothesis driving it. Progress goes to stderr (one
line, rewritten on a terminal; a line every ten seconds or per new finding otherwise),
the findings are written under `-o` and summarized on stdout; exit 1 when there are
findings, 2 when the targets cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from parity.cli.project import project_config

if TYPE_CHECKING:
    # Not at import time: `parity run` runs pytest in this process, and Hypothesis
    # imported before pytest loads its plugin cannot be assertion-rewritten (a warning
    # in every run's output).
    from parity.explore.findings import Finding

PROGRESS_EVERY = 10.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    helptext = "generate scenarios, run them on two targets, shrink each difference to a scenario"
    p = sub.add_parser("explore", help=helptext, description=helptext)
    p.add_argument("--targets", required=True, metavar="A,B", help="reference, then the other")
    p.add_argument(
        "--budget",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="time for running and shrinking (default 600)",
    )
    p.add_argument(
        "--max-examples",
        type=int,
        default=1000,
        metavar="N",
        help="examples Hypothesis generates at most (default 1000)",
    )
    p.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="examples run on both targets at most, shrinking included: a limit like "
        "--budget that does not depend on the machine's speed (default: none)",
    )
    p.add_argument("--seed", type=int, help="Hypothesis's seed (default: random)")
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="where findings are written (default: <scenarios>/found)",
    )
    p.add_argument(
        "--database", metavar="DIR", help="the replay database (default: .cache/explore/A~B)"
    )
    p.add_argument("--no-database", action="store_true", help="no replay, nothing kept")
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="one of N explorers with the same --seed: rounds take seeds seed+K-1, "
        "seed+K-1+N, ... (CI jobs; `parity merge` lists their findings, docs/ci.md)",
    )
    p.add_argument(
        "--additive",
        action="store_true",
        help="the other target only adds to the reference (plus,plus-full): what "
        "only it has is no finding",
    )
    p.add_argument(
        "--builtin-tools",
        action="store_true",
        help="call rounds may call the agents' own tools too (every family's; none a "
        "target of the pair declares it lacks), in a workspace of a few files; each "
        "scenario runs with the families it calls",
    )


class ProgressLine:
    """Examples tried, run, findings, time left."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.findings = 0

    def __call__(self, progress: object) -> None:
        from parity.explore.engine import Progress

        assert isinstance(progress, Progress)
        now = time.monotonic()
        new = len(progress.findings) != self.findings
        if not (self.tty or new or now - self.last >= PROGRESS_EVERY):
            return
        self.last, self.findings = now, len(progress.findings)
        line = (
            f"explore: {progress.tried} tried, {progress.ran} run, "
            f"{len(progress.findings)} finding(s), {progress.time_left:.0f} s left"
        )
        print(
            f"\r{line}  " if self.tty else line,
            end="" if self.tty else "\n",
            file=sys.stderr,
            flush=True,
        )


def write_findings(
    findings: list[Finding], out_dir: Path, targets: tuple[str, str], seed: int | None
) -> list[Path]:
    """Each finding as `<out_dir>/<category>-<shape>.yaml`, checked like `parity validate`."""
    from parity.explore.findings import finding_text
    from parity.scenario.load import check_text

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for finding in findings:
        path = out_dir / f"{finding.signature.slug()}.yaml"
        text = finding_text(finding, targets, seed)
        errors = [e for e in check_text(text, str(path))[0] if e.severity == "error"]
        if errors:  # the generator's property test says this cannot happen
            raise SystemExit(f"parity explore: a finding does not validate: {errors[0]}")
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def explore_shard(text: str | None, seed: int | None) -> tuple[int, int]:
    """`--shard K/N` -> (K, N); (1, 1) without it. Shards split a seeded sequence of
    rounds, so they need `--seed` (random seeds would need no split)."""
    if not text:
        return (1, 1)
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise SystemExit(f"parity explore: --shard {text!r}: expected K/N with 1 <= K <= N")
    if seed is None:
        raise SystemExit("parity explore: --shard needs --seed (every shard the same)")
    return (int(k), int(n))


def cmd_explore(args: argparse.Namespace) -> int:
    from parity.checks.acp_schema import def_names
    from parity.engine.runner import Runner
    from parity.explore.engine import Explorer, Options
    from parity.explore.hypothesis_env import use_storage

    use_storage(os.environ)
    config = project_config(args)
    names = tuple(t.strip() for t in args.targets.split(",") if t.strip())
    if len(names) != 2:
        raise SystemExit("parity explore: --targets names two targets, e.g. native,plus")
    targets = (names[0], names[1])
    out_dir = Path(args.output) if args.output else config.scenarios_dir / "found"
    database = None
    if not args.no_database:
        default = config.root / ".cache" / "explore" / "~".join(targets)
        database = Path(args.database) if args.database else default
    options = Options(
        targets,
        out_dir.resolve(),
        args.budget,
        args.max_examples,
        args.seed,
        database,
        args.additive,
        explore_shard(args.shard, args.seed),
        args.max_runs,
        args.builtin_tools,
    )
    with Runner(config) as runner:
        for target in targets:
            why = runner.unavailable(target)
            if why is not None:
                print(f"parity explore: {target} cannot run: {why}", file=sys.stderr)
                return 2
        line = ProgressLine()
        explorer = Explorer(config, options, runner, config.known_rules(def_names()), line)
        for method, why in sorted(explorer.ignored.items()):
            print(f"parity explore: never sends {method} ({why})", file=sys.stderr)
        if options.builtin_tools:
            for name, why in sorted(explorer.lacking.items()):
                print(f"parity explore: never calls {name} ({why})", file=sys.stderr)
        findings = explorer.explore()
    progress = explorer.progress
    if line.tty:
        print(file=sys.stderr)
    paths = write_findings(findings, out_dir, targets, args.seed)
    engine = progress.elapsed - progress.agent_seconds
    ended = "Hypothesis finished"
    if progress.over_budget:
        spent = args.max_runs is not None and progress.ran >= args.max_runs
        ended = "--max-runs ended it" if spent else "the budget ended it"
    print(
        f"parity explore {','.join(targets)}: {progress.tried} examples tried, {progress.ran} "
        f"run, in {progress.elapsed:.0f} s ({ended}; agents {progress.agent_seconds:.0f} s, "
        f"engine {engine:.0f} s); {len(findings)} finding(s)"
    )
    if options.builtin_tools:
        for target in targets:
            gaps = ", ".join(sorted(config.targets[target].lacks_tools))
            if gaps:
                print(f"  declared gaps, never called: {target} lacks {gaps} (lacks_tools)")
    for finding, path in zip(findings, paths, strict=True):
        again = {True: "reproduced", False: "not reproduced (flaky?)", None: "not rechecked"}
        print(f"  [{finding.signature.category}] {finding.signature.shape}")
        shrunk = f"{finding.lines} lines"
        if finding.first_lines is not None and finding.first_lines != finding.lines:
            shrunk = f"shrunk from {finding.first_lines} to {finding.lines} lines"
        print(f"      {path}  ({again[finding.reproduced]}; {shrunk})")
    return 1 if findings else 0
