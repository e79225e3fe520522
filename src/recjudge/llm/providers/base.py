"""The provider interface every LLM back end implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass
class Completion:
    """One reply as a provider returns it.

    logprobs: for each generated token, a mapping token -> log-probability of the top alternatives at that
    position (None where the provider gives none).
    """

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    logprobs: list[dict[str, float]] | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """A provider failed in a way retrying will not fix (bad request, authentication, unknown model)."""


class TransientProviderError(ProviderError):
    """Worth retrying: rate limit (429), server error (5xx), timeout, dropped connection, unreadable body.

    retry_after: seconds the server asked us to wait (Retry-After header), if any.
    """

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Provider(Protocol):
    name: str

    def complete(
        self,
        messages: list[Message],
        *,
        model: str,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        logprobs: bool = False,
        options: dict[str, Any] | None = None,
    ) -> Completion:
        """Return one reply, or raise TransientProviderError / ProviderError."""
        ...
