"""One judge job: the prompts of one judge configuration, which of their replies the store holds, and what asking
for the others brought (``JudgeJob``); the prompts themselves (``JudgeRequest``) and how they are checked; and how a
job stops on a signal (``JudgeInterrupted``).

Every way of answering a job fills the same object: asking one prompt at a time (``recjudge.llm.workers``), the
providers' batch APIs (``recjudge.llm.batch``), recorded judgments, or planning (``recjudge.llm.plan``); the report
(``recjudge.llm.report``) is assembled from it alone.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .config import JudgeConfig
from .estimate import JobEstimate, job_estimate
from .providers.base import Message, ProviderRequest
from .store import ResponseStore, StoreKeyer, open_store


class JudgeInterrupted(KeyboardInterrupt):
    """A job stopped by SIGINT or SIGTERM; every reply that arrived before is in the store (re-run to resume)."""


@dataclass
class JudgeRequest:
    """One prompt to judge: ``key`` identifies it in the result table (e.g. "user:item"), ``messages`` is the chat."""

    key: str
    messages: list[Message]
    meta: dict[str, Any] = field(default_factory=dict)


#: (request, sample index, store key) of one reply a job wants; the key is None for recorded judgments (looked up
#: by request key).
Slot = tuple[JudgeRequest, int, "str | None"]


@dataclass
class JudgeJob:
    """One job: every reply wanted, those in hand, and those still to ask.

    slots: one per reply wanted, in the caller's order (see ``Slot``).
    to_ask: store key -> (request, sample index) of each reply to ask, in the order to ask them.
    records: key -> stored entry of each reply in hand (read, or asked and stored).
    from_store: keys whose entry was read from the store rather than asked by this process.
    errors: key -> (why, failure kind) of each judgment that failed (see ``recjudge.llm.runner``).
    counters: "calls" (provider requests made), "other_process" (replies another process asked), batch counts.
    notes: sentences for the run report.
    n_throttled, concurrency: throttled replies and the concurrency gate's summary, when prompts were asked one by
        one (``RunReport.n_throttled``, ``RunReport.concurrency``).
    batch_priced, batches: whether new replies are priced at the batch rate, and the batches submitted, resumed and
        pending (``RunReport.batches``), when prompts were asked in batches.
    """

    config: JudgeConfig
    store: ResponseStore | None
    requests: list[JudgeRequest]
    slots: list[Slot]
    to_ask: dict[str, tuple[JudgeRequest, int]] = field(default_factory=dict)
    records: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    from_store: set[str] = field(default_factory=set)
    errors: dict[str, tuple[str, str]] = field(default_factory=dict)
    counters: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    n_throttled: int = 0
    concurrency: dict[str, Any] = field(default_factory=dict)
    batch_priced: bool = False
    batches: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def open(cls, config: JudgeConfig, requests: Sequence[JudgeRequest], store: ResponseStore, *,
             read_store: bool = True, order_prompts: bool = False) -> "JudgeJob":
        """The job of ``requests`` (checked: ``validate``) under ``config``: each reply the store holds is in hand
        (none with ``read_store=False``: live mode asks everything), the rest are to ask; ``order_prompts`` sorts
        them by their rendered messages, so prompts sharing a prefix are asked one after another."""
        requests = list(requests)
        validate(requests)
        keyer = store_keyer(config)
        rendered = rendered_messages(keyer, requests)  # what the store keys hash
        slots: list[Slot] = [(request, run, keyer.key(messages_json, run))
                             for request, messages_json in zip(requests, rendered) for run in range(config.runs)]
        # Read this model's shards: only bytes appended since the last run (by this or any other process).
        store.refresh(config.provider, config.model)
        records = store.peek_many(key for _, _, key in slots) if read_store else {}
        job = cls(config, store, requests, slots, records=records, from_store=set(records))
        if len(records) < len(slots):  # else every slot has its reply (the usual replay)
            for request, run, key in slots:
                if key not in records and key not in job.to_ask:
                    job.to_ask[key] = (request, run)  # type: ignore[index]
        if order_prompts and len(job.to_ask) > 1:
            by_key = dict(zip([request.key for request in requests], rendered))
            job.to_ask = dict(sorted(job.to_ask.items(), key=lambda item: (by_key[item[1][0].key], item[1][1])))
        return job

    @classmethod
    def of_recorded(cls, config: JudgeConfig, requests: Sequence[JudgeRequest]) -> "JudgeJob":
        """The job of recorded judgments: one reply per request, looked up by request key (no store: the source
        file is the record)."""
        requests = list(requests)
        validate(requests)
        if config.runs != 1:
            raise ValueError(f"{config.label}: recorded judgments hold one reply per key; runs must be 1, "
                             f"got {config.runs}")
        return cls(config, None, requests, slots=[(request, 0, None) for request in requests])

    @property
    def want_logprobs(self) -> bool:
        return self.config.scoring == "expected"

    def missing(self) -> list[JudgeRequest]:
        """The request of each reply to ask (a request once per sample index)."""
        return [request for request, _ in self.to_ask.values()]

    def unanswered(self) -> list[JudgeRequest]:
        """The request of each wanted reply not in hand, once per slot (two requests with the same messages share
        one reply to ask, but each counts here, as ``estimate_job`` counts them)."""
        return [request for request, _, key in self.slots if key not in self.records]

    def missing_slots(self) -> list[tuple[str, int, str]]:
        """(request key, sample index, store key) of each reply to ask, in the caller's order."""
        return [(request.key, run, key) for request, run, key in self.slots if key in self.to_ask]  # type: ignore

    def estimate(self, concurrency: int, rpm: float | None, *, batch: bool = False) -> JobEstimate:
        """What asking the missing replies would take (``recjudge.llm.estimate``)."""
        return job_estimate(self.config, len(self.requests), len(self.slots), self.missing(), concurrency, rpm,
                            batch=batch)

    def provider_request(self, request: JudgeRequest, run: int) -> ProviderRequest:
        """What is sent to the provider for sample ``run`` of ``request``."""
        config = self.config
        return ProviderRequest(request.messages, model=config.served_model or config.model,
                               temperature=config.temperature, max_tokens=config.max_tokens,
                               seed=run_seed(config.seed, run, request.key), logprobs=self.want_logprobs,
                               options=config.provider_options())

    def keep(self, key: str, record: Mapping[str, Any], *, other_process: bool = False) -> None:
        """A reply in hand; ``other_process``: another process asked it while this one waited for it."""
        self.records[key] = record
        if other_process:
            self.from_store.add(key)
            self.counters["other_process"] += 1

    def fail(self, key: str, why: str, kind: str) -> None:
        self.errors[key] = (why, kind)


def open_job(config: JudgeConfig, requests: Sequence[JudgeRequest],
             store: "ResponseStore | str | os.PathLike[str] | None", *, read_store: bool,
             order_prompts: bool) -> JudgeJob:
    """Step 1 of a judge run (``recjudge.llm.runner.run_judge``), the plan: which of the replies ``requests`` want
    under ``config`` the store (a ResponseStore or folder; default ``open_store()``) holds, and which are to ask
    (see ``JudgeJob.open``).  Recorded judgments involve no store (``JudgeJob.of_recorded``)."""
    if config.provider == "recorded":
        return JudgeJob.of_recorded(config, requests)
    if not isinstance(store, ResponseStore):
        store = open_store(store)
    return JudgeJob.open(config, requests, store, read_store=read_store, order_prompts=order_prompts)


def store_keyer(config: JudgeConfig) -> StoreKeyer:
    """The store keys of ``config``'s replies."""
    return StoreKeyer(provider=config.provider, model=config.model, temperature=config.temperature,
                      max_tokens=config.max_tokens, seed=config.seed, logprobs=config.scoring == "expected",
                      options=config.provider_options())


def run_seed(seed: int | None, run: int, request_key: str) -> int | None:
    """The seed sent with one reply: derived from the configured seed, the sample index and the request, so that the
    runs of one prompt are distinct draws and the draws of different prompts are independent. (One seed per sample
    index, shared by every prompt, makes a sampler draw every prompt's k-th reply at the same quantile of its
    distribution: measured with the local judge at temperature 1, run 1 of ten prompts all gave the tail token "7"
    or "8".) The store key holds the configured seed, the sample index and the request, which determine this one."""
    if seed is None:
        return None
    digest = hashlib.sha256(f"{int(seed)}:{int(run)}:{request_key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: every provider's seed range


def validate(requests: Sequence[JudgeRequest]) -> None:
    """Every request is a JudgeRequest and no key repeats (messages: see ``rendered_messages``)."""
    # The common case (all fine) is checked in bulk; the loop below only runs to name the first problem.
    if all(type(request) is JudgeRequest for request in requests) \
            and len({request.key for request in requests}) == len(requests):
        return
    seen: set[str] = set()
    for position, request in enumerate(requests):
        if not isinstance(request, JudgeRequest):
            raise TypeError(f"request {position} is a {type(request).__name__}, not a JudgeRequest")
        if request.key in seen:
            raise ValueError(f"duplicate request key {request.key!r} (request {position}); keys must be unique")
        seen.add(request.key)


def rendered_messages(keyer: StoreKeyer, requests: Sequence[JudgeRequest]) -> list[bytes]:
    """Each request's messages as the canonical JSON its store keys hash, checked on the way: a request without
    messages, or with a message that is not a {'role': str, 'content': str} mapping, is refused by name."""
    plain = keyer.plain_messages_json  # the usual messages pass its check, so they cost no separate one
    rendered = []
    for request in requests:
        text = plain(request.messages) if request.messages else None
        if text is None:
            _check_messages(request)
            text = keyer.messages_json(request.messages)
        rendered.append(text)
    return rendered


def _check_messages(request: JudgeRequest) -> None:
    if not request.messages:
        raise ValueError(f"request {request.key!r} has no messages")
    for turn, message in enumerate(request.messages):
        if not _plain_message(message):
            raise ValueError(
                f"request {request.key!r}, message {turn}: expected {{'role': str, 'content': str}}, got {message!r}"
            )


def _plain_message(message: object) -> bool:
    """Whether a chat message is a {'role': str, 'content': str} mapping, as providers need."""
    return isinstance(message, dict) and type(message.get("role")) is str and type(message.get("content")) is str


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a job ran (raised by ``sigterm_raises_interrupt``)."""


class sigterm_raises_interrupt:
    """While active (main thread only, and only if SIGTERM still has its default action), SIGTERM raises
    ``Terminated`` in the main thread, so a terminated job stops like an interrupted one instead of dying with
    its workers mid-write."""

    def __enter__(self) -> None:
        self.previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self.previous = signal.signal(signal.SIGTERM, self._raise)

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise Terminated()

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
