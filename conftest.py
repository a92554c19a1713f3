"""Loads the parity pytest plugin, which collects `scenarios/**/*.yaml` as test items."""

import sys
from pathlib import Path

pytest_plugins = ["parity.suite.plugin"]

# tests/plus imports its helper modules by their bare names (`from plus_harness import
# ...`), which pytest's default `prepend` import mode allowed by putting each test
# directory on sys.path. Under `--import-mode=importlib` (pyproject.toml) nothing does,
# so those directories go on the path here.
for _directory in sorted(
    {p.parent for p in (Path(__file__).parent / "tests" / "plus").rglob("*.py")}
):
    if str(_directory) not in sys.path:
        sys.path.append(str(_directory))
