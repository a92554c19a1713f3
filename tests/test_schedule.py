"""`make test`'s distribution over xdist workers (`tests.support.schedule`)."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.schedule import SLOW_FIRST, grouped_modules, rank, scope

ROOT = Path(__file__).resolve().parents[1]


def test_a_scenarios_items_are_one_unit() -> None:
    for item in ("native", "parity[plus~native]", "plus"):
        nodeid = f"scenarios/baseline/handshake.yaml::{item}"
        assert scope(nodeid, frozenset()) == "scenarios/baseline/handshake.yaml"


def test_a_modules_tests_are_one_unit_only_when_it_shares_a_fixture() -> None:
    nodeid = "tests/suite/test_run_problems.py::test_each_problem_fails_its_item[timeout]"
    assert scope(nodeid, frozenset({"tests/suite/test_run_problems.py"})) == (
        "tests/suite/test_run_problems.py"
    )
    assert scope(nodeid, frozenset({"tests/suite/test_shards.py"})) == nodeid


def test_the_modules_with_a_module_or_class_fixture_are_found(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    files = {
        "test_a.py": '@pytest.fixture(scope="module")\ndef f(): ...\n',
        "test_b.py": '@pytest.fixture(autouse=True, scope="class")\ndef f(): ...\n',
        "test_c.py": '@pytest.fixture(scope="session")\ndef f(): ...\n@pytest.fixture\n',
    }
    for name, text in files.items():
        (tmp_path / "tests" / name).write_text(text)
    found = grouped_modules(tmp_path, sorted((tmp_path / "tests").glob("*.py")))
    assert found == {"tests/test_a.py", "tests/test_b.py"}
    shipped = grouped_modules(ROOT, (ROOT / "tests").rglob("test_*.py"))
    assert {"tests/suite/test_run_problems.py", "tests/explore/test_mutants.py"} <= shipped
    assert "tests/plus/test_main.py" not in shipped


def test_subprocess_heavy_tests_rank_before_unit_tests() -> None:
    order = [
        "tests/plus/test_main.py::test_version",
        "scenarios/baseline/handshake.yaml::native",
        "tests/suite/test_plugin.py::test_x",
        "tests/fakellm/test_script.py::test_y",
    ]
    ranked = sorted(order, key=rank)
    assert ranked[:2] == [order[2], order[1]]
    assert rank(order[0]) == rank(order[3]) == len(SLOW_FIRST)


@pytest.mark.parametrize("prefix", SLOW_FIRST)
def test_every_prefix_names_a_folder_of_the_suite(prefix: str) -> None:
    assert (ROOT / prefix).is_dir()


def test_a_module_fixture_is_computed_once_on_two_workers(tmp_path: Path) -> None:
    """A child pytest on two workers with `--dist loadgroup` and this repository's
    conftest: four tests of one module share one module-scoped fixture, which counts
    its computations in a file. Under plain `--dist load` it counted 2."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    count = tmp_path / "count"
    (tests / "test_shared.py").write_text(
        "import pytest, time\n"
        '@pytest.fixture(scope="module")\n'
        "def shared():\n"
        f"    with open({str(count)!r}, 'a') as f:\n"
        "        f.write('x')\n"
        "    time.sleep(0.5)\n"
        "@pytest.mark.parametrize('n', range(4))\n"
        "def test_one(shared, n):\n"
        "    time.sleep(0.2)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", "/dev/null",
         str(tests)],
        cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert count.read_text() == "x"


def test_what_collection_built_is_frozen_for_the_collector() -> None:
    """tests/conftest.py freezes it once collection ends (docs/performance.md)."""
    assert gc.get_freeze_count() > 1000
