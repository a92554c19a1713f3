"""Target declarations: which agents the harness can drive, as declared in TOML.

The built-ins ship in `parity/targets/targets.toml`; a project adds or overrides targets
in its configuration (`parity.config.project`: `parity.toml` at its root, or `[tool.parity]` of
its `pyproject.toml`). Pure over plain data: TOML tables -> `TargetSpec`s, or a
`TargetConfigError` naming the file and the target. Rendering a target for one run is
`parity.targets.launch`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal, cast

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from parity.fakellm.dialects import DIALECTS
from parity.scenario.families import FAMILY_TOOLS, TOOL_FAMILY
from parity.scenario.model import ExpectedProblem
from parity.targets.dsh import Seek
from parity.targets.tolerances import TableError, parse_expect_problems, parse_timeouts

FAMILIES = ("dsh", "peer")
OWN_TOOLS_SHARED = {"dsh": True, "peer": False}
"""Whether a family's agents share their own tools (`builtin: true` calls): the DSH
bridges all have the contract's `read`, `bash`, ...; each peer has its own set, so a
peer scenario that calls one tests that agent alone and takes no `--targets +NAME`."""
DIALECT_NAMES = tuple(DIALECTS)
"""The dialects a target may declare: the fake LLM's registry (`parity.fakellm.dialects`)."""
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
"""Targets resolved by code instead of a fixed command (`launcher = "dsh"`:
parity/targets/dsh.py)."""
BUILTIN = "parity/targets/targets.toml"
"""Where the built-in targets are declared (named in messages about them)."""

FixtureTools = Literal["stream", "mcp"]
"""How scenario tools reach an agent: the parity-stream catalog, or an MCP server."""


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
    fixture_tools: FixtureTools
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
    timeouts: Mapping[str, float] = field(default_factory=dict)
    """Seconds per `startup`, `response`, `run` for every run of this target
    (`parity.targets.tolerances.effective_timeouts` meets them with a scenario's)."""
    expect_problems: tuple[ExpectedProblem, ...] = ()
    """Run problems expected in every scenario this target runs in (they claim a
    problem after the scenario's own entries, and are never stale in one run)."""
    ignores: Mapping[str, str] = field(default_factory=dict)
    """ACP methods the agent does not implement -> why (a version fact: native 0.1.0-rc.8
    ignores `$/cancel_request`). `parity explore` sends none of them to a pair with this
    target and says so; scenarios that send them declare what follows."""
    lacks_tools: Mapping[str, str] = field(default_factory=dict)
    """Built-in tools the agent does not have -> why, by tool or family name (`read_image`,
    `goal`: a family stands for all of its tools; `parity.scenario.families`). A gap of
    this version of the agent, declared: `parity explore --builtin-tools` calls none of
    them on a pair with this target and says so, instead of finding the gap again in
    every example that calls one (docs/explore.md)."""
    dsh: Seek = field(default_factory=Seek)
    """`launcher = "dsh"` only: where this target finds its DSH and which versions it
    runs (`dsh = {env, versions, search}`; two natives side by side, docs/native.md)."""
    known_differences: tuple[Mapping[str, Any], ...] = ()
    """This target's own known differences, as written (`[[targets.X.known_differences]]`,
    entries of docs/known-differences.md without `target`); checked and loaded with the
    project's file (`parity.config.project.Config.known_rules`)."""


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
    "timeouts",
    "expect_problems",
    "ignores",
    "lacks_tools",
    "known_differences",
    "dsh",
}


def parse_target(name: str, table: Mapping[str, Any], source: str) -> TargetSpec:
    """Build a `TargetSpec` from one merged `[targets.<name>]` table; errors name both."""
    where = f"{source}: target {name!r}"
    unknown = table.keys() - _KEYS
    if unknown:
        raise TargetConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    for key, allowed in (
        ("family", FAMILIES),
        ("dialect", DIALECT_NAMES),
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
    try:
        timeouts = parse_timeouts(table.get("timeouts", {}))
        expected = parse_expect_problems(table.get("expect_problems", []), where)
    except TableError as exc:
        raise TargetConfigError(f"{where}: {exc}") from None
    known = table.get("known_differences", [])
    if not isinstance(known, list) or not all(isinstance(k, Mapping) for k in known):
        raise TargetConfigError(
            f"{where}: `known_differences` must be a list of tables "
            "([[targets.NAME.known_differences]], docs/known-differences.md)"
        )
    for i, entry in enumerate(known):
        if "target" in entry or "family" in entry:
            raise TargetConfigError(
                f"{where}: `known_differences[{i}]`: an entry of a target table is that "
                "target's: no `target` or `family`"
            )
    seek = _seek(table.get("dsh", {}), where)
    return TargetSpec(
        name=name,
        family=family,
        dialect=table["dialect"],
        fixture_tools=cast(FixtureTools, table["fixture_tools"]),
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
        timeouts=timeouts,
        expect_problems=expected,
        ignores=_ignores(table.get("ignores", {}), where),
        lacks_tools=_lacks_tools(table.get("lacks_tools", {}), where),
        known_differences=tuple(dict(k) for k in known),
        dsh=seek,
    )


def _seek(value: Any, where: str) -> Seek:
    """`dsh = {env = "PARITY_DSH", versions = ">=0.2.0a0", search = true}`."""
    if not isinstance(value, Mapping) or value.keys() - {"env", "versions", "search"}:
        raise TargetConfigError(
            f"{where}: `dsh` must be a table of env, versions and search, got {value!r}"
        )
    env, versions, search = (
        value.get("env", "PARITY_DSH"),
        value.get("versions", ""),
        value.get("search", True),
    )
    if (
        not isinstance(env, str)
        or not env
        or not isinstance(versions, str)
        or not isinstance(search, bool)
    ):
        raise TargetConfigError(
            f"{where}: `dsh.env` is a variable name, `dsh.versions` PEP 440 specifiers, "
            f"`dsh.search` true or false, got {value!r}"
        )
    try:
        SpecifierSet(versions)
    except InvalidSpecifier:
        raise TargetConfigError(f"{where}: `dsh.versions` {versions!r} is not PEP 440") from None
    return Seek(env=env, versions=versions, search=search)


def _ignores(value: Any, where: str) -> dict[str, str]:
    """`ignores = { "$/cancel_request" = "why" }`: every method with its reason."""
    table = _str_map(value, where, "ignores")
    for method, why in table.items():
        if not method.strip() or not why.strip():
            raise TargetConfigError(
                f"{where}: `ignores` names ACP methods, each with why the agent ignores it; "
                f"got {method!r} = {why!r}"
            )
    return table


def _lacks_tools(value: Any, where: str) -> dict[str, str]:
    """`lacks_tools = { goal = "why", read_image = "why" }`: built-in tool or family
    names (`parity.scenario.families`), each with why the agent lacks it."""
    table = _str_map(value, where, "lacks_tools")
    for name, why in table.items():
        if name not in FAMILY_TOOLS and name not in TOOL_FAMILY:
            raise TargetConfigError(
                f"{where}: `lacks_tools` names built-in tools or their families "
                f"(docs/scenarios.md, builtin_tools); got {name!r}"
            )
        if not why.strip():
            raise TargetConfigError(f"{where}: `lacks_tools` {name!r} needs a reason")
    return table


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
    """The `[targets]` tables shipped in `parity/targets/targets.toml`."""
    text = resources.files("parity.targets").joinpath("targets.toml").read_text(encoding="utf-8")
    return dict(tomllib.loads(text).get("targets", {}))


def declared_targets(project_targets: Any, source: str) -> dict[str, TargetSpec]:
    """The built-in targets merged with a project's `[targets]` tables (project keys win;
    `source` names the project's file in messages)."""
    tables: dict[str, Any] = builtin_tables()
    origin = {name: BUILTIN for name in tables}
    if not isinstance(project_targets, dict):
        raise TargetConfigError(f"{source}: `targets` must be a table of targets")
    for name, table in project_targets.items():
        if not isinstance(table, dict):
            raise TargetConfigError(f"{source}: target {name!r} must be a table")
        merged = merge_tables(tables.get(name, {}), table)
        if "command" in table and "launcher" not in table:
            merged.pop("launcher", None)  # the project's own command replaces a launch kit
        tables[name] = merged
        origin[name] = source
    return {name: parse_target(name, tables[name], origin[name]) for name in tables}


def target_selection(
    value: str | None, specs: Mapping[str, TargetSpec], source: str
) -> tuple[set[str] | None, set[str]]:
    """`--targets a,b,+c` -> (targets whose items run, or None for all; targets added
    with `+`), or `TargetConfigError` naming the unknown ones.

    `+name` alone keeps every scenario's own targets (the reference runs or its
    recording stands in) and adds `name`; plain names select. `parity run`, the pytest
    plugin and `parity review` read the option alike."""
    names = {v.strip() for v in (value or "").split(",") if v.strip()}
    added = {n[1:] for n in names if n.startswith("+")}
    plain = {n for n in names if not n.startswith("+")}
    unknown = sorted((added | plain) - specs.keys())
    if unknown:
        known = ", ".join(sorted(specs))
        raise TargetConfigError(
            f"--targets: unknown target(s) {', '.join(unknown)} (known: {known}; "
            f"declare a target in {source})"
        )
    return (plain | added if plain else None), added


def joins(
    name: str,
    scenario_targets: Sequence[str],
    calls_own_tools: bool,
    specs: Mapping[str, TargetSpec],
) -> bool:
    """Whether `--targets +name` adds target `name` to a scenario: one of the family of
    the scenario's reference (first) target, not already listed, and not a peer scenario
    that calls one agent's own tools (`OWN_TOOLS_SHARED`)."""
    reference = specs.get(scenario_targets[0]) if scenario_targets else None
    if reference is None or name in scenario_targets or name not in specs:
        return False
    if calls_own_tools and not OWN_TOOLS_SHARED.get(reference.family, False):
        return False
    return specs[name].family == reference.family
