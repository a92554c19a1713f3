"""Finding the sandbox backend: bubblewrap on the tool PATH, else Landlock, each checked
once by running it.

Native's Linux chain is bubblewrap, then its Landlock launcher; acp-plus's is the same:
`bwrap` on PATH whose probe builds a profile, else the kernel's Landlock (ABI >=
`landlock_exec.MIN_ABI`) applied by `landlock_exec.py`, whose probe restricts a child
(never the agent). With neither, `bash` refuses to run confined commands, as native does.
Verdicts are cached, so one probe per executable serves a whole process.

`ACP_PLUS_SANDBOX_BACKEND` (read at every call) narrows the chain: `auto` (the default),
`bwrap` or `landlock` (only that one), `none` (no backend: native's refusal).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from acp_plus.core.confine import probe_args

PROBE_TIMEOUT = 5.0
SWITCH = "ACP_PLUS_SANDBOX_BACKEND"
CHOICES = ("auto", "bwrap", "landlock", "none")
LANDLOCK_EXEC = Path(__file__).with_name("landlock_exec.py")


@dataclass(frozen=True)
class Backend:
    """A usable backend: bubblewrap (its path, whether it may create a user namespace),
    or Landlock (the Python that runs `landlock_exec.py`, the kernel's ABI)."""

    executable: str
    userns: bool
    kind: Literal["bwrap", "landlock"] = "bwrap"
    abi: int = 0

    def prefix(self) -> list[str]:
        """The argv that runs the Landlock helper (empty for bubblewrap)."""
        if self.kind == "bwrap":
            return []
        return [self.executable, "-I", "-S", str(LANDLOCK_EXEC)]


def chosen() -> str:
    """The backends `ACP_PLUS_SANDBOX_BACKEND` allows; `ValueError` for an unknown one."""
    value = os.environ.get(SWITCH, "").strip().lower() or "auto"
    if value not in CHOICES:
        raise ValueError(f"{SWITCH}={value!r}: expected one of {', '.join(CHOICES)}")
    return value


def find_backend(path: str | None = None) -> Backend | None:
    """The usable backend for `path` (default: this process's PATH), or None."""
    choice = chosen()
    if choice in ("auto", "bwrap"):
        search = os.environ.get("PATH", "") if path is None else path
        executable = shutil.which("bwrap", path=search)
        found = None if executable is None else _probe(os.path.realpath(executable))
        if found is not None:
            return found
    if choice in ("auto", "landlock") and sys.platform.startswith("linux"):
        return _probe_landlock(sys.executable)
    return None


@cache
def _probe(executable: str) -> Backend | None:
    # Prefer the profile with a user namespace (nested ones refused); a kernel that
    # forbids user namespaces still gets the rest of the profile.
    for userns in (True, False):
        try:
            done = subprocess.run(
                [executable, *probe_args(userns)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            return Backend(executable, userns)
    return None


@cache
def _probe_landlock(python: str) -> Backend | None:
    # A child restricts itself with a full ruleset and reports the ABI: the agent never
    # calls landlock_restrict_self (a domain cannot be left).
    backend = Backend(python, False, "landlock")
    try:
        done = subprocess.run(
            [*backend.prefix(), "--probe"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    abi = done.stdout.strip()
    if done.returncode != 0 or not abi.isdigit():
        return None
    return Backend(python, False, "landlock", int(abi))


__all__ = ["CHOICES", "SWITCH", "Backend", "chosen", "find_backend"]
