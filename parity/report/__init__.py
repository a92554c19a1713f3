"""Reports: a session's outcomes and diff records -> the summary, HTML, JUnit and JSON.

`outcome` (one item's result), `ledger` (the session's typed record: each item's
record, what the session collected; shards' ledgers merged), `session_summary` (the
summary's lines of a ledger), `text` (the summary's notes and failure texts),
`matrix` (the summary table) and `groups` (identical changes), `collected` (what the
plugin gathers while items run) and `results` (the session's data and the writers),
`html` with `html_page` and `html_scenario` (the static report), `junit`. Everything is
pure over plain data.
"""
