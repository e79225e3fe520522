"""Provider registry: ``get_provider(config)`` builds the back end a JudgeConfig names.

Provider modules (and their client libraries) are imported only when used, so replay needs none of them.
``batches`` holds what a provider's batch API offers; ``openai_compat`` and ``anthropic_provider`` each own
their adapter to it (``recjudge.llm.batch`` drives them).
"""

from __future__ import annotations

import threading
from typing import Any

from ..config import JudgeConfig
from .base import Completion, Message, Provider, ProviderError, TransientProviderError

PROVIDER_NAMES = ("openai", "anthropic", "local", "recorded")

_local_cache: dict[str, Any] = {}
_local_lock = threading.Lock()


def get_provider(config: JudgeConfig, *, timeout: float | None = None) -> Provider:
    """A provider instance for ``config.provider``.

    Local models are loaded once per process and model (loading weights is slow); the others are cheap to build.
    timeout: per-request seconds for HTTP providers (default: env RECJUDGE_LLM_TIMEOUT, else 60).
    """
    name = config.provider
    if name == "openai":
        from .openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(base_url=config.base_url, timeout=timeout)
    if name == "anthropic":
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider(base_url=config.base_url, timeout=timeout)
    if name == "local":
        with _local_lock:
            if config.model not in _local_cache:
                try:
                    from .local import LocalProvider
                except ImportError as exc:
                    raise ProviderError(f"the local provider is not available: {exc}") from exc
                _local_cache[config.model] = LocalProvider(config.model)
            return _local_cache[config.model]
    if name == "recorded":
        from .recorded import RecordedProvider

        options = dict(config.options)
        if "source" not in options:
            raise ProviderError("provider 'recorded' needs options=(('source', <registered name or CSV path>), ...)")
        return RecordedProvider(options["source"], options.get("key_columns"), options.get("score_column"))
    raise ProviderError(f"unknown provider {name!r}; known: {', '.join(PROVIDER_NAMES)}")


__all__ = [
    "Completion",
    "Message",
    "Provider",
    "ProviderError",
    "TransientProviderError",
    "PROVIDER_NAMES",
    "get_provider",
]
