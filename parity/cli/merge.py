"""`parity merge DIR...`: the shards of one run joined into what a single run gives.

Each `parity run --shard K/N --out DIR` leaves its ledger (`DIR/ledger.json`), its own
JUnit and JSON, and its pending snapshots (`DIR/pending/`). The merge joins the ledgers
(`parity.report.ledger.merge`), prints the one summary, writes the one HTML report,
JUnit file, JSON and ledger, gathers the pending snapshots, and does what no shard can:
list (under CI, fail on) unused snapshots, judge the known differences over every
check (a stale one fails), count what did not run. With `--store-durations` it writes
every item's duration to the durations file the next split balances by.

A directory without a ledger holds `parity explore --shard K/N` findings (`-o DIR`):
they are listed, one per signature, and copied to `--found DIR`. Exit 1 when any item
failed, any finding exists, or the whole run's judgements fail; 2 when a ledger is
missing or its shards do not add up to a whole run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

from parity.cli.project import project_config
from parity.report.ledger import SessionLedger, merge, partial_reason, read_ledger, write_ledger

LEDGER = "ledger.json"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    helptext = "join the results of `parity run --shard K/N --out DIR` (or explore shards)"
    p = sub.add_parser("merge", help=helptext, description=helptext)
    p.add_argument("dirs", nargs="+", metavar="DIR", help="each shard's --out directory")
    p.add_argument("--report", metavar="DIR", help="write the static HTML report to DIR")
    p.add_argument("--junit", metavar="FILE", help="write the JUnit XML to FILE")
    p.add_argument("--json", metavar="FILE", help="write the summary data as JSON to FILE")
    p.add_argument("--ledger", metavar="FILE", help="write the merged ledger to FILE")
    p.add_argument(
        "--pending",
        metavar="DIR",
        help="gather the shards' pending snapshots in DIR (default with --report: DIR/pending)",
    )
    p.add_argument("--found", metavar="DIR", help="copy explore shards' findings to DIR")
    p.add_argument(
        "--store-durations",
        action="store_true",
        help="write every item's duration to the durations file shards balance by",
    )
    p.add_argument("--snapshot-warn-unused", action="store_true", help="as in `parity run`")
    p.add_argument("-v", "--verbose", action="store_true", help="the whole summary table")


def shard_gap(ledgers: list[SessionLedger]) -> str | None:
    """Why these shard ledgers are not one whole run (pure), or None."""
    shards = [x.shard for x in ledgers]
    if not all(shards):
        return None if len(ledgers) == 1 else "a ledger of a whole run among shards"
    counts = {s.partition("/")[2] for s in shards}
    if len(counts) != 1:
        return f"shards of different splits: {', '.join(sorted(shards))}"
    n = int(counts.pop())
    have = sorted(int(s.partition("/")[0]) for s in shards)
    if have != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(have))
        extra = len(have) - len(set(have))
        what = f"missing {', '.join(map(str, missing))}" if missing else f"{extra} twice"
        return f"shards {', '.join(map(str, have))} of {n} ({what})"
    return None


def cmd_merge(args: argparse.Namespace) -> int:
    config = project_config(args)
    dirs = [Path(d) for d in args.dirs]
    runs = [d for d in dirs if (d / LEDGER).is_file()]
    found = [d for d in dirs if d not in runs]
    for d in found:
        if not d.is_dir():
            print(f"parity merge: {d}: no such directory", file=sys.stderr)
            return 2
    status = 0
    if runs:
        ledgers = [read_ledger(d / LEDGER) for d in runs]
        gap = shard_gap(ledgers)
        if gap is not None:
            print(f"parity merge: not one whole run: {gap}", file=sys.stderr)
            return 2
        status = _merge_runs(args, config, runs, merge(ledgers))
    if found:
        status = max(status, _merge_found(args, found))
    return status


def _merge_runs(
    args: argparse.Namespace, config: object, runs: list[Path], ledger: SessionLedger
) -> int:
    from parity.checks.acp_schema import def_names
    from parity.checks.known_ledger import judge
    from parity.config.project import Config
    from parity.engine.store import unused_snapshots
    from parity.report.glance import more_line
    from parity.report.matrix import fit
    from parity.report.results import ledger_data, now, write_outputs
    from parity.report.session_summary import Context, summary_lines, unused_verb, width
    from parity.suite.shard import DURATIONS, store_durations
    from parity.suite.snapshots import unused_fail

    assert isinstance(config, Config)
    cwd = Path.cwd()
    unused = unused_snapshots(
        config.snapshots_dir, ledger.scenarios, ledger.whole_suite, ledger.joinable
    )
    option = SimpleNamespace(
        update_snapshots=False, warn_unused_snapshots=args.snapshot_warn_unused
    )
    fails_unused = unused_fail(unused, ledger.whole_suite, option)
    verdict, known_total = None, 0
    if any(o.kind == "parity" for o in ledger.outcomes):
        known = config.known_rules(def_names())
        verdict, known_total = judge(known, ledger.known_uses, partial_reason(ledger)), len(known)
    verbosity = 1 if args.verbose else 0
    ctx = Context(
        verbosity=verbosity,
        known_total=known_total,
        verdict=verdict,
        declared={name: spec.expect_problems for name, spec in config.targets.items()},
        unused=unused,
        unused_verb=unused_verb(deleted=False, fails=fails_unused),
        cwd=cwd,
    )
    print(f" parity summary ({len(runs)} shard(s) merged) ".center(width(verbosity), "="))
    for line in summary_lines(ledger, ctx):
        print(line)
    paths = {
        k: Path(v).resolve() if v else None
        for k, v in (
            ("report", args.report),
            ("junit", args.junit),
            ("json", args.json),
            ("ledger", args.ledger),
        )
    }
    lines = write_outputs(
        ledger_data(ledger, config.root, now()),
        report=paths["report"],
        junit=paths["junit"],
        json_path=paths["json"],
        relative_to=cwd,
    ) + write_ledger(ledger, paths["ledger"], cwd)
    pending = (
        Path(args.pending)
        if args.pending
        else (paths["report"] / "pending" if paths["report"] else None)
    )
    if pending is not None:
        copied = 0
        for d in runs:
            if (d / "pending").is_dir():
                shutil.copytree(d / "pending", pending, dirs_exist_ok=True)
                copied += sum(1 for _ in (d / "pending").rglob("*.yaml"))
        if copied:
            lines.append(f"parity pending: {copied} snapshot(s) in {os.path.relpath(pending, cwd)}")
    if args.store_durations:
        durations = {r["nodeid"]: float(r["duration"]) for r in ledger.collected.items.values()}
        store_durations(config.root / DURATIONS, durations)
        lines.append(f"parity durations: {len(durations)} item(s) in {DURATIONS}")
    for line in lines:
        for part in fit(line, width(verbosity)):
            print(part)
    print(more_line(args.verbose))
    items = ledger.collected.items.values()
    failed = sum(1 for r in items if r.get("outcome") == "failed")
    passed = sum(1 for r in items if r.get("outcome") == "passed")
    skipped = sum(1 for r in items if r.get("outcome") == "skipped")
    # The plain closing line CI log readers count, as pytest's own would be.
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    whole_fails = fails_unused or (verdict is not None and not verdict.ok)
    return 1 if failed or ledger.invalid or whole_fails else 0


def _merge_found(args: argparse.Namespace, dirs: list[Path]) -> int:
    """Explore shards' findings: one per signature (its file name), listed and copied."""
    findings: dict[str, Path] = {}
    for d in dirs:
        for path in sorted(d.glob("*.yaml")):
            findings.setdefault(path.name, path)
    print(f"parity explore: {len(findings)} finding(s) from {len(dirs)} shard(s)")
    target = Path(args.found) if args.found else None
    if target is not None:
        target.mkdir(parents=True, exist_ok=True)
    for name, path in sorted(findings.items()):
        print(f"  {path}")
        if target is not None:
            shutil.copyfile(path, target / name)
    return 1 if findings else 0
