"""Reports: a session's outcomes and diff records -> the summary, HTML, JUnit and JSON.

`outcome` (one item's result), `text` (the summary's notes and failure texts),
`matrix` (the summary table) and `groups` (identical changes), `collected` (what the
plugin gathers while items run) and `results` (the session's data and the writers),
`html` with `html_page` and `html_scenario` (the static report), `junit`. Everything is
pure over plain data.
"""
