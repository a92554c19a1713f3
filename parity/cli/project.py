"""What every command reads first: the project's configuration, and scenarios named on
the command line (a path, or a name below the configured scenarios directory).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from parity.config.project import Config, load_config
from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import load_scenario
from parity.scenario.model import Scenario


def project_config(args: argparse.Namespace) -> Config:
    return load_config(Path(args.root) if args.root else None)


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
