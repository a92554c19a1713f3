"""Third-party peer agents: installed on demand into `.cache/peers/<name>`.

A target with an `install` table (`{npm = "package@version"}`) is a peer this module can
install. The package version is pinned in the target declaration, so every machine gets
the agent the snapshots were recorded with. `parity peers install` (`make peers`) is the
only entry point; nothing is installed behind the user's back during a run.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from parity.targets.launch import availability
from parity.targets.spec import TargetSpec


def installable(targets: Mapping[str, TargetSpec]) -> dict[str, TargetSpec]:
    """Targets that declare how to install them, by name."""
    return {name: spec for name, spec in sorted(targets.items()) if spec.install}


def peer_dir(root: Path, name: str) -> Path:
    """Where peer `name` of the project at `root` is installed."""
    return root / ".cache" / "peers" / name


def install_argv(spec: TargetSpec, prefix: Path) -> list[str]:
    """The command that installs `spec` into `prefix` (pure; `ValueError` if unknown)."""
    if "npm" in spec.install:
        return [
            "npm",
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
            spec.install["npm"],
        ]
    raise ValueError(f"target {spec.name!r}: no known installer in {dict(spec.install)}")


Run = Callable[[Sequence[str]], int]


def _run(argv: Sequence[str]) -> int:
    return subprocess.run(list(argv), check=False).returncode


def install(
    targets: Mapping[str, TargetSpec],
    root: Path,
    names: Sequence[str] = (),
    *,
    run: Run = _run,
    echo: Callable[[str], None] = print,
) -> int:
    """Install the named peers (all installable ones when `names` is empty).

    Returns 0 when every requested peer is available afterwards, else 1; each outcome
    is echoed as one line, with the exact reason for a failure.
    """
    peers = installable(targets)
    unknown = [n for n in names if n not in peers]
    if unknown:
        echo(f"not installable: {', '.join(unknown)} (installable: {', '.join(peers) or 'none'})")
        return 1
    wanted = list(names) or list(peers)
    if wanted and shutil.which("npm") is None:
        echo("npm not found on PATH: install Node.js 20 (with npm) to install peer agents")
        return 1
    failed = 0
    for name in wanted:
        spec = peers[name]
        if availability(spec, root) is None:
            echo(f"{name}: already installed ({spec.install.get('npm', '')})")
            continue
        prefix = peer_dir(root, name)
        prefix.mkdir(parents=True, exist_ok=True)
        argv = install_argv(spec, prefix)
        echo(f"{name}: {' '.join(argv)}")
        code = run(argv)
        why = availability(spec, root)
        if code != 0 or why is not None:
            failed += 1
            echo(f"{name}: install failed (exit {code}); still unavailable: {why or 'unknown'}")
        else:
            echo(f"{name}: installed")
    return 1 if failed else 0
