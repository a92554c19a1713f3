"""The acp-plus agent runtime: event log, model loop, providers, tools, sandbox, approvals.

Entry points (import the submodules; nothing is imported here, so startup stays fast):

- `store.SessionStore(home)` -> `SessionLog` (durable JSONL event logs)
- `agent.Agent(log, router, tools, approvals, cwd, on_event)` with `run_turn(content,
  route)`, `cancel()`, `steer()`, `used_tokens()`, `settle_interrupted()`,
  `record_route()`; `agent.Route(provider, model, effort, explicit_effort)`
- `llm.base.Router([...])` over `llm.parity_stream.ParityStreamProvider(base_url)` and
  `llm.openai_chat.OpenAIChatProvider(OpenAIChatConfig(...))`
- `tools.session_tools(fixture_host=..., mcp=..., builtin_tools=...)` -> `ToolRegistry`;
  `tools.mcp.start_servers(specs)` and `tools.mcp.prewarm()`
- `approvals.ApprovalChain([responders])`; `sandbox` decisions; `history` readings
"""
