"""Variants of the book: plan sums from the engine's job lines, the cost gate, and `recjudge run --judge` writing a
variant beside the book without touching the committed results (small fake notebooks, not the real chapters)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from runplan_project import write_notebook

from recjudge.cli import main
from recjudge.compendium.variants import (
    PlanLogError,
    cost_gate,
    format_plan,
    job_costs,
    plan_by_judge,
    plan_table,
    read_plan_log,
    variant_name,
)
from recjudge.llm import pricing
from recjudge.llm.judge_spec import JudgeSpec, parse_judge


def job(**fields) -> dict:
    """A job line as the engine writes it in plan mode: provider, model, requests, missing + JobEstimate fields."""
    line = {"provider": "openai", "model": "gpt-4o-mini", "n_requests": 10, "n_judgments": 10, "config_label": "x",
            "n_prompts": 10, "n_replies": 10, "n_missing": 10, "input_tokens": 1000, "output_tokens": 100,
            "cost_usd": 0.0, "seconds": 30.0, "batch": False}
    line.update(fields)
    return line


def write_log(path: Path, *jobs: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in jobs))
    return path


# ---------------------------------------------------------------------------------------------------------------
# Plan sums


def test_plan_table_sums_per_chapter_and_in_total(tmp_path: Path) -> None:
    logs = {
        "rq1": write_log(tmp_path / "rq1.jsonl", job(n_missing=8, n_judgments=10, input_tokens=2_000_000,
                                                     output_tokens=1_000_000, seconds=60.0),
                         job(provider="local", model="smollm2-135m-instruct-q4_1", n_missing=0, input_tokens=0,
                             output_tokens=0, seconds=0.0)),
        "rq2": write_log(tmp_path / "rq2.jsonl", job(n_missing=5, n_judgments=5, input_tokens=1_000_000,
                                                     output_tokens=0, seconds=100.0)),
        "no_llm": tmp_path / "absent.jsonl",  # a chapter that asked nothing writes no line
    }
    table = plan_table(logs).set_index("chapter")
    # gpt-4o-mini at $0.15 / $0.60 per million tokens, batch half price
    assert table.loc["rq1", ["jobs", "judgments", "missing"]].tolist() == [2, 20, 8]
    assert table.loc["rq1", "cost_list_usd"] == pytest.approx(2 * 0.15 + 1 * 0.60)
    assert table.loc["rq1", "cost_batch_usd"] == pytest.approx((2 * 0.15 + 1 * 0.60) / 2)
    assert table.loc["rq1", "cost_run_usd"] == table.loc["rq1", "cost_list_usd"]  # asked without --batch
    assert table.loc["no_llm", ["jobs", "missing", "input_tokens", "cost_list_usd", "seconds"]].tolist() == [
        0, 0, 0, 0.0, 0.0]
    assert table.loc["total", "missing"] == 13
    assert table.loc["total", "input_tokens"] == 3_000_000
    assert table.loc["total", "cost_list_usd"] == pytest.approx(0.90 + 0.15)
    assert table.loc["total", "seconds"] == pytest.approx(160.0)
    # The engine's own estimate of each job's list cost is what the table sums
    expected = pricing.cost_usd("openai", "gpt-4o-mini", 2_000_000, 1_000_000)
    assert job_costs(job(input_tokens=2_000_000, output_tokens=1_000_000))[0] == expected
    printed = format_plan(plan_table(logs))
    assert "missing judgments" in printed and "$1.05" in printed and "total" in printed


def test_batch_jobs_wait_together_and_are_priced_at_the_batch_rate(tmp_path: Path) -> None:
    day = 24 * 3600.0
    logs = {"a": write_log(tmp_path / "a.jsonl", job(batch=True, seconds=day), job(seconds=10.0)),
            "b": write_log(tmp_path / "b.jsonl", job(batch=True, seconds=day))}
    table = plan_table(logs).set_index("chapter")
    assert table.loc["a", "seconds"] == pytest.approx(day + 10.0)
    assert table.loc["total", "seconds"] == pytest.approx(day + 10.0)  # one window for every chapter's batches
    single = job_costs(job())
    assert table.loc["b", "cost_run_usd"] == pytest.approx(single[1])


def test_plan_by_judge_sums_each_judge_over_every_chapter(tmp_path: Path) -> None:
    local = {"provider": "local", "model": "smollm2-135m-instruct-q4_1"}
    logs = {"a": write_log(tmp_path / "a.jsonl", job(n_missing=3, seconds=10.0), job(**local, seconds=100.0)),
            "b": write_log(tmp_path / "b.jsonl", job(n_missing=4, seconds=20.0, input_tokens=3000),
                           job(**local, seconds=50.0, n_missing=1))}
    by_judge = plan_by_judge(logs).set_index("judge")
    assert list(by_judge.index) == ["openai:gpt-4o-mini", "local:smollm2-135m-instruct-q4_1"]
    assert by_judge.loc["openai:gpt-4o-mini", ["jobs", "missing", "input_tokens"]].tolist() == [2, 7, 4000]
    assert by_judge.loc["openai:gpt-4o-mini", "seconds"] == pytest.approx(30.0)
    assert by_judge.loc["local:smollm2-135m-instruct-q4_1", "seconds"] == pytest.approx(150.0)
    # Every judge's jobs summed over the judges are the chapters' total
    total = plan_table(logs).set_index("chapter").loc["total"]
    for column in ("jobs", "missing", "input_tokens", "output_tokens", "cost_list_usd", "seconds"):
        assert by_judge[column].sum() == pytest.approx(total[column])
    assert "local:smollm2-135m-instruct-q4_1" in format_plan(plan_by_judge(logs))


def test_a_plan_with_no_judge_jobs_prints_one_line_not_an_empty_frame(tmp_path: Path) -> None:
    logs = {"a": write_log(tmp_path / "a.jsonl")}
    printed = format_plan(plan_by_judge(logs))
    assert printed == "(no judge jobs: no judge has a judgment to count)" and "Empty DataFrame" not in printed


def test_unknown_prices_stay_unknown_and_own_servers_cost_nothing(tmp_path: Path) -> None:
    logs = {"a": write_log(tmp_path / "a.jsonl", job(model="llama-70b@my-vllm"), job())}
    table = plan_table(logs).set_index("chapter")
    assert math.isnan(table.loc["a", "cost_list_usd"]) and math.isnan(table.loc["total", "cost_list_usd"])
    assert "unknown" in format_plan(plan_table(logs))
    free = plan_table(logs, free={("openai", "llama-70b@my-vllm")}).set_index("chapter")
    assert free.loc["a", "cost_list_usd"] == pytest.approx(job_costs(job())[0])


def test_plan_log_lines_that_break_the_contract_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(job()) + "\n\n{not json\n")
    with pytest.raises(PlanLogError, match=r"x.jsonl, line 3: not JSON"):
        read_plan_log(path)
    write_log(path, job(input_tokens="many"))
    with pytest.raises(PlanLogError, match=r"line 1: field 'input_tokens' missing or not a number"):
        read_plan_log(path)
    broken = job()
    del broken["n_missing"]
    write_log(path, broken)
    with pytest.raises(PlanLogError, match=r"line 1: field 'n_missing' missing or not a count"):
        read_plan_log(path)


def test_cost_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "1")
    expensive = plan_table({"a": write_log(tmp_path / "a.jsonl", job(input_tokens=10_000_000))})
    assert "above the limit of $1.00 (env RECJUDGE_LLM_MAX_USD); nothing was asked" in cost_gate(expensive, False)
    assert cost_gate(expensive, True) is None
    cheap = plan_table({"a": write_log(tmp_path / "b.jsonl", job())})
    assert cost_gate(cheap, False) is None
    unknown = plan_table({"a": write_log(tmp_path / "c.jsonl", job(model="gpt-9"))})
    assert "cost is unknown" in cost_gate(unknown, False)


def test_a_plan_says_whether_its_live_run_would_stop_at_the_spending_limit(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from recjudge.compendium.variants import limit_line

    monkeypatch.delenv("RECJUDGE_LLM_MAX_USD", raising=False)  # the default limit
    expensive = plan_table({"a": write_log(tmp_path / "a.jsonl", job(input_tokens=50_000_000))})  # $7.50
    line = limit_line(expensive, paid=True)
    assert "about $7.50 is above the limit of $5.00 (env RECJUDGE_LLM_MAX_USD)" in line
    assert "will stop before its first request" in line and "RECJUDGE_LLM_MAX_USD=8" in line
    cheap = plan_table({"a": write_log(tmp_path / "b.jsonl", job())})
    assert "within the limit of $5.00" in limit_line(cheap, paid=True)
    assert limit_line(expensive, paid=False) is None  # the reader's own server: no limit applies
    unknown = plan_table({"a": write_log(tmp_path / "c.jsonl", job(model="gpt-9"))})
    assert "cost is unknown" in limit_line(unknown, paid=True)


def test_variant_names() -> None:
    judge = parse_judge("openai:gpt-4o-mini")
    assert variant_name([judge], "paper") == "openai-gpt-4o-mini-paper"
    assert variant_name([], "smoke") == "default-smoke"
    two = variant_name([judge, parse_judge("anthropic:claude-3-5-haiku")], "smoke")
    assert two == "openai-gpt-4o-mini+anthropic-claude-3-5-haiku-smoke"
    many = [parse_judge(f"openai:model-number-{index}-with-a-long-name") for index in range(6)]
    assert len(variant_name(many, "smoke")) <= 100 and "+5-more-" in variant_name(many, "smoke")



def test_two_judges_of_one_model_never_share_a_variant_folder(tmp_path: Path) -> None:
    def judge_file(name: str, extra: str) -> JudgeSpec:
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"provider: openai\nmodel: qwen-7b@my-server\nbase_url: http://127.0.0.1:8000/v1\n{extra}")
        return parse_judge(str(path))

    cold, warm = judge_file("cold", "temperature: 0.0\n"), judge_file("warm", "temperature: 0.7\n")
    named = {variant_name([judge], "smoke") for judge in (
        cold, warm, judge_file("plain", ""), judge_file("labelled", "label: Qwen\n"),
        judge_file("seeded", "seed: 3\n"), judge_file("nucleus", "options: {top_p: 0.9}\n"))}
    assert len(named) == 6 and all(name.startswith("openai-qwen-7b-my-server-") for name in named)
    # The same judge is the same variant, wherever it is served and whatever the server calls it.
    moved = parse_judge(str(tmp_path / "cold.yaml"), base_url="http://127.0.0.1:9001/v1", served_model="default")
    assert variant_name([moved], "smoke") == variant_name([cold], "smoke")
    assert variant_name([judge_file("cold-again", "temperature: 0.0\n")], "smoke") == variant_name([cold], "smoke")


# ---------------------------------------------------------------------------------------------------------------
# `recjudge run --judge`: a variant, never an overwrite

# A chapter that takes judges: writes the labels it got, and in plan mode the job line the engine would write.
JUDGED_CELL = """
import json, os
import pandas as pd
from recjudge.compendium.results import save_table
save_table(pd.DataFrame({"judge": [j["label"] for j in judges] or ["book"], "size": sample_size}), NOTEBOOK, "judges")
if os.environ.get("RECJUDGE_LLM_MODE") == "plan":
    with open(os.environ["RECJUDGE_PLAN_LOG"], "a") as log:
        for j in judges:
            log.write(json.dumps({"provider": j["provider"], "model": j["model"], "n_requests": sample_size,
                                  "n_judgments": sample_size,
                                  "config_label": j["label"], "n_prompts": sample_size,
                                  "n_replies": sample_size, "n_missing": sample_size,
                                  "input_tokens": 1_000_000 * sample_size, "output_tokens": 0, "cost_usd": 0.0,
                                  "seconds": 2.0 * sample_size, "batch": False}) + "\\n")
"""

PLAN = """runs:
  - {name: judged, notebook: notebooks/judged.ipynb, asks_llm: true}
  - {name: not_yet, notebook: notebooks/not_yet.ipynb, asks_llm: true}
  - {name: plain, notebook: notebooks/plain.ipynb}
profiles:
  smoke:
    judged: {sample_size: 2}
"""


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny project with a committed result table; its fake chapters write the job lines of the engine's dry-run
    mode themselves (test_the_engines_plan_lines_are_what_the_plan_reads checks the engine writes the same)."""
    root = tmp_path / "project"
    (root / "src" / "recjudge").mkdir(parents=True)
    (root / "src" / "recjudge" / "module.py").write_text("ANSWER = 1\n")
    (root / "data" / "llm").mkdir(parents=True)
    write_notebook(root / "notebooks" / "judged.ipynb", JUDGED_CELL,
                   'NOTEBOOK = "judged"\nsample_size = 3\njudges = []')
    write_notebook(root / "notebooks" / "not_yet.ipynb", "raise RuntimeError('must not run with --judge')",
                   "local_model = 'x'")
    write_notebook(root / "notebooks" / "plain.ipynb", "print(rows)", "rows = 1")
    (root / "runplan.yaml").write_text(PLAN)
    (root / "results" / "judged").mkdir(parents=True)
    (root / "results" / "judged" / "judges.csv").write_text("judge,size\nbook,3\n")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_STORE", str(root / "data" / "llm"))
    monkeypatch.delenv("RECJUDGE_RESULTS", raising=False)
    monkeypatch.chdir(root)
    return root


def committed(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted((root / "results").rglob("*"))
            if path.is_file()}


def test_a_judged_run_writes_a_variant_and_leaves_the_book_alone(book: Path, capsys: pytest.CaptureFixture) -> None:
    model = book / "models" / "my-judge.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")  # only checked to exist: nothing is asked of a local judge here
    before = committed(book)
    assert main(["run", "--judge", f"local:{model}", "--profile", "smoke"]) == 0
    output = capsys.readouterr()
    assert ("1 chapter(s) ask an LLM but do not take the 'judges' parameter yet, so they are left out of this "
            "variant: not_yet") in output.err
    variant = book / "variants" / f"{parse_judge(f'local:{model}').slug}-smoke"
    assert (variant / "results" / "judged" / "judges.csv").read_text() == "judge,size\nmy-judge,2\n"
    assert (variant / "notebooks" / "judged.ipynb").is_file()
    described = json.loads((variant / "variant.json").read_text())
    assert described["llm_runs_without_judges_parameter"] == ["not_yet"] and described["runs"] == ["judged"]
    assert committed(book) == before, "the committed results are byte-identical"
    assert not (book / "book").exists(), "no executed notebook went to book/notebooks/"
    assert not (variant / "notebooks" / "plain.ipynb").exists(), "a judge changes nothing in a chapter without LLM"
    # The second time, the variant's own skip records say it is up to date.
    assert main(["run", "--judge", f"local:{model}", "--profile", "smoke"]) == 0
    assert "up to date (inputs unchanged), skipped" in capsys.readouterr().out


def test_plan_prints_per_chapter_and_total_and_asks_nothing(book: Path, capsys: pytest.CaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a plan needs no key
    before = committed(book)
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--plan"]) == 0
    printed = capsys.readouterr().out
    assert "Plan (nothing asked): judges openai:gpt-4o-mini, profile smoke" in printed
    rows = {line.split()[0]: line for line in printed.splitlines() if line.split()[:1] in (["judged"], ["total"])}
    # 2 judgments wanted, 2 missing, none left out; 2M input tokens at $0.15 per million: $0.30 at list price,
    # $0.15 through the batch API
    assert rows["judged"].split()[1:9] == ["1", "2", "2", "0", "~2,000,000", "<=0", "$0.30", "$0.15"]
    assert rows["total"].split()[1:9] == ["1", "2", "2", "0", "~2,000,000", "<=0", "$0.30", "$0.15"]
    judge_rows = [line for line in printed.splitlines() if line.split()[:1] == ["openai:gpt-4o-mini"]]
    assert [row.split()[1:9] for row in judge_rows] == [["1", "2", "2", "asked", "~2,000,000", "<=0", "$0.30",
                                                        "$0.15"]]
    assert "Spending limit: about $0.30 is within the limit" in printed
    assert "[plan] priced in" in printed
    variant = book / "variants" / "openai-gpt-4o-mini-smoke"
    assert (variant / "plan" / "plan_by_chapter.csv").is_file() and (variant / "plan" / "plan_by_judge.csv").is_file()
    assert not (variant / "results").exists(), "a plan writes no variant results"
    assert (variant / "plan" / "logs" / "judged.jsonl").is_file()
    assert committed(book) == before


def test_a_live_run_above_the_limit_stops_before_asking_unless_confirmed(
        book: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "0.10")
    variant = book / "variants" / "openai-gpt-4o-mini-smoke"
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke"]) == 2
    output = capsys.readouterr()
    assert "above the limit of $0.10 (env RECJUDGE_LLM_MAX_USD); nothing was asked. Confirm with --yes" in output.err
    assert not (variant / "results").exists() and not (variant / "notebooks").exists()
    # Confirmed, the chapter runs into the variant.
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--yes"]) == 0
    assert (variant / "results" / "judged" / "judges.csv").read_text() == "judge,size\ngpt-4o-mini,2\n"


@pytest.mark.parametrize("value", ["abc", "-1", "inf", "nan"])
def test_a_cost_limit_that_is_not_a_number_of_dollars_stops_the_run_at_once(
        book: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", value)
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "RECJUDGE_LLM_MAX_USD" in err and "Traceback" not in err
    assert not (book / "variants").exists(), "nothing priced, nothing written"


def test_a_cost_limit_of_zero_asks_nothing_that_costs_money(
        book: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from recjudge.llm.estimate import cost_limit

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "0")
    assert cost_limit() == 0.0
    variant = book / "variants" / "openai-gpt-4o-mini-smoke"
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke"]) == 2
    assert "above the limit of $0.00 (env RECJUDGE_LLM_MAX_USD); nothing was asked" in capsys.readouterr().err
    assert not (variant / "results").exists() and not (variant / "notebooks").exists()
    # What costs nothing (a local model, the reader's own server) is within a limit of zero.
    free = plan_table({"a": write_log(tmp_path / "free.jsonl", job(model="own"))}, {("openai", "own")})
    assert cost_gate(free, False) is None


def test_a_profile_alone_is_a_variant_too(book: Path) -> None:
    (book / "notebooks" / "not_yet.ipynb").unlink()
    write_notebook(book / "notebooks" / "not_yet.ipynb", "print(local_model)", "local_model = 'x'")
    before = committed(book)
    assert main(["run", "--profile", "smoke", "--only", "judged"]) == 0
    assert (book / "variants" / "default-smoke" / "results" / "judged" / "judges.csv").read_text() == (
        "judge,size\nbook,2\n")
    assert committed(book) == before


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--judge", "vllm:llama"], "error: --judge vllm:llama: unknown provider 'vllm'"),
        (["--judge", "openai:gpt-4o-mini", "--profile", "huge"],
         "unknown profile 'huge' (--profile); the run plan defines ['default', 'smoke']"),
        (["--base-url", "http://127.0.0.1:8000/v1"], "error: --base-url describe(s) a judge: give it with --judge"),
        (["--judge", "openai:gpt-4o-mini"], "needs the environment variable OPENAI_API_KEY"),
        (["--judge", "openai:default", "--base-url", "http://127.0.0.1:8000/v1"],
         "model name 'default' does not identify the weights"),
        (["--judge", "openai:gpt-4o-mini", "--plan", "--only", "not_yet"],
         "--only ['not_yet'] with --judge: these chapters ask an LLM but do not take the 'judges' parameter yet"),
        (["--judge", "openai:gpt-4o-mini", "--plan", "--only", "plain"],
         "--only ['plain'] with --judge: these chapters ask no LLM"),
        (["--judge", "local:smollm2-135m-instruct-q4_1", "--batch"], "--batch needs a provider with a batch API"),
        (["--with-book-judges", "--plan"], "--with-book-judges asks the book's judges beside yours: give yours"),
    ],
)
def test_bad_input_stops_before_anything_runs(book: Path, capsys: pytest.CaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: str) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", *argv]) == 2
    assert expected in capsys.readouterr().err
    assert not (book / "variants").exists() and not (book / "book").exists()


def test_the_engines_plan_lines_are_what_the_plan_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recjudge.llm import JudgeRequest, run_judge

    log = tmp_path / "plan" / "chapter.jsonl"
    monkeypatch.setenv("RECJUDGE_PLAN_LOG", str(log))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # nothing is asked
    config = parse_judge("openai:gpt-4o-mini").to_config(max_tokens=4)
    requests = [JudgeRequest(f"q{i}", [{"role": "user", "content": f"Rate item {i} from 1 to 5."}]) for i in range(3)]
    run = run_judge(config, requests, mode="plan", store=tmp_path / "store", progress=False)
    assert run.report.n_planned == 3
    [line] = read_plan_log(log)
    assert (line["_judgments"], line["_missing"]) == (3, 3)
    listed, batch, _ = job_costs(line)
    assert listed == pytest.approx(line["list_cost_usd"]) and batch == pytest.approx(line["batch_cost_usd"])


def test_list_shows_the_variant_runs_and_needs_no_key(book: Path, capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == ["judged"]
    assert '"judges": [{"label": "gpt-4o-mini", "model": "gpt-4o-mini", "provider": "openai"}]' in "\n".join(lines)
    variant = book / "variants" / "openai-gpt-4o-mini-smoke"
    assert not (variant / "notebooks").exists() and not (variant / "results").exists(), "listing executes nothing"


# A chapter that asks each reader's judge (and its own local judge, which must not batch) through the engine.
ASKING_CELL = """
import pandas as pd
from recjudge.compendium.results import save_table
from recjudge.llm import JudgeRequest, run_judge
from recjudge.llm.judge_spec import judge_configs
requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"film {i}"}]) for i in range(sample_size)]
rows = []
for label, config in judge_configs(judges, max_tokens=4):
    run = run_judge(config, requests, progress=False, batch_poll_s=0)
    rows.append({"judge": label, "answered": int(run.table["score"].notna().sum())})
save_table(pd.DataFrame(rows), NOTEBOOK, "answered")
"""


def test_batch_submits_every_chapter_in_one_pass_and_the_same_command_collects(
        book: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from mock_openai_server import MockOpenAIServer

    write_notebook(book / "notebooks" / "judged.ipynb", ASKING_CELL,
                   'NOTEBOOK = "judged"\nsample_size = 3\njudges = []')
    monkeypatch.delenv("RECJUDGE_LLM_BATCH_WAIT", raising=False)
    monkeypatch.delenv("RECJUDGE_LLM_MODE", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    answered = book / "variants" / "anthropic-claude-sonnet-4-6-smoke" / "results" / "judged" / "answered.csv"
    # The mock serves Anthropic's Message Batches (a reader's own OpenAI-compatible server is refused for --batch).
    with MockOpenAIServer(batch_polls_to_end=2) as server:
        argv = ["run", "--judge", "anthropic:claude-sonnet-4-6", "--base-url", server.root_url, "--batch",
                "--profile", "smoke", "--yes"]
        # First pass: the prompts are submitted, polled once, and the command returns without waiting.
        assert main(argv) == 0
        printed = capsys.readouterr().out
        assert "submitted in one pass, not yet answered: 2 prompt(s) of anthropic:claude-sonnet-4-6" in printed
        assert answered.read_text() == "judge,answered\nclaude-sonnet-4-6,0\n"
        assert server.batch_submissions == 1 and server.total_requests == 0
        # Second pass: the chapter runs again although its inputs are unchanged, and collects the ended batch.
        assert main(argv) == 0
        printed = capsys.readouterr().out
        assert "collecting batches: 2 prompt(s) of anthropic:claude-sonnet-4-6" in printed
        assert "not yet answered" not in printed
        assert answered.read_text() == "judge,answered\nclaude-sonnet-4-6,2\n"
        assert server.batch_submissions == 1, "collected, never submitted again"


SUMMARY_CELL = """
from recjudge.compendium.results import load_table_or_committed, save_table
save_table(load_table_or_committed("judged", "judges"), NOTEBOOK, "seen")
"""


def test_a_judged_run_also_runs_the_pages_that_read_its_tables(book: Path, capsys: pytest.CaptureFixture) -> None:
    write_notebook(book / "notebooks" / "summary.ipynb", SUMMARY_CELL, 'NOTEBOOK = "summary"')
    (book / "runplan.yaml").write_text(PLAN.replace(
        "profiles:", "  - {name: summary, notebook: notebooks/summary.ipynb, results_of: [judged]}\nprofiles:"))
    before = committed(book)
    assert main(["run", "--judge", "openai:gpt-4o-mini", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert listed == ["judged", "summary"], "the summary page runs with the judged chapter, the plain one does not"
    model = book / "models" / "my-judge.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    assert main(["run", "--judge", f"local:{model}", "--only", "summary"]) == 0
    variant = book / "variants" / f"{parse_judge(f'local:{model}').slug}-default"
    assert json.loads((variant / "variant.json").read_text())["runs"] == ["summary"]
    # the variant did not run the judged chapter here: the summary read the committed table, not nothing
    assert (variant / "results" / "summary" / "seen.csv").read_text() == "judge,size\nbook,3\n"
    assert main(["run", "--judge", f"local:{model}"]) == 0
    assert (variant / "results" / "summary" / "seen.csv").read_text() == "judge,size\nmy-judge,3\n"
    assert json.loads((variant / "variant.json").read_text())["runs"] == ["judged", "summary"], "added, kept"
    assert main(["run", "--judge", f"local:{model}", "--only", "summary"]) == 0
    assert json.loads((variant / "variant.json").read_text())["runs"] == ["judged", "summary"]
    printed = capsys.readouterr().out
    assert f"`recjudge book --variant {variant.name}` builds _build/variants/{variant.name}/html" in printed
    assert committed(book) == before


def test_a_summary_page_that_declares_judges_gets_every_readers_judge(book: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write_notebook(book / "notebooks" / "summary.ipynb", SUMMARY_CELL + """
import pandas as pd
save_table(pd.DataFrame({"label": [judge["label"] for judge in judges]}), NOTEBOOK, "labels")
""", 'NOTEBOOK = "summary"\njudges = []')
    (book / "runplan.yaml").write_text(PLAN.replace(
        "profiles:", "  - {name: summary, notebook: notebooks/summary.ipynb, results_of: [judged]}\nprofiles:"))
    before = committed(book)
    judges = ["--judge", "openai:gpt-4o-mini", "--judge", "anthropic:claude-sonnet-4-6"]
    assert main(["run", *judges, "--plan"]) == 0
    # A plan runs only the chapters that ask (a summary page asks nothing); the run itself gives the page the judges
    assert not list((book / "variants").glob("*/plan/results/summary"))
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "replay")  # the run, from the store alone: nothing asked
    assert main(["run", *judges]) == 0
    labels = next((book / "variants").glob("*/results/summary/labels.csv"))
    assert labels.read_text() == "label\ngpt-4o-mini\nclaude-sonnet-4-6\n"
    assert committed(book) == before


def test_a_local_judge_without_its_file_plans_and_replays_but_is_not_asked(
        book: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECJUDGE_MODELS_DIR", str(book / "no-models"))
    judge = ["run", "--judge", "local:gemma-3-270m-q4_k_m", "--list"]
    assert main([*judge, "--plan"]) == 0
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "replay")
    assert main(judge) == 0
    capsys.readouterr()
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "auto")  # auto may have to ask: then the file is needed
    assert main(judge[:-1]) == 2
    assert "local model 'gemma-3-270m-q4_k_m' is not fetched" in capsys.readouterr().err


REFUSED_CELL = """
from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.providers.base import ProviderError


class Refusing:
    name = "refusing"

    def complete(self, messages, **options):
        raise ProviderError("HTTP 400 this server refuses every prompt")


config = JudgeConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"film {i}"}]) for i in range(sample_size)]
run = run_judge(config, requests, provider=Refusing(), progress=False)
"""


def test_a_chapter_whose_judgments_failed_is_not_done(book: Path, capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECJUDGE_LLM_MODE", raising=False)
    write_notebook(book / "notebooks" / "judged.ipynb", REFUSED_CELL,
                   'NOTEBOOK = "judged"\nsample_size = 3\njudges = []')
    assert main(["run", "--only", "judged"]) == 4
    err = capsys.readouterr().err
    assert "error: judgments failed in 1 chapter(s): judged: 3 failed judgment(s) (3 refused; first: refused: " \
           "HTTP 400" in err and "--allow-failures exits 0" in err
    assert main(["run", "--only", "judged", "--allow-failures"]) == 0  # executed again: no skip record was kept
    captured = capsys.readouterr()
    assert "judged: executed in" in captured.out and "judged: up to date" not in captured.out
    assert "warning: judgments failed in 1 chapter(s)" in captured.err


def test_a_readers_judge_at_another_scale_is_asked_alone_unless_the_book_judges_are_wanted(book: Path) -> None:
    import argparse

    from recjudge.compendium.runplan import ASK_ONLY_ENV, add_arguments
    from recjudge.compendium.runplan.command import _prepare
    from recjudge.llm import ask_options

    assert ASK_ONLY_ENV == ask_options.ASK_ONLY_ENV  # one variable, named in both layers

    def environment(*argv: str) -> dict[str, str]:
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        invocation = _prepare(parser.parse_args(["--plan", *argv]), book)
        return {**dict(invocation.target(book).environment), **dict(invocation.plan_target(book).environment)}

    assert environment("--judge", "openai:gpt-4o-mini", "--profile", "smoke")[ASK_ONLY_ENV] == "openai:gpt-4o-mini"
    assert ASK_ONLY_ENV not in environment("--judge", "openai:gpt-4o-mini", "--profile", "smoke",
                                           "--with-book-judges")
    assert ASK_ONLY_ENV not in environment("--judge", "openai:gpt-4o-mini")  # default: the store holds the book's
    assert ASK_ONLY_ENV not in environment("--profile", "smoke")  # no reader's judge: the book's are the judges


def test_a_run_ends_with_a_summary_per_judge(tmp_path: Path) -> None:
    from recjudge.compendium.runplan import Run, RunOutcome, Target, judge_summary

    target = Target(tmp_path / "notebooks", tmp_path / "cache")
    runs = [Run("a", "a.md"), Run("b", "b.md"), Run("c", "c.md")]
    counts = dict(n_replies_wanted=10, n_asked=0, n_from_store=0, n_failed=0, n_unparsable=0, n_shape_violations=0,
                  n_left_out=0, n_planned=0)
    lines = {"a": [{"provider": "openai", "model": "m", **counts, "n_asked": 7, "n_from_store": 3, "n_unparsable": 2},
                   {"provider": "local", "model": "s", **counts, "n_from_store": 4, "n_left_out": 6}],
             "b": [{"provider": "openai", "model": "m", **counts, "n_asked": 8, "n_failed": 2}],
             "c": [{"provider": "openai", "model": "m", **counts, "n_asked": 10}]}
    for run in runs:
        write_log(target.job_log(run), *({"judge": "x", **line} for line in lines[run.name]))
    outcomes = [RunOutcome(runs[0], "executed", 1.0, ""), RunOutcome(runs[1], "executed", 1.0, ""),
                RunOutcome(runs[2], "skipped", 0.0, "inputs unchanged")]  # a skipped run asked nothing now
    rows = {line.split()[0]: line.split()[1:] for line in judge_summary(outcomes, target).splitlines()[1:]}
    # judgments, asked, from store, failed, unparsable, out of shape, left out
    assert rows == {"openai:m": ["20", "15", "3", "2", "2", "0", "0"], "local:s": ["10", "0", "4", "0", "0", "0", "6"]}
    assert judge_summary(outcomes[2:], target) == ""
    write_log(target.job_log(runs[2]), {"judge": "x", "provider": "recorded", "model": "gpt-3.5-turbo", **counts})
    summary = judge_summary([RunOutcome(runs[2], "executed", 1.0, "")], target).splitlines()
    assert summary[1].split() == ["recorded:gpt-3.5-turbo", "10", "0", "0", "0", "0", "0", "0"]
    assert summary[2].startswith("recorded:gpt-3.5-turbo: judgments recorded in a dataset's own file, read from it")


@pytest.mark.skipif(__import__("shutil").which("make") is None, reason="make is not installed")
def test_make_book_takes_a_server_judge_and_the_book_judges_option() -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]

    def planned(*variables: str) -> str:
        result = subprocess.run(["make", "-n", "book", *variables], cwd=root, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return " ".join(result.stdout.split())

    commands = planned("JUDGE=openai:qwen2.5-7b-instruct", "PROFILE=smoke", "BASE_URL=http://127.0.0.1:8080/v1",
                       "SERVED_MODEL=default", "WITH_BOOK_JUDGES=1")
    # each value one quoted shell word (tests/test_makefile.py)
    assert ("-m recjudge run --judge 'openai:qwen2.5-7b-instruct' --profile 'smoke' --base-url "
            "'http://127.0.0.1:8080/v1' --served-model 'default' --with-book-judges") in commands
    # The book build names the same variant: the endpoint is not part of its name
    assert "-m recjudge book --judge 'openai:qwen2.5-7b-instruct' --profile 'smoke';" in commands
    assert "--base-url" not in planned("JUDGE=openai:gpt-4o-mini")


@pytest.mark.skipif(__import__("shutil").which("make") is None, reason="make is not installed")
def test_make_reads_its_settings_from_its_command_line_not_from_the_shell() -> None:
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    # Generic names a shell may export for another tool: none may change what `make run` or `make publish` does.
    shell = {**os.environ, "BASE_URL": "http://elsewhere.invalid/v1", "PROFILE": "paper", "JUDGE": "openai:gpt-4o",
             "SERVED_MODEL": "other", "JOBS": "7", "ALLOW_FAILURES": "1", "PUBLISH_TO": "folder:/tmp/elsewhere"}

    def planned(verb: str, *variables: str, flags: tuple[str, ...] = ()) -> str:
        result = subprocess.run(["make", *flags, "-n", verb, *variables], cwd=root, capture_output=True, text=True,
                                env=shell)
        assert result.returncode == 0, result.stderr
        return " ".join(result.stdout.split())

    for flags in ((), ("-e",)):  # -e (environment overrides) included
        commands = planned("run", flags=flags)
        assert "-m recjudge run ;" in commands, commands
        assert "-m recjudge book --publish 'origin' --branch 'gh-pages' ;" in planned("publish", flags=flags)
    # On the command line they are read as before (each one quoted shell word).
    assert "-m recjudge run --judge 'openai:x@vllm' --base-url 'http://127.0.0.1:8000/v1' --jobs '2';" in planned(
        "run", "JUDGE=openai:x@vllm", "BASE_URL=http://127.0.0.1:8000/v1", "JOBS=2")


def test_a_judge_left_out_is_named_with_what_asking_it_would_take(tmp_path: Path) -> None:
    from recjudge.compendium.variants import left_out_line

    local = {"provider": "local", "model": "smollm2-135m-instruct-q4_1", "weights_present": True}
    logs = {"a": write_log(tmp_path / "a.jsonl", job(n_missing=3, seconds=10.0),
                           job(**local, n_missing=5, seconds=7200.0, left_out=True,
                               rate_basis="median latency of 200 stored replies of this model")),
            "b": write_log(tmp_path / "b.jsonl", job(**local, n_missing=0, seconds=0.0, input_tokens=0,
                                                     output_tokens=0))}  # nothing missing here
    table = plan_table(logs).set_index("chapter")
    # The chapters' totals hold what is asked; what is left out is counted apart, its time and tokens not at all
    assert table.loc["total", ["missing", "left_out", "seconds", "input_tokens"]].tolist() == [3, 5, 10.0, 1000]
    by_judge = plan_by_judge(logs).set_index("judge")
    book = by_judge.loc["local:smollm2-135m-instruct-q4_1"]
    assert (bool(book["asked"]), book["left_out"], book["seconds"]) == (False, 5, 7200.0)
    assert book["rate_basis"] == "median latency of its stored replies"
    assert bool(by_judge.loc["openai:gpt-4o-mini", "asked"])
    assert left_out_line(plan_by_judge(logs)) == (
        "book's judges (local:smollm2-135m-instruct-q4_1): 5 judgments missing from the store at this scale, not "
        "asked (their rows are left out and named on each chapter's page; asking them would take ~2.0 h); "
        "--with-book-judges to ask them")
    assert "not asked" in format_plan(plan_by_judge(logs))


def test_only_a_judged_chapter_also_runs_the_pages_that_read_its_tables(book: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    """The README says the at-a-glance page runs again with the judged chapters; with `--only proxy_vs_llm` a
    variant's at-a-glance page was "Not run"."""
    write_notebook(book / "notebooks" / "summary.ipynb", SUMMARY_CELL, 'NOTEBOOK = "summary"')
    (book / "runplan.yaml").write_text(PLAN.replace(
        "profiles:", "  - {name: summary, notebook: notebooks/summary.ipynb, results_of: [judged]}\nprofiles:"))
    for argv in (["--judge", "openai:gpt-4o-mini"], ["--profile", "smoke"]):
        assert main(["run", *argv, "--only", "judged", "--list"]) == 0
        captured = capsys.readouterr()
        listed = [line.split()[0] for line in captured.out.splitlines() if not line.startswith(" ")]
        assert listed == ["judged", "summary"], argv
        assert "also runs summary" in captured.err
    assert main(["run", "--only", "judged", "--list"]) == 0  # the committed book runs what it is told
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()
            if not line.startswith(" ")] == ["judged"]


def test_only_a_run_the_profile_leaves_out_says_so(book: Path, capsys: pytest.CaptureFixture) -> None:
    """`--only` of a run the profile maps to `leave out` answered "no such run in the run plan"."""
    (book / "runplan.yaml").write_text(PLAN + "    plain: leave out\n")
    assert main(["run", "--profile", "smoke", "--only", "plain", "--list"]) == 2
    err = capsys.readouterr().err
    assert "no such run" not in err and "profile smoke leaves out ['plain']" in err and "runplan.yaml" in err
    assert main(["run", "--profile", "smoke", "--only", "nope", "--list"]) == 2
    assert "--only ['nope']: no such run in the run plan" in capsys.readouterr().err
