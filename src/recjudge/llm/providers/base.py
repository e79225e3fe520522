"""The provider interface every LLM back end implements: ``complete(messages, **fields)`` with the fields of one
``ProviderRequest`` (the one list of what is sent with a chat), returning a ``Completion``.  The project's providers
derive from ``ChatProvider``, which hands them the request as one object."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

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


#: Failure kind of a refused connection (nothing listens at the endpoint: a server not started, or stopped).
UNREACHABLE = "unreachable"


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


@dataclass(frozen=True)
class ProviderRequest:
    """One request to a provider: the chat and every parameter sent with it.

    model: the name the server knows; temperature, max_tokens: sampling; seed: for providers that take one (None:
    none sent); logprobs: ask for the top alternatives of each generated token; options: further provider
    parameters (``JudgeConfig.provider_options``, the output schema included)."""

    messages: list[Message]
    model: str
    temperature: float
    max_tokens: int
    seed: int | None = None
    logprobs: bool = False
    options: Mapping[str, Any] | None = None

    def keywords(self) -> dict[str, Any]:
        """Every field but the messages, as ``Provider.complete`` takes them (options copied)."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "seed": self.seed, "logprobs": self.logprobs, "options": dict(self.options or {})}

    def send(self, provider: "Provider") -> Completion:
        """``provider``'s reply, asked with copies of the messages and options (a provider that changes what it is
        given changes nothing here)."""
        return provider.complete([dict(m) for m in self.messages], **self.keywords())

    def body_for(self, provider: Any) -> dict[str, Any]:
        """The HTTP body ``provider`` would send for this request (a line of a batch)."""
        return provider.request_body([dict(m) for m in self.messages], **self.keywords())


class Provider(Protocol):
    name: str

    def complete(self, messages: list[Message], **fields: Any) -> Completion:
        """Return one reply to ``ProviderRequest(messages, **fields)``, or raise TransientProviderError /
        ProviderError."""
        ...


class ChatProvider:
    """Base of the project's providers: ``complete`` takes the request's fields as keywords, as every provider
    does, and hands ``ask`` the ``ProviderRequest`` (TypeError naming a field that is not one)."""

    name: str

    def complete(self, messages: list[Message], **fields: Any) -> Completion:
        return self.ask(ProviderRequest(messages, **fields))

    def ask(self, request: ProviderRequest) -> Completion:
        raise NotImplementedError

    @classmethod
    def request_body(cls, messages: list[Message], **fields: Any) -> dict[str, Any]:
        """The HTTP body of ``ProviderRequest(messages, **fields)`` (``body``)."""
        return cls.body(ProviderRequest(messages, **fields))

    @staticmethod
    def body(request: ProviderRequest) -> dict[str, Any]:
        raise NotImplementedError("this provider sends no HTTP body")
