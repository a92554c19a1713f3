"""The `parity` command (`parity.cli.main:main`, the console script).

`main` (arguments and dispatch), `project` (the project's configuration and named
scenarios, for every command), `run` (run and record through pytest), `validate`, and
`inspect` (show, diff, calibrate). The public surface below loads on first use
(`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.cli.main import main

__all__ = ["main"]

__getattr__ = surface(__name__, {"main": "parity.cli.main"})
