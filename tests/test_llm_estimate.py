"""The estimate of a job before it runs (prompts missing from the store, tokens, cost, time) and the cost limit."""

from __future__ import annotations

import math

import pytest

from recjudge.llm import CostLimitExceeded, JudgeConfig, JudgeRequest, estimate_job, run_judge
from recjudge.llm.providers.base import Completion


class Fixed:
    name = "fixed"

    def __init__(self):
        self.calls = 0

    def complete(self, messages, **kwargs):
        self.calls += 1
        return Completion(text="Score: 3", input_tokens=10, output_tokens=2)


def requests(n: int, chars: int = 396) -> list[JudgeRequest]:
    # 4 + 396 characters -> 100 tokens by chars/4, plus 4 for the message
    return [JudgeRequest(f"k{i}", [{"role": "user", "content": f"{i:04d}" + "x" * chars}]) for i in range(n)]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("RECJUDGE_LLM_MAX_USD", "RECJUDGE_LLM_CONFIRM_COST", "RECJUDGE_LLM_RPM", "RECJUDGE_LLM_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


def test_estimate_counts_missing_replies_tokens_cost_and_time(tmp_path):
    config = JudgeConfig(provider="openai", model="gpt-4o-mini", max_tokens=10, runs=2, temperature=0.7)
    run_judge(config, requests(3), store=tmp_path, provider=Fixed(), progress=False)
    estimate = estimate_job(config, requests(10), store=tmp_path, concurrency=7)
    assert (estimate.n_prompts, estimate.n_replies, estimate.n_missing) == (10, 20, 14)
    assert estimate.input_tokens == 14 * 104 and estimate.output_tokens == 14 * 10
    assert estimate.cost_usd == pytest.approx((14 * 104 * 0.15 + 140 * 0.60) / 1e6)
    assert estimate.seconds == pytest.approx(14 * 1.5 / 7)
    assert estimate_job(config, requests(10), store=tmp_path, rate_limit_per_minute=6).seconds == pytest.approx(140)
    assert "14 of 20 replies to ask" in str(estimate) and "chars/4" in str(estimate)
    unknown = estimate_job(config.with_(model="no-such-model"), requests(2), store=tmp_path)
    assert math.isnan(unknown.cost_usd) and "unknown cost" in str(unknown)
    assert estimate_job(JudgeConfig(provider="local", model="m"), requests(2), store=tmp_path).cost_usd == 0.0


def test_an_expensive_job_is_refused_unless_confirmed(tmp_path, monkeypatch, capsys):
    config = JudgeConfig(provider="openai", model="gpt-4", max_tokens=1000)  # 30 x ~$0.063 = ~$1.9
    provider = Fixed()
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "1")
    with pytest.raises(CostLimitExceeded, match="RECJUDGE_LLM_MAX_USD") as caught:
        run_judge(config, requests(30), store=tmp_path, provider=provider, progress=False)
    assert provider.calls == 0 and "nothing was asked" in str(caught.value)
    run = run_judge(config, requests(30), store=tmp_path, provider=provider, confirm_cost=True, progress=True)
    assert provider.calls == 30 and run.report.n_replies == 30
    printed = capsys.readouterr().out
    assert printed.count("Estimate: openai:gpt-4/kang_basic: 30 of 30 replies to ask") == 1
    # Everything is stored now: nothing to estimate, nothing refused.
    run_judge(config, requests(30), store=tmp_path, provider=provider, progress=False)
    monkeypatch.setenv("RECJUDGE_LLM_CONFIRM_COST", "1")
    run_judge(config, requests(40), store=tmp_path, provider=provider, progress=False)
    assert provider.calls == 40
    monkeypatch.delenv("RECJUDGE_LLM_CONFIRM_COST")
    monkeypatch.delenv("RECJUDGE_LLM_MAX_USD")  # default 5 USD: this small job passes
    run_judge(config, requests(45), store=tmp_path, provider=provider, progress=False)
    assert provider.calls == 45


def test_a_limit_of_zero_asks_nothing_that_costs_money(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "0")
    provider = Fixed()
    for config in (JudgeConfig(provider="openai", model="gpt-4o-mini"),  # priced
                   JudgeConfig(provider="openai", model="no-such-model"),  # paid, price unknown
                   JudgeConfig(provider="anthropic", model="no-such-model")):
        with pytest.raises(CostLimitExceeded, match="RECJUDGE_LLM_MAX_USD"):
            run_judge(config, requests(2), store=tmp_path, provider=provider, progress=False)
    assert provider.calls == 0
    # What costs nothing is asked: a model on the reader's own server (no price listed), as a local model.
    own = JudgeConfig(provider="openai", model="qwen-7b@my-server", base_url="http://127.0.0.1:9/v1")
    run_judge(own, requests(2), store=tmp_path, provider=provider, progress=False)
    assert provider.calls == 2


def test_a_local_judges_time_uses_its_measured_rate_else_an_assumed_one_said_so():
    from recjudge.llm.estimate import ASSUMED_LATENCY_S, job_estimate, measured_latency

    records = [{"latency_s": value} for value in (2.0, 3.0, 4.0, 100.0, 1.0)] + [{"latency_s": None}]
    assert measured_latency(records) == (3.0, 5)
    assert measured_latency(records[:4]) is None  # too few to call it a rate
    missing = [JudgeRequest(f"k{i}", [{"role": "user", "content": "Rate 1-5."}]) for i in range(10)]
    local = JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1")
    measured = job_estimate(local, 10, 10, missing, 1, None, measured=(3.0, 5))
    assert (measured.seconds, measured.seconds_per_reply) == (30.0, 3.0)
    assert measured.rate_basis == "median latency of 5 stored replies of this model"
    assumed = job_estimate(local, 10, 10, missing, 1, None)
    assert assumed.seconds == 10 * ASSUMED_LATENCY_S["local"] and assumed.rate_basis.startswith("assumed")
    remote = job_estimate(JudgeConfig(provider="openai", model="gpt-4o-mini"), 10, 10, missing, 1, None,
                          measured=(3.0, 5))
    assert remote.rate_basis.startswith("assumed")  # a service's pace is not this machine's
