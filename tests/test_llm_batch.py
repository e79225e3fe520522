"""Batch mode (recjudge.llm.batch) against the mock server's OpenAI and Anthropic batch APIs: submission, the same
store keys as direct calls, resume after a kill, partial failures, expiry, batch pricing."""

from __future__ import annotations

import json

import pytest
from mock_openai_server import MockOpenAIServer, expected_score

from recjudge.llm import JudgeConfig, JudgeRequest, pricing, run_judge
from recjudge.llm import batch as batch_api
from recjudge.llm.store import ResponseStore


def _requests(n: int, prefix: str = "film") -> list[JudgeRequest]:
    return [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                   {"role": "user", "content": f"{prefix} {i}"}]) for i in range(n)]


def _config(provider: str, server: MockOpenAIServer) -> JudgeConfig:
    if provider == "openai":
        # an OpenAI model name on another host needs an explicit identity (the mock answers for it)
        return JudgeConfig(provider="openai", model="gpt-4o-mini", served_model="gpt-4o-mini",
                           base_url=server.base_url)
    return JudgeConfig(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url)


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_replies_land_under_the_keys_of_direct_calls(provider, tmp_path):
    requests = _requests(7)
    with MockOpenAIServer(batch_polls_to_end=3) as server:
        batched = run_judge(_config(provider, server), requests, store=tmp_path / "batch", batch=True,
                            batch_poll_s=0, progress=False, mode="live")
        assert server.batch_submissions == 1 and server.batch_requests == 7 and server.total_requests == 0
        direct = run_judge(_config(provider, server), requests, store=tmp_path / "direct", progress=False,
                           mode="live")
    assert list(batched.table["score"]) == [float(expected_score(f"film {i}")) for i in range(7)]
    assert list(batched.table["store_key"]) == list(direct.table["store_key"])
    stored = ResponseStore(tmp_path / "batch").records()
    assert len(stored) == 7 and all(record["provenance"]["batch_id"] for record in stored)
    # priced at half the standard rate
    assert batched.report.cost_usd == pytest.approx(direct.report.cost_usd * 0.5)
    assert batched.report.batches["submitted"] and not batched.report.batches["pending"]
    # a second run finds everything in the store and submits nothing
    with MockOpenAIServer() as server:
        again = run_judge(_config(provider, server), requests, store=tmp_path / "batch", batch=True,
                          batch_poll_s=0, progress=False)
        assert server.batch_submissions == 0
    assert again.report.n_from_store == 7


def test_expected_scores_come_through_openai_batches(tmp_path):
    with MockOpenAIServer() as server:
        config = JudgeConfig(provider="openai", model="judge-under-test", scoring="expected",
                             base_url=server.base_url)
        run = run_judge(config, _requests(3), store=tmp_path, batch=True, batch_poll_s=0, progress=False)
    expected = [0.5 * expected_score(f"film {i}") + 1.5 for i in range(3)]
    assert list(run.table["score"]) == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_killed_job_resumes_polling_instead_of_resubmitting(provider, tmp_path):
    requests = _requests(5)
    with MockOpenAIServer(batch_polls_to_end=4) as server:
        # the first process gives up waiting (as a killed one would): the batch id stays in the ledger
        first = run_judge(_config(provider, server), requests, store=tmp_path, batch=True, batch_wait=False,
                          batch_poll_s=0, progress=False)
        assert first.report.n_replies == 0 and first.report.failed_by_kind == {"batch_pending": 5}
        ledger = batch_api.BatchLedger(tmp_path, provider, _config(provider, server).model)
        assert [entry["id"] for entry in ledger.pending()] == first.report.batches["submitted"]
        second = run_judge(_config(provider, server), requests, store=tmp_path, batch=True, batch_poll_s=0,
                           progress=False)
        assert server.batch_submissions == 1  # resumed, not submitted again
    assert second.report.batches["resumed"] == first.report.batches["submitted"]
    assert second.report.n_replies == 5 and not ledger.pending()


def test_interrupt_while_waiting_keeps_the_ledger(tmp_path, monkeypatch):
    from recjudge.llm.runner import JudgeInterrupted

    def interrupted(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_api.time, "sleep", interrupted)
    with MockOpenAIServer(batch_polls_to_end=5) as server:
        with pytest.raises(JudgeInterrupted, match="Run again to collect"):
            run_judge(_config("openai", server), _requests(2), store=tmp_path, batch=True, batch_poll_s=1,
                      progress=False)
    assert len(batch_api.BatchLedger(tmp_path, "openai", "gpt-4o-mini").pending()) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_partly_failed_batch_stores_the_rest_and_resubmits_only_the_failures(provider, tmp_path):
    requests = _requests(6)
    with MockOpenAIServer(batch_failing_prompts={"film 1", "film 4"}) as server:
        run = run_judge(_config(provider, server), requests, store=tmp_path, batch=True, batch_poll_s=0,
                        progress=False)
    assert run.report.n_replies == 4 and run.report.failed_by_kind == {"batch_error": 2}
    assert run.table.set_index("key").loc[["k1", "k4"], "score"].isna().all()
    assert len(ResponseStore(tmp_path).records()) == 4
    with MockOpenAIServer() as server:
        again = run_judge(_config(provider, server), requests, store=tmp_path, batch=True, batch_poll_s=0,
                          progress=False)
        assert server.batch_requests == 2  # only the two failed prompts
    assert again.report.n_replies == 6


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_expired_batch_keeps_what_finished(provider, tmp_path):
    with MockOpenAIServer(batch_expire_after=3) as server:
        config = _config(provider, server)
        run = run_judge(config, _requests(5), store=tmp_path, batch=True, batch_poll_s=0, progress=False)
    assert run.report.n_replies == 3 and run.report.failed_by_kind == {"batch_expired": 2}
    ledger = batch_api.BatchLedger(tmp_path, provider, config.model)
    entry = ledger.entries()[0]
    assert not ledger.pending() and entry["state"] == ("expired" if provider == "openai" else "ended")
    assert entry["counts"]["failed" if provider == "openai" else "expired"] == 2


def test_large_jobs_are_split_into_several_batches(tmp_path, monkeypatch):
    monkeypatch.setitem(batch_api.MAX_REQUESTS, "openai", 4)
    with MockOpenAIServer() as server:
        run = run_judge(_config("openai", server), _requests(10), store=tmp_path, batch=True, batch_poll_s=0,
                        progress=False)
        assert server.batch_submissions == 3
    assert run.report.n_replies == 10 and len(run.report.batches["submitted"]) == 3


def test_batch_mode_needs_a_batch_api_and_a_readable_ledger(tmp_path):
    from recjudge.llm.providers.base import ProviderError

    with pytest.raises(ProviderError, match="no batch API"):
        batch_api.backend_for(object())
    ledger = batch_api.BatchLedger(tmp_path, "openai", "gpt-4o-mini")
    ledger.path.parent.mkdir(parents=True)
    ledger.path.write_text("{not json")
    with pytest.raises(ValueError, match="batch ledger .* cannot be read"):
        ledger.pending()
    ledger.path.write_text(json.dumps([{"keys": {}}]))
    with pytest.raises(ValueError, match="'id' and 'keys'"):
        ledger.pending()


def test_batch_prices_and_estimate():
    assert pricing.cost_usd("openai", "gpt-4o-mini", 1_000_000, 0, batch=True) == pytest.approx(0.075)
    assert pricing.cost_usd("local", "x", 10, 10, batch=True) == 0.0
    from recjudge.llm import estimate_job

    requests = _requests(4)
    direct = estimate_job(JudgeConfig(provider="openai", model="gpt-4o-mini"), requests, store=None)
    batched = estimate_job(JudgeConfig(provider="openai", model="gpt-4o-mini"), requests, store=None, batch=True)
    assert batched.cost_usd == pytest.approx(direct.cost_usd / 2)
    assert "within 24.0 h (batch)" in str(batched)


def test_batch_env_switch(monkeypatch):
    from recjudge.llm import AskOptions

    judge = ("openai", "gpt-4o-mini")
    monkeypatch.setenv(batch_api.BATCH_ENV, "1")
    assert AskOptions().uses_batch(*judge) is True and AskOptions(batch=False).uses_batch(*judge) is False
    monkeypatch.setenv(batch_api.BATCH_ENV, "maybe")
    with pytest.raises(ValueError, match="RECJUDGE_LLM_BATCH"):
        AskOptions().uses_batch(*judge)


def test_the_judges_named_for_batches_batch_and_the_others_do_not(monkeypatch):
    from recjudge.llm import AskOptions

    monkeypatch.delenv(batch_api.BATCH_ENV, raising=False)
    monkeypatch.setenv(batch_api.BATCH_JUDGES_ENV, "openai:gpt-4o-mini, anthropic:claude-3-5-haiku")
    assert AskOptions().uses_batch("openai", "gpt-4o-mini") is True
    assert AskOptions().uses_batch("anthropic", "claude-3-5-haiku") is True
    assert AskOptions().uses_batch("local", "smollm2-135m-instruct-q4_1") is False  # a chapter's own judge
    assert AskOptions(batch=False).uses_batch("openai", "gpt-4o-mini") is False  # an explicit choice wins
