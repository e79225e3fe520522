"""The committed record of reply-reading rule changes: the chapters' sentence read from it, its checks, and the record
itself against what the package computes from the store wherever git history holds the older version."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from recjudge.llm import reading_changes
from recjudge.paths import project_root


def _record(rows):
    """Rows of the record; a row without a judge is an upper bound over every stored reply."""
    return pd.DataFrame([(*row, *[""] * (len(reading_changes.COLUMNS) - len(row))) for row in rows],
                        columns=reading_changes.COLUMNS)


def test_chapter_sentence_counts_each_moved_reader_and_names_the_rule_not_a_commit():
    # "the change from f9d14a4 to d31013d" on 14 chapter pages: a reader's page is not a changelog
    record = _record([("parse_likert", "proxy_vs_llm", 10003, 131, 23, "aaa111", "bbb222", "", "the score grammar"),
                      ("serendipity[base]", "proxy_vs_llm", 10003, 0, 0, "aaa111", "bbb222", "", "the score grammar"),
                      ("parse_likert", "trust_judges", 10003, 131, 23, "aaa111", "bbb222", "", "the score grammar")])
    sentence = reading_changes.chapter_sentence("proxy_vs_llm", record)
    assert "the change to the score grammar moved at most" in sentence
    assert "aaa111" not in sentence and "bbb222" not in sentence
    assert "{doc}`the reproducibility page <../reproducibility>`" in sentence
    assert "131 of 10,003 read with `parse_likert` (23 distinct texts)" in sentence
    assert "serendipity" not in sentence  # a reader the change did not move is not listed
    assert reading_changes.chapter_sentence("data_tour", record) is None


def test_chapter_sentence_says_when_a_change_moved_nothing_the_chapter_reads():
    record = _record([("list_titles", "metamorphic_recommender", 500, 0, 0, "aaa111", "bbb222")])
    assert "moved none" in reading_changes.chapter_sentence("metamorphic_recommender", record)


def test_chapter_sentence_counts_exactly_what_the_chapter_read_where_the_record_has_its_judge_runs():
    record = _record([("parse_likert", "proxy_vs_llm", 10003, 131, 23, "aaa111", "bbb222"),
                      ("parse_likert", "proxy_vs_llm", 40, 3, 2, "aaa111", "bbb222", "local:smollm2/kang_basic"),
                      ("parse_likert", "proxy_vs_llm", 40, 0, 0, "aaa111", "bbb222", "local:smollm2/likert"),
                      ("", "trust_judges", 0, 0, 0, "aaa111", "bbb222", ""),
                      ("parse_likert", "trust_judges", 10003, 131, 23, "aaa111", "bbb222")])
    sentence = reading_changes.chapter_sentence("proxy_vs_llm", record)
    assert "reads 3 of this chapter's 80 readings of a stored reply's text differently" in sentence
    assert "3 of the 40 of `local:smollm2/kang_basic` read with `parse_likert` (2 distinct texts)" in sentence
    assert "at most" not in sentence and "10,003" not in sentence
    # a run that read no stored reply from its text: nothing moved there, whatever its readers moved elsewhere
    assert "reads no stored reply from its text" in reading_changes.chapter_sentence("trust_judges", record)
    # a synthetic run of the same notebook: its own rows, else the notebook's upper bounds
    synthetic = reading_changes.chapter_sentence("proxy_vs_llm_synthetic", record, notebook="proxy_vs_llm")
    assert "at most 131 of 10,003" in synthetic


def test_a_record_without_the_judge_column_reads_as_upper_bounds(tmp_path):
    path = tmp_path / "reading_changes.csv"
    _record([("parse_likert", "proxy_vs_llm", 10, 2, 1, "a", "b")]).drop(columns="judge").to_csv(path, index=False)
    assert reading_changes.load(path)["judge"].tolist() == [""]


def test_a_bad_count_is_a_one_line_error_naming_the_file_and_line(tmp_path):
    path = tmp_path / "reading_changes.csv"
    _record([("parse_likert", "proxy_vs_llm", 10, 2, 1, "a", "b"),
             ("parse_likert", "trust_judges", 10, "two", 1, "a", "b")]).to_csv(path, index=False)
    with pytest.raises(reading_changes.RecordError, match=r"reading_changes.csv, line 3: replies_moved 'two'"):
        reading_changes.load(path)
    path.write_text("reader,chapter\nx,y\n")
    with pytest.raises(reading_changes.RecordError, match="missing column"):
        reading_changes.load(path)


def test_chapter_downloads_show_the_recorded_change(tmp_path, monkeypatch):
    from recjudge.compendium import pages

    path = tmp_path / "reading_changes.csv"
    _record([("parse_likert", "proxy_vs_llm", 10003, 131, 23, "aaa111", "bbb222")]).to_csv(path, index=False)
    monkeypatch.setattr(reading_changes, "record_path", lambda: path)
    assert "131 of 10,003 read with `parse_likert`" in pages.downloads("proxy_vs_llm_synthetic", "proxy_vs_llm").data
    assert "Reply-reading rules" not in pages.downloads("data_tour").data


def test_committed_record_is_readable_and_names_existing_chapters():
    record = reading_changes.load()
    assert len(record), "data/llm/reading_changes.csv holds no change"
    from recjudge.compendium.runplan import load_runplan

    chapters = {path.stem for path in (project_root() / "notebooks").glob("*.md")}
    runs = {run.name for run in load_runplan()}
    assert set(record.loc[record["judge"] == "", "chapter"]) <= chapters | runs
    assert set(record.loc[record["judge"] != "", "chapter"]) <= runs


def _in_history(commit: str) -> bool:
    try:
        return subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=project_root(),
                              capture_output=True).returncode == 0
    except OSError:
        return False


def test_committed_record_matches_the_store_and_the_recorded_older_parser(tmp_path):
    """The latest recorded change, recomputed from the committed store, the package at its from_version and this
    checkout's package: a later change of the reading rules must be recorded (scripts/parser_changes.py --write)."""
    from recjudge.chapters import reply_readings

    record = reading_changes.load()
    record = record[(record["judge"] == "") & (record["reader"] != "")]  # the upper bounds: the store alone gives them
    latest = record[record["to_version"] == record["to_version"].iloc[-1]]
    before_version = latest["from_version"].iloc[0]
    if not _in_history(before_version):
        pytest.skip(f"git history does not hold {before_version} (a shallow clone or no git)")
    store = project_root() / "data" / "llm"
    before = reply_readings.readings_at(before_version, store, tmp_path)
    after = reply_readings.readings(store)
    computed = reply_readings.change_record(before, after, before_version, latest["to_version"].iloc[0],
                                            rule=latest["rule"].iloc[0])
    key = ["reader", "chapter"]
    pd.testing.assert_frame_equal(computed.sort_values(key).reset_index(drop=True),
                                  latest.sort_values(key).reset_index(drop=True), check_dtype=False)


def test_a_record_without_rule_names_reads_as_unnamed_changes(tmp_path):
    path = tmp_path / "reading_changes.csv"
    _record([("parse_likert", "proxy_vs_llm", 10, 2, 1, "a", "b")]).drop(columns="rule").to_csv(path, index=False)
    record = reading_changes.load(path)
    assert record["rule"].tolist() == [""]
    assert reading_changes.UNNAMED in reading_changes.chapter_sentence("proxy_vs_llm", record)


def test_the_reproducibility_page_lists_every_change_by_rule_and_chapter():
    record = _record([("parse_likert", "proxy_vs_llm", 10003, 131, 23, "aaa111", "bbb222", "", "the score grammar"),
                      ("parse_likert", "proxy_vs_llm", 40, 3, 2, "aaa111", "bbb222", "local:x/kang_basic",
                       "the score grammar"),
                      ("parse_likert", "trust_judges", 10003, 131, 23, "aaa111", "bbb222", "", "the score grammar")])
    table = reading_changes.record_markdown(record)
    assert "| the score grammar | proxy_vs_llm | 40 | 3 |" in table
    assert "| the score grammar | trust_judges | at most 10,003 | at most 131 |" in table
    assert "aaa111" not in table
    committed = reading_changes.record_markdown()
    assert "the score grammar" in committed and "f951f9d" not in committed


def test_the_committed_record_names_every_change():
    assert (reading_changes.load()["rule"] != "").all()


def test_the_reproducibility_page_includes_the_record_the_at_a_glance_run_writes(tmp_path, monkeypatch):
    from recjudge.compendium import at_a_glance

    monkeypatch.setenv("RECJUDGE_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("RECJUDGE_RUN_NAME", raising=False)
    written = at_a_glance.write_reading_changes("at_a_glance")
    assert written.read_text(encoding="utf-8") == reading_changes.record_markdown()
    page = (project_root() / "book" / "reproducibility.md").read_text(encoding="utf-8")
    assert f"```{{include}} ../results/at_a_glance/{at_a_glance.READING_CHANGES_FILE}" in page
    notebook = (project_root() / "notebooks" / "at_a_glance.md").read_text(encoding="utf-8")
    assert "at_a_glance.write_reading_changes(NOTEBOOK)" in notebook
