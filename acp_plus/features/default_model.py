"""The default model fallback (docs/contract.md §6.7). Pure.

With `provider`/`model` unset, the reference acp-plus takes its initial route from
DSH's `agent-default-model` service; acp-plus has no such service, so the default is
the first model of the first provider whose catalog lists one, in configuration order
(parity-stream: the catalog's order). It then serves everything an explicit route
would: the image capability of `initialize`, the config options, new sessions, and
resumed sessions whose log holds no route. An explicit configured route always wins.
In the native profile there is no fallback (no route: `configOptions` is `[]`).
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_plus.protocol.model_control import ProviderCatalog, Selection


def default_selection(catalog: Sequence[ProviderCatalog]) -> Selection | None:
    """The first listed model of the first provider that lists one, or None."""
    for provider in catalog:
        if provider.models:
            return Selection(provider.id, provider.models[0].id)
    return None
