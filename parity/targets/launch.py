"""A target rendered for one run: the `Launch` the driver starts, and whether it can run.

`plan` renders a `TargetSpec`'s templates for one run's directories and fake LLM base
(or asks the native launch kit, `parity.targets.dsh`); the driver (`parity.driver`)
starts exactly what the `Launch` says. Pure except `availability` (looks at PATH and the
file system) and `run_setup` (runs a command).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.scenario.families import FAMILIES
from parity.scenario.model import DEFAULT_CATALOG
from parity.targets import dsh, native_cache
from parity.targets.dsh_rows import DshNotFound
from parity.targets.spec import FixtureTools, TargetSpec

PLACEHOLDERS = (
    "python",
    "repo",
    "peers",
    "llm_base",
    "workdir",
    "home",
    "builtin_tools",
    "builtin_families",
)
"""Names replaced in templates; any other `{...}` is literal (JSON/TOML need no escaping)."""

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class Launch:
    """How to start one agent for one run: what to execute, with which env and files."""

    argv: Sequence[str]
    env: Mapping[str, str]
    """The target's own variables; the driver builds the rest of the agent's environment
    (the allow-listed inherited variables, private HOME, XDG dirs and TMPDIR) around them."""
    cwd: Path | None = None
    """The agent's working directory; None: the run's workdir."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Relative path under the run's home -> content, written before the agent starts."""
    fixture_tools: FixtureTools = "stream"
    """How scenario tools reach the agent: the parity-stream catalog, or an MCP server
    entry the driver appends to `mcpServers` in session/new, load and resume."""
    stamp: Mapping[str, str] = field(default_factory=dict)
    """What the agent is (name, version), copied into the transcript's `agent`."""
    paths: Mapping[str, str] = field(default_factory=dict)
    """Machine paths the agent may print, added to the transcript's masked `paths`."""
    tmp_links: Mapping[str, str] = field(default_factory=dict)
    """Name in the run's TMPDIR -> a directory outside the run it links to (created if
    missing): a cache a tool keeps in its TMPDIR, kept across runs (native's tsx)."""


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
    families: Sequence[str] = FAMILIES,
) -> Launch:
    """Render `spec` for one run.

    `families` are the scenario's built-in tool families (`parity.scenario.families`):
    a DSH-family target offers the model exactly those of its own tools, besides the
    fixture tools (the `{builtin_families}` placeholder, a JSON array of the names;
    `{builtin_tools}`, `true` when there is any; native's composition).

    `env` holds only the target's own variables: the driver builds the rest of the
    agent's environment (allow-listed inherited variables, private HOME, XDG dirs and TMPDIR).
    `catalog` is the scenario's parity-stream catalog (a launcher picks its route there).
    """
    values = static_values(repo) | {
        "llm_base": llm_base.rstrip("/"),
        "workdir": str(workdir),
        "home": str(home),
        "builtin_tools": "true" if families else "false",
        "builtin_families": json.dumps(list(families)),
    }
    env = {k: render(v, values) for k, v in spec.env.items()}
    if spec.launcher == "dsh":
        install = dsh.locate(seek=spec.dsh)
        kit = dsh.launch(
            install,
            llm_base=values["llm_base"],
            home=home,
            catalog=DEFAULT_CATALOG if catalog is None else catalog,
            env=env,
            families=families,
        )
        # What Node and tsx compile is kept across runs (`parity.targets.native_cache`).
        cache_env, links = native_cache.launch_parts(native_cache.compile_cache(os.environ))
        return Launch(
            argv=kit.argv,
            env={**cache_env, **kit.env},
            files=kit.files,
            fixture_tools=spec.fixture_tools,
            stamp=install.stamp(),
            paths=kit.paths,
            tmp_links=links,
        )
    return Launch(
        argv=tuple(render(a, values) for a in spec.command),
        env=env,
        files={render(p, values): render(t, values) for p, t in spec.files.items()},
        fixture_tools=spec.fixture_tools,
    )


def availability(spec: TargetSpec, repo: Path) -> str | None:
    """None when the target can run here, else the exact reason it cannot."""
    if spec.launcher == "dsh":
        try:
            dsh.locate(seek=spec.dsh)
        except DshNotFound as exc:
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


def describe(targets: Mapping[str, TargetSpec], root: Path) -> list[tuple[str, str, str]]:
    """Rows `(name, "available" | "unavailable", detail)` for `parity targets`, sorted."""
    rows = []
    for name in sorted(targets):
        spec = targets[name]
        reason = availability(spec, root)
        detail = reason or f"{spec.family}, {spec.dialect}, tools via {spec.fixture_tools}"
        if reason is None and spec.launcher == "dsh":
            detail += f"; {dsh.locate(seek=spec.dsh).describe()}"
        rows.append((name, "unavailable" if reason else "available", detail))
    return rows
