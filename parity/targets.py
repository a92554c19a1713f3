"""Target registry: which agents the harness can drive, how to launch them, and why not.

Targets are declared in TOML: the built-ins ship in `parity/targets.toml`; a project adds
or overrides targets in `parity.toml` at its root, or in `[tool.parity]` of its
`pyproject.toml`. Everything here is pure over plain data except `availability` (looks at
PATH and the file system) and `run_setup` (runs a command).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from parity import dsh
from parity.scenario.model import DEFAULT_CATALOG

FAMILIES = ("dsh", "peer")
DIALECTS = ("parity-stream", "openai-chat", "openai-responses", "anthropic-messages", "gemini")
FIXTURE_TOOLS = ("stream", "mcp")
CONFORMANCE = ("fail", "warn")
"""What conformance findings do to a target's snapshot item: fail it, or only be listed."""
DEFAULT_CONFORMANCE = {"dsh": "fail", "peer": "warn"}
"""Our own agents must conform; third-party peers are measured, not gated."""
DEFAULT_SHUTDOWN_EOF = {"dsh": 2.0, "peer": 0.5}
"""Seconds the shutdown ladder waits for an agent to exit after stdin EOF. Peers get a
short wait: some (codex-acp) ignore EOF, and every run would otherwise idle for the
driver's full EOF stage before SIGTERM; semantic views do not record how a process ended."""
LAUNCHERS = ("dsh",)
"""Targets resolved by code instead of a fixed command (`launcher = "dsh"`: parity/dsh.py)."""
PLACEHOLDERS = ("python", "repo", "peers", "llm_base", "workdir", "home")
"""Names replaced in templates; any other `{...}` is literal (JSON/TOML need no escaping)."""

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


class TargetConfigError(ValueError):
    """A target declaration that cannot be used; the message names file and target."""


@dataclass(frozen=True)
class Requirement:
    """One availability check: a command on PATH or a file that must exist."""

    command: str | None = None
    file: str | None = None
    reason: str | None = None
    """Shown instead of the default reason when the check fails."""


@dataclass(frozen=True)
class TargetSpec:
    """One target as declared (templates not yet rendered)."""

    name: str
    family: str
    dialect: str
    fixture_tools: str
    command: tuple[str, ...]
    description: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    """Relative path under the run's home -> file text template."""
    requires: tuple[Requirement, ...] = ()
    setup: tuple[str, ...] = ()
    install: Mapping[str, str] = field(default_factory=dict)
    """How `parity peers install` installs it, e.g. {"npm": "pkg@1.2.3"}."""
    conformance: str = "fail"
    """`fail` or `warn` (see `CONFORMANCE`); `parse_target` defaults it by family."""
    shutdown_eof: float = 2.0
    """The shutdown ladder's EOF stage in seconds; `parse_target` defaults it by family."""
    source: str = ""
    """Where it was declared (file path), for error messages."""
    launcher: str = ""
    """A name from `LAUNCHERS`: the command comes from that launch kit, not `command`."""


@dataclass(frozen=True)
class LaunchPlan:
    """A target rendered for one run: what to execute, with which env and files (the
    driver's `Launch` carries the same; this module stays free of driver imports)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    files: Mapping[str, str]
    """Relative path under home -> rendered text."""
    fixture_tools: str
    stamp: Mapping[str, str] = field(default_factory=dict)
    """What the launched agent is (e.g. its version), for the run's snapshot."""
    paths: Mapping[str, str] = field(default_factory=dict)
    """Machine paths the agent may print, masked in views like the run's directories."""


def render(template: str, values: Mapping[str, str]) -> str:
    """Replace the known `{placeholder}`s present in `values`; leave every other brace."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return values.get(name, match.group(0))

    return _PLACEHOLDER.sub(sub, template)


def static_values(repo: Path) -> dict[str, str]:
    """Placeholder values known before any run: interpreter, project root, peers dir."""
    return {
        "python": sys.executable,
        "repo": str(repo),
        "peers": str(repo / ".cache" / "peers"),
    }


def plan(
    spec: TargetSpec,
    *,
    repo: Path,
    llm_base: str,
    workdir: Path,
    home: Path,
    catalog: Mapping[str, Any] | None = None,
) -> LaunchPlan:
    """Render `spec` for one run.

    `env` holds only the target's own variables: the driver builds the rest of the
    agent's environment (scrubbed of credentials, private HOME, XDG dirs and TMPDIR).
    `catalog` is the scenario's parity-stream catalog (a launcher picks its route there).
    """
    values = static_values(repo) | {
        "llm_base": llm_base.rstrip("/"),
        "workdir": str(workdir),
        "home": str(home),
    }
    env = {k: render(v, values) for k, v in spec.env.items()}
    if spec.launcher == "dsh":
        install = dsh.locate()
        kit = dsh.launch(
            install,
            llm_base=values["llm_base"],
            home=home,
            catalog=DEFAULT_CATALOG if catalog is None else catalog,
            env=env,
        )
        return LaunchPlan(
            argv=kit.argv,
            env=kit.env,
            files=kit.files,
            fixture_tools=spec.fixture_tools,
            stamp=install.stamp(),
            paths=kit.paths,
        )
    return LaunchPlan(
        argv=tuple(render(a, values) for a in spec.command),
        env=env,
        files={render(p, values): render(t, values) for p, t in spec.files.items()},
        fixture_tools=spec.fixture_tools,
    )


def availability(spec: TargetSpec, repo: Path) -> str | None:
    """None when the target can run here, else the exact reason it cannot."""
    if spec.launcher == "dsh":
        try:
            dsh.locate()
        except dsh.DshNotFound as exc:
            return str(exc)
    values = static_values(repo)
    for req in spec.requires:
        if req.command is not None:
            command = render(req.command, values)
            if shutil.which(command) is None:
                return req.reason or f"{command} not found on PATH"
        if req.file is not None:
            path = render(req.file, values)
            if not Path(path).exists():
                return req.reason or f"{path} does not exist"
    if not spec.requires and spec.command and not spec.launcher:
        # Without declared checks, the executable itself must be there.
        exe = render(spec.command[0], values)
        if shutil.which(exe) is None and not Path(exe).is_file():
            return f"{exe} not found"
    return None


def run_setup(spec: TargetSpec, repo: Path) -> str | None:
    """Run the target's setup command (if any) in `repo`; None on success, else why not."""
    if not spec.setup:
        return None
    argv = [render(a, static_values(repo)) for a in spec.setup]
    try:
        done = subprocess.run(
            argv, cwd=repo, capture_output=True, text=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"setup {' '.join(argv)} failed: {exc}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return f"setup {' '.join(argv)} exited {done.returncode}: " + " | ".join(tail)
    return None


# -- declarations --------------------------------------------------------------------------


def _str_list(value: Any, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TargetConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _str_map(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise TargetConfigError(f"{where}: `{key}` must be a table of strings")
    return dict(value)


def _requirements(value: Any, where: str) -> tuple[Requirement, ...]:
    if not isinstance(value, list):
        raise TargetConfigError(f"{where}: `requires` must be a list of tables")
    out = []
    for item in value:
        if not isinstance(item, dict) or not ({"command", "file"} & item.keys()):
            raise TargetConfigError(
                f"{where}: each `requires` entry needs `command` or `file`, got {item!r}"
            )
        unknown = item.keys() - {"command", "file", "reason"}
        if unknown:
            raise TargetConfigError(f"{where}: unknown `requires` key(s) {sorted(unknown)}")
        out.append(Requirement(item.get("command"), item.get("file"), item.get("reason")))
    return tuple(out)


_KEYS = {
    "description",
    "family",
    "dialect",
    "fixture_tools",
    "command",
    "env",
    "files",
    "requires",
    "setup",
    "install",
    "conformance",
    "shutdown_eof",
    "launcher",
}


def parse_target(name: str, table: Mapping[str, Any], source: str) -> TargetSpec:
    """Build a `TargetSpec` from one merged `[targets.<name>]` table; errors name both."""
    where = f"{source}: target {name!r}"
    unknown = table.keys() - _KEYS
    if unknown:
        raise TargetConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    for key, allowed in (
        ("family", FAMILIES),
        ("dialect", DIALECTS),
        ("fixture_tools", FIXTURE_TOOLS),
    ):
        if table.get(key) not in allowed:
            raise TargetConfigError(
                f"{where}: `{key}` must be one of {', '.join(allowed)}, got {table.get(key)!r}"
            )
    launcher = table.get("launcher", "")
    if launcher and launcher not in LAUNCHERS:
        raise TargetConfigError(
            f"{where}: `launcher` must be one of {', '.join(LAUNCHERS)}, got {launcher!r}"
        )
    command = _str_list(table.get("command", []), where, "command")
    if not command and not launcher:
        raise TargetConfigError(f"{where}: `command` is required (or a `launcher`)")
    family = table["family"]
    conformance = table.get("conformance", DEFAULT_CONFORMANCE[family])
    if conformance not in CONFORMANCE:
        raise TargetConfigError(
            f"{where}: `conformance` must be one of {', '.join(CONFORMANCE)}, got {conformance!r}"
        )
    eof = table.get("shutdown_eof", DEFAULT_SHUTDOWN_EOF[family])
    # bool is an int subclass; `shutdown_eof = true` is a typo, not one second.
    if isinstance(eof, bool) or not isinstance(eof, int | float) or not 0 <= eof <= 60:
        raise TargetConfigError(
            f"{where}: `shutdown_eof` must be seconds between 0 and 60, got {eof!r}"
        )
    return TargetSpec(
        name=name,
        family=family,
        dialect=table["dialect"],
        fixture_tools=table["fixture_tools"],
        command=command,
        description=str(table.get("description", "")),
        env=_str_map(table.get("env", {}), where, "env"),
        files=_str_map(table.get("files", {}), where, "files"),
        requires=_requirements(table.get("requires", []), where),
        setup=_str_list(table.get("setup", []), where, "setup"),
        install=_str_map(table.get("install", {}), where, "install"),
        conformance=conformance,
        shutdown_eof=float(eof),
        source=source,
        launcher=str(launcher),
    )


def merge_tables(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge TOML tables: nested tables merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_tables(out[key], value)
        else:
            out[key] = value
    return out


def builtin_tables() -> dict[str, Any]:
    """The `[targets]` tables shipped in `parity/targets.toml`."""
    text = resources.files("parity").joinpath("targets.toml").read_text(encoding="utf-8")
    return dict(tomllib.loads(text).get("targets", {}))


@dataclass(frozen=True)
class Config:
    """The project's harness configuration."""

    root: Path
    targets: dict[str, TargetSpec]
    scenarios_dir: Path
    snapshots_dir: Path
    source: str
    """The file the project settings came from, or `built-in`."""


def project_table(root: Path) -> tuple[dict[str, Any], str]:
    """The project's `[parity]` settings: `parity.toml`, else `[tool.parity]`, else none."""
    parity_toml = root / "parity.toml"
    try:
        if parity_toml.is_file():
            return tomllib.loads(parity_toml.read_text(encoding="utf-8")), str(parity_toml)
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            table = data.get("tool", {}).get("parity")
            if isinstance(table, dict):
                return table, f"{pyproject} [tool.parity]"
    except tomllib.TOMLDecodeError as exc:
        raise TargetConfigError(f"{parity_toml if parity_toml.is_file() else root}: {exc}") from exc
    return {}, "built-in"


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding `parity.toml` or `pyproject.toml`."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / "parity.toml").is_file() or (directory / "pyproject.toml").is_file():
            return directory
    return start


def load_config(root: Path | None = None) -> Config:
    """Built-in targets merged with the project's declarations (project keys win)."""
    root = find_root(Path.cwd()) if root is None else root.resolve()
    project, source = project_table(root)
    tables: dict[str, Any] = builtin_tables()
    origin = {name: "parity/targets.toml" for name in tables}
    overrides = project.get("targets", {})
    if not isinstance(overrides, dict):
        raise TargetConfigError(f"{source}: `targets` must be a table of targets")
    for name, table in overrides.items():
        if not isinstance(table, dict):
            raise TargetConfigError(f"{source}: target {name!r} must be a table")
        merged = merge_tables(tables.get(name, {}), table)
        if "command" in table and "launcher" not in table:
            merged.pop("launcher", None)  # the project's own command replaces a launch kit
        tables[name] = merged
        origin[name] = source
    targets = {name: parse_target(name, tables[name], origin[name]) for name in tables}
    return Config(
        root=root,
        targets=targets,
        scenarios_dir=root / str(project.get("scenarios", "scenarios")),
        snapshots_dir=root / str(project.get("snapshots", "snapshots")),
        source=source,
    )


def describe(config: Config) -> list[tuple[str, str, str]]:
    """Rows `(name, "available" | "unavailable", detail)` for `parity targets`, sorted."""
    rows = []
    for name in sorted(config.targets):
        spec = config.targets[name]
        reason = availability(spec, config.root)
        detail = reason or f"{spec.family}, {spec.dialect}, tools via {spec.fixture_tools}"
        if reason is None and spec.launcher == "dsh":
            detail += f"; {dsh.locate().describe()}"
        rows.append((name, "unavailable" if reason else "available", detail))
    return rows
