"""What every command reads first: the project's configuration, and scenarios named on
the command line (a path, or a name below the configured scenarios directory).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from parity.config.project import Config, load_config, with_suite
from parity.config.suites import SUITES, SuiteError, shipped_suite
from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import load_scenario
from parity.scenario.model import Scenario

SUITE_HELP = (
    "run a suite the package ships instead of the project's scenarios: "
    + ", ".join(f"{name} ({', '.join(folders)})" for name, folders in sorted(SUITES.items()))
    + "; with --targets +NAME against your own agent (docs/own-agent.md)"
)


def project_config(args: argparse.Namespace) -> Config:
    """The project's configuration; with `--suite NAME`, running that shipped suite."""
    config = load_config(Path(args.root) if args.root else None)
    suite = getattr(args, "suite", None)
    if suite:
        try:
            config = with_suite(config, suite)
        except SuiteError as exc:
            print(f"parity: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    return config


def default_paths(config: Config) -> list[Path]:
    """What a command given no scenarios collects: the suite's folders, or the whole
    scenarios directory."""
    return shipped_suite(config.suite).paths if config.suite else [config.scenarios_dir]


def outside_paths(config: Config, paths: list[Path]) -> str | None:
    """Why scenario `paths` cannot run in this project, or None. A scenario is named by
    its path below the scenarios directory (its snapshots too), so pytest would collect
    nothing from elsewhere ("no tests ran"): this says so instead."""
    home = config.scenarios_dir.resolve()
    away = [p for p in paths if not p.resolve().is_relative_to(home)]
    if not away:
        return None
    where = "the suite's" if config.suite else "the project's"
    return (
        f"{away[0]} is outside {where} scenarios directory {config.scenarios_dir}: a "
        f"scenario is named by its path below it, and so are its snapshots. Move it "
        f"there, point `scenarios` in {config.source} at its directory, or run the "
        f"shipped agent-agnostic suite with `--suite acp`"
    )


def scenario_path(config: Config, name: str) -> Path:
    """A scenario given as a path, or as a name below the scenarios dir."""
    path = Path(name)
    if path.exists():
        return path
    for candidate in (config.scenarios_dir / name, config.scenarios_dir / f"{name}.yaml"):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"parity: no scenario {name!r} (looked in {config.scenarios_dir})")


def load_named(config: Config, name: str) -> Scenario:
    try:
        return load_scenario(scenario_path(config, name), config.scenarios_dir)
    except ScenarioInvalid as exc:
        raise SystemExit(f"parity: invalid scenario:\n{exc}") from None
