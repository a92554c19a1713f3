"""The engine: a scenario run against a target, without pytest.

`runner` (scenario x target -> transcript -> normalized view and conformance findings,
with an optional run cache shared between processes) and `store` (the snapshot files:
layout, reads, writes, deletes, pending snapshots). The pytest plugin (`parity.suite`),
the commands (`parity.cli`), capture and explore are its clients; nothing here imports
pytest or syrupy. The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.engine.runner import Runner, RunResult

__all__ = [
    "RunResult",
    "Runner",
]

__getattr__ = surface(
    __name__,
    {
        "Runner": "parity.engine.runner",
        "RunResult": "parity.engine.runner",
    },
)
