"""The judge runner against the loopback mock server and scripted providers: faults, resume, replay, accounting."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from functools import partial

import pandas as pd
import pytest
from child_process import default_sigint
from mock_openai_server import FaultPlan, MockOpenAIServer
from mock_openai_server import expected_score as mock_score

from recjudge.llm import (
    JudgeConfig,
    JudgeRequest,
    MissingReplies,
    ResponseStore,
    RetryPolicy,
    parse_aspect_scores,
    run_judge,
)
from recjudge.llm.providers.base import Completion, ProviderError, ProviderRequest, TransientProviderError
from recjudge.llm.runner import RateLimiter
from recjudge.llm.store import store_key

FAST_RETRY = RetryPolicy(max_attempts=6, base_delay_s=0.01, max_delay_s=0.05)


def make_requests(n: int, prefix: str = "prompt") -> list[JudgeRequest]:
    return [
        JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                               {"role": "user", "content": f"{prefix} {i}"}])
        for i in range(n)
    ]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("RECJUDGE_LLM_MODE", raising=False)


def mock_config(server: MockOpenAIServer, **changes) -> JudgeConfig:
    return JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url, **changes)


def test_a_job_keeps_its_connections_alive_instead_of_opening_one_per_request(tmp_path):
    # A reply read up to its Content-Length and no further left its connection unusable: each request opened a new
    # one (a TLS handshake per judgment with a hosted provider).
    with MockOpenAIServer() as server:
        run = run_judge(mock_config(server), make_requests(60), store=tmp_path, concurrency=4, progress=False)
        assert run.report.n_replies == 60 and server.total_requests == 60
        assert server.connections <= 4 + 1, server.connections  # one per request at once, one to list the models


def test_500_prompts_through_faults_lose_nothing_and_ask_nothing_twice(tmp_path):
    plan = FaultPlan(rate_limit=0.08, server_error=0.08, timeout=0.03, drop=0.05, garbage=0.05,
                     max_faults_per_prompt=2, retry_after="0")
    requests = make_requests(500)
    with MockOpenAIServer(faults=plan, timeout_sleep_s=1.3) as server:
        run = run_judge(mock_config(server), requests, store=tmp_path, concurrency=16, retry=FAST_RETRY,
                        timeout=1.0, progress=False)
        assert all(server.fault_counts[kind] > 0 for kind in ("rate_limit", "server_error", "timeout", "drop",
                                                               "garbage")), server.fault_counts
        # No reply lost: every prompt answered, correctly, and stored.
        assert run.report.n_replies == 500 and run.report.n_failed == 0 and run.failures.empty
        assert list(run.table["score"]) == [float(mock_score(f"prompt {i}")) for i in range(500)]
        assert len(ResponseStore(tmp_path)) == 500
        # Nothing asked again once it had been answered; every request the server saw was counted by the runner
        # (a few attempts can fail on a pooled connection before reaching the server).
        assert set(server.successes_by_prompt) == {f"prompt {i}" for i in range(500)}
        assert max(server.successes_by_prompt.values()) == 1
        assert run.report.n_provider_calls >= server.total_requests > 500
        assert run.report.n_retries == run.report.n_provider_calls - 500


def test_second_identical_run_makes_zero_provider_calls(tmp_path):
    requests = make_requests(20)
    with MockOpenAIServer() as server:
        first = run_judge(mock_config(server), requests, store=tmp_path, progress=False)
        assert first.report.n_provider_calls == 20 and first.report.n_from_store == 0
        assert first.report.input_tokens > 0 and first.report.tokens == first.report.job_tokens
        second = run_judge(mock_config(server), requests, store=tmp_path, progress=False)
        assert server.total_requests == 20
    assert second.report.n_provider_calls == 0 and second.report.n_from_store == 20 and second.report.tokens == 0
    assert second.report.job_tokens == first.report.job_tokens
    assert "0 provider call(s)" in str(second.report) and "20 from the store" in str(second.report)
    assert second.table["from_store"].all() and not first.table["from_store"].any()
    assert second.table["score"].equals(first.table["score"])


def test_replay_mode_names_what_is_missing(tmp_path):
    requests = make_requests(5)
    with MockOpenAIServer() as server:
        run_judge(mock_config(server), requests[:3], store=tmp_path, progress=False)
        with pytest.raises(MissingReplies) as caught:
            run_judge(mock_config(server), requests, store=tmp_path, mode="replay", progress=False)
        assert server.total_requests == 3  # replay never contacts the provider
    error = caught.value
    assert error.count == 2 and [m[0] for m in error.missing] == ["k3", "k4"]
    assert "'k3'" in str(error) and "'k4'" in str(error) and "2 replies" in str(error)
    # Everything present: replay works with no key and no server at all.
    os.environ.pop("OPENAI_API_KEY")
    replayed = run_judge(JudgeConfig(provider="openai", model="mock-judge"), requests[:3], store=tmp_path,
                         mode="replay", progress=False)
    assert replayed.report.n_from_store == 3 and replayed.report.n_provider_calls == 0


def test_mode_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "replay")
    with pytest.raises(MissingReplies):
        run_judge(JudgeConfig(provider="openai", model="x"), make_requests(1), store=tmp_path, progress=False)
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "sometimes")
    with pytest.raises(ValueError, match="RECJUDGE_LLM_MODE"):
        run_judge(JudgeConfig(provider="openai", model="x"), make_requests(1), store=tmp_path, progress=False)


def test_live_mode_always_asks(tmp_path):
    requests = make_requests(4)
    with MockOpenAIServer() as server:
        run_judge(mock_config(server), requests, store=tmp_path, progress=False)
        live = run_judge(mock_config(server), requests, store=tmp_path, mode="live", progress=False)
        assert server.total_requests == 8
    assert live.report.n_provider_calls == 4 and live.report.n_from_store == 0


KILLED_JOB = textwrap.dedent("""
    import sys
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    base_url, store, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    requests = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                       {"role": "user", "content": f"prompt {i}"}]) for i in range(n)]
    run_judge(JudgeConfig(provider="openai", model="mock-judge", base_url=base_url), requests, store=store,
              concurrency=4, progress=False)
    print("FINISHED")
""")


def test_job_killed_with_sigkill_resumes_asking_only_missing_prompts(tmp_path):
    n = 200
    store_root = tmp_path / "store"
    with MockOpenAIServer(latency_s=0.05) as server:
        child = subprocess.Popen([sys.executable, "-c", KILLED_JOB, server.base_url, str(store_root), str(n)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while time.time() < deadline:
            stored = sum(p.read_bytes().count(b"\n") for p in store_root.rglob("*.jsonl"))
            if stored >= 40:
                break
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL and b"FINISHED" not in child.stdout.read()

        survived = {r.request_key for r in ResponseStore(store_root)}
        assert 40 <= len(survived) < n
        server.reset_counters()
        resumed = run_judge(mock_config(server), make_requests(n), store=store_root, concurrency=16, progress=False)
        asked = {p.replace("prompt ", "k") for p in server.requests_by_prompt}
    assert asked == {f"k{i}" for i in range(n)} - survived  # only the missing ones, each once
    assert max(server.requests_by_prompt.values()) == 1
    assert resumed.report.n_from_store == len(survived) and resumed.report.n_asked == n - len(survived)
    assert resumed.report.n_replies == n and len(ResponseStore(store_root)) == n
    assert list(resumed.table["score"]) == [float(mock_score(f"prompt {i}")) for i in range(n)]


class ScriptedProvider:
    """A provider whose behaviour per prompt is a function; counts calls."""

    name = "scripted"

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def complete(self, messages, *, model, temperature, max_tokens, seed=None, logprobs=False, options=None):
        prompt = messages[-1]["content"]
        with self.lock:
            self.calls[prompt] = self.calls.get(prompt, 0) + 1
            count = self.calls[prompt]
        return self.behaviour(prompt, count)


def test_exhausted_retries_and_refusals_are_failures_not_zeros(tmp_path):
    def behaviour(prompt, count):
        if prompt == "prompt 1":
            raise TransientProviderError("HTTP 503 always")
        if prompt == "prompt 2":
            raise ProviderError("HTTP 400 context too long")
        if prompt == "prompt 3" and count == 1:
            raise TransientProviderError("HTTP 429", retry_after=0.01)
        return Completion(text="Score: 4" if prompt != "prompt 4" else "I cannot judge this.",
                          input_tokens=10, output_tokens=2)

    provider = ScriptedProvider(behaviour)
    run = run_judge(JudgeConfig(provider="openai", model="gpt-4o-mini"), make_requests(6), store=tmp_path,
                    provider=provider, retry=FAST_RETRY, progress=False)
    table = run.table.set_index("key")
    assert provider.calls["prompt 1"] == FAST_RETRY.max_attempts and provider.calls["prompt 2"] == 1
    assert math.isnan(table.loc["k1", "score"]) and "gave up after 6 attempts" in table.loc["k1", "error"]
    assert math.isnan(table.loc["k2", "score"]) and "refused" in table.loc["k2", "error"]
    assert list(run.failures["key"]) == ["k1", "k2"]
    assert table.loc["k3", "score"] == 4.0 and table.loc["k0", "score"] == 4.0
    assert math.isnan(table.loc["k4", "score"]) and not table.loc["k4", "parsed_ok"]
    report = run.report
    assert (report.n_failed, report.n_unparsable, report.n_replies) == (2, 1, 4)
    assert len(ResponseStore(tmp_path)) == 4  # the good replies are kept
    # Cost from the price table: gpt-4o-mini at 0.15 / 0.60 USD per 1M tokens.
    assert report.cost_usd == pytest.approx((40 * 0.15 + 8 * 0.60) / 1e6)
    # Paper convention only on request: the unparsable reply becomes 0, failures stay NaN.
    assert math.isnan(run.scores()["k4"])
    filled = run.scores(fill_unparsable=0.0)
    assert filled["k4"] == 0.0 and math.isnan(filled["k1"]) and filled["k0"] == 4.0


def test_repeated_refusals_stop_the_job(tmp_path):
    def refuse(prompt, count):
        raise ProviderError("HTTP 401 invalid key")

    provider = ScriptedProvider(refuse)
    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(200), store=tmp_path,
                    provider=provider, concurrency=2, progress=False)
    assert sum(provider.calls.values()) <= 12 and run.report.n_failed == 200


def test_an_account_out_of_quota_stops_the_job_at_once_and_keeps_every_reply(tmp_path):
    # OpenAI answers an account out of credit with 429 insufficient_quota: asking again cannot help.
    started = time.perf_counter()
    with MockOpenAIServer(quota_after=3) as server:
        run = run_judge(mock_config(server), make_requests(40), store=tmp_path, concurrency=2, progress=False)
        asked = server.completions
    assert time.perf_counter() - started < 20 and asked <= 5
    assert run.report.n_replies == 3 and len(ResponseStore(tmp_path)) == 3  # the replies before it are stored
    assert run.report.failed_by_kind.get("quota", 0) >= 1 and run.report.n_failed == 37
    errors = " ".join(run.failures["error"])
    assert "insufficient_quota" in errors and "no credit left" in errors


def test_a_server_that_only_throttles_stops_the_job_in_bounded_time(tmp_path):
    def throttle(prompt, count):
        raise TransientProviderError("HTTP 429", status=429, retry_after=30.0)  # asks for long waits, forever

    provider = ScriptedProvider(throttle)
    retry = RetryPolicy(max_throttled_s_without_success=1.0)
    started = time.perf_counter()
    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(50), store=tmp_path, provider=provider,
                    retry=retry, progress=False)
    assert time.perf_counter() - started < 10 and sum(provider.calls.values()) <= 10
    assert run.report.n_failed == 50 and run.report.failed_by_kind.get("throttled", 0) >= 1
    assert "no reply has succeeded" in " ".join(run.failures["error"])
    # Throttles after a success are retried as before: only a job that never got a reply is stopped.
    assert RetryPolicy().max_throttled_s_without_success == 120.0


def test_retry_after_is_honoured(tmp_path):
    def behaviour(prompt, count):
        if count == 1:
            raise TransientProviderError("HTTP 429", retry_after=0.3)
        return Completion(text="2")

    started = time.perf_counter()
    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(1), store=tmp_path,
                    provider=ScriptedProvider(behaviour), retry=FAST_RETRY, progress=False)
    assert time.perf_counter() - started >= 0.3 and run.report.n_retries == 1 and run.table["score"][0] == 2.0


def test_retry_policy_backoff_grows_with_jitter_and_caps():
    import random

    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    for attempt, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert min(delays) >= cap / 2 and max(delays) <= cap and len(set(delays)) > 100
    assert 5.0 <= policy.delay(1, 5.0, rng) <= 6.0


def test_rate_limiter_spaces_requests():
    limiter = RateLimiter(per_minute=600)  # one per 0.1 s
    started = time.perf_counter()
    for _ in range(4):
        limiter.acquire()
    assert time.perf_counter() - started >= 0.29


def test_runs_are_distinct_samples_and_scores_average_them(tmp_path):
    def behaviour(prompt, count):
        return Completion(text=str(count))  # 1st call says 1, 2nd says 2, ...

    provider = ScriptedProvider(behaviour)
    config = JudgeConfig(provider="openai", model="m", temperature=0.7, runs=3)
    run = run_judge(config, make_requests(2), store=tmp_path, provider=provider, concurrency=1, progress=False)
    assert list(run.table["run"]) == [0, 1, 2, 0, 1, 2]
    assert run.table["store_key"].nunique() == 6
    assert sorted(run.table.loc[run.table["key"] == "k0", "score"]) == [1.0, 2.0, 3.0]
    assert run.scores().to_dict() == {"k0": 2.0, "k1": 2.0}


def test_expected_scoring_uses_logprobs_and_counts_missing_ones(tmp_path):
    with MockOpenAIServer() as server:
        run = run_judge(mock_config(server, scoring="expected"), make_requests(10), store=tmp_path, progress=False)
    for i, row in run.table.iterrows():
        s = mock_score(f"prompt {i}")
        assert row["text_score"] == s and row["score"] == pytest.approx(0.5 * s + 1.5, abs=1e-3)
    no_logprobs = ScriptedProvider(lambda prompt, count: Completion(text="Score: 3", logprobs=None))
    run = run_judge(JudgeConfig(provider="openai", model="m", scoring="expected"), make_requests(3), store=tmp_path,
                    provider=no_logprobs, progress=False)
    assert run.table["score"].isna().all() and run.report.n_no_logprobs == 3
    assert "without log-probabilities" in str(run.report)


def test_expected_scoring_also_gives_the_most_probable_integer(tmp_path):
    """modal_score: the score token with the highest probability, the integer the papers' judges generate."""
    distributions = {"prompt 0": {"Your": -0.1, "2": -1.0, "4": -1.2, " 4": -1.3},  # 4: 0.30 + 0.27 > 2: 0.37
                     "prompt 1": {"5": -2.0, "1": -0.5},
                     "prompt 2": {"Your": -0.1}}  # no score token: NaN for both readings
    scripted = ScriptedProvider(lambda prompt, count: Completion(text="x", logprobs=[distributions[prompt]]))
    run = run_judge(JudgeConfig(provider="openai", model="m", scoring="expected"), make_requests(3), store=tmp_path,
                    provider=scripted, progress=False)
    modal = run.scores(column="modal_score")
    assert modal["k0"] == 4.0 and modal["k1"] == 1.0 and math.isnan(modal["k2"])
    two, four = math.exp(-1.0), math.exp(-1.2) + math.exp(-1.3)
    assert run.scores()["k0"] == pytest.approx((2 * two + 4 * four) / (two + four))
    with pytest.raises(KeyError, match="modal_score"):
        run_judge(JudgeConfig(provider="openai", model="m"), make_requests(1), store=tmp_path, provider=scripted,
                  progress=False).scores(column="modal_score")


def test_tables_have_the_same_column_types_with_one_score_or_aspects_and_with_failures(tmp_path):
    def answer(prompt, count):
        if prompt.endswith(" 1"):
            raise ProviderError("HTTP 400")
        return Completion(text="Relevance: 4\nNovelty: 2", input_tokens=7, output_tokens=3)

    aspects = partial(parse_aspect_scores, aspects=["relevance", "novelty"], low=1, high=5)
    common = {"key": "object", "run": "int64", "reply": "object", "parsed_ok": "bool", "input_tokens": "Int64",
              "output_tokens": "Int64", "from_store": "bool", "error": "object", "store_key": "object"}
    for parser, scores in ((None, ["score"]), (aspects, ["relevance", "novelty"])):
        for n in (1, 3):  # every prompt answered; one failed among three
            run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(n), parser, store=tmp_path,
                            provider=ScriptedProvider(answer), progress=False)
            assert {c: str(t) for c, t in run.table.dtypes.items()} == {**common, **dict.fromkeys(scores, "float64")}
            assert list(run.table["parsed_ok"]) == [True, False, True][:n]
            assert list(run.table["input_tokens"].astype(object)) == [7, pd.NA, 7][:n]


def test_aspect_parser_gives_one_column_per_aspect(tmp_path):
    provider = ScriptedProvider(lambda prompt, count: Completion(text="Relevance: 4\nNovelty: 2"))
    parser = partial(parse_aspect_scores, aspects=["relevance", "novelty", "surprise"], low=1, high=5)
    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(2), parser, store=tmp_path,
                    provider=provider, progress=False)
    assert run.score_columns == ["relevance", "novelty", "surprise"]
    assert list(run.table["relevance"]) == [4.0, 4.0] and run.table["surprise"].isna().all()
    assert run.report.n_unparsable == 2
    assert list(run.scores().columns) == ["relevance", "novelty", "surprise"]
    # A failed judgment still has every aspect column (NaN).
    failing = ScriptedProvider(lambda prompt, count: (_ for _ in ()).throw(ProviderError("HTTP 400")))
    run = run_judge(JudgeConfig(provider="openai", model="m2"), make_requests(1), parser, store=tmp_path,
                    provider=failing, progress=False)
    assert list(run.table.columns[:5]) == ["key", "run", "relevance", "novelty", "surprise"]
    assert run.table[["relevance", "novelty", "surprise"]].isna().all().all() and run.report.n_failed == 1


def test_unknown_model_cost_is_nan_with_a_note(tmp_path):
    provider = ScriptedProvider(lambda prompt, count: Completion(text="3", input_tokens=5, output_tokens=1))
    run = run_judge(JudgeConfig(provider="openai", model="my-finetune"), make_requests(1), store=tmp_path,
                    provider=provider, progress=False)
    assert math.isnan(run.report.cost_usd) and "Cost unknown" in str(run.report)


def test_bad_requests_are_named(tmp_path):
    with pytest.raises(ValueError, match="duplicate request key 'k0'"):
        run_judge(JudgeConfig(provider="openai", model="m"), make_requests(1) * 2, store=tmp_path, progress=False)
    with pytest.raises(ValueError, match="request 'bad', message 0"):
        run_judge(JudgeConfig(provider="openai", model="m"), [JudgeRequest("bad", [{"role": "user"}])],
                  store=tmp_path, progress=False)
    with pytest.raises(ValueError, match="request 'bad', message 1"):
        run_judge(JudgeConfig(provider="openai", model="m"),
                  [*make_requests(2), JudgeRequest("bad", [{"role": "user", "content": "a"}, ("user", "b")])],
                  store=tmp_path, progress=False)
    with pytest.raises(ValueError, match="request 'empty' has no messages"):
        run_judge(JudgeConfig(provider="openai", model="m"), [JudgeRequest("empty", [])], store=tmp_path,
                  progress=False)


def test_messages_with_more_fields_are_asked_under_their_reference_key(tmp_path):
    provider = ScriptedProvider(lambda prompt, count: Completion(text="4", input_tokens=5, output_tokens=1))
    config = JudgeConfig(provider="openai", model="gpt-4o-mini")
    named = [JudgeRequest("named", [{"role": "user", "content": "prompt 1", "name": "judge"}]),
             JudgeRequest("tuple", ({"role": "user", "content": "prompt 2"},))]
    run = run_judge(config, named, store=tmp_path, provider=provider, progress=False)
    for request, key in zip(named, run.table["store_key"]):
        assert key == store_key(provider="openai", model="gpt-4o-mini", messages=request.messages,
                                temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed,
                                logprobs=False, options={}, sample=0)
    assert list(run.table["score"]) == [4.0, 4.0]


# ----------------------------------------------------------------------------------------- odd and faulty replies
from mock_openai_server import HUGE_REPLY_CHARS, ODD_BUT_USABLE, UNUSABLE  # noqa: E402

from recjudge.llm.store import StoreNotWritable, max_stored_chars  # noqa: E402


def test_odd_200_replies_are_normalised_stored_and_counted(tmp_path):
    usable = [v for v in ODD_BUT_USABLE if v != "huge"]
    variants = {f"prompt {i}": variant for i, variant in enumerate(usable)}
    requests = make_requests(len(usable) + 2)
    with MockOpenAIServer(reply_variants=variants) as server:
        run = run_judge(mock_config(server), requests, store=tmp_path, retry=FAST_RETRY, progress=False)
        assert run.report.n_failed == 0 and run.report.n_replies == len(requests)
        assert run.report.n_repaired == len(usable) and "repaired to be storable" in str(run.report)
        assert list(run.table["score"]) == [float(mock_score(f"prompt {i}")) for i in range(len(requests))]
        assert max(server.requests_by_prompt.values()) == 1  # an odd reply is not asked again
        again = run_judge(mock_config(server), requests, store=tmp_path, mode="replay", progress=False)
    assert again.report.n_provider_calls == 0 and again.table["score"].equals(run.table["score"])
    stored = {r.request_key: r for r in ResponseStore(tmp_path)}
    assert stored["k0"].text.endswith("\ufffd")  # the half emoji
    assert stored["k1"].input_tokens is None and stored["k1"].output_tokens == 3  # NaN dropped
    assert stored["k4"].input_tokens is not None and stored["k4"].output_tokens is None  # "three"
    assert all(stored[f"k{i}"].repairs for i in range(len(usable)))


def test_malformed_200_replies_are_retried_little_and_counted_as_failed(tmp_path):
    variants = {"prompt 2": "empty_choices", "prompt 3": "error_object", "prompt 4": "html", "prompt 5": "no_message"}
    with MockOpenAIServer(reply_variants=variants) as server:
        run = run_judge(mock_config(server), make_requests(6), store=tmp_path, retry=FAST_RETRY, concurrency=1,
                        progress=False)
        calls = {p: server.requests_by_prompt[p] for p in variants}
    assert calls == {"prompt 2": 2, "prompt 3": 2, "prompt 4": 1, "prompt 5": 2}
    assert run.report.failed_by_kind == {"malformed": 4} and run.report.n_replies == 2
    errors = run.table.set_index("key")["error"]
    assert "no choices" in errors["k2"] and "model overloaded" in errors["k3"] and "HTML page" in errors["k4"]
    assert len(ResponseStore(tmp_path)) == 2


def test_an_html_page_before_any_success_stops_the_job(tmp_path):
    variants = {f"prompt {i}": "html" for i in range(30)}
    with MockOpenAIServer(reply_variants=variants) as server:
        run = run_judge(mock_config(server), make_requests(30), store=tmp_path, retry=FAST_RETRY, concurrency=2,
                        progress=False)
        assert server.total_requests <= 2
    assert run.report.n_failed == 30 and run.report.failed_by_kind.get("not_asked", 0) >= 28


def test_a_trickling_body_is_cut_at_the_request_deadline(tmp_path):
    plan = FaultPlan(trickle=1.0, max_faults_per_prompt=1)
    with MockOpenAIServer(faults=plan, trickle_interval_s=1.0, trickle_chunks=12) as server:
        started = time.perf_counter()
        run = run_judge(mock_config(server), make_requests(2), store=tmp_path, retry=FAST_RETRY, timeout=2.0,
                        concurrency=2, progress=False)
        seconds = time.perf_counter() - started
        assert server.fault_counts["trickle"] == 2
    assert run.report.n_replies == 2 and run.report.n_retries == 2
    assert seconds < 6.0, f"a 12 s trickle held the job {seconds:.1f} s with a 2 s deadline"


def test_a_huge_reply_is_stored_truncated_and_counted(tmp_path):
    with MockOpenAIServer(reply_variants={"prompt 0": "huge"}) as server:
        run = run_judge(mock_config(server), make_requests(2), store=tmp_path, progress=False)
    limit = max_stored_chars(256)
    stored = {r.request_key: r for r in ResponseStore(tmp_path)}
    assert len(stored["k0"].text) == limit and stored["k0"].truncated_from_chars == HUGE_REPLY_CHARS + 9
    assert stored["k1"].truncated_from_chars is None
    assert run.report.n_truncated == 1 and "truncated" in str(run.report)
    assert run.table["score"][0] == float(mock_score("prompt 0"))
    assert sum(p.stat().st_size for p in tmp_path.rglob("*.jsonl")) < 2 * limit


# ------------------------------------------------------------------------------------------- configuration errors
def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(("base_url", "message"), [
    ("http://127.0.0.1:{closed}/v1", "cannot connect to {base_url} "),  # one clear error naming where nothing listens
    ("ftp://127.0.0.1:21/v1", "scheme 'ftp' is not http or https"),
    ("http://127.0.0.1:99999/v1", "invalid port"),
])
def test_configuration_errors_fail_before_anything_is_retried(tmp_path, base_url, message):
    base_url = base_url.format(closed=_closed_port())
    config = JudgeConfig(provider="openai", model="mock-judge", base_url=base_url)
    started = time.perf_counter()
    with pytest.raises(ProviderError, match=re.escape(message.format(base_url=base_url))):
        run_judge(config, make_requests(24), store=tmp_path, retry=RetryPolicy(), progress=False)
    assert time.perf_counter() - started < 3.0
    assert list(ResponseStore(tmp_path)) == []  # nothing stored


def test_refused_connections_stop_the_job_only_before_the_first_success(tmp_path):
    def always_refused(prompt, count):
        raise TransientProviderError("openai cannot connect: ConnectError", configuration=True)

    provider = ScriptedProvider(always_refused)
    started = time.perf_counter()
    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(24), store=tmp_path, provider=provider,
                    retry=RetryPolicy(), concurrency=4, progress=False)
    assert time.perf_counter() - started < 3.0 and sum(provider.calls.values()) <= 4
    assert run.report.n_failed == 24 and set(run.report.failed_by_kind) == {"configuration", "not_asked"}

    def refused_once_later(prompt, count):
        if prompt != "prompt 0" and count == 1:
            raise TransientProviderError("openai cannot connect: ConnectError", configuration=True)
        return Completion(text="Score: 2")

    run = run_judge(JudgeConfig(provider="openai", model="m2"), make_requests(3), store=tmp_path,
                    provider=ScriptedProvider(refused_once_later), retry=FAST_RETRY, concurrency=1, progress=False)
    assert run.report.n_failed == 0 and run.report.n_retries == 2


def test_unwritable_store_is_found_before_any_request(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with MockOpenAIServer() as server:
        with pytest.raises(StoreNotWritable):
            run_judge(mock_config(server), make_requests(3), store=blocker / "store", progress=False)
        assert server.total_requests == 0


def test_environment_numbers_are_named_when_wrong(tmp_path, monkeypatch):
    provider = ScriptedProvider(lambda prompt, count: Completion(text="1"))
    monkeypatch.setenv("RECJUDGE_LLM_RPM", "ten")
    with pytest.raises(ValueError, match="environment variable RECJUDGE_LLM_RPM='ten' is not a number"):
        run_judge(JudgeConfig(provider="openai", model="m"), make_requests(1), store=tmp_path, provider=provider,
                  progress=False)
    monkeypatch.delenv("RECJUDGE_LLM_RPM")
    monkeypatch.setenv("RECJUDGE_LLM_CONCURRENCY", "4.5")
    with pytest.raises(ValueError, match="RECJUDGE_LLM_CONCURRENCY='4.5' is not a whole number"):
        run_judge(JudgeConfig(provider="openai", model="m"), make_requests(1), store=tmp_path, provider=provider,
                  progress=False)


def test_a_key_with_whitespace_is_stripped_and_a_broken_key_refused_without_retry(tmp_path, monkeypatch):
    with MockOpenAIServer(expected_key="sk-test-123") as server:
        monkeypatch.setenv("RECJUDGE_SERVER_API_KEY", "sk-test-123\n")  # the mock is another server than OpenAI's
        with pytest.warns(UserWarning, match="RECJUDGE_SERVER_API_KEY has leading or trailing whitespace"):
            run = run_judge(mock_config(server), make_requests(2), store=tmp_path, progress=False)
        assert run.report.n_replies == 2 and server.unauthorised == 0
        monkeypatch.setenv("RECJUDGE_SERVER_API_KEY", "sk-test\n-123")
        with pytest.raises(ProviderError, match="RECJUDGE_SERVER_API_KEY contains 1 character") as caught:
            run_judge(mock_config(server), make_requests(4, "other"), store=tmp_path, progress=False)
        assert "sk-test" not in str(caught.value)
        assert server.total_requests == 2


def test_report_names_unusable_store_lines(tmp_path):
    with MockOpenAIServer() as server:
        run_judge(mock_config(server), make_requests(3), store=tmp_path, progress=False)
        shard = next((tmp_path / "openai" / "mock-judge").glob("*.jsonl"))
        with open(shard, "ab") as fh:
            fh.write(b'{"key":"zz","provider":"openai","model":"mock-judge"}\n')
        n_lines = len(shard.read_bytes().splitlines())
        run = run_judge(mock_config(server), make_requests(3), store=ResponseStore(tmp_path), progress=False)
    assert run.report.n_skipped_store_lines == 1
    assert run.report.skipped_store_lines == [f"{shard}:{n_lines}: field 'text' missing"]
    assert f"{shard.name}:{n_lines}" in str(run.report)


# ------------------------------------------------------------------------------------------------ model identity
def test_generic_model_names_at_another_endpoint_need_an_explicit_identity(tmp_path):
    with MockOpenAIServer() as server:
        for name in ("default", "gpt-3.5-turbo"):
            with pytest.raises(ProviderError, match="does not identify the weights"):
                run_judge(JudgeConfig(provider="openai", model=name, base_url=server.base_url), make_requests(2),
                          store=tmp_path, progress=False)
        assert server.total_requests == 0
        config = JudgeConfig(provider="openai", model="mock-llama-8b-q4@mock", served_model="default",
                             base_url=server.base_url)
        run = run_judge(config, make_requests(2), store=tmp_path, progress=False)
        base_url = server.base_url
    assert run.report.n_replies == 2 and run.report.n_model_mismatch == 0
    (entry, _) = list(ResponseStore(tmp_path))
    assert entry.model == "mock-llama-8b-q4@mock"
    assert entry.provenance["reported_model"] == "default" and entry.provenance["endpoint"] == base_url


def test_model_must_be_listed_by_the_server_and_reported_ids_are_checked(tmp_path):
    with MockOpenAIServer(served_models=["llama-3-8b"]) as server:
        with pytest.raises(ProviderError, match="not among the models"):
            run_judge(mock_config(server), make_requests(2), store=tmp_path, progress=False)
        assert server.total_requests == 0 and server.models_requests == 1
    with MockOpenAIServer(served_models=["mock-judge"], reported_model="qwen-7b") as server:
        run = run_judge(mock_config(server), make_requests(3), store=tmp_path, progress=False)
    assert run.report.n_model_mismatch == 3 and "qwen" not in str(run.report) and "reported_model" in str(run.report)
    assert {r.provenance["reported_model"] for r in ResponseStore(tmp_path)} == {"qwen-7b"}


# ---------------------------------------------------------------------------------------------------- interrupts
INTERRUPTED_JOB = textwrap.dedent("""
    import sys
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    from recjudge.llm.runner import JudgeInterrupted
    base_url, store, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    requests = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                       {"role": "user", "content": f"prompt {i}"}]) for i in range(n)]
    try:
        run_judge(JudgeConfig(provider="openai", model="mock-judge", base_url=base_url), requests, store=store,
                  concurrency=4, progress=False)
    except JudgeInterrupted as exc:
        print("INTERRUPTED", exc, flush=True)
        sys.exit(3)
    print("FINISHED")
""")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_stops_a_job_waiting_to_retry_at_once(tmp_path, signum):
    plan = FaultPlan(rate_limit=0.7, max_faults_per_prompt=6, retry_after="20")
    store_root = tmp_path / "store"
    with MockOpenAIServer(faults=plan) as server:
        child = subprocess.Popen([sys.executable, "-c", INTERRUPTED_JOB, server.base_url, str(store_root), "40"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
        deadline = time.time() + 30
        while server.fault_counts["rate_limit"] < 1 and time.time() < deadline:
            time.sleep(0.05)
        # Signal only once no request has been sent for a second: every worker is then waiting out a 20 s
        # Retry-After, so no reply is on its way that the server counts and the job has not received yet.
        settle_deadline, seen, quiet_since = time.time() + 15, server.total_requests, time.time()
        while time.time() - quiet_since < 1.0 and time.time() < settle_deadline:
            time.sleep(0.05)
            if server.total_requests != seen:
                seen, quiet_since = server.total_requests, time.time()
        sent = time.perf_counter()
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
        seconds = time.perf_counter() - sent
        answered = sum(server.successes_by_prompt.values())
    assert child.returncode == 3, err[-2000:]
    # Far below the 20 s Retry-After it was waiting out, with room for a loaded machine's process teardown.
    assert seconds < 10.0, f"the job took {seconds:.1f} s to stop"
    assert "INTERRUPTED" in out and ("SIGTERM" if signum == signal.SIGTERM else "SIGINT") in out
    assert len(ResponseStore(store_root)) == answered  # every reply that arrived is stored


TWIN_JOB = textwrap.dedent("""
    import sys
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    base_url, store, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    requests = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                       {"role": "user", "content": f"prompt {i}"}]) for i in range(n)]
    run = run_judge(JudgeConfig(provider="openai", model="mock-judge", base_url=base_url), requests, store=store,
                    concurrency=2, progress=False)
    print("ASKED", run.report.n_asked, "OTHER", run.report.n_from_other_process, "REPLIES", run.report.n_replies)
""")


def test_two_identical_jobs_on_one_store_ask_each_prompt_once(tmp_path):
    n = 24
    store_root = tmp_path / "store"
    with MockOpenAIServer(latency_s=0.4) as server:
        children = [subprocess.Popen([sys.executable, "-c", TWIN_JOB, server.base_url, str(store_root), str(n)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outputs = [child.communicate(timeout=120) for child in children]
        assert all(child.returncode == 0 for child in children), [err[-2000:] for _, err in outputs]
        assert server.total_requests == n and max(server.requests_by_prompt.values()) == 1
    reports = [dict(zip(out.split()[::2], map(int, out.split()[1::2]))) for out, _ in outputs]
    assert all(r["REPLIES"] == n for r in reports)
    assert sum(r["ASKED"] for r in reports) == n
    assert not list((store_root / ".locks" / "claims").glob("*.claim"))  # claims are released


# ---------------------------------------------------------------------------------------------- the whole mixture
def test_500_prompt_job_with_every_odd_reply_and_fault_finishes_completely(tmp_path, monkeypatch):
    n = 500
    # The attempts the client saw fail, by prompt: a reply the server sent just as the client's deadline passed (a
    # loaded machine) is one the client never read, so it asks again and the server counts two successes.
    failed_attempts: Counter[str] = Counter()
    counting = threading.Lock()
    send = ProviderRequest.send

    def counted_send(self, provider):
        try:
            return send(self, provider)
        except TransientProviderError:
            with counting:
                failed_attempts[self.messages[-1]["content"]] += 1
            raise

    monkeypatch.setattr(ProviderRequest, "send", counted_send)
    plan = FaultPlan(rate_limit=0.06, server_error=0.06, timeout=0.02, drop=0.04, garbage=0.04, truncated=0.04,
                     trickle=0.01, max_faults_per_prompt=2, retry_after="0")
    usable = [v for v in ODD_BUT_USABLE if v != "huge"]
    odd = {f"prompt {i}": usable[i % len(usable)] for i in range(7, 7 + 7 * 14, 7)}
    odd["prompt 300"] = "huge"  # 2 MB here (a 1 s deadline); the 50 MB one has its own test
    bad = {f"prompt {n - 1 - i}": UNUSABLE[i % len(UNUSABLE)] for i in range(8)}  # at the end: after successes
    requests = make_requests(n)
    started = time.perf_counter()
    with MockOpenAIServer(faults=plan, timeout_sleep_s=1.3, reply_variants={**odd, **bad}, trickle_interval_s=0.3,
                          trickle_chunks=12, huge_reply_chars=2_000_000) as server:
        run = run_judge(mock_config(server), requests, store=tmp_path, concurrency=16, retry=FAST_RETRY,
                        timeout=1.0, progress=False)
        seconds = time.perf_counter() - started
        assert all(server.fault_counts[kind] > 0 for kind in
                   ("rate_limit", "server_error", "timeout", "drop", "garbage", "truncated", "trickle")), \
            server.fault_counts
        good = [f"prompt {i}" for i in range(n) if f"prompt {i}" not in bad]
        errors = run.table.set_index("key")["error"]  # the runner's reason, to tell a timing flake from a bug
        # every good prompt answered, and answered again only after an attempt the client saw fail
        assert {p: server.successes_by_prompt[p] for p in good
                if not 1 <= server.successes_by_prompt[p] <= 1 + failed_attempts[p]} == {}, \
            {p: (odd.get(p), server.requests_by_prompt[p], failed_attempts[p], errors[f"k{p.split()[1]}"])
             for p in good if server.successes_by_prompt[p] != 1}
        report = run.report
        print(f"\n500-prompt job: {report}\nwall {seconds:.1f} s, server requests {server.total_requests}, "
              f"faults {dict(server.fault_counts)}, replies ready after the client gave up "
              f"{dict(server.abandoned_by_prompt)}")
        assert report.n_replies == n - len(bad) and report.n_failed == len(bad)
        assert report.failed_by_kind == {"malformed": len(bad)}
        assert report.n_repaired == sum(1 for v in odd.values() if v != "huge") and report.n_truncated == 1
        assert report.n_provider_calls >= server.total_requests
        good_keys = [r for r in requests if r.messages[-1]["content"] not in bad]
        assert len(ResponseStore(tmp_path)) == len(good_keys)
        scores = run.table.set_index("key")["score"]
        assert all(scores[r.key] == float(mock_score(r.messages[-1]["content"])) for r in good_keys)
        server.reset_counters()
        config = mock_config(server)
        replay = run_judge(config, good_keys, store=ResponseStore(tmp_path), mode="replay", progress=False)
        assert server.total_requests == 0
    assert replay.report.n_provider_calls == 0 and replay.report.n_from_store == len(good_keys)
    with pytest.raises(MissingReplies) as caught:
        run_judge(config, requests, store=tmp_path, mode="replay", progress=False)
    assert sorted(m[0] for m in caught.value.missing) == sorted(r.key for r in requests
                                                                 if r.messages[-1]["content"] in bad)
    assert seconds < 60


def test_a_reply_ready_after_the_client_gave_up_is_counted_abandoned_not_a_success(tmp_path):
    """A late reply (a loaded machine) is asked again by the client; the mock must not count it as paid twice."""
    with MockOpenAIServer(latency_s=0.6) as server:
        run = run_judge(mock_config(server), make_requests(1), store=tmp_path, retry=FAST_RETRY, timeout=0.2,
                        progress=False)
        asked = server.requests_by_prompt["prompt 0"]
        deadline = time.monotonic() + 10
        while server.abandoned_by_prompt["prompt 0"] < asked and time.monotonic() < deadline:
            time.sleep(0.05)  # the last requests' handlers are still sleeping out their latency
        assert asked >= 2 and server.abandoned_by_prompt["prompt 0"] == asked
        assert server.successes_by_prompt["prompt 0"] == 0
    assert run.report.n_replies == 0 and run.report.failed_by_kind == {"transient": 1}  # timed out on every try


def test_each_reply_gets_its_own_seed_so_the_kth_runs_of_prompts_are_independent(tmp_path):
    """One seed per sample index shared by every prompt draws every prompt's k-th reply at the same quantile."""
    seeds: dict[tuple[str, int], int] = {}
    lock = threading.Lock()

    class SeedRecorder:
        name = "seed-recorder"

        def complete(self, messages, *, model, temperature, max_tokens, seed=None, logprobs=False, options=None):
            with lock:
                prompt = messages[-1]["content"]
                seeds[(prompt, sum(1 for key in seeds if key[0] == prompt))] = seed
            return Completion(text="Score: 3", input_tokens=1, output_tokens=1)

    config = JudgeConfig(provider="openai", model="gpt-4o-mini", temperature=1.0, runs=3, seed=7)
    run_judge(config, make_requests(4), store=tmp_path / "first", provider=SeedRecorder(), progress=False,
              concurrency=1)
    first = dict(seeds)
    assert len(set(first.values())) == 12, "every (prompt, run) has a seed of its own"
    assert all(0 <= seed < 2 ** 31 for seed in first.values())
    seeds.clear()
    run_judge(config, make_requests(4), store=tmp_path / "again", provider=SeedRecorder(), progress=False,
              concurrency=1)
    assert sorted(seeds.values()) == sorted(first.values()), "the seeds are reproducible"
    seeds.clear()
    run_judge(config.with_(temperature=0.0, seed=None), make_requests(2), store=tmp_path / "none",
              provider=SeedRecorder(), progress=False, concurrency=1)
    assert set(seeds.values()) == {None}


def test_a_server_that_stops_mid_run_stops_the_job_keeping_every_reply(tmp_path):
    requests = make_requests(20)
    with MockOpenAIServer(latency_s=0.02) as server:
        stopped_at = []

        def stop_after_three_replies():
            while sum(server.successes_by_prompt.values()) < 3:
                time.sleep(0.005)
            server.stop()
            stopped_at.append(time.perf_counter())

        threading.Thread(target=stop_after_three_replies, daemon=True).start()
        run = run_judge(mock_config(server), requests, store=tmp_path, concurrency=1, adaptive=False,
                        retry=RetryPolicy(base_delay_s=0.2, max_unreachable_s=1.0), progress=False)
        after_stop = time.perf_counter() - stopped_at[0]
    report = run.report
    assert after_stop < 5.0, "each prompt left would otherwise wait out its own retries (~2 s each here)"
    assert report.n_replies >= 3 and report.n_failed == 20 - report.n_replies and report.n_unparsable == 0
    assert set(report.failed_by_kind) == {"unreachable", "not_asked"} and report.failed_by_kind["unreachable"] == 1
    assert report.n_asked == report.n_replies + 1, "the prompts never sent are not counted as asked"
    assert run.failures["error"].str.contains("refused every connection for 1 s|no connection within 1 s").all()
    assert len(list(ResponseStore(tmp_path))) == report.n_replies  # every reply that arrived is stored


def test_a_reply_between_refused_connections_starts_the_unreachable_count_again(tmp_path):
    from recjudge.llm.providers.base import UNREACHABLE

    def refused_first_then_answered(prompt, count):
        if prompt != "prompt 0" and count == 1:
            time.sleep(0.1)  # each prompt's refusals alone stay under the limit; all of them together do not
            raise TransientProviderError("openai cannot connect: ConnectError", kind=UNREACHABLE, configuration=True)
        return Completion(text="Score: 3")

    run = run_judge(JudgeConfig(provider="openai", model="m"), make_requests(8), store=tmp_path,
                    provider=ScriptedProvider(refused_first_then_answered), concurrency=1, adaptive=False,
                    retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.02, max_unreachable_s=0.3), progress=False)
    assert (run.report.n_replies, run.report.n_failed) == (8, 0)
