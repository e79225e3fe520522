"""The auxiliary-data fragment builders of Kang et al. RQ2 (recjudge.serendipity.auxiliary_data)."""

import numpy as np
import pandas as pd
import pytest

from recjudge.serendipity import auxiliary_data as aux


@pytest.fixture
def movies():
    return pd.DataFrame({"item_id": [1, 2, 3, 4], "title": ["A", "B", "C", "D"], "year": [2001, 2002, 2003, 2004],
                         "genres": [("Drama",), ("Comedy", "Drama"), ("Horror",), ("Drama",)]}).set_index("item_id")


@pytest.fixture
def ratings():
    # users 10, 11, 12, 13; item 1 rated by {10, 11}, item 2 by {10, 11, 12}, item 3 by {13}, item 4 by nobody
    return pd.DataFrame({"user_id": [10, 11, 10, 11, 12, 13], "item_id": [1, 1, 2, 2, 2, 3]})


def test_popularity_is_the_percentage_of_users(ratings):
    pop = aux.item_popularity_percent(ratings, [1, 2, 3, 4])
    assert pop.tolist() == pytest.approx([50.0, 75.0, 25.0, 0.0])
    assert aux.popularity_fragment(12.345) == "Popularity of the recommended movie: rated by 12.3% of users\n"
    assert "unknown" in aux.popularity_fragment(np.nan)


def test_min_jaccard_distance_by_hand(ratings):
    targets = pd.DataFrame({"user_id": [5, 5, 6], "item_id": [1, 3, 2]})
    history = pd.DataFrame({"user_id": [5, 5, 5], "item_id": [1, 1, 3], "history_item_id": [2, 3, 2]})
    dist = aux.min_jaccard_distance(ratings, targets, history)
    # target 1 vs {2: 1 - 2/3, 3: 1 - 0/3} -> 1/3; target 3 vs 2: 1 - 0/4 = 1; user 6 has no history -> NaN
    assert dist.iloc[0] == pytest.approx(1 / 3)
    assert dist.iloc[1] == pytest.approx(1.0)
    assert np.isnan(dist.iloc[2])
    assert aux.jaccard_distance(set(), set()) != aux.jaccard_distance(set(), set())  # NaN
    assert "0.33" in aux.similarity_fragment(1 / 3) and "unknown" in aux.similarity_fragment(np.nan)


def test_rated_history_and_short_term_profile(movies):
    t0 = pd.Timestamp("2017-03-01", tz="UTC")
    history = pd.DataFrame({"user_id": [5, 5], "item_id": [4, 4], "position": [1, 0], "history_item_id": [2, 1],
                            "history_rating": [3.5, 5.0]})
    targets = pd.DataFrame({"user_id": [5], "item_id": [4], "timestamp": [t0]})
    text = aux.rated_history_texts(targets, history, movies).iloc[0]
    assert text == "A (2001) (rated 5/5), B (2002) (rated 3.5/5)"
    interactions = pd.DataFrame({"user_id": [5, 5, 5, 5], "item_id": [1, 2, 3, 4],
                                 "timestamp": [t0 - pd.Timedelta(days=40), t0 - pd.Timedelta(days=3),
                                               t0 - pd.Timedelta(days=1), t0],
                                 "rating": [1.0, 4.0, 5.0, 2.0]})
    profile = aux.short_term_profile_texts(targets, interactions, movies, days=28).iloc[0]
    # items 2 and 3 are inside the 28 days; item 1 is too old, item 4 is the target itself
    assert profile == ("2 movies rated in the past 28 days, mean rating 4.5/5; most frequent genres: Comedy (1), "
                       "Drama (1), Horror (1)")
    empty = aux.short_term_profile_texts(targets.assign(user_id=9), interactions, movies).iloc[0]
    assert empty == "no movie rated in the past 28 days"


def test_profile_reply_cleaning():
    assert aux.clean_profile_reply("  likes\n dramas ") == "likes dramas"
    assert aux.clean_profile_reply("") == "(no profile)"
    long = aux.clean_profile_reply("word " * 200)
    assert len(long) <= aux.PROFILE_MAX_CHARS + 4 and long.endswith(" ...")
    assert aux.long_profile_fragment("x") == "Your long-term profile: x\n"
    assert aux.short_profile_fragment("y") == "Your short-term profile: y\n"


def test_block_and_description_follow_component_order():
    values = {"popularity_pct": 5.0, "similarity_jaccard": 0.5, "long_profile": "L", "short_profile": "S"}
    block = aux.auxiliary_block(values, ["short_profile", "popularity"])
    assert block == aux.popularity_fragment(5.0) + aux.short_profile_fragment("S")
    assert aux.auxiliary_block(values, ["rating"]) == ""
    assert aux.auxiliary_description([]) == ""
    assert aux.auxiliary_description(["similarity", "popularity"]) == (
        " You are also given the popularity of the recommended movie and its similarity to the movies in your history.")
    with pytest.raises(KeyError, match="similarity_jaccard"):
        aux.auxiliary_block({}, ["similarity"])
    with pytest.raises(ValueError, match="unknown component"):
        aux.Setting("x", ("age",))


def test_messages_without_auxiliary_equal_the_fewshot_prompt():
    from recjudge.prompts import serendipity as prompts

    shots = [{"history": f"h{i}", "item": f"i{i}", "rating": i, "values": {}} for i in range(1, 6)]
    plain = prompts.build_messages("kang_fewshot", "movies", "H", "I",
                                   [{k: v for k, v in s.items() if k != "values"} for s in shots])
    assert aux.auxiliary_messages((), "H", "I", {}, shots) == plain
    with_pop = aux.auxiliary_messages(("popularity",), "H", "I", {"popularity_pct": 1.0},
                                      [dict(s, values={"popularity_pct": 2.0}) for s in shots])
    assert "rated by 1.0% of users\nRecommended item: I" in with_pop[-1]["content"]
    assert "rated by 2.0% of users" in with_pop[1]["content"]
    assert "newest. You are also given the popularity of the recommended movie.\n## Task" in with_pop[0]["content"]


def test_settings_by_name():
    named = aux.settings_by_name(["NA", "Pop + Sim", "k=3"])
    assert [s.name for s in named] == [aux.NA, "Pop + Sim", "k=3"]
    assert named[2].k == 3 and named[1].components == ("popularity", "similarity")
    with pytest.raises(ValueError, match="unknown auxiliary-data setting"):
        aux.settings_by_name(["Age"])


def test_paper_tables_keep_the_na_row():
    table = aux.kang2025_tables45()
    assert table["method"].notna().all()
    na = table.query("table == 5 and dataset == 'Serendipity-2018'").set_index("method").loc[aux.NA]
    assert na["pearson_pct"] == pytest.approx(11.4769)


def test_tables45_and_table5_rows_name_every_row_and_choose_in_and_out_of_sample():
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import grid_search
    from recjudge.serendipity import auxiliary_data as aux
    from recjudge.serendipity import ground_truth as ser

    rng = np.random.default_rng(0)
    n = 24
    truth = pd.Series(rng.integers(1, 6, n).astype(float))
    users = pd.Series(np.repeat(np.arange(12), 2))
    scores = pd.DataFrame({aux.NA: truth + rng.normal(0, 2, n), "Rating": truth + rng.normal(0, 0.5, n),
                           "Pop": rng.normal(3, 1, n)}).assign(truth=truth, user_id=users)
    table = ser.agreement_table(scores, [aux.NA, "Rating", "Pop"], reference=aux.NA, n_boot=50, seed=0)
    rows, held = aux.tables45_rows(table, scores, truth, users, n_splits=4, seed=0, suffix=", integer")
    assert rows["method"].tolist() == ["none (NA), integer", "Rating, integer", "Auxiliary Data, integer",
                                       "Auxiliary Data, integer, held out", "none (NA), integer, same held-out halves"]
    by = rows.set_index("method")
    assert by.loc["Auxiliary Data, integer", "best_setting"] == "Rating"  # the least noisy setting
    assert by.loc["Auxiliary Data, integer", "pearson_pct"] == pytest.approx(table.set_index("method").loc[
        "Rating", "pearson_pct"])
    held_out = by.loc["Auxiliary Data, integer, held out", "pearson_pct"]
    assert held_out == pytest.approx(held["heldout_pearson_pct"].mean())
    assert len(held) == 4 and "na_heldout_pearson_pct" in held

    cells, grid = grid_search({"few-shot [NA]": scores[aux.NA], "few-shot [Rating]": scores["Rating"]},
                              {"other": scores["Pop"]}, truth, agreement_pct)
    rows5, held5 = aux.table5_rows(grid, cells, truth, users, na_cell="few-shot [NA]", n_splits=4, seed=0)
    by5 = rows5.set_index("method")
    assert list(by5.index) == ["none (NA)", "Auxiliary Data", "Multi-LLM & Auxiliary Data",
                               "Multi-LLM & Auxiliary Data, held out", "none (NA), same held-out halves"]
    assert by5.loc["Multi-LLM & Auxiliary Data", "pearson_pct"] == pytest.approx(grid["pearson_pct"].max())
    assert by5.loc["Auxiliary Data", "cell"] in ("few-shot [NA]", "few-shot [Rating]")
    assert by5.loc["none (NA), same held-out halves", "pearson_pct"] == pytest.approx(
        held5["na_heldout_pearson_pct"].mean())


def test_run_settings_puts_each_readers_judge_into_every_settings_role(tmp_path, monkeypatch):
    from recjudge import paths
    from recjudge.llm.judge_spec import parse_judge
    from recjudge.serendipity import ground_truth as ser

    monkeypatch.setenv(paths.STORE_ENV, str(tmp_path / "store"))
    monkeypatch.setenv("RECJUDGE_PLAN_LOG", str(tmp_path / "plan.jsonl"))
    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=12, seed=0)
    rows = study.sample.head(4)
    ratings = study.answers[["user_id", "item_id"]]
    settings = aux.settings_by_name([aux.NA, "Pop"])
    plain = aux.run_settings(study, rows, ratings, settings, model="tiny", mode="plan")
    assert "judge" not in plain.reports.columns and plain.readers == {}  # the committed book's shape
    reader = parse_judge("openai:gpt-4o-mini").to_parameter()
    run = aux.run_settings(study, rows, ratings, settings, model="tiny", judges=[reader], mode="plan")
    assert list(run.readers) == ["gpt-4o-mini"] and list(run.reader_integers) == ["gpt-4o-mini"]
    assert list(run.readers["gpt-4o-mini"].columns) == [aux.NA, "Pop"]
    assert run.readers["gpt-4o-mini"].index.equals(rows.index)
    assert run.reports["judge"].tolist() == ["tiny (the book's judge)", "gpt-4o-mini"] * 2
    assert (run.reports["prompts"] == len(rows)).all()
    own = aux.setting_config(settings[1], "tiny")
    assert (own.prompt, own.scoring, own.max_tokens) == ("kang_fewshot_aux", "expected", 1)
    assert aux.setting_config(settings[0], "tiny").prompt == "kang_fewshot"
    table = aux.readers_agreement(run, rows, [aux.NA, "Pop"], n_boot=0, seed=0)
    assert table["judge"].unique().tolist() == ["gpt-4o-mini"] and table["method"].tolist() == [aux.NA, "Pop"]
    assert aux.readers_agreement(plain, rows, [aux.NA], n_boot=0, seed=0).empty
    assert table["pearson_pct"].isna().all()  # a plan asks nothing (the page says so: test_chapter_auxiliary_data)


def test_tables45_rows_name_no_best_setting_when_no_pearson_is_defined():
    from recjudge.serendipity import ground_truth as ser

    truth = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0, 2.0, 3.0, 4.0])
    users = pd.Series([1, 1, 2, 2, 3, 3, 4, 4])
    scores = pd.DataFrame({aux.NA: np.nan, "Pop": np.nan}, index=truth.index).assign(truth=truth, user_id=users)
    table = ser.agreement_table(scores, [aux.NA, "Pop"], reference=aux.NA, n_boot=0, seed=0)
    rows, _ = aux.tables45_rows(table, scores, truth, users, n_splits=2, seed=0)
    best = rows.set_index("method").loc["Auxiliary Data"]
    assert best["best_setting"] == aux.UNDEFINED_BEST and np.isnan(best["pearson_pct"])


def test_a_held_out_row_counts_the_answers_of_a_half_and_never_averages_them():
    """Users with unequal numbers of answers give halves of unequal size: the row holds the fewest and the most."""
    from recjudge.compendium.claim_readers import answers_per_half
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import grid_search
    from recjudge.serendipity import ground_truth as ser

    rng = np.random.default_rng(1)
    users = pd.Series([0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    n = len(users)
    truth = pd.Series(rng.integers(1, 6, n).astype(float))
    scores = pd.DataFrame({aux.NA: truth + rng.normal(0, 1, n), "Pop": rng.normal(3, 1, n)}).assign(
        truth=truth, user_id=users)
    table = ser.agreement_table(scores, [aux.NA, "Pop"], reference=aux.NA, n_boot=20, seed=0)
    rows, held = aux.tables45_rows(table, scores, truth, users, n_splits=6, seed=0)
    assert held["heldout_n"].nunique() > 1  # the fixture does what the test needs
    row = rows.set_index("method").loc["Auxiliary Data, held out"]
    assert (row["n"], row["n_max"]) == (held["heldout_n"].min(), held["heldout_n"].max())
    assert rows["n"].dtype.kind == "i" and rows["n_max"].dtype.kind == "i"
    assert answers_per_half(row) == f"{int(row['n'])}–{int(row['n_max'])}"

    cells, grid = grid_search({"few-shot [NA]": scores[aux.NA]}, {"other": scores["Pop"]}, truth, agreement_pct)
    rows5, held5 = aux.table5_rows(grid, cells, truth, users, na_cell="few-shot [NA]", n_splits=6, seed=0)
    row5 = rows5.set_index("method").loc["Multi-LLM & Auxiliary Data, held out"]
    assert (row5["n"], row5["n_max"]) == (held5["heldout_n"].min(), held5["heldout_n"].max())
    single = rows5.set_index("method").loc["none (NA)"]
    assert single["n"] == single["n_max"] == n


def test_short_term_profile_matches_a_plain_filter_of_each_window(movies):
    """The window is found by binary search in each user's sorted timestamps (a plan builds every answer's prompt):
    the same texts as filtering every interaction by the window's bounds, start included and the target's own time
    excluded, on unsorted interactions with ties, repeats and movies missing from the table."""
    rng = np.random.default_rng(0)
    t0 = pd.Timestamp("2017-03-01", tz="UTC")
    days = rng.integers(-40, 3, size=200)
    interactions = pd.DataFrame({"user_id": rng.integers(1, 5, size=200), "item_id": rng.integers(1, 7, size=200),
                                 "timestamp": [t0 + pd.Timedelta(days=int(d)) for d in days],
                                 "rating": rng.integers(1, 6, size=200).astype(float)})
    targets = interactions.sample(40, random_state=0)[["user_id", "item_id", "timestamp"]]
    targets.loc[targets.index[0], "timestamp"] = targets["timestamp"].iloc[1] + pd.Timedelta(days=28)  # edge: start

    def plain(user, item, when):
        window = interactions[(interactions["user_id"] == user) & (interactions["timestamp"] < when)
                              & (interactions["timestamp"] >= when - pd.Timedelta(days=28))
                              & (interactions["item_id"] != item)]
        return aux.short_term_profile_texts(pd.DataFrame({"user_id": [user], "item_id": [item], "timestamp": [when]}),
                                            window, movies).iloc[0]

    expected = [plain(*row) for row in targets.itertuples(index=False)]
    assert aux.short_term_profile_texts(targets, interactions, movies).tolist() == expected
    assert any(text.startswith("no movie") for text in expected) and not all(t.startswith("no") for t in expected)


def test_setting_requests_given_the_history_texts_once_build_the_same_prompts():
    """run_settings builds the plain history texts once for all its settings: every setting's requests are those
    it builds from the history itself (the length settings and "Rating" keep their own histories)."""
    from recjudge.prompts.serendipity import MovieNames, history_texts
    from recjudge.serendipity import ground_truth as ser

    study = ser.prepare_serendipity2018("synthetic", history_k=10, sample_size=12, seed=0)
    rows = study.sample.head(6)
    frames = pd.concat([rows, study.examples])
    table = aux.auxiliary_table(frames, study.history, study.movies, study.answers[["user_id", "item_id"]],
                                interactions=study.answers)
    texts = history_texts(frames, study.history, MovieNames(study.movies))
    settings = aux.settings_by_name([aux.NA, "Pop", "Sim", "Rating", "S-prof."]) + aux.length_settings([1])
    for setting in settings:
        def built(**given):
            return [(r.key, r.messages) for r in aux.setting_requests(setting, rows, study.examples, table,
                                                                      study.history, study.movies,
                                                                      answers=study.answers, **given)]
        assert built(history_texts=texts) == built(), setting.name
