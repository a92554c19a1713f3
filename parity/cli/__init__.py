"""The `parity` command (`parity.cli.main:main`, the console script).

`main` (arguments and dispatch), `project` (the project's configuration and named
scenarios, for every command), `run` (run and record through pytest), `validate`,
`inspect` (show, diff, calibrate), `review` and `pending` (`parity review`, live or
`--from DIR`), `capture` and `explore`. All but `run` work on the engine
(`parity.engine`) without pytest. The public surface below loads on first use
(`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.cli.main import main

__all__ = ["main"]

__getattr__ = surface(__name__, {"main": "parity.cli.main"})
