"""Result tables: written where the book and the checks read them, never holding measurements of the run."""

import pandas as pd
import pytest

from recjudge.compendium.results import load_table, save_table


@pytest.fixture(autouse=True)
def results_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_RESULTS", str(tmp_path))
    return tmp_path


def test_saved_table_is_read_back(results_folder):
    table = pd.DataFrame({"method": ["SOG", "Random"], "pearson_pct": [9.33, 0.13]})
    assert save_table(table, "chapter", "agreement") is table
    assert (results_folder / "chapter" / "agreement.csv").is_file()
    pd.testing.assert_frame_equal(load_table("chapter", "agreement"), table)


@pytest.mark.parametrize("column", ["seconds", "latency_s", "Elapsed", "wall_time", "cpu seconds", "executed_at"])
def test_run_timings_are_refused(column):
    with pytest.raises(ValueError, match="measure the run"):
        save_table(pd.DataFrame({"model": ["C"], column: [0.9]}), "chapter", "item_models")


@pytest.mark.parametrize("column", ["timestamp", "release_date", "latest_rating_time"])
def test_data_time_columns_are_kept(column, results_folder):
    save_table(pd.DataFrame({column: [1]}), "chapter", "ok")
    assert (results_folder / "chapter" / "ok.csv").is_file()


def test_unsafe_names_are_refused():
    with pytest.raises(ValueError, match="plain file name"):
        save_table(pd.DataFrame({"a": [1]}), "../elsewhere", "table")


def test_a_run_never_writes_another_runs_tables(results_folder, monkeypatch):
    monkeypatch.setenv("RECJUDGE_RUN_NAME", "normalised_surprise_full")
    with pytest.raises(ValueError, match="NOTEBOOK = 'normalised_surprise_full'"):
        save_table(pd.DataFrame({"n": [1]}), "normalised_surprise", "table1")
    assert not (results_folder / "normalised_surprise").exists()
    save_table(pd.DataFrame({"n": [1]}), "normalised_surprise_full", "table1")
    assert (results_folder / "normalised_surprise_full" / "table1.csv").is_file()


def test_a_variant_table_escapes_formula_labels_and_reads_them_back(results_folder):
    # A reader's judge label lands in a variant's tables; a spreadsheet must not run it.
    labels = ["=HYPERLINK(\"http://x\")", "+1", "-cmd", "@SUM(A1)", "'quoted", "plain"]
    table = pd.DataFrame({"judge": labels, "pearson_pct": [-1.5, 2.0, 3.0, 4.0, 5.0, 6.0]})
    save_table(table, "chapter", "judges")
    written = pd.read_csv(results_folder / "chapter" / "judges.csv", dtype=str)
    assert written["judge"].tolist() == ["'" + label for label in labels[:5]] + ["plain"]
    assert written["pearson_pct"].tolist()[0] == "-1.5"
    pd.testing.assert_frame_equal(load_table("chapter", "judges"), table)


def test_committed_tables_are_written_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_HOME", str(tmp_path))
    monkeypatch.delenv("RECJUDGE_RESULTS", raising=False)
    save_table(pd.DataFrame({"interval": ["-0.55 / 0.52"]}), "chapter", "rows")
    assert (tmp_path / "results" / "chapter" / "rows.csv").read_text().splitlines()[1] == "-0.55 / 0.52"


def test_a_missing_tables_message_names_it_inside_the_project_not_by_the_machines_folder(monkeypatch):
    """A claim "not run in this build" gives this message as its reason on a page: a variant's page showed
    "/work/main/variants/…/results/recommender_reevaluation/order_vs_paper_1m.csv does not exist"."""
    from recjudge.paths import project_root

    inside = project_root() / "variants" / "v" / "results"
    monkeypatch.setenv("RECJUDGE_RESULTS", str(inside))
    with pytest.raises(FileNotFoundError) as caught:
        load_table("chapter", "absent")
    assert str(caught.value) == ("variants/v/results/chapter/absent.csv does not exist: run the notebook 'chapter' "
                                 "first (make run)")
    assert str(project_root()) not in str(caught.value)
