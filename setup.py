"""The wheel carries the suites `parity run --suite NAME` runs (parity/config/suites.py).

Their files stay where this repository runs them (`scenarios/peers/`, the reference
agents' recordings under `snapshots/peers/`, `known-differences.yaml`), one source for
both; building a wheel copies them into `parity/suites/<name>/` of the built package.
Everything else is declared in pyproject.toml. An editable install copies nothing: it
runs from the checkout, where parity/config/suites.py finds the files in place.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SUITES = {"acp": ("peers",)}
"""parity.config.suites.SUITES (not imported: the build runs without the package's
dependencies); tests/suite/test_installed_wheel.py checks that the two agree."""
SCHEMA_HERE = "$schema=../../parity/schema/scenario.schema.json"
SCHEMA_THERE = "$schema=../../../../schema/scenario.schema.json"


class BuildWithSuites(build_py):  # type: ignore[misc]
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name, folders in SUITES.items():
            dest = Path(self.build_lib) / "parity" / "suites" / name
            for folder in folders:
                for part in ("scenarios", "snapshots"):
                    source = HERE / part / folder
                    if not source.is_dir():
                        raise SystemExit(f"setup.py: suite {name!r} needs {source}")
                    shutil.copytree(source, dest / part / folder, dirs_exist_ok=True)
            shutil.copy2(HERE / "known-differences.yaml", dest / "known-differences.yaml")
            # Each scenario's `$schema` comment points at parity/schema/ from where the
            # file sits; in the package it sits four folders below parity/.
            for scenario in (dest / "scenarios").rglob("*.yaml"):
                text = scenario.read_text(encoding="utf-8")
                scenario.write_text(text.replace(SCHEMA_HERE, SCHEMA_THERE), encoding="utf-8")


setup(cmdclass={"build_py": BuildWithSuites})
