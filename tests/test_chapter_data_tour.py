"""The data tour's page: the opening box, the rules that word the verdict, a table and a figure on small frames."""

from types import SimpleNamespace

import pandas as pd
import pytest

from recjudge import data
from recjudge.chapters import data_tour as page


def status_frame(**statuses: str) -> pd.DataFrame:
    """A small ``data.availability`` frame: dataset name -> status (the names with '-' written as '_')."""
    rows = []
    for key, status in statuses.items():
        name = key.replace("_", "-")
        rows.append({"dataset": name, "status": status,
                     "origin": {"sample": "sample", "missing": ""}.get(status, "mirror"),
                     "missing": "ratings.dat" if status == "partial" else "",
                     "redistributable": name == "movielens-latest-small",
                     "note": "not in the mirror" if status == "missing" else ""})
    return pd.DataFrame(rows).set_index("dataset")


@pytest.fixture
def saved(monkeypatch):
    """The tables the page saves, by (chapter, name), instead of files under results/."""
    tables = {}

    def save_table(table, notebook, name):
        tables[notebook, name] = table
        return table

    monkeypatch.setattr(page, "save_table", save_table)
    return tables


def test_the_opening_box_counts_what_was_found_and_warns_only_of_partial_copies():
    status = status_frame(movielens_latest_small="sample", movielens_1m="partial", taobao_serendipity="missing")
    box = page.opening(status).data
    assert "2 of the 3 datasets the registry knows: 0 complete, 1 partial, 1 the committed sample" in box
    assert "1 read from the data mirror" in box
    assert "MovieLens 1M (missing ratings.dat)" in box
    assert "**Not found:** Taobao Serendipity: their sections below are empty" in box
    assert "A partial copy's numbers describe that copy" in box
    whole = page.opening(status_frame(movielens_latest_small="sample")).data
    assert "A partial copy" not in whole and "no data mirror" in whole and "**Partial copies:** none" in whole


def test_the_verdict_says_what_a_partial_ml1m_copy_lacks_only_when_its_ratings_were_read():
    status = status_frame(movielens_latest_small="sample", movielens_1m="partial")
    read = [data.size_row("movielens-1m", "ratings", pd.DataFrame({"user_id": [1, 2, 3], "item_id": [1, 1, 2]}))]
    with_ratings = page.findings(status, {}, read)
    assert any("This copy holds 3 ratings, without the earlier ratings of 1 to 3" in line for line in with_ratings)
    without = page.findings(status, {}, [])
    assert any(line.startswith("**Usable in part:** MovieLens 1M, missing ratings.dat.") for line in without)
    assert not any("This copy holds" in line for line in without)


def test_the_verdict_names_absent_data_and_each_chapters_state():
    status = status_frame(movielens_latest_small="sample", serendipity_2018="partial", taobao_serendipity="missing")
    found = page.findings(status, {"proxy_vs_llm": ["serendipity-2018", "taobao-serendipity"],
                                   "normalised_surprise": ["movielens-latest-small"], "unused": []}, [])
    assert found[0] == "**Usable in full:** 1 of 3 datasets: MovieLens ml-latest-small."
    assert any("Without `training.csv` the users' rating histories are missing" in line for line in found)
    assert any(line.startswith("**Not found in this build:** Taobao Serendipity.") for line in found)
    by_chapter = next(line for line in found if line.startswith("**By chapter:**"))
    assert "{doc}`proxy_vs_llm` reads Serendipity-2018 (partial), Taobao Serendipity (missing) (1 of 2 not found)" \
        in by_chapter
    assert "{doc}`normalised_surprise` reads MovieLens ml-latest-small (all found)" in by_chapter
    assert "unused" not in by_chapter
    everything = page.findings(status_frame(movielens_latest_small="sample"), {}, [])
    assert not any(line.startswith("**Not found") for line in everything)


def test_the_size_table_is_saved_whole_and_shown_with_its_notes_in_the_caption(saved):
    sizes = [
        data.size_row("movielens-1m", "ratings", pd.DataFrame({"user_id": [1, 2], "item_id": [5, 6]}),
                      status="partial", note="ratings present in this copy"),
        data.size_row("movielens-100k", "users", pd.DataFrame({"user_id": [1, 2, 3]}), item_column=None,
                      status="complete")]
    table = page.show_size_table(sizes, "tour")
    whole = saved["tour", "sizes"]
    assert whole.columns.tolist() == list(sizes[0]) and whole["note"].tolist() == ["ratings present in this copy", ""]
    assert table.caption == "Sizes of every table read in this chapter (ML-1M ratings: ratings present in this copy)"
    assert table.data.columns.tolist() == ["Dataset", "Table", "Copy", "Rows", "Users", "Items", "Density (%)"]
    assert table.data["Dataset"].tolist() == ["ML-1M", "ML-100K"]
    assert table.data.loc[0, "Density (%)"] == "50.00"


def test_a_section_without_its_data_says_why_and_leaves_its_figure_undrawn(monkeypatch):
    shown, undrawn = [], []
    monkeypatch.setattr(page, "display", lambda markdown: shown.append(markdown.data))
    monkeypatch.setattr(page.figures, "glue_not_drawn", lambda name, reason: undrawn.append((name, reason)))
    status = status_frame(movielens_100k="missing")
    assert page.movielens_100k(status, "tour") == []
    assert page.movielens_1m(status, "tour") == []
    assert shown == ["*`movielens-100k` is not available in this run (missing): not in the mirror. Place its files "
                     "in the mirror folder to include it.*", "*`movielens-1m` was not selected in this run.*"]
    assert undrawn == [("fig-ml100k-ratings", "`movielens-100k` is not in this build"),
                       ("fig-ml1m-splits", "`movielens-1m` is not in this build")]


def test_the_ml_small_figure_is_drawn_from_a_small_distribution(saved, monkeypatch):
    glued = {}
    monkeypatch.setattr(page, "display", lambda markdown: None)
    monkeypatch.setattr(page.figures, "glue_figure", lambda name, fig, caption: glued.update(
        {name: (fig, caption)}))
    ratings = pd.DataFrame({"rating": [4.0, 4.0, 4.0, 3.5, 5.0]})
    small = SimpleNamespace(status="sample", note="the committed sample", ratings=ratings)
    distribution = data.value_distribution(ratings, ["rating"], levels=[x / 2 for x in range(1, 11)])
    page.show_movielens_latest_small(small, distribution, "tour")
    fig, caption = glued["fig-ml-small-ratings"]
    (ax,) = fig.axes
    assert [patch.get_height() for patch in ax.patches] == [0, 0, 0, 0, 0, 0, 1, 3, 0, 1]  # NA (none) not drawn
    assert [text.get_text() for text in ax.texts][6:8] == ["20%", "60%"]
    assert page.figures.check_figure(fig) == []
    # What to see first, then what is drawn.
    assert caption.startswith("4 stars is the most common rating (60%). The 5 ratings of ml-latest-small (sample "
                              "copy) by number of stars")
    assert saved["tour", "movielens_latest_small_ratings"] is distribution


def test_a_likert_caption_opens_with_each_statements_most_common_answer():
    from recjudge.chapters import data_tour

    shares = pd.DataFrame({"1.0": [0.6, 0.1, 0.2], "4.0": [0.3, 0.5, 0.2], "NA": [0.1, 0.4, 0.6]},
                          index=["s1", "s2", "s3"])
    assert data_tour.modal_answers(shares) == "The most common answer is 1 for s1; 4 for s2; don't remember for s3."


def test_a_rating_caption_opens_with_the_most_common_rating_and_its_share():
    from recjudge.chapters import data_tour

    ratings = pd.DataFrame({"value": ["3.0", "4.0"], "count": [10, 30], "share": [0.25, 0.75]})
    assert data_tour.most_common_rating(ratings) == "4 stars is the most common rating (75%)."
