"""Plan mode: the engine records what a job would ask instead of asking it."""

import dataclasses
import json

import pytest

from recjudge.llm import JudgeConfig, JudgeRequest, estimate_job, run_judge
from recjudge.llm import runner as runner_module
from recjudge.llm.plan import PLAN_LOG_ENV
from recjudge.llm.providers.base import Completion

CONFIG = JudgeConfig(provider="openai", model="gpt-4o-mini")
REQUESTS = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Rate 1-5."},
                                   {"role": "user", "content": f"film number {i} " * (i + 1)}]) for i in range(5)]


class Answering:
    name = "openai"

    def complete(self, messages, **fields):
        return Completion(text="Score: 4", input_tokens=20, output_tokens=2)


class Refusing:
    name = "openai"

    def complete(self, messages, **fields):
        raise AssertionError("plan mode sent a request")


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("RECJUDGE_LLM_MODE", "RECJUDGE_LLM_BATCH", "RECJUDGE_LLM_CONCURRENCY", "RECJUDGE_LLM_RPM",
                 PLAN_LOG_ENV):
        monkeypatch.delenv(name, raising=False)


def store_bytes(root):
    return {path: path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_plan_mode_asks_nothing_stores_nothing_and_logs_the_jobs_estimate(tmp_path, monkeypatch):
    store = tmp_path / "store"
    run_judge(CONFIG, REQUESTS[:2], store=store, provider=Answering(), progress=False)
    before = store_bytes(store)
    log = tmp_path / "plans" / "chapter" / "plan.jsonl"
    monkeypatch.setenv(PLAN_LOG_ENV, str(log))

    def no_provider(*args, **kwargs):
        raise AssertionError("plan mode built a provider")

    monkeypatch.setattr(runner_module, "get_provider", no_provider)
    run = run_judge(CONFIG, REQUESTS, store=store, provider=Refusing(), mode="plan", concurrency=2,
                    rate_limit_per_minute=30, progress=False)

    assert store_bytes(store) == before
    report = run.report
    assert (report.mode, report.n_planned, report.n_asked, report.n_from_store, report.n_failed) == ("plan", 3, 0, 2, 0)
    assert report.n_provider_calls == 0 and report.failed_by_kind == {}
    assert "3 planned, not asked" in str(report)
    planned = run.table[run.table["error"].notna()]
    assert planned["key"].tolist() == ["k2", "k3", "k4"] and planned["score"].isna().all()
    assert run.table.loc[run.table["error"].isna(), "score"].tolist() == [4.0, 4.0]

    [line] = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    expected = estimate_job(CONFIG, REQUESTS, store, concurrency=2, rate_limit_per_minute=30)
    assert {name: line[name] for name in dataclasses.asdict(expected)} == dataclasses.asdict(expected)
    assert (line["provider"], line["model"], line["n_requests"], line["n_missing"]) == ("openai", "gpt-4o-mini", 5, 3)
    assert (line["concurrency"], line["rate_limit_per_minute"]) == (2, 30)
    assert expected.n_missing == 3 and expected.seconds == pytest.approx(3 * 60 / 30)  # the rate limit bounds it
    assert expected.batch_cost_usd == pytest.approx(expected.list_cost_usd / 2) and expected.cost_usd > 0


def test_the_environment_chooses_plan_mode_and_an_unset_log_records_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "plan")
    monkeypatch.chdir(tmp_path)
    run = run_judge(CONFIG, REQUESTS, store=tmp_path / "store", provider=Refusing(), progress=False)
    assert run.report.mode == "plan" and run.report.n_planned == 5
    assert not (tmp_path / "store").exists() or store_bytes(tmp_path / "store") == {}
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["store"])  # no log file anywhere


def test_a_batched_plan_is_priced_at_the_batch_rate_and_timed_by_the_batch_window(tmp_path, monkeypatch):
    log = tmp_path / "plan.jsonl"
    monkeypatch.setenv(PLAN_LOG_ENV, str(log))
    run_judge(CONFIG, REQUESTS, store=tmp_path / "store", provider=Refusing(), mode="plan", batch=True,
              progress=False)
    line = json.loads(log.read_text(encoding="utf-8"))
    expected = estimate_job(CONFIG, REQUESTS, tmp_path / "store", batch=True)
    assert line["batch"] is True and line["cost_usd"] == pytest.approx(line["batch_cost_usd"])
    assert line["seconds"] == expected.seconds == 24 * 3600
