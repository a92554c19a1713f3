"""Model providers. Each yields parity-stream `StreamChunk` dicts (§8.1), the one chunk format."""

from acp_plus.core.llm.base import (
    ModelInfo,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderInfo,
    ReasoningInfo,
    Router,
    error_finish,
)

__all__ = [
    "ModelInfo",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "ProviderInfo",
    "ReasoningInfo",
    "Router",
    "error_finish",
]
