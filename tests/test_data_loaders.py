"""Loaders on synthetic fixtures (always) and on the mirror (when RECJUDGE_DATA_MIRROR is set, as in CI)."""

from __future__ import annotations

import importlib
import os
import shutil
import urllib.error
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recjudge.data as data
from recjudge.data import DataSchemaError, MissingDataError
from recjudge.data.loaders import ANSWER_COLUMNS, FLAG_COLUMNS, LIKERT_COLUMNS, ML1M_PARTIAL_NOTE, TRAINING_FALLBACK

fetch_module = importlib.import_module("recjudge.data.fetch")
ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC = ROOT / "tests" / "fixtures" / "serendipity-2018-synthetic"
SAMPLE = ROOT / "data" / "sample" / "movielens-latest-small"
needs_mirror = pytest.mark.skipif(not os.environ.get("RECJUDGE_DATA_MIRROR"),
                                  reason="RECJUDGE_DATA_MIRROR unset (CI sets it to ../shared/data)")


@pytest.fixture()
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No mirror, an empty data/raw, and downloads that fail like a machine without network."""
    monkeypatch.delenv("RECJUDGE_DATA_MIRROR", raising=False)
    monkeypatch.setattr(fetch_module, "raw_data_dir", lambda: tmp_path / "raw")
    monkeypatch.setattr(fetch_module, "_FAILED_DOWNLOADS", {})

    def no_network(url: str, target: Path, *, quiet: bool) -> tuple[str, str]:
        raise urllib.error.URLError("offline test")

    monkeypatch.setattr(fetch_module, "_download_to", no_network)


def copy_synthetic(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "serendipity"
    folder.mkdir()
    for name in names:
        shutil.copy(SYNTHETIC / name, folder / name)
    return folder


def raw_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8-sig").splitlines()


# ------------------------------------------------------------------------------------- synthetic Serendipity
def test_synthetic_fixture_keeps_the_real_format_quirks() -> None:
    raw = (SYNTHETIC / "answers.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw and b",NA," in raw
    assert "SYNTHETIC" in (SYNTHETIC / "README.md").read_text(encoding="utf-8")


def test_answers_from_synthetic_fixture() -> None:
    answers = data.load_serendipity_answers("synthetic")
    assert tuple(answers.columns) == ANSWER_COLUMNS
    assert answers.attrs["synthetic"] is True
    assert answers["user_id"].dtype == np.int64 and answers["item_id"].dtype == np.int64
    assert str(answers["timestamp"].dtype) == "datetime64[ns, UTC]"
    # milliseconds read as milliseconds: every answer lies in 2017
    assert (answers["timestamp"].dt.year == 2017).all()
    for column in FLAG_COLUMNS:
        assert answers[column].dtype == bool
    # "NA" becomes NaN, one for one with the file's text
    text = pd.read_csv(SYNTHETIC / "answers.csv", encoding="utf-8-sig", dtype=str, keep_default_na=False)
    for column in (*LIKERT_COLUMNS, "predicted_rating"):
        file_column = "predictedRating" if column == "predicted_rating" else column
        assert answers[column].isna().sum() == (text[file_column] == "NA").sum()
    assert answers["s2"].isna().any()
    # the README's flag rule holds (NA never satisfies a condition)
    s = answers
    assert (s["s_ser_find"] == ((s["s1"] > 3) & (s["s4"] > 3))).all()
    assert (s["m_ser_rel"] == ((s["s2"] > 3) & (s["s3"] <= 3))).all()
    # ids join with the embedded ml-latest-small movies
    movies = data.load_serendipity_movies("synthetic")
    assert answers["item_id"].isin(movies["item_id"]).all()


def test_recommendations_and_training_from_synthetic_fixture() -> None:
    recommendations = data.load_serendipity_recommendations("synthetic")
    assert list(recommendations.columns) == ["user_id", "item_id"]
    assert (recommendations.groupby("user_id").size() == 8).all()
    training = data.load_serendipity_training("synthetic")
    assert list(training.columns) == ["user_id", "item_id", "rating", "timestamp"]
    assert len(training) == len(raw_lines(SYNTHETIC / "training.csv")) - 1
    assert training["timestamp"].dt.year.between(2010, 2016).all()  # milliseconds detected
    assert training["rating"].between(0.5, 5).all()


def test_training_absent_names_file_and_fallback(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    with pytest.raises(MissingDataError) as caught:
        data.load_serendipity_training(folder)
    assert str(folder / "training.csv") in str(caught.value)
    assert TRAINING_FALLBACK in str(caught.value)


def test_training_in_seconds_is_read_as_seconds(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "training.csv").write_text("userId,movieId,rating,timestamp\n1,2,3.5,1483228800\n", encoding="utf-8")
    assert data.load_serendipity_training(folder)["timestamp"].iloc[0] == pd.Timestamp("2017-01-01", tz="UTC")


def test_serendipity_movies_csv_preferred_when_present(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "movies.csv").write_text(
        '"movieId","title","releaseDate","directedBy","starring","imdbId","tmdbId","genres"\r\n'
        '"1","Synthetic Film","1995-10-30","A. Director","B. Actor, C. Actor","114709","862","Animation, Comedy"\r\n'
        '"2","Another Film (2001)","","","","","",""\r\n', encoding="utf-8-sig")
    movies = data.load_serendipity_movies(folder)
    assert movies.attrs["movies_source"] == "serendipity-2018 movies.csv"
    assert movies.loc[0, "genres"] == ("Animation", "Comedy") and movies.loc[0, "year"] == 1995
    assert movies.loc[1, "year"] == 2001 and movies.loc[1, "genres"] == ()
    assert movies.loc[0, "starring"] == "B. Actor, C. Actor"


def test_gpt35_file_shape(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    text = pd.read_csv(folder / "answers.csv", encoding="utf-8-sig", dtype=str, keep_default_na=False)
    text = text.replace({"TRUE": "True", "FALSE": "False"})
    text["gpt-rating"] = ["4.0", "3.5", "4.2"] * (len(text) // 3) + ["3.0"] * (len(text) % 3)
    text.to_csv(folder / "gpt35_serendipity_ratings_tvergara2023.csv")  # with the unnamed index column
    scores = data.load_gpt35_serendipity(folder)
    assert list(scores.columns) == [*ANSWER_COLUMNS, "gpt35_score"]
    assert scores["gpt35_score"].iloc[:3].tolist() == [4.0, 3.5, 4.2]
    pd.testing.assert_frame_equal(scores.drop(columns="gpt35_score"), data.load_serendipity_answers(folder))


# ------------------------------------------------------------------------------------------------ bad inputs
def test_truncated_answers_file_names_file_column_and_line(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    raw = (folder / "answers.csv").read_bytes()
    cut = raw[: raw.rindex(b"\r\n", 0, len(raw) - 2) + 40]  # the last row stops after ~40 characters
    (folder / "answers.csv").write_bytes(cut)
    n_lines = cut.count(b"\r\n") + 1
    with pytest.raises(DataSchemaError) as caught:
        data.load_serendipity_answers(folder)
    error = caught.value
    assert error.file == str(folder / "answers.csv") and error.row == n_lines and error.column is not None
    assert "answers.csv" in str(error) and f"line {n_lines}" in str(error)


def test_renamed_column_is_named(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    lines = raw_lines(folder / "answers.csv")
    lines[0] = lines[0].replace("predictedRating", "predicted")
    (folder / "answers.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    with pytest.raises(DataSchemaError, match="predictedRating") as caught:
        data.load_serendipity_answers(folder)
    assert caught.value.column == "predictedRating"


def test_non_numeric_field_names_column_and_line(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    lines = raw_lines(folder / "answers.csv")
    fields = lines[5].split(",")
    fields[7] = "three"  # s3
    lines[5] = ",".join(fields)
    (folder / "answers.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    with pytest.raises(DataSchemaError) as caught:
        data.load_serendipity_answers(folder)
    assert (caught.value.column, caught.value.row) == ("s3", 6) and "'three'" in str(caught.value)


def test_out_of_range_likert_and_bad_flag(tmp_path: Path) -> None:
    folder = copy_synthetic(tmp_path, "answers.csv")
    lines = raw_lines(folder / "answers.csv")
    fields = lines[2].split(",")
    fields[5] = "9"  # s1
    lines[2] = ",".join(fields)
    (folder / "answers.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    with pytest.raises(DataSchemaError, match=r"column 's1', line 3"):
        data.load_serendipity_answers(folder)
    fields[5], fields[-1] = "2", "maybe"
    lines[2] = ",".join(fields)
    (folder / "answers.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    with pytest.raises(DataSchemaError, match=r"column 'm_ser_rec', line 3: value 'maybe'"):
        data.load_serendipity_answers(folder)


def test_row_with_too_many_fields_names_file(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "recommendations.csv").write_text("userId,movieId\r\n1,2\r\n3,4,5\r\n", encoding="utf-8-sig")
    with pytest.raises(DataSchemaError, match="recommendations.csv"):
        data.load_serendipity_recommendations(folder)


def test_wrong_timestamp_unit_is_caught(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "training.csv").write_text("userId,movieId,rating,timestamp\n1,2,3.5,1483228800000\n1,3,4,14832\n",
                                         encoding="utf-8")
    with pytest.raises(DataSchemaError, match=r"column 'timestamp', line 3"):
        data.load_serendipity_training(folder)


# --------------------------------------------------------------------------------------------- Taobao survey
TAOBAO_HEADER = ("UserId,ItemId,CategoryId,Clicked,Purchased,Relevance,Novelty,Pur_diversity,Rec_diversity,"
                 "Unexpectedness,Serendipity,Timeliness,User satisfaction,Purchase intention,"
                 + ",".join(f"C{i}" for i in range(1, 11)) + "," + ",".join(f"P{i}" for i in range(1, 11)))


def test_taobao_survey_from_synthetic_rows(tmp_path: Path) -> None:
    rows = ["1,10,100,0,1," + ",".join(["3"] * 9) + "," + ",".join(["2"] * 10) + "," + ",".join(["7"] * 10),
            "2,20,200,1,0," + ",".join(["5"] * 9) + "," + ",".join(["1"] * 10) + "," + ",".join(["1"] * 10)]
    (tmp_path / "umap2020_TSD_Wang.csv").write_text("\n".join([TAOBAO_HEADER, *rows]) + "\n", encoding="utf-8")
    survey = data.load_taobao_survey(tmp_path)
    assert survey.shape == (2, 34)
    assert survey.columns[:14].tolist() == ["user_id", "item_id", "category_id", "clicked", "purchased",
                                            "relevance", "novelty", "pur_diversity", "rec_diversity",
                                            "unexpectedness", "serendipity", "timeliness", "user_satisfaction",
                                            "purchase_intention"]
    assert survey["clicked"].tolist() == [False, True] and survey["p1"].tolist() == [7.0, 1.0]
    (tmp_path / "umap2020_TSD_Wang.csv").write_text("\n".join([TAOBAO_HEADER, rows[0].replace(",3,", ",8,", 1)]),
                                                    encoding="utf-8")
    with pytest.raises(DataSchemaError, match="column 'Relevance', line 2"):
        data.load_taobao_survey(tmp_path)


# -------------------------------------------------------------------------------------------------- MovieLens
def test_latest_small_from_committed_sample(offline: None) -> None:
    ml = data.load_movielens("latest-small")
    assert ml.status == "sample" and ml.directory == SAMPLE
    assert ml.ratings.shape == (100836, 4) and ml.ratings["user_id"].nunique() == 610
    assert ml.items.shape[0] == 9742 and ml.tags.shape[0] == 3683 and ml.users is None
    assert ml.items.set_index("item_id").loc[1, "genres"] == ("Adventure", "Animation", "Children", "Comedy",
                                                              "Fantasy")
    assert ml.items.set_index("item_id").loc[1, "year"] == 1995
    assert ml.ratings["timestamp"].min().year == 1996


def test_ml100k_from_synthetic_files(tmp_path: Path) -> None:
    genres = ["unknown", "Action", "Comedy"]
    (tmp_path / "u.data").write_text("1\t10\t4\t881250949\n2\t11\t2\t891717742\n", encoding="ascii")
    (tmp_path / "u.genre").write_text("".join(f"{g}|{i}\n" for i, g in enumerate(genres)) + "\n", encoding="ascii")
    (tmp_path / "u.item").write_bytes("10|Caf\xe9 Film (1995)|01-Jan-1995||http://x|0|1|1\n"
                                      "11|unknown||||1|0|0\n".encode("latin-1"))
    (tmp_path / "u.user").write_text("1|24|M|technician|85711\n2|53|F|other|94043\n", encoding="ascii")
    ml = data.load_movielens("100k", tmp_path)
    assert ml.items.loc[0, "title"] == "Café Film (1995)" and ml.items.loc[0, "genres"] == ("Action", "Comedy")
    assert ml.items.loc[1, "genres"] == () and np.isnan(ml.items.loc[1, "year"])
    assert ml.users["age"].tolist() == [24, 53] and ml.ratings["rating"].tolist() == [4.0, 2.0]
    (tmp_path / "u.data").write_text("1\t10\tfour\t881250949\n", encoding="ascii")
    with pytest.raises(DataSchemaError, match=r"u\.data, column 'rating', line 1"):
        data.load_movielens("100k", tmp_path)


def test_ml1m_partial_from_synthetic_files(tmp_path: Path) -> None:
    (tmp_path / "movies.dat").write_bytes("1::Toy Story (1995)::Animation|Children's\n".encode("latin-1"))
    (tmp_path / "users.dat").write_text("1::F::1::10::48067\n", encoding="ascii")
    derived = tmp_path / "derived-partial"
    derived.mkdir()
    (derived / "ratings_partial_663062.csv").write_text(
        "user_id,movie_id,rating,timestamp,split\n1,1,5,978300760,test\n1,2,4,970000000,train_pos\n")
    (derived / "pairs_all_1000209.csv").write_text("user_id,movie_id\n1,1\n1,2\n1,3\n")
    ml = data.load_movielens("1m", tmp_path)
    assert ml.status == "partial" and ml.note == ML1M_PARTIAL_NOTE and "337,147" in ml.note
    assert ml.ratings.columns.tolist() == ["user_id", "item_id", "rating", "timestamp", "split"]
    assert ml.pairs.shape == (3, 2) and ml.items.loc[0, "genres"] == ("Animation", "Children's")
    (tmp_path / "ratings.dat").write_text("1::1::5::978300760\n1::2::3::978302109\n1::3::4::978301968\n")
    full = data.load_movielens("1m", tmp_path)
    assert full.status == "complete" and full.pairs is None and len(full.ratings) == 3


def test_unknown_variant() -> None:
    with pytest.raises(ValueError, match="latest-small"):
        data.load_movielens("20m")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------- the mirror
@needs_mirror
def test_mirror_serendipity_answers_match_the_readme() -> None:
    answers = data.load_serendipity_answers()
    assert answers.shape == (2150, 22) and answers.attrs["synthetic"] is False
    assert answers["user_id"].nunique() == 481 and answers["item_id"].nunique() == 1678
    assert answers["predicted_rating"].isna().sum() == 20
    assert answers[["s1", "s2", "s3", "s6"]].isna().sum().tolist() == [91, 740, 63, 86]
    assert answers[list(FLAG_COLUMNS)].sum().tolist() == [79, 183, 114, 63, 93, 165, 128, 73]
    assert answers["timestamp"].min() == pd.Timestamp("2016-12-30 04:43:44", tz="UTC")
    assert answers["timestamp"].max().date() == pd.Timestamp("2018-01-06").date()


@needs_mirror
def test_mirror_serendipity_other_files() -> None:
    recommendations = data.load_serendipity_recommendations()
    assert recommendations.shape == (3840, 2) and recommendations["user_id"].nunique() == 480
    answers = data.load_serendipity_answers()
    assert set(answers["user_id"]) - set(recommendations["user_id"]) == {196794}
    with pytest.raises(MissingDataError, match="training.csv"):
        data.load_serendipity_training()
    movies = data.load_serendipity_movies()
    assert "movielens-latest-2018-movies" in movies.attrs["movies_source"] and len(movies) == 58098
    assert answers["item_id"].drop_duplicates().isin(movies["item_id"]).sum() == 1670
    scores = data.load_gpt35_serendipity()
    pd.testing.assert_frame_equal(scores.drop(columns="gpt35_score"), answers, check_like=False)
    assert scores["gpt35_score"].notna().all() and round(scores["gpt35_score"].mean(), 2) == 3.71


@needs_mirror
def test_mirror_taobao() -> None:
    survey = data.load_taobao_survey()
    assert survey.shape == (11383, 34) and survey["user_id"].is_unique
    assert round(survey["serendipity"].mean(), 2) == 2.65
    assert not survey.isna().any().any()


@needs_mirror
def test_mirror_movielens_variants() -> None:
    small = data.load_movielens("latest-small")
    assert small.status == "complete" and len(small.ratings) == 100836
    ml100k = data.load_movielens("100k")
    assert ml100k.status == "complete" and ml100k.ratings.shape == (100000, 4)
    assert ml100k.ratings["user_id"].nunique() == 943 and len(ml100k.items) == 1682 and len(ml100k.users) == 943
    ml1m = data.load_movielens("1m")
    assert ml1m.status == "partial" and len(ml1m.ratings) == 663062 and len(ml1m.pairs) == 1000209
    assert len(ml1m.items) == 3883 and len(ml1m.users) == 6040
    assert ml1m.ratings["split"].value_counts().to_dict() == {"train_pos": 463020, "val": 100021, "test": 100021}
    assert ml1m.ratings.merge(ml1m.pairs, on=["user_id", "item_id"]).shape[0] == 663062


def test_movielens_2018_movie_list_from_synthetic_file(tmp_path: Path) -> None:
    (tmp_path / "movies.csv").write_text('movieId,title,genres\n1,"Film, The (1999)",Drama|Comedy\n'
                                         "2,Untitled,(no genres listed)\n", encoding="utf-8")
    movies = data.load_movielens_2018_movies(tmp_path)
    assert movies["title"].tolist() == ["Film, The (1999)", "Untitled"]
    assert movies["year"].iloc[0] == 1999 and np.isnan(movies["year"].iloc[1])
    assert movies["genres"].tolist() == [("Drama", "Comedy"), ()]


# ------------------------------------------------------------------------------------- ids and damaged files
RATINGS_HEADER = "userId,movieId,rating,timestamp\n"
GOOD_ROWS = "1,47,4.0,964982703\n1,50,5.0,964982931\n2,47,3.0,964983815\n"


def write_latest_small(folder: Path, ratings: str | bytes, movies: str = "movieId,title,genres\n47,Seven (1995),"
                       "Thriller\n50,Usual Suspects (1995),Crime\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "ratings.csv"
    target.write_bytes(ratings if isinstance(ratings, bytes) else ratings.encode("utf-8"))
    (folder / "tags.csv").write_text("userId,movieId,tag,timestamp\n1,47,dark,964982703\n", encoding="utf-8")
    (folder / "movies.csv").write_text(movies, encoding="utf-8")
    return folder


@pytest.mark.parametrize(("bad_row", "column", "message"), [
    ("9223372036854775808,47,4.0,964982703", "userId", "larger than a 64-bit signed integer"),
    ("1,99999999999999999999,4.0,964982703", "movieId", "too large for an exact integer id"),
    ("1,inf,4.0,964982703", "movieId", "not a finite number"),
    ("-3,47,4.0,964982703", "userId", "outside [0, None]"),
])
def test_ids_that_do_not_fit_are_named_not_wrapped(tmp_path: Path, bad_row: str, column: str, message: str) -> None:
    folder = write_latest_small(tmp_path / "ml", RATINGS_HEADER + GOOD_ROWS + bad_row + "\n")
    with pytest.raises(DataSchemaError) as caught:
        data.load_movielens("latest-small", folder)
    error = caught.value
    assert (error.file, error.column, error.row) == (str(folder / "ratings.csv"), column, 5)
    assert message in str(error)


def test_a_nul_byte_is_refused_with_its_line(tmp_path: Path) -> None:
    folder = write_latest_small(tmp_path / "ml", (RATINGS_HEADER + GOOD_ROWS).encode() + b"3,4\x007,4.0,964982703\n")
    with pytest.raises(DataSchemaError, match=r"ratings\.csv, line 5: contains a NUL byte"):
        data.load_movielens("latest-small", folder)


def test_duplicate_keys_header_only_and_empty_files_are_errors(tmp_path: Path) -> None:
    folder = write_latest_small(tmp_path / "ml", RATINGS_HEADER + GOOD_ROWS + "2,47,1.0,964983999\n")
    with pytest.raises(DataSchemaError, match=r"appears more than once \(lines 4, 5\)"):
        data.load_movielens("latest-small", folder)
    folder = write_latest_small(tmp_path / "ml2", RATINGS_HEADER + GOOD_ROWS,
                                movies="movieId,title,genres\n47,Seven (1995),Thriller\n47,Seven (1995),Thriller\n")
    with pytest.raises(DataSchemaError, match=r"movies\.csv.*movieId.*lines 2, 3"):
        data.load_movielens("latest-small", folder)
    folder = write_latest_small(tmp_path / "ml3", RATINGS_HEADER)
    with pytest.raises(DataSchemaError, match=r"ratings\.csv: has no data rows \(a header only\)"):
        data.load_movielens("latest-small", folder)
    folder = write_latest_small(tmp_path / "ml4", "")
    with pytest.raises(DataSchemaError, match=r"ratings\.csv: is empty"):
        data.load_movielens("latest-small", folder)


def test_invalid_utf8_in_a_csv_names_the_line(tmp_path: Path) -> None:
    folder = write_latest_small(tmp_path / "ml", RATINGS_HEADER + GOOD_ROWS,
                                movies="movieId,title,genres\n47,Seven (1995),Thriller\n")
    (folder / "movies.csv").write_bytes(b"movieId,title,genres\n47,Seven (1995),Thriller\n50,Caf\xe9 (1995),Crime\n")
    with pytest.raises(DataSchemaError, match=r"movies\.csv, line 3: is not valid utf-8-sig"):
        data.load_movielens("latest-small", folder)


def test_a_millisecond_timestamp_in_a_seconds_file_quotes_its_own_line(tmp_path: Path) -> None:
    folder = write_latest_small(tmp_path / "ml", RATINGS_HEADER + GOOD_ROWS + "3,50,4.0,964983815000\n")
    with pytest.raises(DataSchemaError, match=r"column 'timestamp', line 5: timestamp 964983815000 \(read as s\)"):
        data.load_movielens("latest-small", folder)


def test_mojibake_titles_are_reported_or_repaired(tmp_path: Path) -> None:
    folder = write_latest_small(tmp_path / "ml", RATINGS_HEADER + GOOD_ROWS,
                                movies="movieId,title,genres\n47,Les MisÃ©rables (1995),Drama\n50,Usual Suspects "
                                       "(1995),Crime\n")
    with pytest.warns(data.DataQualityWarning, match=r"movies\.csv, column 'title'.* line\(s\) 2") as caught:
        ml = data.load_movielens("latest-small", folder)
    try:
        import ftfy  # noqa: F401
    except ImportError:
        assert ml.items.loc[0, "title"] == "Les MisÃ©rables (1995)" and "install ftfy" in str(caught[0].message)
    else:
        assert ml.items.loc[0, "title"] == "Les Misérables (1995)"
    assert ml.items.loc[1, "title"] == "Usual Suspects (1995)"


@pytest.mark.parametrize(("line", "message"), [
    (b"5 18446744073709551616 3\n", "id 18446744073709551616 is not between 0 and 2**63-1"),
    (b"5 -4 3\n", "id -4 is not between 0"),
    (b"5 1\xff 3\n", "not valid UTF-8"),
    (b"5 1\x007\n", "NUL byte"),
    (b"1 9\n", "user 1 has a second line (first at line 1)"),
])
def test_beauty_sequences_name_the_bad_line(tmp_path: Path, line: bytes, message: str) -> None:
    (tmp_path / "Beauty.txt").write_bytes(b"1 2 3 4\n2 3 4\n" + line)
    with pytest.raises(DataSchemaError) as caught:
        data.load_amazon_beauty_sequences(tmp_path)
    assert caught.value.row == 3 and message in str(caught.value)
