"""A wheel of this project, installed in a fresh venv, for the tests that use the harness
the way a user of another agent's repository does (`pip install <wheel>`).

Fast on purpose: the wheel is built without build isolation (the dev venv has the
setuptools it needs, so nothing is downloaded) from a copy of what the build reads (so
no `build/` appears in the checkout), and installed `--no-deps` into a venv without pip,
whose dependencies are this venv's site-packages, appended by a `.pth` file: the wheel's
own `parity` comes first, and this checkout is never on its path (the editable install's
finder lives in a `.pth` of this venv, which an appended path does not run).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_INPUTS = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "known-differences.yaml",
    "parity",
    "acp_plus",
    "scenarios/peers",
    "snapshots/peers",
)
"""What the build reads (setup.py copies the suites' files in)."""
PIP = (sys.executable, "-m", "pip")
QUIET = ("-q", "--no-deps", "--no-index")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def site_packages(self) -> Path:
        (path,) = (self.venv / "lib").glob("python3.*/site-packages")
        return path


def build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in BUILD_INPUTS:
        source, dest = ROOT / part, src / part
        if source.is_dir():
            shutil.copytree(source, dest, ignore=ignore)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    dist = tmp / "dist"
    subprocess.run(
        [*PIP, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (wheel,) = dist.glob("acp_parity-*.whl")
    return wheel


def install_wheel(wheel: Path, venv: Path) -> Installed:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = Installed(wheel, venv)
    subprocess.run(
        [*PIP, "--python", str(venv / "bin" / "python"), "install", *QUIET, str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    deps = sysconfig.get_paths()["purelib"]
    (installed.site_packages / "zz-dev-venv-deps.pth").write_text(deps + "\n")
    return installed
