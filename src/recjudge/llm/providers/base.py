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
    #: What produced the reply (stored with it; see ``recjudge.llm.store``), e.g. the model id the server reported.
    provenance: dict[str, Any] | None = None


class ProviderError(Exception):
    """A provider failed in a way retrying will not fix (bad request, authentication, unknown model).

    kind: a short name counted in the run report ("refused", "configuration", ...).
    configuration: the set-up is wrong (unsupported URL scheme, invalid port, a key that cannot be sent): the runner
        stops the whole job instead of sending every prompt to fail the same way.
    """

    kind = "refused"

    def __init__(self, message: str, *, kind: str | None = None, configuration: bool = False):
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.configuration = configuration


class TransientProviderError(ProviderError):
    """Worth retrying: rate limit (429), server error (5xx), timeout, dropped connection, unreadable body.

    retry_after: seconds the server asked us to wait (Retry-After header), if any.
    status: the HTTP status when the failure was an HTTP reply (429 tells the runner's adaptive concurrency to
        slow down), else None.
    max_attempts: a lower bound than the retry policy's for this kind of failure (e.g. 2 for a malformed 200 reply).
    configuration: likely a set-up error (connection refused, an HTML page instead of JSON): before the job's first
        success the runner stops the job; after one success it is retried like any transient error.
    """

    kind = "transient"

    def __init__(self, message: str, retry_after: float | None = None, *, kind: str | None = None,
                 max_attempts: int | None = None, configuration: bool = False, status: int | None = None):
        super().__init__(message, kind=kind, configuration=configuration)
        self.retry_after = retry_after
        self.max_attempts = max_attempts
        self.status = status

    @property
    def throttled(self) -> bool:
        """The server asked us to slow down: HTTP 429, or any reply carrying Retry-After."""
        return self.status == 429 or self.retry_after is not None


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
