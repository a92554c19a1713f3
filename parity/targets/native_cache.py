"""The native launch kit's compile cache: what Node and tsx compile, kept across runs.

A native run from a DSH checkout runs its TypeScript sources through tsx, which
transforms each file on first import and keeps the result in `os.tmpdir()/tsx-<uid>`;
Node can keep its own code cache too (`NODE_COMPILE_CACHE`). Each run gets a fresh
HOME and TMPDIR, so both were lost after every run and each native run paid the whole
transform again (docs/performance.md, "Native start-up"). Here both live in one
directory outside every run and the repository; a run links tsx's cache name in its
TMPDIR to it (`Launch.tmp_links`), and the agent's TMPDIR stays its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from parity.targets.user_cache import user_cache

CACHE_OFF = ("0", "off", "false", "no")


def compile_cache(env: Mapping[str, str]) -> Path | None:
    """Where native runs keep what Node and tsx compile, across runs and harnesses:
    `$PARITY_NATIVE_CACHE`, else `$XDG_CACHE_HOME/acp-parity/native` (`~/.cache/...`);
    outside every run directory and the repository. None when `PARITY_NATIVE_CACHE`
    is `off` (each run then compiles afresh, as before; the start-up bench compares).

    Each run has its own HOME and TMPDIR, and tsx keeps its transform cache in
    `os.tmpdir()/tsx-<uid>`: without this, every native run transformed DSH's
    TypeScript sources anew. Both caches are keyed by their content (tsx: the source
    and its options; Node: the code and its own version), so a changed checkout or
    Node misses instead of reusing stale code."""
    named = env.get("PARITY_NATIVE_CACHE", "").strip()
    if named.lower() in CACHE_OFF:
        return None
    if named:
        return Path(named)
    return user_cache(env) / "native"


def launch_parts(cache: Path | None) -> tuple[dict[str, str], dict[str, str]]:
    """The run's variables and TMPDIR links that keep compiled code in `cache` (pure)."""
    if cache is None:
        return {}, {}
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    # tsx names its cache after the effective uid (its temporary-directory module).
    return {"NODE_COMPILE_CACHE": str(cache / "node")}, {f"tsx-{uid}": str(cache / "tsx")}
