"""Prefix-aware local judging: the runner asks prompts sorted by their text, the local provider reuses the KV cache
only up to a batch boundary, and replies are identical to asking each prompt alone, in any order."""

from __future__ import annotations

import numpy as np
import pytest

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.providers.base import Completion
from recjudge.llm.providers.local import DEFAULT_MODEL, LocalProvider, _align_prefix


def test_align_prefix_keeps_whole_batches_of_the_common_prefix_and_the_last_token():
    cached = np.arange(100, dtype=np.intc)
    assert _align_prefix(cached, list(range(100)) + [7, 8], 16) == 96
    assert _align_prefix(cached, list(range(40)) + [999] * 30, 16) == 32
    assert _align_prefix(cached, list(range(100)), 16) == 96  # the last token is always evaluated
    assert _align_prefix(cached, list(range(33)), 16) == 32
    assert _align_prefix(cached, list(range(32)), 16) == 16
    assert _align_prefix(cached, [5] + list(range(1, 90)), 16) == 0
    assert _align_prefix(cached[:0], list(range(10)), 16) == 0


class RecordingProvider:
    name = "recording"

    def __init__(self):
        self.order: list[str] = []

    def complete(self, messages, **kwargs):
        self.order.append(messages[-1]["content"])
        return Completion(text=f"Score: {1 + len(messages[-1]['content']) % 5}")


def test_prompts_are_asked_sorted_by_text_and_the_table_keeps_the_callers_order(tmp_path):
    shared = [{"role": "system", "content": "Rate 1-5."}, {"role": "user", "content": "example"},
              {"role": "assistant", "content": "3"}]
    contents = ["zeta b", "alpha bb", "zeta a", "alpha a", "mid cccc"]
    requests = [JudgeRequest(f"k{i}", [*shared, {"role": "user", "content": c}]) for i, c in enumerate(contents)]
    config = JudgeConfig(provider="openai", model="m")
    ordered_provider, plain_provider = RecordingProvider(), RecordingProvider()
    ordered = run_judge(config, requests, store=tmp_path / "o", provider=ordered_provider, concurrency=1,
                       progress=False)
    plain = run_judge(config, requests, store=tmp_path / "p", provider=plain_provider, order_prompts=False,
                      concurrency=1, progress=False)
    assert ordered_provider.order == sorted(contents) and plain_provider.order == contents
    assert list(ordered.table["key"]) == [f"k{i}" for i in range(5)]
    columns = ["key", "score", "reply", "store_key"]
    assert ordered.table[columns].equals(plain.table[columns])


FEWSHOT = [{"role": "system", "content": "You judge how surprising a film recommendation is, from 1 to 5."}]
for number, (liked, film, score) in enumerate([("Toy Story; Up", "Alien", 5), ("Heat; Ronin", "Collateral", 1),
                                              ("Emma; Persuasion", "Atonement", 2)]):
    FEWSHOT += [{"role": "user", "content": f"Example {number}: the user liked {liked}. Recommended: {film}."},
                {"role": "assistant", "content": str(score)}]


def kang_like(film: str) -> list[dict[str, str]]:
    return [*FEWSHOT, {"role": "user", "content": f"The user liked Fargo; Heat. Recommended: {film}. Score?"}]


@pytest.mark.local_model
def test_local_replies_with_the_prefix_cache_equal_fresh_evaluations_in_any_order(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    # A small batch size makes these short prompts span several batches, so the cache is reused.
    cached = LocalProvider(DEFAULT_MODEL, n_batch=16)
    fresh = LocalProvider(DEFAULT_MODEL, n_batch=16, prefix_cache=False)
    films = ["Paddington 2", "Seven Samurai", "Amelie"]
    params = dict(model=DEFAULT_MODEL, temperature=0.0, max_tokens=1, seed=0, logprobs=True)
    alone = {}
    for film in films:
        alone[film] = fresh.complete(kang_like(film), **params)
    loaded = cached._model(None, dict(cached.options))
    before = loaded.reused_tokens
    for order in (films, films[::-1]):
        for film in order:
            reply = cached.complete(kang_like(film), **params)
            assert reply.text == alone[film].text and reply.logprobs == alone[film].logprobs, film
    assert loaded.reused_tokens - before >= 5 * 16  # the shared few-shot prefix came from the cache

    config = JudgeConfig(provider="local", model=DEFAULT_MODEL, scoring="expected", max_tokens=1)
    requests = [JudgeRequest(film, kang_like(film)) for film in films]
    runs = [run_judge(config, requests, store=tmp_path / str(flag), provider=cached, order_prompts=flag,
                      progress=False) for flag in (True, False)]
    assert runs[0].table[["key", "score", "reply"]].equals(runs[1].table[["key", "score", "reply"]])
    assert list(runs[0].table["key"]) == films
