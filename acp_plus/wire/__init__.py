"""JSON-RPC 2.0 over NDJSON: frames, the connection, and the error shapes (§1.0).

Knows nothing of ACP's methods; imports only the core's JS JSON helpers.
"""
