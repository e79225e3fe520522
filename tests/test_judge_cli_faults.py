"""``recjudge judge`` under faults: failed judgments against the loopback mock server, bad input files and options,
a bad output folder, ids that look alike in a request key, reserved column names, duplicated items, absurd ranks
and timestamps, spreadsheet formulas in the written CSVs."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
from mock_openai_server import FaultPlan, MockOpenAIServer, expected_score

from recjudge.cli import main
from recjudge.compendium.results import escape_formulas, unescape_formulas
from recjudge.llm import RetryPolicy, asking
from recjudge.prompts.serendipity import request_key
from recjudge.recsys import judge_cli, judging, metrics

LISTS = pd.DataFrame({"recommender": "A", "user_id": ["u1", "u1", "u2", "u2"], "rank": [1, 2, 1, 2],
                      "item_id": ["i1", "i2", "i1", "i3"]})
ITEMS = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4"], "name": ["Alpha (1990)", "Beta", "Gamma", "Delta"],
                      "categories": ["Drama|Comedy", "Horror", "", "Drama"]})
HISTORY = pd.DataFrame({"user_id": ["u1", "u2", "u2"], "item_id": ["i4", "i4", "i2"], "timestamp": [1, 1, 2]})


@pytest.fixture(autouse=True)
def placeholder_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("RECJUDGE_LLM_MAX_USD", raising=False)
    monkeypatch.delenv("RECJUDGE_LLM_CONFIRM_COST", raising=False)
    # retries that fail fast: every fault here is permanent, waiting out a real backoff would only slow the tests
    monkeypatch.setattr(asking, "RetryPolicy", lambda: RetryPolicy(max_attempts=2, base_delay_s=0.01,
                                                                   max_delay_s=0.02))


def write(tmp_path, lists=None, items=None, history=None) -> list[str]:
    paths = []
    for name, frame in (("lists", LISTS if lists is None else lists), ("items", ITEMS if items is None else items),
                        ("history", HISTORY if history is None else history)):
        path = tmp_path / f"{name}.csv"
        if isinstance(frame, (bytes, str)):
            path.write_bytes(frame if isinstance(frame, bytes) else frame.encode("utf-8"))
        else:  # CRLF line ends: a cell holding a bare CR is quoted
            frame.to_csv(path, index=False, lineterminator="\r\n")
        paths.append(str(path))
    return paths


def judge(tmp_path, capsys, *options, lists=None, items=None, history=None, out="out"):
    """Run ``recjudge judge`` in-process; returns (exit code, stderr)."""
    paths = write(tmp_path, lists, items, history)
    code = main(["judge", paths[0], "--items", paths[1], "--history", paths[2], "--store", str(tmp_path / "store"),
                 "--out", str(tmp_path / out), *options])
    return code, capsys.readouterr().err


def one_error_line(err: str, after_progress: bool = False) -> str:
    """The one ``recjudge judge: ...`` line of stderr (which holds nothing else, bar a progress bar when asked)."""
    lines = [line for line in err.splitlines() if line.startswith("recjudge judge: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert after_progress or err.strip() == lines[0], err
    return lines[0]


def last_user_turn(user, item, lists=LISTS, items=ITEMS, history=HISTORY) -> str:
    """The prompt text the mock server scores (the last user message) of one (user, item)."""
    pairs = pd.DataFrame({"user_id": [user], "item_id": [item]})
    return judging.requests_for(pairs, history, items)[0].messages[-1]["content"]


# ------------------------------------------------------------------ 1. failed judgments are missing, never 0
@pytest.mark.parametrize("server_options", [
    {"expected_key": "sk-the-right-key"},                                             # 401 on every request
    {"faults": FaultPlan(server_error=1.0, max_faults_per_prompt=100)},                # 500 on every request
])
def test_a_job_whose_every_judgment_fails_reports_no_metric_and_exits_4(tmp_path, capsys, monkeypatch,
                                                                        server_options):
    with MockOpenAIServer(**server_options) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto")
    assert code == 4 and judge_cli.EXIT_UNJUDGED == 4
    assert "4 of 4 judgments missing: 4 failed" in one_error_line(err, after_progress=True)
    overall = pd.read_csv(tmp_path / "out" / "overall.csv")
    assert overall["n_unjudged"].tolist() == [4]
    assert overall[["precision_ser@20", "ndcg_ser@20", "avg_score@20"]].isna().all(axis=None)  # not 0.0
    per_item = pd.read_csv(tmp_path / "out" / "item_scores.csv")
    assert per_item["score"].isna().all() and set(per_item["status"]) == {"failed"}


def test_a_partly_failed_job_scores_the_judged_items_only(tmp_path, capsys, monkeypatch):
    failing = last_user_turn("u1", "i2")
    with MockOpenAIServer(reply_variants={failing: "error_object"}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", "--k", "2")
        assert code == 4 and "1 of 4 judgments missing: 1 failed" in one_error_line(err, after_progress=True)
        per_user = pd.read_csv(tmp_path / "out" / "per_user.csv").set_index("user_id")
        u1_score = expected_score(last_user_turn("u1", "i1"))
        # u1: one judged item of two, so its precision is over one rank, not two
        assert per_user.loc["u1", "precision_ser@2"] == float(u1_score >= 4)
        assert per_user.loc["u1", "avg_score@2"] == u1_score and per_user.loc["u1", "n_unjudged"] == 1
        assert per_user.loc["u2", "n_unjudged"] == 0
        assert pd.read_csv(tmp_path / "out" / "overall.csv")["n_unjudged"].tolist() == [1]
        # asked for it, the failed judgment does not change the exit code; the results are the same
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", "--k", "2",
                          "--allow-failures", out="again")
    assert code == 0 and "Traceback" not in err
    assert pd.read_csv(tmp_path / "again" / "per_user.csv").equals(pd.read_csv(tmp_path / "out" / "per_user.csv"))


def test_serendipity_metrics_leave_unjudged_items_out():
    lists = pd.DataFrame({"user_id": [1, 1, 1, 2], "rank": [1, 2, 3, 1], "item_id": [5, 6, 7, 5]})
    scores = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [5, 6, 7, 5], "score": [np.nan, 5.0, 2.0, np.nan]})
    per = metrics.serendipity_per_user(lists, scores, k=3)
    assert per.loc[1, "precision_ser"] == pytest.approx(1 / 2)  # one hit of the two judged ranks
    # DCG 1/log2(3) over the ideal of ranks 2 and 3 (rank 1 was not judged)
    assert per.loc[1, "ndcg_ser"] == pytest.approx((1 / math.log2(3)) / (1 / math.log2(3) + 0.5))
    assert per.loc[1, "n_unjudged"] == 1 and per.loc[1, "avg_score"] == 3.5
    assert per.loc[2, ["precision_ser", "ndcg_ser", "avg_score"]].isna().all() and per.loc[2, "n_unjudged"] == 1


# ------------------------------------------------------------------ 2. --history-k
@pytest.mark.parametrize("value", ["0", "-3"])
def test_history_k_below_one_is_refused(tmp_path, capsys, value):
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", "--history-k", value)
    assert code == 2 and "--history-k must be at least 1" in one_error_line(err)
    with pytest.raises(ValueError, match="history_k"):
        judging.last_k(HISTORY, int(value))


# ------------------------------------------------------------------ 3. bad files and options: one line, no traceback
RAGGED = "user_id,rank,item_id,recommender\nu1,1,i1,A\nu1,2,i2,A,extra\nu2,1,i1,A\n"
SHORT = "user_id,rank,item_id,recommender\nu1,1,i1,A\nu1,2,i2\nu2,1,i1,A\n"
UNBALANCED = 'user_id,rank,item_id\nu1,1,i1\nu1,2,"i2\nu2,1,i1\n'


@pytest.mark.parametrize("which, content, expected", [
    ("lists", "", "lists.csv: the file is empty"),
    ("items", "", "items.csv: the file is empty"),
    ("history", "", "history.csv: the file is empty"),
    ("lists", "user_id,rank,item_id\n", "lists.csv: no data rows"),
    ("items", "item_id,name,categories\n", "items.csv: no data rows"),
    ("history", "user_id,item_id,timestamp\n", "history.csv: no data rows"),
    ("items", "item_id,name,categories\ni1,Caf\xe9,Drama\n".encode("latin-1"), "items.csv: line 2: not UTF-8"),
    ("lists", UNBALANCED, "lists.csv, row 2: malformed CSV"),
    ("lists", RAGGED, "lists.csv, row 2 (line 3): 5 field(s), the header has 4"),
    ("lists", SHORT, "lists.csv, row 2 (line 3): 3 field(s), the header has 4"),
    ("lists", "user_id,rank,item_id,rank\nu1,1,i1,1\n", "lists.csv: column(s) rank appear more than once"),
])
def test_bad_files_end_in_one_line_naming_the_file(tmp_path, capsys, which, content, expected):
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", **{which: content})
    assert code == 2 and expected in one_error_line(err)


@pytest.mark.parametrize("options, expected", [
    (["--prompt", "no_such_prompt"], "--prompt: 'no_such_prompt' is not a prompt"),
    (["--prompt", "kang_fewshot"], "--prompt: 'kang_fewshot' is not a prompt"),
    (["--domain", "books"], "--domain: unknown domain 'books'"),
    (["--k", "0"], "--k must be between 1"),
    (["--k", "10000000000"], "--k must be between 1"),
])
def test_bad_options_end_in_one_line_naming_the_option(tmp_path, capsys, options, expected):
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", *options)
    assert code == 2 and expected in one_error_line(err)


def test_the_cost_limit_ends_in_one_line_and_asks_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "0.000001")
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:gpt-4o-mini", "--mode", "auto")
        assert server.total_requests == 0
    assert code == 5 and judge_cli.EXIT_NOT_RUN == 5
    assert "RECJUDGE_LLM_MAX_USD" in one_error_line(err)


def test_the_cost_limit_prices_the_whole_job_when_it_is_judged_in_chunks(tmp_path, monkeypatch):
    from recjudge.llm import CostLimitExceeded, JudgeConfig

    monkeypatch.setattr(judging, "CHUNK_PROMPTS", 1)
    config = JudgeConfig(provider="openai", model="gpt-4o-mini", prompt="kang_basic")
    one = judging.estimate_job(config, judging.requests_for(LISTS.iloc[:1], HISTORY, ITEMS), tmp_path)
    # a limit above one prompt's cost but below the four prompts' cost
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", str(one.cost_usd * 2.5))
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(CostLimitExceeded, match="4 of 4 replies"):
            judging.judge_pairs(LISTS, HISTORY, ITEMS, config, mode="auto", store=tmp_path,
                                chunk_prompts=1)
        assert server.total_requests == 0


def test_a_provider_refusing_the_configuration_ends_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    code, err = judge(tmp_path, capsys, "--judge", "openai:gpt-4o-mini", "--mode", "auto")
    assert code == 5 and "OPENAI_API_KEY" in one_error_line(err)


# ------------------------------------------------------------------ 4. a bad --out is found before asking
def test_an_output_path_that_is_a_file_is_refused_before_asking(tmp_path, capsys, monkeypatch):
    (tmp_path / "taken").write_text("not a folder")
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", out="taken")
        assert code == 2 and "--out" in one_error_line(err) and "not a folder" in err
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", out="taken/sub")
        assert code == 2 and "--out" in one_error_line(err) and "cannot write" in err
        (tmp_path / "out" / "overall.csv").mkdir(parents=True)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto")
        assert code == 2 and "overall.csv is a folder" in one_error_line(err)
        assert server.total_requests == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_an_unwritable_output_folder_is_refused_before_asking(tmp_path, capsys):
    (tmp_path / "locked").mkdir(mode=0o555)
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", out="locked")
    assert code == 2 and "--out" in one_error_line(err)


# ------------------------------------------------------------------ 5. request keys
def test_request_keys_do_not_collide_and_plain_ids_keep_their_key():
    assert request_key("a:b", "c") != request_key("a", "b:c")
    assert request_key("a%3Ab", "c") != request_key("a:b", "c")
    assert request_key(1, 2) == "1:2" and request_key("u1", "i1") == "u1:i1"


def test_ids_with_colons_are_judged_apart(tmp_path, capsys, monkeypatch):
    lists = pd.DataFrame({"user_id": ["a:b", "a"], "rank": [1, 1], "item_id": ["c", "b:c"]})
    items = pd.DataFrame({"item_id": ["c", "b:c", "h"], "name": ["Sea", "Bay", "Hill"], "categories": ["", "", ""]})
    history = pd.DataFrame({"user_id": ["a:b", "a"], "item_id": ["h", "h"], "timestamp": [1, 1]})
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto",
                          lists=lists, items=items, history=history)
    assert code == 0, err
    scored = pd.read_csv(tmp_path / "out" / "item_scores.csv", dtype={"user_id": str, "item_id": str})
    expected = [expected_score(last_user_turn(u, i, lists, items, history)) for u, i in (("a:b", "c"), ("a", "b:c"))]
    assert scored["score"].tolist() == expected and set(scored["status"]) == {"judged"}


# ------------------------------------------------------------------ 6-9. lists, ranks and timestamps
@pytest.mark.parametrize("column", ["score", "avg_score", "n_users", "n_unjudged", "status", "precision_ser@20"])
def test_grouping_columns_named_like_an_output_column_are_refused(tmp_path, capsys, column):
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay",
                      lists=LISTS.assign(**{column: "x"}))
    assert code == 2 and f"column {column!r}" in one_error_line(err) and "rename it" in err


def test_an_item_twice_in_one_list_is_refused(tmp_path, capsys):
    lists = LISTS.assign(item_id=["i1", "i1", "i1", "i3"])
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", lists=lists)
    assert code == 2 and "lists.csv, row 2, field item_id: item 'i1' appears twice" in one_error_line(err)
    # the same item in two recommenders' lists is fine
    both = pd.concat([LISTS, LISTS.assign(recommender="B")])
    lists_, _, _, groups = judge_cli.read_inputs(*write(tmp_path, lists=both), k=20)
    assert groups == ["recommender"] and len(lists_) == 8


@pytest.mark.parametrize("rank", ["1e19", "99999999999999999999", "1000001", "-1", "0"])
def test_ranks_out_of_bounds_are_refused(tmp_path, capsys, rank):
    lists = LISTS.astype({"rank": str}).assign(rank=["1", rank, "1", "2"])
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", lists=lists)
    assert code == 2 and "lists.csv, row 2, field rank: ranks run from 1 to 1,000,000" in one_error_line(err)


@pytest.mark.parametrize("stamp", ["inf", "-inf", "nan", "NaN", "Infinity", "1e999"])
def test_timestamps_that_are_not_finite_are_refused(tmp_path, capsys, stamp):
    history = HISTORY.astype({"timestamp": str}).assign(timestamp=["1", stamp, "2"])
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", history=history)
    assert code == 2 and f"history.csv, row 2, field timestamp: {stamp!r}" in one_error_line(err)


# ------------------------------------------------------------------ 10. formulas in the written CSVs
FORMULAS = ["=cmd|' /C calc'!A0", "@SUM(1+1)", "+1", "-1+1", "\tx", "\rx"]


def test_formula_looking_text_cells_are_escaped_and_numbers_are_not(tmp_path, capsys, monkeypatch):
    users = FORMULAS[:4]
    lists = pd.DataFrame({"recommender": FORMULAS[4:] + ["=A1", "=A1"], "user_id": users, "rank": 1,
                          "item_id": ["-5", "+x", "@y", "=z"]})
    items = pd.DataFrame({"item_id": ["-5", "+x", "@y", "=z", "h"], "name": list("ABCDH"), "categories": ""})
    history = pd.DataFrame({"user_id": users, "item_id": "h", "timestamp": 1})
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto",
                          lists=lists, items=items, history=history)
    assert code == 0, err
    for name in ("item_scores.csv", "per_user.csv", "overall.csv"):
        frame = pd.read_csv(tmp_path / "out" / name, dtype=str, keep_default_na=False)
        text = [c for c in ("recommender", "user_id", "item_id") if c in frame.columns]
        cells = frame[text].to_numpy().ravel()
        assert all(cell.startswith("'") for cell in cells), (name, cells)
        assert all(cell[1:] in FORMULAS + ["=A1", "-5", "+x", "@y", "=z"] for cell in cells)
    scored = pd.read_csv(tmp_path / "out" / "item_scores.csv")
    assert scored["rank"].tolist() == [1, 1, 1, 1] and scored["score"].between(1, 5).all()
    frame = escape_formulas(pd.DataFrame({"id": ["-1", "a"], "score": [-1.0, 2.0], "rank": [-1, 2]}))
    assert frame["id"].tolist() == ["'-1", "a"] and frame["score"].tolist() == [-1.0, 2.0]
    assert frame["rank"].tolist() == [-1, 2]
    # an object column with no text in it (integers beside missing values, as a sizes table has) passes unchanged
    counts = pd.DataFrame({"users": pd.Series([3, None], dtype=object), "note": ["=1", None]})
    escaped = escape_formulas(counts)
    assert escaped["users"].tolist() == [3, None] and escaped["note"].tolist() == ["'=1", None]
    assert unescape_formulas(escaped)["note"].tolist() == ["=1", None]


# ------------------------------------------------------------------ 11. chunks give the results of one job
def test_judging_in_chunks_gives_the_same_results_as_one_run(tmp_path, monkeypatch):
    from recjudge.llm import JudgeConfig, MissingReplies

    failing = last_user_turn("u2", "i3")
    config = JudgeConfig(provider="openai", model="mock-judge", prompt="kang_basic")
    with MockOpenAIServer(reply_variants={failing: "error_object"}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        whole, whole_run = judging.judge_pairs(LISTS, HISTORY, ITEMS, config, mode="auto", store=tmp_path / "a")
        chunked, chunked_run = judging.judge_pairs(LISTS, HISTORY, ITEMS, config, mode="auto",
                                                   store=tmp_path / "b", chunk_prompts=3)
    columns = ["user_id", "item_id", "score", "input_tokens", "output_tokens", "from_store"]
    assert chunked[columns].equals(whole[columns]) and chunked["error"].notna().tolist() == [False] * 3 + [True]
    assert len(chunked_run.table) == 4 and chunked_run.report.n_prompts == 4 and chunked_run.report.n_failed == 1
    assert chunked_run.report.n_provider_calls == whole_run.report.n_provider_calls
    # replay lists every missing reply, not just the first chunk's
    with pytest.raises(MissingReplies) as caught:
        judging.judge_pairs(LISTS, HISTORY, ITEMS, config, mode="replay", store=tmp_path / "c", chunk_prompts=3)
    assert caught.value.count == 4


def test_bad_settings_in_the_environment_end_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RECJUDGE_LLM_MODE", "sometimes")
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge")
    assert code == 2 and "RECJUDGE_LLM_MODE" in one_error_line(err)
    monkeypatch.delenv("RECJUDGE_LLM_MODE")
    monkeypatch.setenv("RECJUDGE_LLM_MAX_USD", "plenty")
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto")
    assert code == 2 and "RECJUDGE_LLM_MAX_USD" in one_error_line(err)


def test_lists_with_no_rank_within_k_end_in_one_line(tmp_path, capsys):
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", "--k", "2",
                      lists=LISTS.assign(rank=[3, 4, 3, 4]))
    assert code == 2 and "no rank is within --k 2" in one_error_line(err)


def test_dates_in_several_formats_and_blank_lines_are_read(tmp_path):
    history = "user_id,item_id,timestamp\nu1,i4,2020-01-01\nu2,i4,2020-02-03 10:00\n\nu2,i2,3 March 2020\n"
    lists, _, history, _ = judge_cli.read_inputs(*write(tmp_path, lists="\n" + LISTS.to_csv(index=False),
                                                        history=history), k=20)
    assert len(lists) == 4 and history["timestamp"].dt.month.tolist() == [1, 2, 3]


# ------------------------------------------------------------------ 10. what the output files say
def test_per_user_and_overall_name_each_measure_alike(tmp_path, capsys, monkeypatch):
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _ = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", "--k", "2")
    assert code == 0
    per_user = pd.read_csv(tmp_path / "out" / "per_user.csv")
    overall = pd.read_csv(tmp_path / "out" / "overall.csv")
    measures = ["precision_ser@2", "ndcg_ser@2", "avg_score@2"]
    assert set(measures) <= set(per_user.columns) and set(measures) <= set(overall.columns)
    assert not {"precision_ser", "ndcg_ser", "avg_score"} & set(per_user.columns)
    assert overall.loc[0, "precision_ser@2"] == pytest.approx(per_user["precision_ser@2"].mean())


def test_lists_shorter_than_k_are_counted_and_said(tmp_path, capsys, monkeypatch):
    lists = pd.concat([LISTS, pd.DataFrame({"recommender": "A", "user_id": ["u2"], "rank": [3], "item_id": ["i2"]})])
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _ = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", "--k", "3", lists=lists)
    assert code == 0
    per_user = pd.read_csv(tmp_path / "out" / "per_user.csv").set_index("user_id")
    assert per_user["list_length"].to_dict() == {"u1": 2, "u2": 3}
    assert pd.read_csv(tmp_path / "out" / "overall.csv")["n_short_lists"].tolist() == [1]
    said = "1 of 2 lists have fewer than --k 3 items (shortest 2)"
    assert said in (tmp_path / "out" / "report.txt").read_text()


def test_lists_of_k_items_say_nothing_of_short_lists(tmp_path, capsys, monkeypatch):
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _ = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto", "--k", "2")
    assert code == 0 and "fewer than --k" not in (tmp_path / "out" / "report.txt").read_text()
    assert pd.read_csv(tmp_path / "out" / "overall.csv")["n_short_lists"].tolist() == [0]


def test_item_scores_name_each_item_and_the_report_says_what_a_score_is(tmp_path, capsys, monkeypatch):
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _ = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "auto")
    assert code == 0
    per_item = pd.read_csv(tmp_path / "out" / "item_scores.csv")
    names = ITEMS.set_index("item_id")["name"]
    assert per_item["item_name"].tolist() == per_item["item_id"].map(names).tolist()
    assert judge_cli.SCORE_MEANING["generate"] in (tmp_path / "out" / "report.txt").read_text()


def test_help_says_what_an_expected_score_is(capsys):
    with pytest.raises(SystemExit):
        main(["judge", "--help"])
    assert "expected score" in " ".join(capsys.readouterr().out.split())


def test_an_input_error_leaves_no_output_folder(tmp_path, capsys):
    bad_history = HISTORY.assign(timestamp=["soon", "1", "2"])
    code, err = judge(tmp_path, capsys, "--judge", "openai:mock-judge", "--mode", "replay", history=bad_history,
                      out="new/out")
    assert code == 2 and "timestamp" in one_error_line(err)
    assert not (tmp_path / "new").exists()


def test_the_default_output_folder_is_git_ignored():
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    default = judge_cli.argparse.ArgumentParser()
    judge_cli.add_arguments(default)
    out = default.parse_args(["l.csv", "--items", "i", "--history", "h", "--judge", "openai:m"]).out
    checked = subprocess.run(["git", "check-ignore", "-q", f"{out}/overall.csv"], cwd=root)
    assert checked.returncode == 0, f"{out}/ is not git-ignored"
