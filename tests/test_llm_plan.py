"""Plan mode: the engine records what a job would ask instead of asking it."""

import dataclasses
import json

import pytest

from recjudge.llm import JudgeConfig, JudgeRequest, asking, estimate_job, run_judge
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

    monkeypatch.setattr(asking, "get_provider", no_provider)
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


def test_a_judge_not_among_those_asked_replays_the_store_and_leaves_the_rest_out(tmp_path, monkeypatch):
    from recjudge.llm.ask_options import ASK_ONLY_ENV
    from recjudge.llm.report import JOB_LOG_ENV, read_job_log

    store = tmp_path / "store"
    run_judge(CONFIG, REQUESTS[:2], store=store, provider=Answering(), progress=False)
    monkeypatch.setenv(ASK_ONLY_ENV, "openai:gpt-4.1")  # another judge is the reader's: this one is the book's
    monkeypatch.setenv(JOB_LOG_ENV, str(tmp_path / "jobs.jsonl"))
    for mode in ("auto", "replay", "live"):  # asked in no mode; replay does not fail on what it leaves out
        run = run_judge(CONFIG, REQUESTS, store=store, provider=Refusing(), mode=mode, progress=False)
        report = run.report
        assert (report.n_left_out, report.n_failed, report.n_asked, report.n_from_store) == (3, 0, 0, 2), mode
        assert "3 left out, not asked" in str(report)
        assert run.table.loc[run.table["error"].notna(), "key"].tolist() == ["k2", "k3", "k4"]
    [line, *_] = read_job_log(tmp_path / "jobs.jsonl")
    assert (line["n_replies_wanted"], line["n_from_store"], line["n_left_out"], line["n_failed"]) == (5, 2, 3, 0)

    # In plan mode its line is logged and marked, so the plan can say what asking it would take
    log = tmp_path / "plan.jsonl"
    monkeypatch.setenv(PLAN_LOG_ENV, str(log))
    run = run_judge(CONFIG, REQUESTS, store=store, provider=Refusing(), mode="plan", progress=False)
    assert (run.report.n_left_out, run.report.n_planned) == (3, 0)
    [planned] = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert planned["left_out"] is True and planned["n_missing"] == 3

    # A prompt two requests share (one store key, two rows) is left out for both: nothing asked, never below zero
    twin = JudgeRequest("k4 again", REQUESTS[-1].messages)
    run = run_judge(CONFIG, [*REQUESTS, twin], store=store, provider=Refusing(), progress=False)
    assert (run.report.n_left_out, run.report.n_asked, run.report.n_from_store) == (4, 0, 2)

    monkeypatch.setenv(ASK_ONLY_ENV, "openai:gpt-4.1,openai:gpt-4o-mini")  # named: asked as usual
    run = run_judge(CONFIG, REQUESTS, store=store, provider=Answering(), progress=False)
    assert (run.report.n_left_out, run.report.n_asked) == (0, 3)


def test_a_plan_line_counts_judgments_so_missing_never_exceeds_them(tmp_path, monkeypatch):
    """Three runs of five prompts want fifteen replies: the plan line's missing count is a share of them (counting
    the prompts, five, made a judge's missing judgments exceed its requests in plan_by_judge)."""
    from recjudge.compendium.variants import plan_by_judge

    log = tmp_path / "logs" / "chapter.jsonl"
    monkeypatch.setenv(PLAN_LOG_ENV, str(log))
    config = dataclasses.replace(CONFIG, runs=3, temperature=1.0)
    run_judge(config, REQUESTS, store=tmp_path / "store", provider=Refusing(), mode="plan", progress=False)
    [line] = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert (line["n_requests"], line["n_judgments"], line["n_missing"]) == (5, 15, 15)
    by_judge = plan_by_judge({"chapter": log}).set_index("judge")
    assert by_judge.loc["openai:gpt-4o-mini", ["judgments", "missing"]].tolist() == [15, 15]
    assert line["weights_present"] is None  # said for local judges only


def test_a_local_judge_whose_weights_are_absent_is_said_not_fetched(tmp_path, monkeypatch):
    from recjudge.compendium.variants import not_fetched_line, plan_by_judge

    log = tmp_path / "logs" / "chapter.jsonl"
    monkeypatch.setenv(PLAN_LOG_ENV, str(log))
    absent = JudgeConfig(provider="local", model=str(tmp_path / "not-here.gguf"))
    run_judge(absent, REQUESTS, store=tmp_path / "store", mode="plan", progress=False)
    [line] = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert line["weights_present"] is False
    message = not_fetched_line(plan_by_judge({"chapter": log}))
    assert message.startswith(f"not fetched: local:{tmp_path / 'not-here.gguf'} (5 judgments missing)")
    # Left out (the book's judge beside a reader's), it is still said not fetched, with what it lacks
    monkeypatch.setenv("RECJUDGE_LLM_ASK_ONLY", "openai:gpt-4o-mini")
    log.unlink()
    run_judge(absent, REQUESTS, store=tmp_path / "store", mode="plan", progress=False)
    message = not_fetched_line(plan_by_judge({"chapter": log}))
    assert message.startswith(f"not fetched: local:{tmp_path / 'not-here.gguf'} (5 judgments missing, not asked)")
