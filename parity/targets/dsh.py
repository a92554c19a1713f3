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

`locate` and `version` look at the file system and run `--version`; the rest is pure.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from parity.scenario.families import FAMILIES
from parity.targets.dsh_rows import (
    PLUGIN,
    DshNotFound,
    checkout_composition,
    dump_composition,
    load_composition,
    row_patches,
)
from parity.targets.private_tmp import outside_private_tmp

ROOT_PACKAGE = "@deepseek-ai/dsh-root"
"""The `name` in a DSH monorepo checkout's root package.json."""
CHECKOUT_BIN = Path("packages/examples/acp-demo/src/bin.ts")
"""The checkout's ACP stdio server (`dsh-acp-demo`) and the composition it boots."""
CHECKOUT_COMPOSITION = Path("examples/acp-agent/cordis.yml")
RUNTIME_PACKAGE = "deepseek_harness_runtime"
"""The import package of the registry wheel `deepseek-harness-runtime-bin` (DSH's own
Python SDK runtime), which carries DSH as one executable; the `native` extra installs it."""

COMPOSITION_FILE = "dsh-composition.yml"
PATCH_FILE = "dsh-patch.yml"
SESSIONS_DIR = "dsh-sessions"


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
    # 0.2.x's `dsh` refuses to start, even for --version, without an explicit DSH_HOME;
    # an empty throwaway one keeps a user's own ~/.dsh out of the answer.
    with tempfile.TemporaryDirectory(prefix="parity-dsh-version-") as home:
        return _run_version_in(argv, {**os.environ, "DSH_HOME": home})


def _run_version_in(argv: Sequence[str], env: Mapping[str, str]) -> str:
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=30, check=False, env=dict(env)
        )
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


@dataclass(frozen=True)
class Seek:
    """Where one DSH-family target finds its DSH, and which versions it runs
    (`dsh = {env, versions, search}` in its target table, docs/native.md)."""

    env: str = "PARITY_DSH"
    """The variable naming a dsh executable or a DSH source checkout."""
    versions: str = ""
    """PEP 440 specifiers the DSH found must satisfy ("" takes any version)."""
    search: bool = True
    """Without the variable, also look in this Python's `deepseek-harness-runtime-bin`
    package, then for `dsh` on PATH."""


def dsh_version(text: str) -> Version:
    """DSH's `--version` text (`0.2.1-rc.2`) as a PEP 440 version (`0.2.1rc2`)."""
    try:
        return Version(text.strip().removeprefix("v"))
    except InvalidVersion:
        raise DshNotFound(f"`--version` printed {text.strip()[:80]!r}, not a DSH version") from None


def _in_versions(install: Install, seek: Seek) -> Install:
    version = dsh_version(install.version)
    if seek.versions:
        try:
            wanted = SpecifierSet(seek.versions, prereleases=True)
        except InvalidSpecifier:
            raise DshNotFound(
                f"the target's dsh.versions {seek.versions!r} is not PEP 440"
            ) from None
        if version not in wanted:
            raise DshNotFound(
                f"{install.describe()} is not a version this target runs ({seek.versions}); "
                "docs/native.md says which target runs which DSH"
            )
    return install


def _packaged(env: Mapping[str, str]) -> Install | None:
    """This Python's `deepseek-harness-runtime-bin` executable (None: not installed); its
    lookup's error (no wheel for the platform, a broken install) is why it cannot run."""
    import importlib
    import importlib.util

    if importlib.util.find_spec(RUNTIME_PACKAGE) is None:
        return None
    runtime = importlib.import_module(RUNTIME_PACKAGE)
    try:
        exe = Path(runtime.bundled_runtime_path())
    except (OSError, ValueError) as exc:
        raise DshNotFound(f"deepseek-harness-runtime-bin cannot run here: {exc}") from None
    if not os.access(exe, os.X_OK):
        raise DshNotFound(f"deepseek-harness-runtime-bin's executable {exe} is not executable")
    exe = outside_private_tmp(exe)
    return Install("installed", exe, _cached_version((str(exe), "--version")))


def locate(env: Mapping[str, str] | None = None, seek: Seek = Seek()) -> Install:
    """The DSH `seek` names: its variable (executable or checkout root), else (with
    `seek.search`) the registry wheel installed beside the harness, else `dsh` on PATH;
    it must be one of `seek.versions`. Raises `DshNotFound` saying what is missing."""
    env = os.environ if env is None else env
    return _in_versions(_find(env, seek), seek)


def _find(env: Mapping[str, str], seek: Seek) -> Install:
    named = env.get(seek.env, "").strip()
    if named == "off":
        raise DshNotFound(
            f"{seek.env}=off: this target does not run here (its recordings stand in)"
        )
    if named:
        path = Path(named).expanduser().resolve()
        if path.is_dir():
            return _checkout(path, env)
        if path.is_file() and os.access(path, os.X_OK):
            return Install("installed", path, _cached_version((str(path), "--version")))
        raise DshNotFound(f"{seek.env}={named} is neither a dsh executable nor a DSH checkout")
    if not seek.search:
        raise DshNotFound(
            f"{seek.env} is unset: set it to a DSH {seek.versions or ''} executable or source "
            "checkout (docs/native.md)"
        )
    packaged = _packaged(env)
    if packaged is not None:
        return packaged
    found = shutil.which("dsh", path=env.get("PATH", ""))
    if found is None:
        raise DshNotFound(
            f"DSH not found: {seek.env} is unset, deepseek-harness-runtime-bin is not "
            "installed in this Python (`make native`, or pip install 'acp-parity[native]'), "
            "and there is no dsh on PATH (docs/native.md)"
        )
    return Install("installed", Path(found), _cached_version((found, "--version")))


@functools.cache
def profile_rows(exe: Path) -> tuple[dict[str, Any], ...]:
    """The rows an installed dsh's `acp` profile mounts (`--profile acp --dump-config`,
    in a throwaway DSH_HOME so no user layer is read); once per executable and process."""
    with tempfile.TemporaryDirectory(prefix="parity-dsh-config-") as home:
        argv = [str(exe), "--profile", "acp", "--dump-config"]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                env={**os.environ, "DSH_HOME": home},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DshNotFound(f"`{' '.join(argv)}` failed: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        raise DshNotFound(f"`{' '.join(argv)}` exited {done.returncode}: {tail[0]}")
    try:
        return tuple(load_composition(done.stdout))
    except DshNotFound as exc:
        raise DshNotFound(f"`{' '.join(argv)}`: {exc}") from None


def route(catalog: Mapping[str, Any]) -> tuple[str, str]:
    """The (provider, model) a native session uses: the catalog's first provider and its
    first model, the route acp-plus selects from the same catalog."""
    for provider in catalog.get("providers", []):
        models = provider.get("models") or []
        if models:
            return str(provider["id"]), str(models[0]["id"])
    raise DshNotFound("the scenario's catalog declares no provider with a model")


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
    families: Collection[str] = FAMILIES,
) -> DshLaunch:
    """The launch of one native run (reads the shipped composition: a checkout's file,
    or what an installed dsh's `acp` profile prints). Only the rows of the built-in tool
    `families` make tools; none shows the model only the scenario's fixture tools."""
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
        patch = row_patches(
            profile_rows(install.path),
            provider=provider,
            model=model,
            sessions=sessions,
            plugin=PLUGIN,
            families=families,
            catalog=catalog,
        )
        text = dump_composition(patch)
        argv = (str(install.path), "--profile", "acp", "--patch", str(home / PATCH_FILE))
        return DshLaunch(argv, run_env, {PATCH_FILE: text}, {"dsh": str(install.path.parent)})
    root = install.path
    base_path = root / CHECKOUT_COMPOSITION
    try:
        rows = load_composition(base_path.read_text(encoding="utf-8"))
        composition = checkout_composition(
            rows,
            base_path,
            provider=provider,
            model=model,
            sessions=sessions,
            plugin=PLUGIN,
            families=families,
            catalog=catalog,
        )
    except DshNotFound as exc:
        raise DshNotFound(f"{base_path}: {exc}") from None
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
