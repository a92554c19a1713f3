"""The user's cache folder for acp-parity: `$XDG_CACHE_HOME/acp-parity`, else
`~/.cache/acp-parity`. What is kept there is kept across runs, projects and harnesses:
native's compiled code (`native_cache`), native's runtime outside /tmp (`private_tmp`),
Hypothesis's computed maps (`explore/hypothesis_env`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def user_cache(env: Mapping[str, str]) -> Path:
    """The folder, from the environment `env` (pure)."""
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path(env.get("HOME", "~"), ".cache"))
    return Path(base).expanduser() / "acp-parity"
