"""What a provider's batch API offers (``BatchBackend``) and the items, results and states it exchanges.

Each provider with a batch API owns its adapter (``OpenAIBatches`` in ``openai_compat``, ``AnthropicBatches`` in
``anthropic_provider``); ``recjudge.llm.batch`` runs a job through any of them and imports them, never the reverse.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ._common import redact, sdk_errors, short_error
from .base import Completion, ProviderError


class UnreadableLine(ValueError):
    """A result line that cannot be read; ``key`` is its custom id when that much was readable."""

    def __init__(self, reason: str, key: str | None = None):
        super().__init__(reason)
        self.key = key


@dataclass
class BatchItem:
    """One prompt of a batch: its store key (the batch's custom id), the request's key and sample index, and the
    provider request body."""

    key: str
    request_key: str
    sample: int
    body: dict[str, Any]


@dataclass
class BatchResult:
    """One result line read back from a batch: a completion, or an error message and its kind (``UNREADABLE``: the
    line itself could not be read, ``key`` then None unless its custom id was readable); ``where`` names the line
    (batch id, file, line number)."""

    key: str | None
    completion: Completion | None = None
    error: str | None = None
    kind: str | None = None
    where: str = ""


@dataclass
class BatchStatus:
    """A batch's state: ``done`` once no more results will come; ``state`` as the provider names it."""

    done: bool
    state: str
    counts: dict[str, int] = field(default_factory=dict)


class BatchBackend:
    """What a provider's batch API offers: submit, status, the result files, and reading one result line."""

    provider: str

    def submit(self, items: list[BatchItem]) -> str:  # returns the batch id
        raise NotImplementedError

    def status(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    def result_files(self, batch_id: str) -> list[tuple[str, bytes]]:
        """The ended batch's results as (name used in messages, JSON-lines content), downloaded whole."""
        raise NotImplementedError

    def read_line(self, entry: dict[str, Any]) -> BatchResult:
        """One result line, a JSON object with a string ``custom_id``; UnreadableLine when it has the wrong shape."""
        raise NotImplementedError


@contextmanager
def sdk_calls(sdk: ModuleType, base_error: type[Exception], label: str) -> Iterator[None]:
    """SDK exceptions as the project's provider errors, API keys redacted: ``sdk_errors`` for HTTP failures (429
    and 5xx transient), and any other error of the SDK (e.g. no results URL yet) as a ProviderError."""
    try:
        with sdk_errors(sdk, label):
            yield
    except base_error as exc:
        raise ProviderError(f"{label}: {redact(short_error(exc))}") from None
