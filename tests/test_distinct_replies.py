"""A share of replies counts each reply once: a stored reply read two ways (the authors' rule, then by aspect name)
is one reply, not two."""

from __future__ import annotations

import pandas as pd

from recjudge.compendium import claim_readers
from recjudge.explanations import evaluators as ex
from recjudge.prompts.explanations import READ_BY_NAME, distinct_runs

MODEL = claim_readers.BOOK_JUDGE_RUNS


def run(name: str, replies: int, unparsable: int, **extra) -> dict:
    return {"evaluator": name, "model": MODEL, "n_replies": replies, "n_unparsable": unparsable, **extra}


def test_a_run_that_reads_stored_replies_again_names_the_run_that_asked_them():
    runs = pd.DataFrame([run("A", 2, 0), run("A" + READ_BY_NAME, 2, 1), run("B", 2, 0)])
    replies = pd.DataFrame({"evaluator": ["A", "A", "A" + READ_BY_NAME, "A" + READ_BY_NAME, "B", "B"],
                            "store_key": ["s1", "s2", "s2", "s1", "s3", "s1"]})
    assert ex.rereads(runs, replies) == ["", "A", ""], "B asked s3 anew, so it is no re-reading"
    assert distinct_runs(runs.assign(rereads=ex.rereads(runs, replies)))["evaluator"].tolist() == ["A", "B"]


def test_two_settings_that_ask_about_the_same_texts_are_two_runs_not_a_re_reading():
    # Zero-shot and one-shot prompts about the same texts share the request keys (``key``), not the stored replies.
    runs = pd.DataFrame([run("zero-shot", 2, 0), run("one-shot", 2, 0), run("zero-shot" + READ_BY_NAME, 2, 0)])
    replies = pd.DataFrame({"evaluator": ["zero-shot"] * 2 + ["one-shot"] * 2 + ["zero-shot" + READ_BY_NAME] * 2,
                            "key": ["t1", "t2"] * 3, "store_key": ["z1", "z2", "o1", "o2", "z1", "z2"]})
    assert ex.rereads(runs, replies) == ["", "", "zero-shot"]


def test_the_share_of_replies_that_held_a_score_counts_a_reply_read_two_ways_once():
    tables = {
        "llm_runs": pd.DataFrame([run("ours", 10, 4, rereads="")]),
        "authors_runs": pd.DataFrame([run("authors", 5, 5, rereads=""),
                                      run("authors" + READ_BY_NAME, 5, 2, rereads="authors")]),
    }
    held, replies = claim_readers.evaluator_replies(lambda chapter, table: tables[table])
    assert (held, replies) == (6, 15), "the 5 replies re-read by name are the same 5 stored replies"


def test_a_table_written_before_the_rereads_column_marks_a_re_reading_by_its_name():
    runs = pd.DataFrame([run("authors", 5, 5), run("authors" + READ_BY_NAME, 5, 2)])
    assert distinct_runs(runs)["evaluator"].tolist() == ["authors"]
