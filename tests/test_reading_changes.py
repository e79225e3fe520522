"""The committed record of reply-reading rule changes: the chapters' sentence read from it, its checks, and the record
itself against what the package computes from the store wherever git history holds the older version."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from recjudge.llm import reading_changes
from recjudge.paths import project_root


def _record(rows):
    return pd.DataFrame(rows, columns=reading_changes.COLUMNS)


def test_chapter_sentence_counts_each_moved_reader_and_names_the_versions():
    record = _record([("parse_likert", "proxy_vs_llm", 10003, 131, 23, "aaa111", "bbb222"),
                      ("serendipity[base]", "proxy_vs_llm", 10003, 0, 0, "aaa111", "bbb222"),
                      ("parse_likert", "trust_judges", 10003, 131, 23, "aaa111", "bbb222")])
    sentence = reading_changes.chapter_sentence("proxy_vs_llm", record)
    assert "`aaa111` to `bbb222`" in sentence
    assert "131 of 10,003 read with `parse_likert` (23 distinct texts)" in sentence
    assert "serendipity" not in sentence  # a reader the change did not move is not listed
    assert reading_changes.chapter_sentence("data_tour", record) is None


def test_chapter_sentence_says_when_a_change_moved_nothing_the_chapter_reads():
    record = _record([("list_titles", "metamorphic_recommender", 500, 0, 0, "aaa111", "bbb222")])
    assert "moved none" in reading_changes.chapter_sentence("metamorphic_recommender", record)


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
    chapters = {path.stem for path in (project_root() / "notebooks").glob("*.md")}
    assert set(record["chapter"]) <= chapters


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
    latest = record[record["to_version"] == record["to_version"].iloc[-1]]
    before_version = latest["from_version"].iloc[0]
    if not _in_history(before_version):
        pytest.skip(f"git history does not hold {before_version} (a shallow clone or no git)")
    store = project_root() / "data" / "llm"
    before = reply_readings.readings_at(before_version, store, tmp_path)
    after = reply_readings.readings(store)
    computed = reply_readings.change_record(before, after, before_version, latest["to_version"].iloc[0])
    key = ["reader", "chapter"]
    pd.testing.assert_frame_equal(computed.sort_values(key).reset_index(drop=True),
                                  latest.sort_values(key).reset_index(drop=True), check_dtype=False)
