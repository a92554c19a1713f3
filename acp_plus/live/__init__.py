"""What a connection holds live: each session's prompt slot and output queue
(`sessions`), and what all sessions share, built once (`runtime`).

Imports the configuration, the ACP rules, the wire and the core; the increments and the
method table sit above it.
"""
