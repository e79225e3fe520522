"""A judge run is four steps in order (``run_judge``'s docstring): plan, ask, assemble, report.  Each step's output
is observed here on its own, and the steps called one after another give what ``run_judge`` gives."""

from __future__ import annotations

import time

import pytest

from recjudge.llm import AskOptions, JudgeConfig, JudgeRequest, MissingReplies, ResponseStore, parse_likert, run_judge
from recjudge.llm.asking import ask_for_missing
from recjudge.llm.job import open_job
from recjudge.llm.providers.base import Completion
from recjudge.llm.report import JOB_LOG_ENV, assemble_scores, read_job_log, report_run

CONFIG = JudgeConfig(provider="openai", model="fake-judge")
REQUESTS = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"rate item {i}"}]) for i in range(3)]


class ScoreByPrompt:
    """A provider whose reply is "Score: <n>", n = 2 + the prompt's item number; it counts its calls."""

    name = "fake"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def complete(self, messages, **fields):
        content = messages[-1]["content"]
        self.asked.append(content)
        return Completion(text=f"Score: {2 + int(content.rsplit(' ', 1)[1])}", input_tokens=5, output_tokens=2)


@pytest.fixture
def job_log(tmp_path, monkeypatch):
    path = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(JOB_LOG_ENV, str(path))
    monkeypatch.delenv("RECJUDGE_LLM_ASK_ONLY", raising=False)
    return path


def test_each_step_hands_the_next_what_it_needs(tmp_path, job_log):
    store = tmp_path / "store"
    run_judge(CONFIG, REQUESTS[:1], store=store, provider=ScoreByPrompt(), progress=False)  # k0 is stored
    provider = ScoreByPrompt()
    started = time.perf_counter()

    # 1. plan: the store's reply is in hand, the other two are to ask; nothing asked yet
    job = open_job(CONFIG, REQUESTS, store, read_store=True, order_prompts=True)
    assert len(job.records) == 1 and [request.key for request, _ in job.to_ask.values()] == ["k1", "k2"]
    assert provider.asked == []

    # 2. ask: only the two missing prompts reach the provider, and their replies are in the store on disk
    ask_for_missing(job, "auto", provider, AskOptions(progress=False))
    assert sorted(provider.asked) == ["rate item 1", "rate item 2"]  # asked side by side: any order
    on_disk = ResponseStore(store)
    on_disk.refresh(CONFIG.provider, CONFIG.model)
    assert len(on_disk.peek_many(key for _, _, key in job.slots)) == 3
    assert len(read_job_log(job_log)) == 1  # only the first run has reported so far

    # 3. assemble: one score per reply, in the caller's order, read from the reply text
    scores = assemble_scores(job, parse_likert)
    assert list(scores.table["score"]) == [2.0, 3.0, 4.0]
    assert list(scores.table["from_store"]) == [True, False, False]

    # 4. report: what the run did, logged
    run = report_run(job, "auto", scores, started)
    assert (run.report.n_from_store, run.report.n_asked, run.report.n_provider_calls) == (1, 2, 2)
    assert run.report.concurrency["mode"] == "adaptive"  # step 2's gate, carried by the job to the report
    assert read_job_log(job_log)[-1]["n_asked"] == 2

    # run_judge is these four steps: a replay of the same prompts reads what step 2 stored
    replay = run_judge(CONFIG, REQUESTS, store=store, mode="replay", progress=False)
    assert list(replay.table["score"]) == list(run.table["score"])
    assert replay.table["reply"].equals(run.table["reply"])
    assert replay.report.n_from_store == 3 and replay.report.n_asked == 0


def test_a_failed_ask_stops_the_run_before_anything_is_assembled_or_reported(tmp_path, job_log):
    store = tmp_path / "store"
    run_judge(CONFIG, REQUESTS[:2], store=store, provider=ScoreByPrompt(), progress=False)
    assert len(read_job_log(job_log)) == 1
    with pytest.raises(MissingReplies) as missing:  # step 2 in replay mode: k2 is not in the store
        run_judge(CONFIG, REQUESTS, store=store, mode="replay", progress=False)
    assert [slot[0] for slot in missing.value.missing] == ["k2"]
    assert len(read_job_log(job_log)) == 1  # step 4 never ran for the failed replay


def test_each_job_logs_the_stored_replies_its_reader_read(tmp_path, monkeypatch):
    """The reading log (``log_readings``) names the judge, its scoring, the reader as every process names it and the
    store keys of the replies read: what an exact count of a change of the reading rules needs."""
    import json

    from recjudge.chapters.reply_readings import engine_readers, logged_readings
    from recjudge.llm.report import READING_LOG_ENV, reader_name
    from recjudge.serendipity.prompt_strategies import parser_for

    monkeypatch.delenv("RECJUDGE_LLM_ASK_ONLY", raising=False)
    logs = tmp_path / "readings"
    monkeypatch.setenv(READING_LOG_ENV, str(logs / "proxy_vs_llm.jsonl"))
    store = tmp_path / "store"
    run = run_judge(CONFIG, REQUESTS, store=store, provider=ScoreByPrompt(), progress=False)
    run_judge(CONFIG, REQUESTS[:2], parser_for("base"), store=store, mode="replay", progress=False)
    lines = [json.loads(line) for line in (logs / "proxy_vs_llm.jsonl").read_text().splitlines()]
    assert [line["reader"] for line in lines] == [reader_name(parse_likert), reader_name(parser_for("base"))]
    assert lines[0]["store_keys"] == sorted(run.table["store_key"]) and len(lines[1]["store_keys"]) == 2
    assert lines[0]["judge"] == CONFIG.label and lines[0]["scoring"] == "generate"
    assert engine_readers()[lines[1]["reader"]] == "serendipity[base]"
    logged = logged_readings(logs)
    assert logged.groupby("reader").size().to_dict() == {"parse_likert": 3, "serendipity[base]": 2}
