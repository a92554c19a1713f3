"""How exploration sets Hypothesis up: where it keeps its caches, and no "local constants".

**Storage.** Hypothesis keeps what it computes once (the Unicode character map its text
strategies draw from, some 7 s of CPU) in `.hypothesis/` under the current directory: a
folder in the user's project, computed again in every new one. `parity explore` keeps it
in `$XDG_CACHE_HOME/acp-parity/hypothesis` (`~/.cache/...`) instead, once per machine,
unless `HYPOTHESIS_STORAGE_DIRECTORY` names a place. The example database is not there:
the engine keeps its own per pair (`.cache/explore/<A>~<B>/`).

**Local constants.**
Hypothesis (6.131 on) sometimes draws a literal found in the source of the process's
own modules that are not installed packages: here `parity` and `acp_plus` themselves in
an editable checkout, nothing in an installed wheel. For `parity explore` that is wrong
twice over: the code under test is the agents, in their own processes, not the harness;
and a seed would draw other scenarios in a checkout than from a wheel, and other ones
after any edit to a string anywhere in the harness (Hypothesis also kept a cache of them,
`.hypothesis/constants/`, in the user's project). So exploration draws with an empty
local pool: a seed then draws the same examples wherever the harness is installed from.

There is no setting for this; the hook is the provider module's `_get_local_constants`,
which the default provider calls by name, and its `CONSTANTS_CACHE` of the pools per
kind of draw, emptied on the way in and out so no pool crosses the boundary (tests of
this project draw in the same process). Where a Hypothesis version lacks them, nothing
is patched and exploration still runs (`patched()` says which).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.internal.conjecture import providers

from parity.targets.user_cache import user_cache

_HOOK = "_get_local_constants"
_CACHE = "CONSTANTS_CACHE"


def patched() -> bool:
    """Whether this Hypothesis has the hooks `without_local_constants` replaces."""
    cache = getattr(getattr(providers, _CACHE, None), "cache", None)
    return callable(getattr(providers, _HOOK, None)) and hasattr(cache, "clear")


def _forget_pools() -> None:
    getattr(providers, _CACHE).cache.clear()


def _empty() -> Any:
    # The same type Hypothesis builds its own empty pool with.
    constants = type(providers._local_constants)
    return constants()


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Draw with no local constants for the duration of the block."""
    if not patched():
        yield
        return
    original = getattr(providers, _HOOK)
    empty = _empty()
    setattr(providers, _HOOK, lambda *_args, **_kwargs: empty)
    _forget_pools()
    try:
        yield
    finally:
        setattr(providers, _HOOK, original)
        _forget_pools()


def storage_home(env: Mapping[str, str]) -> Path | None:
    """Where Hypothesis keeps its caches during exploration; None where the user named
    one (`HYPOTHESIS_STORAGE_DIRECTORY`, which Hypothesis reads itself)."""
    if env.get("HYPOTHESIS_STORAGE_DIRECTORY", "").strip():
        return None
    return user_cache(env) / "hypothesis"


def use_storage(env: Mapping[str, str]) -> None:
    """Point Hypothesis at `storage_home(env)` for the rest of the process."""
    home = storage_home(env)
    if home is not None:
        set_hypothesis_home_dir(home)
