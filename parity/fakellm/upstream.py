"""The recording mode's one I/O part: send an agent's model call to a real provider.

`Upstream` is what `parity capture` (docs/capture.md) gives the fake LLM for a run: the
provider's base URL, its dialect, the model to ask for and the API key. The key lives
here only: the agent keeps talking to the fake with the fake's own key, so nothing the
agent writes, logs or prints can hold the real one.

A request in the provider's own dialect is forwarded as the agent wrote it (only the
model is replaced); any other dialect (parity-stream from the DSH family, say) is first
reduced to the canonical request and rebuilt in the provider's dialect
(`upstream_request`). The provider's whole answer comes back as bytes, which
`upstream_answer` turns into an `llm` entry. Plain aiohttp, not the vendors' SDKs: the
agent's body must reach the provider field for field (DeepSeek's `thinking`, an SDK's
newer options), which the SDKs' typed `create()` calls would rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from parity.fakellm.dialects import canonical_request, capture_of, parse_answer, upstream_body


class UpstreamError(Exception):
    """The provider could not be reached (no HTTP answer at all)."""


@dataclass(frozen=True)
class Upstream:
    """One provider a recording run forwards its model calls to."""

    base_url: str
    dialect: str
    model: str
    api_key: str
    timeout: float = 600.0

    def __post_init__(self) -> None:
        capture_of(self.dialect)  # a ValueError for a dialect no recording can talk to

    def request(
        self, agent_dialect: str, path: str, body: Any, headers: Mapping[str, str]
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        """(url, body, headers) of the provider call standing for an agent's call."""
        if agent_dialect == self.dialect and isinstance(body, Mapping):
            out = {**body, "model": self.model}
        else:
            canonical = dict(canonical_request(path, body) or {})
            # The effort comes from the fake's catalog (its mock model's default), not from
            # the user; a provider's model without efforts would refuse the field.
            canonical.pop("reasoningEffort", None)
            out = upstream_body(self.dialect, canonical, model=self.model)
        capture = capture_of(self.dialect)
        sent = {"content-type": "application/json", **capture.headers(self.api_key)}
        if agent_dialect == self.dialect:
            for name in capture.forwarded:
                if name in headers:
                    sent[name] = headers[name]
        return self.base_url.rstrip("/") + capture.path, out, sent

    async def answer(
        self, agent_dialect: str, path: str, body: Any, headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """The provider's answer to an agent's model call, as an `llm` entry (a provider
        error becomes an `error` entry; only an unreachable provider raises)."""
        url, payload, sent = self.request(agent_dialect, path, body, headers)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as http,
                http.post(url, json=payload, headers=sent) as response,
            ):
                raw = await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamError(f"{url}: {type(exc).__name__}: {exc}") from None
        return parse_answer(self.dialect, status, raw)
