"""The acp-plus agent runtime: event log, model loop, providers, tools, sandbox, approvals.

Public entry points: `store.SessionStore`, `agent.Agent` / `agent.Route`,
`llm.Router` with `llm.parity_stream.ParityStreamProvider` and
`llm.openai_chat.OpenAIChatProvider`, `tools.ToolRegistry`, `approvals.ApprovalChain`.
Submodules are imported on use so that starting the server stays fast.
"""
