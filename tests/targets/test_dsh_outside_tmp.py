"""Native's sandbox gives confined processes a private /tmp and runs native's own
executable inside it (the workflow tool's script runtime): a native installed under /tmp
runs from a copy outside it (`parity.targets.dsh.outside_private_tmp`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from parity.targets.private_tmp import outside_private_tmp

TMP = Path("/tmp").resolve()
# A cache outside /tmp (the checkout itself may be under it, as a CI clone is).
CACHE = Path.home() / ".cache" / f"acp-parity-test-{os.getpid()}"


@pytest.mark.skipif(Path.home().resolve().is_relative_to(TMP), reason="home is under /tmp")
def test_an_executable_under_tmp_runs_from_a_copy_of_its_folder_outside_it(
    tmp_path: Path,
) -> None:
    assert tmp_path.resolve().is_relative_to(TMP)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    exe = runtime / "dsh"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (runtime / "dsh-rg").write_text("rg")
    cache = CACHE
    shutil.rmtree(cache, ignore_errors=True)
    try:
        moved = outside_private_tmp(exe, cache)
        assert moved.name == "dsh" and moved.resolve().is_relative_to(cache.resolve())
        assert (moved.parent / "dsh-rg").read_text() == "rg"  # its runtime folder comes too
        assert moved.stat().st_mode & 0o111
        assert outside_private_tmp(exe, cache) == moved  # copied once
        assert outside_private_tmp(moved, cache) == moved  # outside /tmp: as it is
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_with_no_cache_outside_tmp_the_executable_stays(tmp_path: Path) -> None:
    exe = tmp_path / "dsh"
    exe.write_text("")
    assert outside_private_tmp(exe, tmp_path / "cache") == exe
