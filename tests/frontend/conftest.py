"""Fixtures for the front end's tests (helpers in `project.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontend.project import GHOST, TEXT_SCENARIO, Project, mini_target


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with targets mini and mini-b (same agent) and ghost (never available),
    and one scenario `demo/text`."""
    proj = Project(tmp_path / "proj")
    proj.write("parity.toml", mini_target("mini") + mini_target("mini-b") + GHOST)
    proj.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    return proj
