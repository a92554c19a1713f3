"""Where a native executable runs from: native's sandbox gives a confined process a
private, empty /tmp and runs native's own executable inside it (the workflow tool's
script runtime), so an executable installed under /tmp runs from a copy outside it
(docs/native.md, "A harness under /tmp")."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from parity.targets.user_cache import user_cache


def outside_private_tmp(exe: Path, cache: Path | None = None) -> Path:
    """`exe`, or where it runs from when it lives under /tmp: a copy of its runtime folder
    (hard links where the filesystem allows) in the user's cache.

    Native's sandbox gives a confined process a private, empty /tmp, and native runs its
    own executable inside it (the workflow tool's script runtime): from a harness
    installed under /tmp (a CI clone there) that executable is gone in the sandbox, and
    every workflow fails with `bwrap: execvp ...: No such file or directory`."""
    tmp = Path("/tmp").resolve()
    real = exe.resolve()
    if not real.is_relative_to(tmp):
        return exe
    base = cache / "acp-parity" if cache else user_cache(os.environ)
    if base.resolve().is_relative_to(tmp):
        return exe  # nowhere outside /tmp to put it
    stat = real.stat()
    target = base / "dsh-runtime" / f"{stat.st_size}-{stat.st_mtime_ns}"
    if not (target / real.name).is_file():
        staging = target.with_name(f"{target.name}.{os.getpid()}.partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(real.parent, staging, copy_function=_link_or_copy, symlinks=True)
        try:
            staging.rename(target)  # atomic: a concurrent worker's copy may have won
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    return target / real.name


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
