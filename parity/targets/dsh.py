"""The DSH launch kit: find a DeepSeek Harness, and launch its native ACP bridge per run.

The `native` target (`launcher = "dsh"` in parity/targets/targets.toml) is resolved here instead
of from a fixed command, because what to run depends on what the user has:

- an installed `dsh` (on PATH, or `PARITY_DSH=/path/to/dsh`): `dsh --profile acp
  --patch <run home>/dsh-patch.yml`, a patch of row edits (docs/contract.md §8.3);
- a DSH source checkout with its dependencies installed (`PARITY_DSH=<checkout root>`,
  `PARITY_NODE=<node>` when the `node` on PATH is older than the checkout needs): the
  checkout's own ACP server bin run from TypeScript source through the checkout's `tsx`,
  with a generated composition that includes the checkout's shipped ACP composition.

Either way the run's configuration disables the real model rows, points the bridge at
the scenario's catalog route, keeps session persistence (uncompressed) in the run's home,
and mounts our own parity-stream plugin (parity/targets/adapters/dsh/parity-stream.mjs) by
absolute path. Everything else is native as shipped: persona, runtime context, tools,
sandbox and approval policy. See docs/native.md.

`locate` and `version` look at the file system and run `--version`; everything else is
pure over plain data.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

PLUGIN = Path(__file__).resolve().parent / "adapters" / "dsh" / "parity-stream.mjs"
"""Our parity-stream plugin, mounted by absolute path into every native run."""

ROOT_PACKAGE = "@deepseek-ai/dsh-root"
"""The `name` in a DSH monorepo checkout's root package.json."""
CHECKOUT_BIN = Path("packages/examples/acp-demo/src/bin.ts")
"""The checkout's ACP stdio server (`dsh-acp-demo`) and the composition it boots."""
CHECKOUT_COMPOSITION = Path("examples/acp-agent/cordis.yml")
ACP_ROWS = ("@deepseek-ai/dsh-acp-demo", "@deepseek-ai/dsh-acp")
"""Plugin names of the row that mounts the ACP bridge: the app row of a checkout's
composition (which owns persistence too), and the bare bridge row of the `acp` profile."""
OFF_ROW_PREFIXES = ("@deepseek-ai/dsh-llm-", "@deepseek-ai/dsh-compaction-")
"""Rows disabled in every run. `dsh-llm-*` rows register real model adapters: only the
fake's routes may exist (a duplicate route would refuse to register). `dsh-compaction-*`
rows summarize history when the context fills: against a scenario's small scripted
context window (1024 tokens by default) native's own prompt would trigger an unscripted
compaction call that eats the next script entry; native's own parity harness mounts no
compaction either (docs/contract.md §7.1)."""

TOOL_ROW_PREFIXES = (
    "@deepseek-ai/dsh-tool-",
    "@deepseek-ai/dsh-bash-",
    "@deepseek-ai/dsh-subagent",
    "@deepseek-ai/dsh-workflow-",
    "@deepseek-ai/dsh-hooks-",
)
"""Rows disabled when a scenario calls no built-in tool: every model-facing tool of the
shipped composition (bash, the fs tools, subagents, workflow, ralph, todo) and the
hook rows that need the bash shell. With them off, native shows the model the same
tools acp-plus does in such a run: only the scenario's fixture tools (docs/native.md,
"The model's view")."""

TOOLS_OFF_CONFIG = {"toolJobs": False, "goals": False, "skills": {"enabled": False}}
"""The ACP app row's own tool switches (job control, goals, skills), off with the rows."""

COMPOSITION_FILE = "dsh-composition.yml"
PATCH_FILE = "dsh-patch.yml"
SESSIONS_DIR = "dsh-sessions"


class DshNotFound(Exception):
    """No usable DSH here; the message says exactly what is missing."""


@dataclass(frozen=True)
class Install:
    """A DSH this machine can run the native target from."""

    layout: Literal["installed", "checkout"]
    path: Path
    """The `dsh` executable, or the checkout root."""
    version: str
    node: str | None = None
    """Checkout only: the Node.js executable that runs it."""
    node_version: str | None = None

    def describe(self) -> str:
        """One line for `parity targets`."""
        if self.layout == "installed":
            return f"DSH {self.version}, installed dsh at {self.path}"
        return f"DSH {self.version}, source checkout at {self.path} (node {self.node_version})"

    def stamp(self) -> dict[str, str]:
        """What recorded native snapshots say they came from."""
        return {"name": "DeepSeek Harness", "version": self.version, "layout": self.layout}


# -- finding DSH ------------------------------------------------------------------------


def _run_version(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DshNotFound(f"`{' '.join(argv)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        raise DshNotFound(f"`{' '.join(argv)}` exited {done.returncode}: {tail[0]}")
    return done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""


def _version_tuple(text: str) -> tuple[int, int, int] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def satisfies(version: str, engines: str) -> bool:
    """Whether `version` meets an npm `engines` range made of `^X.Y.Z`, `>=X.Y.Z` and
    `X.Y.Z` alternatives joined by `||` (what DSH declares). A range in any other form
    cannot be judged here and passes: the checkout's own launch then has the last word."""
    have = _version_tuple(version)
    if have is None:
        return False
    for alternative in (part.strip() for part in engines.split("||")):
        match = re.fullmatch(r"(\^|>=)?v?(\d+)\.(\d+)\.(\d+)", alternative)
        if match is None:
            return True
        op, want = match[1], (int(match[2]), int(match[3]), int(match[4]))
        if op == "^":
            # npm caret: the leftmost non-zero part is fixed (^0.2.0 means >=0.2.0 <0.3.0).
            fixed = 1 if want[0] else 2
            if have[:fixed] == want[:fixed] and have >= want:
                return True
        elif op == ">=":
            if have >= want:
                return True
        elif have == want:
            return True
    return False


def _checkout(root: Path, env: Mapping[str, str]) -> Install:
    try:
        package = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DshNotFound(
            f"{root} is not a DSH checkout: cannot read package.json ({exc})"
        ) from exc
    if not isinstance(package, dict) or package.get("name") != ROOT_PACKAGE:
        raise DshNotFound(f"{root} is not a DSH checkout (package.json name is not {ROOT_PACKAGE})")
    for needed in (CHECKOUT_BIN, CHECKOUT_COMPOSITION):
        if not (root / needed).is_file():
            raise DshNotFound(
                f"DSH checkout {root} has no {needed} (a layout this kit does not know)"
            )
    if not (root / "node_modules" / "tsx" / "package.json").is_file():
        raise DshNotFound(
            f"DSH checkout {root} has no dependencies installed: run `pnpm install` there"
        )
    node = env.get("PARITY_NODE") or shutil.which("node", path=env.get("PATH", ""))
    if not node:
        raise DshNotFound("node not found: put Node.js on PATH or set PARITY_NODE")
    node_version = _cached_version((node, "--version"))
    declared = package.get("engines")
    engines = str(declared.get("node", "")) if isinstance(declared, dict) else ""
    if engines and not satisfies(node_version, engines):
        raise DshNotFound(
            f"node {node_version} at {node} is older than DSH {package.get('version')} needs "
            f"({engines}): set PARITY_NODE to a newer node"
        )
    return Install("checkout", root, str(package.get("version", "unknown")), node, node_version)


@functools.cache
def _cached_version(argv: tuple[str, ...]) -> str:
    return _run_version(argv)


def locate(env: Mapping[str, str] | None = None) -> Install:
    """The DSH named by `PARITY_DSH` (executable or checkout root), else `dsh` on PATH.

    Raises `DshNotFound` saying what is missing."""
    env = os.environ if env is None else env
    named = env.get("PARITY_DSH", "").strip()
    if named:
        path = Path(named).expanduser().resolve()
        if path.is_dir():
            return _checkout(path, env)
        if path.is_file() and os.access(path, os.X_OK):
            return Install("installed", path, _cached_version((str(path), "--version")))
        raise DshNotFound(f"PARITY_DSH={named} is neither a dsh executable nor a DSH checkout")
    found = shutil.which("dsh", path=env.get("PATH", ""))
    if found is None:
        raise DshNotFound(
            "DSH not found: no dsh on PATH and PARITY_DSH is unset "
            "(set it to a dsh executable or a DSH source checkout; see docs/native.md)"
        )
    return Install("installed", Path(found), _cached_version((found, "--version")))


# -- the run's configuration (pure) -----------------------------------------------------


class JsExpr(str):
    """A `!!js` scalar of a cordis composition: kept verbatim, emitted with its tag."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_JS_TAG = "tag:yaml.org,2002:js"
_Loader.add_constructor(_JS_TAG, lambda loader, node: JsExpr(loader.construct_scalar(node)))  # type: ignore[arg-type]
_Dumper.add_representer(JsExpr, lambda dumper, value: dumper.represent_scalar(_JS_TAG, str(value)))


def load_composition(text: str) -> list[dict[str, Any]]:
    """A cordis composition's rows (`!!js` expressions preserved as `JsExpr`)."""
    rows = yaml.load(text, Loader=_Loader)  # a SafeLoader with one extra tag
    if not isinstance(rows, list):
        raise DshNotFound("the DSH composition is not a list of rows")
    return [row for row in rows if isinstance(row, dict)]


def dump_composition(rows: Any) -> str:
    """YAML for a composition or a patch, `!!js` tags intact."""
    return yaml.dump(rows, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def route(catalog: Mapping[str, Any]) -> tuple[str, str]:
    """The (provider, model) a native session uses: the catalog's first provider and its
    first model, the route acp-plus selects from the same catalog."""
    for provider in catalog.get("providers", []):
        models = provider.get("models") or []
        if models:
            return str(provider["id"]), str(models[0]["id"])
    raise DshNotFound("the scenario's catalog declares no provider with a model")


def checkout_composition(
    base_rows: Sequence[Mapping[str, Any]],
    base_path: Path,
    *,
    provider: str,
    model: str,
    sessions: Path,
    plugin: Path = PLUGIN,
    builtin_tools: bool = True,
) -> list[dict[str, Any]]:
    """The composition one checkout run boots: the shipped one included, with its model
    and compaction rows disabled (`OFF_ROW_PREFIXES`), its ACP app row re-pointed, and
    our plugin inserted. Without `builtin_tools`, the tool rows are off too
    (`TOOL_ROW_PREFIXES`, `TOOLS_OFF_CONFIG`).

    A config patch replaces a row's whole config, so the ACP row's shipped config is
    restated with only the route and persistence keys changed (the persona and
    workspace-context settings stay as the checkout ships them)."""
    patches: list[dict[str, Any]] = []
    # A patch names its row by id: rows without one (an `insert` list) cannot be patched.
    base_rows = [row for row in base_rows if isinstance(row.get("id"), str)]
    acp = [row for row in base_rows if row.get("name") in ACP_ROWS]
    if not acp:
        raise DshNotFound(f"{base_path} has no ACP row ({' or '.join(ACP_ROWS)})")
    off = OFF_ROW_PREFIXES if builtin_tools else OFF_ROW_PREFIXES + TOOL_ROW_PREFIXES
    for row in base_rows:
        name = str(row.get("name", ""))
        if name.startswith(off) and not row.get("disabled"):
            patches.append({"id": row["id"], "name": name, "disabled": True})
    for row in acp:
        config = dict(row.get("config") or {}) | {"provider": provider, "model": model}
        if row["name"] == ACP_ROWS[0]:
            config |= {"persistenceRoot": str(sessions), "persistenceCompression": "none"}
            if not builtin_tools:
                config |= TOOLS_OFF_CONFIG
        patches.append({"id": row["id"], "name": row["name"], "config": config})
    patches.append({"insert": [{"id": "parity-stream", "name": str(plugin)}]})
    return [
        {
            "id": "parity-base",
            "name": "@deepseek-ai/cordis-plugin-include",
            "config": {"path": str(base_path), "patches": patches},
        }
    ]


def installed_patch(
    *, provider: str, model: str, sessions: Path, plugin: Path = PLUGIN
) -> list[dict[str, Any]]:
    """The `--patch` file for an installed `dsh --profile acp` (docs/contract.md §8.3):
    the real DeepSeek row off, the bridge row on the fake's route, persistence in the run,
    our plugin inserted. Row ids are the `acp` profile's; see docs/native.md for what is
    confirmed on which DSH version."""
    return [
        {"id": "llm-deepseek", "name": "@deepseek-ai/dsh-llm-deepseek-api-key", "disabled": True},
        {
            "id": "acp",
            "name": "@deepseek-ai/dsh-acp",
            "config": {"provider": provider, "model": model},
        },
        {
            "id": "session-persistence-jsonl",
            "config": {"root": str(sessions), "compression": "none"},
        },
        {"insert": [{"id": "parity-stream", "name": str(plugin)}]},
    ]


@dataclass(frozen=True)
class DshLaunch:
    """What the driver needs for one native run."""

    argv: tuple[str, ...]
    env: dict[str, str]
    files: dict[str, str]
    """Relative path under the run's home -> text."""
    paths: dict[str, str]
    """Machine paths the agent may print (stack traces), masked as `<name>` in views."""


def _tsx_loader(root: Path) -> Path:
    """The checkout's tsx ESM loader (its package `exports["."]`)."""
    package_dir = root / "node_modules" / "tsx"
    package = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    exports = package.get("exports", {})
    entry = exports.get(".") if isinstance(exports, dict) else None
    while isinstance(entry, dict):  # conditional exports nest: {"import": {"default": ...}}
        entry = entry.get("import") or entry.get("default")
    return (package_dir / str(entry or "dist/loader.mjs")).resolve()


def launch(
    install: Install,
    *,
    llm_base: str,
    home: Path,
    catalog: Mapping[str, Any],
    env: Mapping[str, str],
    builtin_tools: bool = True,
) -> DshLaunch:
    """The launch of one native run (reads the checkout's shipped composition).
    `builtin_tools` False shows the model only the scenario's fixture tools."""
    provider, model = route(catalog)
    sessions = home / SESSIONS_DIR
    run_env = {
        "PARITY_STREAM_BASE_URL": llm_base.rstrip("/"),
        "DSH_HOME": str(home / ".dsh"),
        "DSH_AGENTS_HOME": str(home / ".agents"),
        # Native's shipped default, pinned so a user's own DSH_PERMISSION_MODE cannot
        # change what a recorded snapshot means.
        "DSH_PERMISSION_MODE": "workspace-write",
    }
    if install.layout == "checkout":
        # tsx maps the workspace's `@deepseek-ai/*` imports to their TypeScript sources
        # through the checkout's tsconfig; the process itself runs in the run's workdir.
        run_env["TSX_TSCONFIG_PATH"] = str(install.path / "tsconfig.json")
    run_env.update(env)
    argv: tuple[str, ...]
    if install.layout == "installed":
        text = dump_composition(installed_patch(provider=provider, model=model, sessions=sessions))
        argv = (str(install.path), "--profile", "acp", "--patch", str(home / PATCH_FILE))
        return DshLaunch(argv, run_env, {PATCH_FILE: text}, {"dsh": str(install.path.parent)})
    root = install.path
    base_path = root / CHECKOUT_COMPOSITION
    rows = load_composition(base_path.read_text(encoding="utf-8"))
    composition = checkout_composition(
        rows,
        base_path,
        provider=provider,
        model=model,
        sessions=sessions,
        builtin_tools=builtin_tools,
    )
    assert install.node is not None
    argv = (
        install.node,
        "--import",
        _tsx_loader(root).as_uri(),
        str(root / CHECKOUT_BIN),
        "--config",
        str(home / COMPOSITION_FILE),
    )
    files = {COMPOSITION_FILE: dump_composition(composition)}
    return DshLaunch(argv, run_env, files, {"dsh": str(root)})
