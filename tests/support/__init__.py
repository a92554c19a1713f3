"""Helpers the tests share that are not fixtures: a throwaway project (`project`),
scenarios and fixture-agent launches for the driver (`driver`), the fake LLM's clients
(`fakellm`) and hand-built transcripts (`wire`)."""
