"""The suite: scenarios x targets as pytest items, the runs behind them, their snapshots.

`plugin` (the pytest plugin object and its options), `state` (the session's state in the
stash), `collect` (scenario files -> items), `items`, `target_item` and `parity_item`,
`snapshots` (the syrupy extension, and what syrupy cannot do for scenario items),
`summary` (the session's end), `runner` (scenario x target -> transcript -> view, with
the session's run cache) and `review` (`parity review`). The public surface below loads
on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.suite.review import review
    from parity.suite.runner import Runner, RunResult

__all__ = [
    "RunResult",
    "Runner",
    "review",
]

__getattr__ = surface(
    __name__,
    {
        "Runner": "parity.suite.runner",
        "RunResult": "parity.suite.runner",
        "review": "parity.suite.review",
    },
)
