"""The commands that run agents directly, with the engine's runner (no pytest): `parity
show`, `parity diff` and `parity calibrate`. A target that cannot run here is shown from
its recorded snapshot.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from parity.cli.project import load_named, project_config
from parity.config.project import Config
from parity.core.transcript import Transcript
from parity.report.text import findings_block, side_by_side, stderr_tail, transcript_tail
from parity.scenario.model import Scenario
from parity.view.calibrate import PathT, differing_paths, mask_proposal, shows_run_health


def _views(config: Config, scenario: Scenario, names: Sequence[str]) -> list[tuple[str, Any, Any]]:
    """(title, view, RunResult or None) per target: a live run, else the recorded snapshot."""
    from parity.engine.runner import Runner

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

    config = project_config(args)
    scenario = load_named(config, args.scenario)
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
    from parity.checks.acp_schema import def_names
    from parity.checks.diff import compare

    config = project_config(args)
    scenario = load_named(config, args.scenario)
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
        known=config.known_rules(def_names()),
    )
    for title in (ta, tb):
        if "(recorded" in title:
            print(f"note: {title}")
    print(result.render())
    return 0 if result.ok else 1


def cmd_calibrate(args: argparse.Namespace) -> int:
    from parity.engine.runner import Runner

    config = project_config(args)
    scenario = load_named(config, args.scenario)
    name = args.target or scenario.targets[0]
    with Runner(config) as runner:
        why = runner.unavailable(name)
        if why is not None:
            raise SystemExit(f"parity calibrate: {name} cannot run: {why}")
        views = [runner.result(scenario, name).view for _ in range(args.runs)]
    found: list[PathT] = []
    withheld: list[PathT] = []
    for other in views[1:]:
        for path in differing_paths(views[0], other):
            kept = withheld if shows_run_health(path, views[0], other) else found
            if path not in kept:
                kept.append(path)
    print(mask_proposal(found, name, args.runs, withheld))
    # Runs that ended differently are not calibrated: say so in the status too.
    return 1 if withheld else 0
