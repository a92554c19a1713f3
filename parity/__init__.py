"""acp-parity's harness: scenarios, the fake LLM, targets, the ACP driver, views, checks,
the pytest suite, reports and the `parity` command. parity/ARCHITECTURE.md maps the flow
to the folders and modules."""
