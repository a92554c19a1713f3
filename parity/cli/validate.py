"""`parity validate`: scenario files and directories -> every finding, printed.

The project's known-differences file (`parity.scenario.known`) is checked with its own
schema, whether named or (without paths) found through `parity.toml`.

Target names are checked against the target registry of each file's project; without
paths, the project's configured scenarios directory is checked.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from parity.checks.acp_schema import def_names
from parity.cli.project import project_config
from parity.config.project import Config, find_root, load_config
from parity.scenario.errors import ScenarioError
from parity.scenario.load import check_text, discover
from parity.targets.spec import TargetConfigError


def cmd_validate(args: argparse.Namespace) -> int:
    return validate_main(list(args.paths), project_config(args))


def validate_paths(paths: Iterable[Path | str], given: Config | None = None) -> list[ScenarioError]:
    """Check files and directories (every `*.yaml` below them); all findings, in order.

    Target names are checked against the target registry of each file's project (the
    nearest directory with `parity.toml` or `pyproject.toml`); `given`, the command's own
    project, already read, is not read again.
    """
    findings: list[ScenarioError] = []
    projects: dict[Path, Config | str] = {} if given is None else {given.root: given}
    for path in _expand(paths):
        if not path.is_file():
            findings.append(ScenarioError(str(path), 0, 0, "", "no such file or directory"))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(ScenarioError(str(path), 0, 0, "", f"cannot read: {exc}"))
            continue
        project = _project(path, projects)
        if isinstance(project, str):  # the registry itself is broken: say so, check the rest
            hint = "run `parity targets` for details"
            findings.append(ScenarioError(str(path), 0, 0, "targets", project, hint, "warning"))
        known = frozenset(project.targets) if isinstance(project, Config) else None
        if isinstance(project, Config) and path.resolve() == project.known_differences.resolve():
            # The file and the target tables' own entries: ids are unique across them.
            findings += project.known_findings(def_names())[0]
        else:
            findings += check_text(text, str(path), known)[0]
    return findings


def _project(path: Path, cache: dict[Path, Config | str]) -> Config | str:
    """`path`'s project configuration (its targets and known-differences file), or why
    it cannot be read."""
    root = find_root(path.parent)
    if root not in cache:
        try:
            cache[root] = load_config(root)
        except (TargetConfigError, OSError) as exc:
            cache[root] = f"cannot read the target registry: {exc}"
    return cache[root]


def validate_main(paths: Sequence[str], config: Config) -> int:
    """`parity validate [PATHS]`: print every finding; 2 if any error, else 0.

    Without paths, checks every scenario below the project's scenarios directory
    (`config.scenarios_dir`, `scenarios` in parity.toml). Never shows a traceback: an
    unexpected failure is printed as one line and counts as an error.
    """
    try:
        targets: list[Path | str] = list(paths) or list(discover(config.scenarios_dir))
        if not paths and config.known_differences.is_file():
            targets.append(config.known_differences)  # every scenario uses it
        if not targets:
            print(f"parity validate: no scenario files found below {_shown(config.scenarios_dir)}")
            return 2
        files = _expand(targets)
        findings = validate_paths(targets, config)
    except Exception as exc:  # a validator bug must still end in one readable line
        print(f"parity validate: internal error: {type(exc).__name__}: {exc}")
        return 2
    for finding in findings:
        print(finding)
    errors = sum(f.severity == "error" for f in findings)
    print(f"checked {len(files)} file(s): {errors} error(s), {len(findings) - errors} warning(s)")
    return 2 if errors else 0


def _expand(paths: Iterable[Path | str]) -> list[Path]:
    """Files as given; directories replaced by their `*.yaml` files (hidden dirs skipped)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += sorted(
                p
                for p in path.rglob("*.yaml")
                if not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            out.append(path)
    return out


def _shown(directory: Path) -> str:
    """`directory` as the user would type it: `./scenarios` below the working directory."""
    rel = os.path.relpath(directory)
    return rel if rel.startswith("..") or os.path.isabs(rel) else f"./{rel}"
