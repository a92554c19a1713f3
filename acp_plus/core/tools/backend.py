"""Finding the sandbox backend: bubblewrap on the tool PATH, checked once by running it.

Native's Linux chain is bubblewrap, then its Landlock launcher; acp-plus has bubblewrap
only (docs/contract-notes.md, "The bash sandbox", says why). A `bwrap` that is missing,
or present but unable to build a profile here (no user namespaces, a seccomp policy that
forbids mounts), is no backend: `bash` then refuses to run confined commands, as native
does. The verdict is cached per executable, so one probe serves a whole process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

from acp_plus.core.confine import probe_args

PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Backend:
    """A usable bubblewrap: its path, and whether it may create a user namespace."""

    executable: str
    userns: bool


def find_backend(path: str | None = None) -> Backend | None:
    """The usable bubblewrap on `path` (default: this process's PATH), or None."""
    executable = shutil.which("bwrap", path=os.environ.get("PATH", "") if path is None else path)
    return None if executable is None else _probe(os.path.realpath(executable))


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


__all__ = ["Backend", "find_backend"]
