"""Reports: a session's outcomes and diff records -> the summary, HTML, JUnit and JSON.

`outcome` (one item's result), `text` (the summary's notes and failure texts),
`matrix` (the summary table) and `groups` (identical changes), `collected` (what the
plugin gathers while items run) and `results` (the session's data and the writers),
`html` with `html_page` and `html_scenario` (the static report), `junit`. Everything is
pure over plain data. The package's public surface is below; harness code imports each
name from the module that defines it.
"""

from parity.report.collected import Collected
from parity.report.matrix import summary_table
from parity.report.outcome import Outcome
from parity.report.results import session_data, write_outputs

__all__ = ["Collected", "Outcome", "session_data", "summary_table", "write_outputs"]
