"""How exploration sets Hypothesis up (parity/explore/hypothesis_env.py): its caches out
of the user's project, and no literals of the harness's own source in what it draws."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample
from hypothesis.internal.conjecture import providers

from parity.explore.hypothesis_env import patched, storage_home, without_local_constants

# A literal no random draw of text reaches: only a module's constant pool gives it.
ODD = "qz-odd-7731"  # Hypothesis keeps strings of up to 20 characters


@pytest.fixture
def local_module(tmp_path: Path) -> Iterator[None]:
    """A module outside site-packages and outside any tests folder, holding ODD: the
    kind of module Hypothesis takes local constants from (the harness in a checkout)."""
    path = tmp_path / "harness_like" / "strings.py"
    path.parent.mkdir()
    path.write_text(f"MESSAGE = {ODD!r}\n")
    spec = importlib.util.spec_from_file_location("harness_like_strings", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield
    del sys.modules[spec.name]


def _draws_one_of(local: set[str]) -> bool:
    """Whether text drawn (derandomized: the same draws every time) is ever one of
    `local`, literals of six characters or more that only a local pool holds, which
    random text never is."""
    try:
        find(
            st.text(),
            lambda s: s in local,
            settings=settings(max_examples=3000, database=None, derandomize=True),
        )
    except NoSuchExample:
        return False
    return True


def test_this_hypothesis_has_the_hooks() -> None:
    # The pinned version has them; were they gone, exploration would draw local
    # constants again and this says so, rather than the check below passing vacuously.
    assert patched()


@pytest.mark.usefixtures("local_module")
def test_a_local_modules_literal_is_drawn_outside_and_never_inside_the_block() -> None:
    # The process's local literals as Hypothesis sees them (the harness's own, in a
    # checkout, and the module above).
    # Less Hypothesis's own global pool, which holds some of the same (whitespace runs).
    ours = providers._get_local_constants().strings
    local = {s for s in ours if len(s) >= 6} - set(providers.GLOBAL_CONSTANTS.strings)
    assert ODD in local
    assert _draws_one_of(local)  # Hypothesis's own behaviour: the check below can fail
    with without_local_constants():
        assert not _draws_one_of(local)
    assert _draws_one_of(local)  # and it is Hypothesis's again after


def test_the_caches_go_to_the_users_cache_folder_unless_one_is_named() -> None:
    assert storage_home({"HOME": "/home/u"}) == Path("/home/u/.cache/acp-parity/hypothesis")
    assert storage_home({"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}) == Path(
        "/c/acp-parity/hypothesis"
    )
    assert storage_home({"HYPOTHESIS_STORAGE_DIRECTORY": "/h", "HOME": "/home/u"}) is None
