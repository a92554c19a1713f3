"""The ACP rules, as pure functions: request parameters, prompt content, `mcpServers`,
`configOptions`, the `session/list` cursor, stop reasons, and the projection of committed
core events into `session/update` payloads.

They import the JSON-RPC wire (`wire/`, for the error shapes) and the core (events, JS
JSON); the core never imports them.
"""
