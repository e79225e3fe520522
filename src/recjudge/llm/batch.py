"""Batch mode: a job's missing prompts sent through the providers' batch APIs (half price, replies within 24 h).

``run_judge(config, requests, batch=True)`` (or env ``RECJUDGE_LLM_BATCH=1``) submits the prompts the store lacks as
one or more batches instead of asking them one by one:

- OpenAI (and OpenAI-compatible servers that implement it): a JSON-lines file uploaded with ``purpose="batch"``,
  then ``POST /v1/batches`` on ``/v1/chat/completions``; results are read from the batch's output and error files.
- Anthropic: Message Batches (``POST /v1/messages/batches``); results are read from its ``results_url``.

Every reply is written under the same store key a direct call would use (the key is the store key; batching is
not part of it), with the batch id in its provenance. Each batch's id and the keys it holds are written to a ledger
beside the store (``<store>/.batches/<provider>/<model>.json``) as soon as the provider accepts it, so a process
that is killed or interrupted while waiting resumes polling on the next run instead of submitting (and paying for)
the same prompts again. A batch is marked collected once its results are stored.

Per-request failures (an error line, a refused request, a malformed body) and requests a batch did not reach
(expired or cancelled batches) are failed judgments in the run report, counted by kind (``batch_error``,
``batch_expired``, ``batch_cancelled``, ``malformed``); they are not stored, so the next run submits them again.
The cost report prices batch replies at the providers' batch rates (``recjudge.llm.pricing.BATCH_DISCOUNT``).

Batch mode needs a provider with a batch API (``openai``, ``anthropic``); expected-score mode works with OpenAI
batches (log-probabilities are part of the request body).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from .providers.base import Completion, ProviderError, TransientProviderError
from .settings import env_number
from .store import ResponseStore, model_slug, now_utc, max_stored_chars, sanitise_record

#: Environment variable: "1" turns batch mode on for every job (like ``run_judge(batch=True)``).
BATCH_ENV = "RECJUDGE_LLM_BATCH"
#: Environment variable: seconds between two polls of a pending batch (default ``DEFAULT_POLL_S``).
POLL_ENV = "RECJUDGE_LLM_BATCH_POLL_S"
DEFAULT_POLL_S = 30.0
#: Most requests per batch (the providers' limits: OpenAI 50,000 requests per file, Anthropic 100,000 per batch).
MAX_REQUESTS = {"openai": 50_000, "anthropic": 100_000}
#: States after which a batch changes no more.
_OPENAI_FINAL = {"completed", "failed", "expired", "cancelled"}


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
    """One request's outcome read back from a batch: a completion, or an error message and its kind."""

    key: str
    completion: Completion | None = None
    error: str | None = None
    kind: str | None = None


@dataclass
class BatchStatus:
    """A batch's state: ``done`` once no more results will come; ``state`` as the provider names it."""

    done: bool
    state: str
    counts: dict[str, int] = field(default_factory=dict)


class BatchBackend:
    """What a provider's batch API offers: submit, status, results."""

    provider: str

    def submit(self, items: list[BatchItem]) -> str:  # returns the batch id
        raise NotImplementedError

    def status(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------------------- ledger
class BatchLedger:
    """Submitted batches of one (provider, model), persisted as JSON beside the store.

    Entry: ``{"id", "submitted", "keys": {store key: [request key, sample]}, "collected": bool, "state"}``.
    Writes replace the file atomically under a file lock, so a kill at any moment leaves the last complete ledger.
    """

    def __init__(self, store_root: Path, provider: str, model: str):
        self.path = Path(store_root) / ".batches" / provider / f"{model_slug(model)}.json"
        self._lock = FileLock(str(self.path) + ".lock")

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"batch ledger {self.path} cannot be read ({exc}); move it away to submit afresh "
                             "(batches it lists are then not collected)") from None
        if not isinstance(data, list) or not all(isinstance(e, dict) and "id" in e and "keys" in e for e in data):
            raise ValueError(f"batch ledger {self.path}: expected a list of batches with 'id' and 'keys'")
        return data

    def pending(self) -> list[dict[str, Any]]:
        return [entry for entry in self.entries() if not entry.get("collected")]

    def _update(self, change: Callable[[list[dict[str, Any]]], None]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            entries = self.entries()
            change(entries)
            temporary = self.path.with_suffix(".json.tmp")
            temporary.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)

    def add(self, batch_id: str, items: Iterable[BatchItem]) -> None:
        keys = {item.key: [item.request_key, item.sample] for item in items}
        self._update(lambda entries: entries.append(
            {"id": batch_id, "submitted": now_utc(), "keys": keys, "collected": False, "state": "submitted"}))

    def mark(self, batch_id: str, *, state: str, collected: bool, counts: Mapping[str, int] | None = None) -> None:
        def change(entries: list[dict[str, Any]]) -> None:
            for entry in entries:
                if entry["id"] == batch_id:
                    entry.update(state=state, collected=collected)
                    if counts:
                        entry["counts"] = dict(counts)
        self._update(change)


# ---------------------------------------------------------------------------------------------------------- backends
class OpenAIBatches(BatchBackend):
    """OpenAI's Batch API through the ``openai`` SDK client of an ``OpenAICompatProvider``."""

    provider = "openai"

    def __init__(self, client: Any, base_url: str | None):
        self.client = client
        self.base_url = base_url

    def submit(self, items: list[BatchItem]) -> str:
        lines = "".join(json.dumps({"custom_id": item.key, "method": "POST", "url": "/v1/chat/completions",
                                    "body": item.body}, ensure_ascii=False) + "\n" for item in items)
        uploaded = self.client.files.create(file=("batch.jsonl", lines.encode("utf-8")), purpose="batch")
        batch = self.client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                           completion_window="24h")
        return str(batch.id)

    def _batch(self, batch_id: str) -> Any:
        return self.client.batches.retrieve(batch_id)

    def status(self, batch_id: str) -> BatchStatus:
        batch = self._batch(batch_id)
        counts = getattr(batch, "request_counts", None)
        counted = {name: int(getattr(counts, name, 0) or 0) for name in ("total", "completed", "failed")}
        return BatchStatus(done=batch.status in _OPENAI_FINAL, state=str(batch.status), counts=counted)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        from .providers.openai_compat import _completion_from_json

        batch = self._batch(batch_id)
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            text = self.client.files.content(file_id).text
            for number, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    key = str(entry["custom_id"])
                except (ValueError, KeyError, TypeError):
                    raise ProviderError(f"batch {batch_id}: result file {file_id} line {number} is not a result "
                                        f"line: {line[:120]!r}") from None
                response = entry.get("response") or {}
                error = entry.get("error")
                status = response.get("status_code")
                if error or status != 200:
                    message = (error or {}).get("message") if isinstance(error, dict) else error
                    body_error = (response.get("body") or {}).get("error") if isinstance(response.get("body"),
                                                                                         dict) else None
                    message = message or (body_error or {}).get("message") or f"HTTP {status}"
                    code = (error or {}).get("code") if isinstance(error, dict) else None
                    kind = "batch_expired" if code == "batch_expired" else (
                        "batch_cancelled" if code == "batch_cancelled" else "batch_error")
                    yield BatchResult(key, error=f"batch {batch_id}: {str(message)[:200]}", kind=kind)
                    continue
                try:
                    completion = _completion_from_json(response.get("body"), math.nan, self.base_url)
                except ProviderError as exc:
                    yield BatchResult(key, error=f"batch {batch_id}: {exc}", kind=exc.kind)
                    continue
                completion.latency_s = None
                yield BatchResult(key, completion=completion)


class AnthropicBatches(BatchBackend):
    """Anthropic's Message Batches through the ``anthropic`` SDK client of an ``AnthropicProvider``."""

    provider = "anthropic"

    def __init__(self, client: Any, base_url: str | None):
        self.client = client
        self.base_url = base_url

    def submit(self, items: list[BatchItem]) -> str:
        batch = self.client.messages.batches.create(
            requests=[{"custom_id": item.key, "params": item.body} for item in items])
        return str(batch.id)

    def status(self, batch_id: str) -> BatchStatus:
        batch = self.client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        counted = {name: int(getattr(counts, name, 0) or 0)
                   for name in ("processing", "succeeded", "errored", "canceled", "expired")}
        return BatchStatus(done=batch.processing_status == "ended", state=str(batch.processing_status),
                           counts=counted)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        from .providers.anthropic_provider import completion_from_message

        for entry in self.client.messages.batches.results(batch_id):
            result = entry.result
            kind = getattr(result, "type", None)
            if kind == "succeeded":
                try:
                    yield BatchResult(entry.custom_id, completion=completion_from_message(result.message, None,
                                                                                        self.base_url))
                except TransientProviderError as exc:
                    yield BatchResult(entry.custom_id, error=f"batch {batch_id}: {exc}", kind="malformed")
            elif kind == "errored":
                error = getattr(getattr(result, "error", None), "error", None)
                message = getattr(error, "message", None) or "errored"
                yield BatchResult(entry.custom_id, error=f"batch {batch_id}: {str(message)[:200]}",
                                  kind="batch_error")
            else:  # expired or canceled: the batch did not reach this request
                yield BatchResult(entry.custom_id, error=f"batch {batch_id}: request {kind}",
                                  kind="batch_expired" if kind == "expired" else "batch_cancelled")


def backend_for(provider: Any) -> BatchBackend:
    """The batch API of a built provider; ProviderError (configuration) when it has none."""
    make = getattr(provider, "batches", None)
    if not callable(make):
        raise ProviderError(f"provider {getattr(provider, 'name', provider)!r} has no batch API; batch mode needs "
                            "'openai' or 'anthropic'", kind="configuration", configuration=True)
    return make()


# ---------------------------------------------------------------------------------------------------------- the job
@dataclass
class BatchOutcome:
    """What one batch job did (added to the run report)."""

    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)


def poll_seconds(value: float | None = None) -> float:
    """Seconds between polls: ``value``, else RECJUDGE_LLM_BATCH_POLL_S, else the default."""
    if value is not None:
        return float(value)
    seconds = env_number(POLL_ENV, allow_zero=True, unit="seconds")
    return DEFAULT_POLL_S if seconds is None else seconds


def ask_in_batches(
    backend: BatchBackend,
    store: ResponseStore,
    *,
    provider_name: str,
    model: str,
    max_tokens: int,
    items: list[BatchItem],
    records: dict[str, dict[str, Any]],
    errors: dict[str, tuple[str, str]],
    counters: dict[str, int] | Any,
    wait: bool = True,
    poll_s: float | None = None,
    max_requests: int | None = None,
    sleep: Callable[[float], None] | None = None,
) -> BatchOutcome:
    """Submit ``items`` (prompts the store lacks) unless a pending batch of the ledger already holds them, then
    poll every pending batch that holds a wanted key until it ends (``wait``), storing each reply as it is read.
    Fills ``records`` (store key -> stored record), ``errors`` (key -> (message, kind)) and ``counters``."""
    ledger = BatchLedger(store.root, provider_name, model)
    wanted = {item.key: item for item in items}
    outcome = BatchOutcome()
    covered: dict[str, str] = {}
    for entry in ledger.pending():
        held = [key for key in entry["keys"] if key in wanted]
        if held:
            outcome.resumed.append(entry["id"])
            covered.update({key: entry["id"] for key in held})
    fresh = [item for item in items if item.key not in covered]
    size = max_requests or MAX_REQUESTS.get(provider_name, 50_000)
    for start in range(0, len(fresh), size):
        chunk = fresh[start:start + size]
        batch_id = backend.submit(chunk)
        ledger.add(batch_id, chunk)  # before anything else can fail: a rerun resumes instead of resubmitting
        outcome.submitted.append(batch_id)
        counters["calls"] += len(chunk)  # one provider request per prompt
    waiting = outcome.resumed + outcome.submitted
    interval = poll_seconds(poll_s)
    max_chars = max_stored_chars(max_tokens)
    while waiting:
        still = []
        for batch_id in waiting:
            status = backend.status(batch_id)
            if not status.done:
                still.append(batch_id)
                continue
            _collect(backend, store, ledger, batch_id, status, provider_name, model, max_chars, wanted, records,
                     errors, counters)
        waiting = still
        if waiting and not wait:
            break
        if waiting:
            (sleep or time.sleep)(interval)
    outcome.pending = waiting
    for batch_id in waiting:
        for entry in ledger.pending():
            if entry["id"] == batch_id:
                for key in entry["keys"]:
                    if key in wanted and key not in records:
                        errors[key] = (f"pending in batch {batch_id}: run again to collect it", "batch_pending")
    return outcome


def _collect(backend: BatchBackend, store: ResponseStore, ledger: BatchLedger, batch_id: str, status: BatchStatus,
             provider_name: str, model: str, max_chars: int, wanted: Mapping[str, BatchItem],
             records: dict[str, dict[str, Any]], errors: dict[str, tuple[str, str]], counters: Any) -> None:
    entry = next((e for e in ledger.entries() if e["id"] == batch_id), None)
    held = entry["keys"] if entry else {}
    seen: set[str] = set()
    fresh: list[dict[str, Any]] = []
    for result in backend.results(batch_id):
        if result.key not in held or result.key in seen:
            counters["batch_unknown_ids"] += 1
            continue
        seen.add(result.key)
        if result.completion is None:
            counters[result.kind or "batch_error"] += 1
            if result.key in wanted:
                errors[result.key] = (result.error or "failed in the batch", result.kind or "batch_error")
            continue
        request_key, sample = held[result.key]
        completion = result.completion
        provenance = dict(completion.provenance or {})
        provenance["batch_id"] = batch_id
        fresh.append({
            "key": result.key, "provider": provider_name, "model": model, "sample": int(sample),
            "request_key": request_key, "text": completion.text, "logprobs": completion.logprobs,
            "input_tokens": completion.input_tokens, "output_tokens": completion.output_tokens,
            "latency_s": None, "finish_reason": completion.finish_reason, "created": now_utc(),
            "provenance": provenance,
        })
    stored = store.put_records(sanitise_record(record, max_chars=max_chars) for record in fresh)
    for record in stored:
        records[record["key"]] = record
        errors.pop(record["key"], None)
    counters["batch_replies"] += len(stored)
    missing = [key for key in held if key not in seen]
    kind = "batch_expired" if status.state == "expired" else (
        "batch_cancelled" if status.state in ("cancelled", "canceled") else "batch_error")
    for key in missing:  # e.g. an expired batch's unfinished requests when the provider lists none of them
        counters[kind] += 1
        if key in wanted:
            errors[key] = (f"batch {batch_id} ended ({status.state}) without a result for this prompt", kind)
    ledger.mark(batch_id, state=status.state, collected=True, counts=status.counts)
