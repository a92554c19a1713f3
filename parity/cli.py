"""The `parity` command.

`run` and `record` are thin over pytest (the plugin in `parity.suite.plugin` does the work), so
`parity run`, `make parity` and `pytest scenarios` share one implementation. The other
subcommands reuse the same library pieces directly: targets, runner, snapshot, report.
Those are imported by the subcommands that need them: `run` hands over to pytest, which
must import syrupy itself (after setting up assertion rewriting for it).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parity.config import Config, load_config
from parity.report.text import findings_block, side_by_side, stderr_tail, transcript_tail
from parity.targets import peers
from parity.targets.launch import availability, describe
from parity.targets.spec import BUILTIN, TargetConfigError
from parity.transcript import Transcript
from parity.view.calibrate import PathT, differing_paths, mask_proposal


def _config(args: argparse.Namespace) -> Config:
    return load_config(Path(args.root) if args.root else None)


def _scenario_path(config: Config, name: str) -> Path:
    """A scenario given as a path, or as a name below the scenarios dir."""
    path = Path(name)
    if path.exists():
        return path
    for candidate in (config.scenarios_dir / name, config.scenarios_dir / f"{name}.yaml"):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"parity: no scenario {name!r} (looked in {config.scenarios_dir})")


def _load(config: Config, name: str) -> Any:
    from parity.scenario.errors import ScenarioInvalid
    from parity.scenario.load import load_scenario

    try:
        return load_scenario(_scenario_path(config, name), config.scenarios_dir)
    except ScenarioInvalid as exc:
        raise SystemExit(f"parity: invalid scenario:\n{exc}") from None


# -- run / record: pytest with the plugin ----------------------------------------------


def pytest_args(args: argparse.Namespace, config: Config, *, record: bool) -> list[str]:
    """The pytest command line `parity run` / `parity record` stands for (pure)."""
    paths = [str(_scenario_path(config, s)) for s in args.scenarios] or [str(config.scenarios_dir)]
    out = [*paths, "-p", "parity.suite.plugin", "--parity-root", str(config.root)]
    # Node ids relative to the project root (`scenarios/x.yaml::plus`) wherever it runs.
    out += ["--rootdir", str(config.root)]
    # pytest's own header (platform, plugin settings) says nothing about the agents and
    # runs past the 120 columns the summary keeps to.
    out += ["--no-header"]
    out += ["-v"] if not args.quiet else ["-q"]
    if args.targets:
        out += ["--targets", args.targets]
    if args.require_targets:
        out += ["--require-targets", args.require_targets]
    if args.keyword:
        out += ["-k", args.keyword]
    if args.workers:
        out += ["-n", args.workers]
    # Reports (docs/reports.md): the plugin writes them at the end of the session.
    for option, value in (
        ("--parity-report", getattr(args, "report", None)),
        ("--parity-junit", getattr(args, "junit", None)),
        ("--parity-json", getattr(args, "json", None)),
    ):
        if value:
            out += [option, str(Path(value).resolve())]
    if record:
        out.append("--snapshot-update")
    return out + list(args.pytest_args)


def cmd_run(args: argparse.Namespace, *, record: bool = False) -> int:
    import pytest

    config = _config(args)
    if not args.scenarios and not config.scenarios_dir.is_dir():
        print(f"parity: no scenarios directory at {config.scenarios_dir}", file=sys.stderr)
        return 2
    return int(pytest.main(pytest_args(args, config, record=record)))


# -- small commands --------------------------------------------------------------------


def cmd_targets(args: argparse.Namespace) -> int:
    config = _config(args)
    rows = describe(config.targets, config.root)
    width = max(len(name) for name, _, _ in rows)
    for name, state, detail in rows:
        print(f"{name:<{width}}  {state:<11}  {detail}")
    print(f"\n(targets from {BUILTIN} and {config.source})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from parity.scenario.validate import validate_main

    return validate_main(list(args.paths), _config(args))


def cmd_peers(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.action == "install":
        return peers.install(config.targets, config.root, args.names)
    for name, spec in peers.installable(config.targets).items():
        why = availability(spec, config.root)
        print(f"{name:<12} {spec.install.get('npm', '')}  {why or 'installed'}")
    return 0


# -- commands that run agents directly -------------------------------------------------


def _views(config: Config, scenario: Any, names: Sequence[str]) -> list[tuple[str, Any, Any]]:
    """(title, view, RunResult or None) per target: a live run, else the recorded snapshot."""
    from parity.suite.runner import Runner

    out: list[tuple[str, Any, Any]] = []
    with Runner(config) as runner:
        for name in names:
            view, result, why = runner.live_or_recorded(scenario, name)
            if view is None:
                raise SystemExit(f"parity: {name} cannot run ({why}) and has no snapshot")
            out.append((name if why is None else f"{name} (recorded; {why})", view, result))
    return out


def _findings_comment(config: Config, name: str, result: Any) -> str:
    """A run's conformance findings as YAML comments (the view above stays parseable)."""
    if result is None:
        return "# conformance: not checked (recorded snapshot, no run)"
    block = findings_block(result.findings, config.targets[name].conformance)
    return "\n".join(f"# {line}" for line in block.splitlines())


def cmd_show(args: argparse.Namespace) -> int:
    from parity.view.dump import dump_view

    config = _config(args)
    scenario = _load(config, args.scenario)
    names = args.targets or scenario.targets[:1]
    if len(names) > 2:
        raise SystemExit("parity show: at most two targets (side by side)")
    views = _views(config, scenario, names)
    # The model requests only with --model, and then only them (parity.view.model_view).
    from parity.view.model_view import model_view, without_model

    views = [(t, model_view(v) if args.model else without_model(v), r) for t, v, r in views]
    if args.raw:
        for (title, _, result), name in zip(views, names, strict=True):
            # A recorded snapshot has no transcript: its tails say there is nothing.
            empty = Transcript(scenario=scenario.name, target=name, run_id="")
            transcript = result.transcript if result is not None else empty
            print(f"--- {title}: raw transcript tail")
            print(transcript_tail(transcript, frames=args.frames))
            print(f"--- {title}: stderr tail")
            print(stderr_tail(transcript))
    elif len(views) == 1:
        print(f"# {scenario.name} on {views[0][0]}")
        print(dump_view(views[0][1]), end="")
    else:
        (ta, va, _), (tb, vb, _) = views
        print(side_by_side(dump_view(va), dump_view(vb), (ta, tb), width=args.width))
    for name, (title, _, result) in zip(names, views, strict=True):
        if len(views) > 1:
            print(f"# {title}:")
        print(_findings_comment(config, name, result))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from parity.checks.diff import compare

    config = _config(args)
    scenario = _load(config, args.scenario)
    names = args.targets or scenario.targets[:2]
    if len(names) != 2:
        raise SystemExit("parity diff: name two targets (default: the scenario's first two)")
    (ta, va, _), (tb, vb, _) = _views(config, scenario, names)
    result = compare(
        va,
        vb,
        profile=scenario.profile,
        diverge=scenario.diverge,
        ref_name=names[0],
        other_name=names[1],
        scenario=scenario.name,
    )
    for title in (ta, tb):
        if "(recorded" in title:
            print(f"note: {title}")
    print(result.render())
    return 0 if result.ok else 1


def cmd_review(args: argparse.Namespace) -> int:
    """Walk every changed or new snapshot of the selected runs (see `parity.suite.review`)."""
    from parity.suite.review import review

    config = _config(args)
    paths = [_scenario_path(config, s) for s in args.scenarios]
    select = {t.strip() for t in args.targets.split(",") if t.strip()} if args.targets else None
    return review(
        config, paths, select=select, accept_all=args.accept_all, reject_all=args.reject_all
    )


def cmd_calibrate(args: argparse.Namespace) -> int:
    from parity.suite.runner import Runner

    config = _config(args)
    scenario = _load(config, args.scenario)
    name = args.target or scenario.targets[0]
    with Runner(config) as runner:
        why = runner.unavailable(name)
        if why is not None:
            raise SystemExit(f"parity calibrate: {name} cannot run: {why}")
        views = [runner.result(scenario, name).view for _ in range(args.runs)]
    found: list[PathT] = []
    for other in views[1:]:
        found += [p for p in differing_paths(views[0], other) if p not in found]
    print(mask_proposal(found, name, args.runs))
    return 0


def cmd_fake_llm(args: argparse.Namespace) -> int:
    """Serve one scenario's script on 127.0.0.1 until interrupted (for manual agents)."""
    import asyncio

    from parity.fakellm.serve import serve_scenario

    config = _config(args)
    name = args.scenario or args.scenario_arg
    if not name:
        raise SystemExit("parity fake-llm: name a scenario (file or name below scenarios/)")
    scenario = _load(config, name)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_scenario(scenario, args.port, json_events=args.json))
    return 0


# -- argument parsing ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parity",
        description="Protocol-parity test harness for ACP agents.",
        epilog="parity run|record ... -- ARGS passes ARGS to pytest (e.g. -- -x --lf).",
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
        p.add_argument(
            "--require-targets", help="fail (instead of skip) if these cannot run or compare"
        )
        p.add_argument("-k", dest="keyword", help="pytest -k expression")
        p.add_argument("-n", dest="workers", help="parallel workers (pytest-xdist), e.g. auto")
        p.add_argument("-q", "--quiet", action="store_true", help="one character per item")
        p.add_argument(
            "--report", metavar="DIR", help="write a static HTML report to DIR (index.html)"
        )
        p.add_argument("--junit", metavar="FILE", help="write JUnit XML to FILE (for CI)")
        p.add_argument("--json", metavar="FILE", help="write the summary data as JSON to FILE")

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
    p.add_argument("--targets", help="only these targets, e.g. plus,native")
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
    # Everything after `--` goes to pytest untouched (run and record only).
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
    }
    try:
        return int(commands[args.command](args))
    except TargetConfigError as exc:
        print(f"parity: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"parity: {exc.args[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
