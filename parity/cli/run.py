"""`parity run` and `parity record`: pytest with the plugin (`parity.suite.plugin`), so
`parity run`, `make parity` and `pytest scenarios` share one implementation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from parity.cli.project import default_paths, outside_paths, project_config, scenario_path
from parity.config.project import Config


def pytest_args(args: argparse.Namespace, config: Config, *, record: bool) -> list[str]:
    """The pytest command line `parity run` / `parity record` stands for (pure)."""
    given = [scenario_path(config, s) for s in args.scenarios] or default_paths(config)
    paths = [str(p) for p in given]
    out = [*paths, "-p", "parity.suite.plugin", "--parity-root", str(config.root)]
    # Hypothesis's pytest plugin imports all of Hypothesis at the end of every session
    # (its terminal summary), and pytest assertion-rewrites every module of a plugin's
    # distribution: 0.1 s a run with bytecode cached, 0.7 s of CPU where it cannot be
    # (PYTHONDONTWRITEBYTECODE), for nothing, as no scenario item is a Hypothesis test
    # (docs/performance.md, "The test suite's slowest tests").
    out += ["-p", "no:hypothesispytest"]
    # anyio's plugin (installed with httpx) serves async tests, and no scenario item is
    # one. pytest-asyncio's stays: blocked, a project's own `asyncio_*` settings (this
    # one's) would each warn as an unknown option.
    out += ["-p", "no:anyio"]
    # Node ids relative to the project root (`scenarios/x.yaml::plus`) wherever it runs.
    out += ["--rootdir", str(config.root)]
    # pytest's own header (platform, plugin settings) says nothing about the agents and
    # runs past the 120 columns the summary keeps to.
    out += ["--no-header"]
    # pytest's own verbosity, as pytest users know it: by default one character per
    # item (`-q`; pytest's default would print a line per scenario file, 80 of them),
    # `-v` a line per item and the whole summary table, `-q` (`-qq`) counts only.
    if getattr(args, "verbose", False):
        out += ["-v"]
    else:
        out += ["-qq"] if args.quiet else ["-q"]
    if args.targets:
        out += ["--targets", args.targets]
    if args.require_targets:
        out += ["--require-targets", args.require_targets]
    if getattr(args, "require_live", None):
        out += ["--require-live", args.require_live]
    if getattr(args, "recorded", None):
        out += ["--recorded", args.recorded]
    if args.keyword:
        out += ["-k", args.keyword]
    if args.workers:
        out += ["-n", args.workers]
    # Reports (docs/reports.md): the plugin writes them at the end of the session.
    # `--out DIR`: a shard's results in one directory, for `parity merge`.
    shard_dir = Path(args.out) if getattr(args, "out", None) else None
    for option, value, name in (
        ("--parity-report", getattr(args, "report", None), None),
        ("--parity-junit", getattr(args, "junit", None), "junit.xml"),
        ("--parity-json", getattr(args, "json", None), "parity.json"),
        ("--parity-pending", getattr(args, "pending", None), "pending"),
        ("--parity-ledger", None, "ledger.json"),
    ):
        if not value and shard_dir is not None and name is not None:
            value = str(shard_dir / name)
        if value:
            out += [option, str(Path(value).resolve())]
    if getattr(args, "shard", None):
        out += ["--parity-shard", args.shard]
    if getattr(args, "store_durations", False):
        # pytest-split's own option writes the file (its format, what --shard reads).
        from parity.suite.shard import DURATIONS

        out += ["--store-durations", "--durations-path", str(config.root / DURATIONS)]
    if record:
        out.append("--snapshot-update")
    return out + list(args.pytest_args)


def cmd_run(args: argparse.Namespace, *, record: bool = False) -> int:
    import pytest

    from parity.suite.options import GivenConfig

    config = project_config(args)
    if not args.scenarios and not config.scenarios_dir.is_dir():
        print(f"parity: no scenarios directory at {config.scenarios_dir}", file=sys.stderr)
        return 2
    why = outside_paths(config, [scenario_path(config, s) for s in args.scenarios])
    if why is not None:
        print(f"parity: {why}", file=sys.stderr)
        return 2
    # The plugin takes this configuration rather than reading parity.toml again.
    given = [GivenConfig(config)]
    return int(pytest.main(pytest_args(args, config, record=record), plugins=given))
