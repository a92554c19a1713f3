"""Reports: a session's outcomes and diff records -> the summary, HTML, JUnit and JSON.

`outcome` (one item's result), `ledger` (the session's typed record: each item's
record, what the session collected; shards' ledgers merged), `session_summary` (the
summary's lines of a ledger), `text` (the summary's notes and failure texts),
`matrix` (the summary table) and `groups` (identical changes), `collected` (what the
plugin gathers while items run) and `results` (the session's data and the writers),
`html` with `html_page` and `html_scenario` (the static report), `junit`. Everything is
pure over plain data. The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.report.collected import Collected
    from parity.report.matrix import summary_table
    from parity.report.outcome import Outcome
    from parity.report.results import session_data, write_outputs

__all__ = [
    "Collected",
    "Outcome",
    "session_data",
    "summary_table",
    "write_outputs",
]

__getattr__ = surface(
    __name__,
    {
        "Collected": "parity.report.collected",
        "summary_table": "parity.report.matrix",
        "Outcome": "parity.report.outcome",
        "session_data": "parity.report.results",
        "write_outputs": "parity.report.results",
    },
)
