"""The `parity` command: its arguments, and each subcommand to the module that runs it.

`run` and `record` are thin over pytest (`parity.cli.run`; the plugin in
`parity.suite.plugin` does the work); `validate` is `parity.cli.validate`; `show`,
`diff` and `calibrate` run agents on the engine (`parity.cli.inspect`, no pytest);
`review` is `parity.cli.review` (and `parity.cli.pending` for `--from`); `targets`,
`peers` and `fake-llm` are here; `capture` is `parity.cli.capture`. Every one reads the
project once, through `parity.cli.project.project_config`. Harness modules are imported
by the subcommands that need them: `run` hands over to pytest, which must import syrupy
itself (after setting up assertion rewriting for it), and no other command loads either.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parity.cli import capture, explore, init, merge
from parity.cli.inspect import cmd_calibrate, cmd_diff, cmd_show
from parity.cli.project import (
    SUITE_HELP,
    default_paths,
    load_named,
    outside_paths,
    project_config,
    scenario_path,
)
from parity.cli.run import cmd_run
from parity.cli.validate import cmd_validate
from parity.suite.options import RECORDED_HELP, REQUIRE_LIVE_HELP, REQUIRE_TARGETS_HELP
from parity.targets import peers
from parity.targets.launch import availability, describe
from parity.targets.spec import BUILTIN, TargetConfigError


def cmd_targets(args: argparse.Namespace) -> int:
    config = project_config(args)
    rows = describe(config.targets, config.root)
    width = max(len(name) for name, _, _ in rows)
    for name, state, detail in rows:
        print(f"{name:<{width}}  {state:<11}  {detail}")
    print(f"\n(targets from {BUILTIN} and {config.source})")
    return 0


def cmd_peers(args: argparse.Namespace) -> int:
    config = project_config(args)
    if args.action == "install":
        return peers.install(config.targets, config.root, args.names)
    for name, spec in peers.installable(config.targets).items():
        why = availability(spec, config.root)
        print(f"{name:<12} {spec.install.get('npm', '')}  {why or 'installed'}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    """Walk every changed or new snapshot of the selected runs (see `parity.cli.review`)."""
    from parity.cli.review import review
    from parity.targets.spec import TargetConfigError, target_selection

    config = project_config(args)
    paths = [scenario_path(config, s) for s in args.scenarios]
    why = outside_paths(config, paths)
    if why is not None:
        raise SystemExit(f"parity review: {why}")
    if config.suite and not paths:
        paths = default_paths(config)
    try:
        select, added = target_selection(args.targets, config.targets, config.source)
    except TargetConfigError as exc:
        raise SystemExit(f"parity review: {exc}") from None
    pending = None
    if args.source:
        from parity.cli.pending import pending_items
        from parity.cli.review import scenario_files

        files = scenario_files(config, paths)
        pending = pending_items(config, Path(args.source), files, select)
    return review(
        config,
        paths,
        select=select,
        added=sorted(added),
        pending=pending,
        accept_all=args.accept_all,
        reject_all=args.reject_all,
    )


def cmd_fake_llm(args: argparse.Namespace) -> int:
    """Serve one scenario's script on 127.0.0.1 until interrupted (for manual agents)."""
    import asyncio

    from parity.fakellm.serve import serve_scenario

    config = project_config(args)
    name = args.scenario or args.scenario_arg
    if not name:
        raise SystemExit("parity fake-llm: name a scenario (file or name below scenarios/)")
    scenario = load_named(config, name)
    with contextlib.suppress(KeyboardInterrupt):
        key = None
        if args.require_key_env:
            key = os.environ.get(args.require_key_env) or None
            if key is None:
                raise SystemExit(f"parity fake-llm: ${args.require_key_env} is not set")
        asyncio.run(serve_scenario(scenario, args.port, json_events=args.json, api_key=key))
    return 0


# -- argument parsing ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parity",
        description="Protocol-parity test harness for ACP agents.",
        epilog="parity run|record ... -- ARGS passes ARGS to pytest (e.g. -- -x --lf); "
        "parity init NAME -- CMD ARGS declares the agent NAME started by CMD ARGS.",
    )
    parser.add_argument("--root", help="project root holding parity.toml (default: found)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, helptext in (
        ("run", "run scenarios against targets: snapshots and parity checks, then a summary"),
        ("record", "like run, but (re)write the snapshots of every target that runs"),
    ):
        p = sub.add_parser(name, help=helptext, description=helptext)
        p.add_argument("scenarios", nargs="*", help="scenario files or names (default: all)")
        p.add_argument("--targets", help="only these targets' items, e.g. plus,native")
        p.add_argument("--suite", metavar="NAME", help=SUITE_HELP)
        p.add_argument("--require-targets", metavar="A,B", help=REQUIRE_TARGETS_HELP)
        p.add_argument("--require-live", metavar="A,B", help=REQUIRE_LIVE_HELP)
        p.add_argument("--recorded", metavar="A,B", help=RECORDED_HELP)
        p.add_argument("-k", dest="keyword", help="pytest -k expression")
        p.add_argument("-n", dest="workers", help="parallel workers (pytest-xdist), e.g. auto")
        p.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="less: no progress characters, the summary's counts and failures only",
        )
        p.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="more: one line per item, the whole scenario x target table, every id",
        )
        p.add_argument(
            "--report", metavar="DIR", help="write a static HTML report to DIR (index.html)"
        )
        p.add_argument("--junit", metavar="FILE", help="write JUnit XML to FILE (for CI)")
        p.add_argument(
            "--pending",
            metavar="DIR",
            help="write the new snapshot of each drifted or missing clean run to DIR, for "
            "`parity review --from DIR` (default with --report: DIR/pending)",
        )
        p.add_argument("--json", metavar="FILE", help="write the summary data as JSON to FILE")
        p.add_argument(
            "--shard",
            metavar="K/N",
            help="run the K-th of N duration-balanced groups of scenarios (CI jobs; "
            "`parity merge` joins them, docs/ci.md)",
        )
        p.add_argument(
            "--out",
            metavar="DIR",
            help="write DIR/ledger.json, DIR/junit.xml, DIR/parity.json and DIR/pending/ "
            "(a shard's results, for `parity merge`)",
        )
        p.add_argument(
            "--store-durations",
            action="store_true",
            help="write each item's duration to parity-durations.json (what --shard "
            "balances by; pytest-split's --store-durations)",
        )

    p = sub.add_parser("validate", help="check scenario files; every error as file:line")
    p.add_argument("paths", nargs="*")

    sub.add_parser("targets", help="list every target, available or not, and why")

    p = sub.add_parser("show", help="run a scenario and print the normalized view")
    p.add_argument("scenario")
    p.add_argument("targets", nargs="*", help="one target, or two side by side")
    p.add_argument("--raw", action="store_true", help="the raw transcript and stderr tails")
    p.add_argument("--frames", type=int, default=50, help="frames shown with --raw")
    p.add_argument("--width", type=int, default=78, help="column width side by side")
    p.add_argument(
        "--model", action="store_true", help="only the model requests (tool schemas once)"
    )

    p = sub.add_parser("review", help="walk changed and new snapshots: accept, reject, skip")
    p.add_argument("scenarios", nargs="*", help="scenario files, names or dirs (default: all)")
    p.add_argument(
        "--targets", help="only these targets, e.g. plus,native; +NAME adds a target as run does"
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="review the pending snapshots a run wrote to DIR (--pending, or a report "
        "directory: its pending/ folder): nothing is run",
    )
    p.add_argument("--suite", metavar="NAME", help=SUITE_HELP)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--accept-all", action="store_true", help="accept every clean run")
    mode.add_argument("--reject-all", action="store_true", help="reject every change")

    p = sub.add_parser("diff", help="parity diff of two targets for one scenario")
    p.add_argument("scenario")
    p.add_argument("targets", nargs="*", help="reference and other (default: first two)")

    p = sub.add_parser("calibrate", help="run one target repeatedly; propose masks for noise")
    p.add_argument("scenario")
    p.add_argument("target", nargs="?")
    p.add_argument("--runs", type=int, default=2)

    p = sub.add_parser("fake-llm", help="serve a scenario's scripted LLM until interrupted")
    p.add_argument("scenario_arg", nargs="?", metavar="SCENARIO")
    p.add_argument("--scenario", help="the scenario (file or name), same as SCENARIO")
    p.add_argument("--port", type=int, default=0, help="default: any free port")
    p.add_argument(
        "--json", action="store_true", help="one JSON event per line: ready, request, aborted"
    )
    p.add_argument(
        "--require-key-env",
        metavar="VAR",
        help="refuse model calls without the key in $VAR (401), like a real provider",
    )

    init.add_parser(sub)
    capture.add_parser(sub)
    explore.add_parser(sub)
    merge.add_parser(sub)

    p = sub.add_parser("peers", help="list or install the third-party peer agents")
    p.add_argument("action", choices=("install", "list"), nargs="?", default="list")
    p.add_argument("names", nargs="*")
    return parser


def _on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def install_sigterm_handler() -> None:
    """Turn SIGTERM into SystemExit, so a terminated harness unwinds and the driver's
    atexit hook kills every agent process group it started (the default action would end
    the interpreter without running it, leaving agents behind in their own groups).

    An inherited SIG_IGN is kept: whoever started us asked not to be stopped that way.
    `parity run` hands over to pytest, whose plugin installs its own handler for the
    session (a SystemExit inside a test would only fail that test)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _on_sigterm)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `parity` console script."""
    install_sigterm_handler()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after `--` goes to pytest untouched (run and record), or is the agent's
    # command (`parity init NAME -- CMD ARGS...`).
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = build_parser().parse_args(argv)
    args.pytest_args = extra
    commands = {
        "run": lambda a: cmd_run(a),
        "record": lambda a: cmd_run(a, record=True),
        "validate": cmd_validate,
        "targets": cmd_targets,
        "show": cmd_show,
        "review": cmd_review,
        "diff": cmd_diff,
        "calibrate": cmd_calibrate,
        "fake-llm": cmd_fake_llm,
        "peers": cmd_peers,
        "capture": capture.cmd_capture,
        "explore": explore.cmd_explore,
        "merge": merge.cmd_merge,
        "init": init.cmd_init,
    }
    try:
        return int(commands[args.command](args))
    except TargetConfigError as exc:
        print(f"parity: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"parity: {exc.args[0]}", file=sys.stderr)
        return 2
