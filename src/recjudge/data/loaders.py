"""Loaders: the datasets' files as tidy pandas DataFrames (snake_case columns, ``user_id``/``item_id``, timestamps
as datetime64[ns, UTC], Likert answers as float with NaN for "NA / don't remember").

Every loader takes an optional ``source``: ``None`` (default) resolves the dataset through :func:`recjudge.data.fetch`
(mirror folder, data/raw, official download, committed sample); a path reads that folder as is (no checksum check,
for tests and hand-placed copies). The Serendipity-2018 loaders also accept ``source="synthetic"``: the committed,
clearly labelled synthetic survey ``tests/fixtures/serendipity-2018-synthetic`` written by
``scripts/make_synthetic_fixtures.py`` (item ids from ml-latest-small so that titles and genres join with the
embedded sample). Frames read from it carry ``frame.attrs["synthetic"] = True``.

Schema problems raise :class:`DataSchemaError` naming the file, column and line; absent files raise
:class:`MissingDataError` saying what is missing and, where the compendium has one, the documented fallback.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recjudge.data import _csv
from recjudge.data.errors import DataSchemaError, MissingDataError
from recjudge.data.fetch import fetch, locate
from recjudge.paths import project_root

SERENDIPITY = "serendipity-2018"
SYNTHETIC_SERENDIPITY = "serendipity-2018-synthetic"
LIKERT_COLUMNS = tuple(f"s{i}" for i in range(1, 9))
FLAG_COLUMNS = tuple(f"{kind}_ser_{aspect}" for kind in ("s", "m") for aspect in ("rel", "find", "imp", "rec"))
ANSWER_COLUMNS = ("user_id", "item_id", "rating", "timestamp", "predicted_rating", *LIKERT_COLUMNS, "q",
                  *FLAG_COLUMNS)
_ANSWER_FILE_COLUMNS = {"userId": "user_id", "movieId": "item_id", "rating": "rating", "timestamp": "timestamp",
                        "predictedRating": "predicted_rating", **{c: c for c in LIKERT_COLUMNS}, "q": "q",
                        **{c: c for c in FLAG_COLUMNS}}

#: What callers do without Serendipity-2018 training.csv (stated in the MissingDataError and in the chapters).
TRAINING_FALLBACK = (
    "Documented fallback: build each user's history from answers.csv alone (the user's other surveyed movies rated "
    "before the target, ordered by time; all rated >= 3.5) and label every result computed this way "
    "'answers-only history' (see recjudge.serendipity.ground_truth)."
)

Source = str | Path | None


def synthetic_dir(name: str = SYNTHETIC_SERENDIPITY) -> Path:
    """Folder of a committed synthetic fixture (tests/fixtures/<name>)."""
    return project_root() / "tests" / "fixtures" / name


def _folder(dataset: str, source: Source) -> tuple[Path, bool]:
    """(folder, synthetic?) for a loader's ``source`` argument."""
    if source is None or source == "dataset":
        return fetch(dataset, quiet=True), False
    if source == "synthetic":
        if dataset != SERENDIPITY:
            raise ValueError(f"no synthetic copy of {dataset!r}; only {SERENDIPITY!r} has one")
        folder = synthetic_dir()
        if not folder.is_dir():
            raise MissingDataError(f"{folder} does not exist: run scripts/make_synthetic_fixtures.py")
        return folder, True
    return Path(source), False


def _label(frame: pd.DataFrame, path: Path, synthetic: bool) -> pd.DataFrame:
    frame.attrs["source_file"] = str(path)
    frame.attrs["synthetic"] = synthetic
    return frame


# ------------------------------------------------------------------------------------------- Serendipity-2018
def _answers_frame(path: Path, text: pd.DataFrame) -> pd.DataFrame:
    frame = _answers_columns(path, text)
    _csv.require_unique(frame, path, ["user_id", "item_id"], what="answer of (user, movie)")
    return frame


def _answers_columns(path: Path, text: pd.DataFrame) -> pd.DataFrame:
    columns = {
        "user_id": _csv.identifier(text, path, "userId"),
        "item_id": _csv.identifier(text, path, "movieId"),
        "rating": _csv.numeric(text, path, "rating", low=0.5, high=5),
        "timestamp": _csv.epoch_utc(text, path, "timestamp"),
        "predicted_rating": _csv.numeric(text, path, "predictedRating", required=False),
    }
    for column in LIKERT_COLUMNS:
        columns[column] = _csv.numeric(text, path, column, required=False, low=1, high=5)
    columns["q"] = _csv.numeric(text, path, "q", required=False, low=1, high=7)
    for column in FLAG_COLUMNS:
        columns[column] = _csv.boolean(text, path, column)
    return pd.DataFrame(columns)


def load_serendipity_answers(source: Source = None) -> pd.DataFrame:
    """Serendipity-2018 ``answers.csv``: one row per (user, movie) survey answer (2,150 rows, 481 users).

    ``source``: None → the dataset (mirror / fetched copy); ``"synthetic"`` → the committed synthetic survey (for the
    embedded-sample path and tests; ``attrs["synthetic"]`` is True); a path → that folder.

    Columns:
        user_id (int64), item_id (int64; MovieLens movieId), rating (float, 0.5–5 stars, the rating at answer time),
        timestamp (datetime64[ns, UTC]; the file stores milliseconds), predicted_rating (float; NaN for 20 rows),
        s1..s8 (float 1–5 Likert: 1 strongly disagree .. 5 strongly agree; NaN = "NA / don't remember"),
        q (float 1–7: when first watched — 1 past week, 2 past month, 3 1–6 months, 4 6–12 months, 5 1–3 years,
        6 >3 years, 7 don't remember; kept as a code, NaN only where the file says NA),
        s_ser_rel, s_ser_find, s_ser_imp, s_ser_rec, m_ser_rel, m_ser_find, m_ser_imp, m_ser_rec (bool; the
        dataset's strict / motivational serendipity flags, TRUE/FALSE in the file).
    The file is UTF-8 with a BOM and CRLF line ends; both are handled.
    """
    folder, synthetic = _folder(SERENDIPITY, source)
    path = folder / "answers.csv"
    text = _csv.read_table(path, columns=_ANSWER_FILE_COLUMNS)
    return _label(_answers_frame(path, text), path, synthetic)


def load_serendipity_recommendations(source: Source = None) -> pd.DataFrame:
    """Serendipity-2018 ``recommendations.csv``: the 8 movies MovieLens recommended to each surveyed user before
    the survey (3,840 rows, 480 users; user 196794 has none).

    Columns: user_id (int64), item_id (int64)."""
    folder, synthetic = _folder(SERENDIPITY, source)
    path = folder / "recommendations.csv"
    text = _csv.read_table(path, columns=["userId", "movieId"])
    frame = pd.DataFrame({"user_id": _csv.identifier(text, path, "userId"),
                          "item_id": _csv.identifier(text, path, "movieId")})
    return _label(frame, path, synthetic)


def load_serendipity_training(source: Source = None) -> pd.DataFrame:
    """Serendipity-2018 ``training.csv``: the surveyed and other users' ratings (9,997,850 rows in the release).

    Columns: user_id (int64), item_id (int64), rating (float, 0.5–5), timestamp (datetime64[ns, UTC]; the file
    stores milliseconds although the README says seconds — the unit is detected from the values).

    Raises MissingDataError when the file is absent (it is absent from the mirror copy); the message names the
    file and the fallback :data:`TRAINING_FALLBACK`."""
    folder, synthetic = _folder(SERENDIPITY, source)
    path = folder / "training.csv"
    if not path.is_file():
        raise MissingDataError(f"{path} does not exist: Serendipity-2018 training.csv is not in this copy (the mirror "
                               f"copy is partial). {TRAINING_FALLBACK}")
    text = _csv.read_table(path, columns=["userId", "movieId", "rating", "timestamp"])
    frame = pd.DataFrame({"user_id": _csv.identifier(text, path, "userId"),
                          "item_id": _csv.identifier(text, path, "movieId"),
                          "rating": _csv.numeric(text, path, "rating", low=0.5, high=5),
                          "timestamp": _csv.epoch_utc(text, path, "timestamp")})
    return _label(frame, path, synthetic)


_YEAR_IN_TITLE = re.compile(r"\((\d{4})(?:\s*[-–]\s*\d{0,4})?\)\s*$")


def year_from_title(titles: pd.Series) -> pd.Series:
    """Release year from a MovieLens title such as 'Toy Story (1995)' (float, NaN when absent)."""
    return titles.str.extract(_YEAR_IN_TITLE, expand=False).astype("float64")


def _genre_tuples(values: pd.Series, sep: str) -> pd.Series:
    def split(value: str) -> tuple[str, ...]:
        if not isinstance(value, str) or value.strip() in ("", "(no genres listed)"):
            return ()
        return tuple(part.strip() for part in value.split(sep) if part.strip())

    return values.map(split)


def _movielens_movies_csv(path: Path) -> pd.DataFrame:
    text = _csv.read_table(path, columns=["movieId", "title", "genres"], text_columns=["title", "genres"])
    titles = _csv.repair_mojibake(text["title"].fillna(""), path, "title")
    frame = pd.DataFrame({"item_id": _csv.identifier(text, path, "movieId"), "title": titles,
                          "year": year_from_title(titles), "genres": _genre_tuples(text["genres"], "|")})
    _csv.require_unique(frame, path, ["item_id"], what="movieId")
    return frame


def load_serendipity_movies(source: Source = None) -> pd.DataFrame:
    """Titles and genres for Serendipity-2018 movie ids.

    From the Serendipity-2018 ``movies.csv`` when present (extra columns release_date (datetime64[ns, UTC]),
    directed_by, starring (str), imdb_id, tmdb_id (Int64)); otherwise from the 2018 ml-latest ``movies.csv``
    (dataset movielens-latest-2018-movies; covers 1,670 of 1,678 answered movies, no directors or cast). With
    ``source="synthetic"`` the movies of ml-latest-small (the synthetic survey draws its ids from it).

    Columns: item_id (int64), title (str, as in the file, year included), year (float; from the release date, else
    the title), genres (tuple[str, ...]; empty for "(no genres listed)"). ``attrs["movies_source"]`` names the file.
    """
    if source == "synthetic":
        frame = load_movielens("latest-small").items
        frame.attrs["synthetic"] = True
        frame.attrs["movies_source"] = "movielens-latest-small movies.csv (synthetic survey ids)"
        return frame
    folder, _ = _folder(SERENDIPITY, source)
    path = folder / "movies.csv"
    if path.is_file():
        text = _csv.read_table(path, columns=["movieId", "title", "releaseDate", "directedBy", "starring",
                                                   "imdbId", "tmdbId", "genres"],
                                    text_columns=["title", "releaseDate", "directedBy", "starring", "genres"])
        titles = _csv.repair_mojibake(text["title"].fillna(""), path, "title")
        release = pd.to_datetime(text["releaseDate"].replace("", None), errors="coerce", utc=True)
        frame = pd.DataFrame({
            "item_id": _csv.identifier(text, path, "movieId"), "title": titles,
            "year": release.dt.year.astype("float64").fillna(year_from_title(titles)),
            "genres": _genre_tuples(text["genres"], ","), "release_date": release,
            "directed_by": text["directedBy"], "starring": text["starring"],
            "imdb_id": _csv.numeric(text, path, "imdbId", integer=True, required=False),
            "tmdb_id": _csv.numeric(text, path, "tmdbId", integer=True, required=False),
        })
        _csv.require_unique(frame, path, ["item_id"], what="movieId")
        frame.attrs["movies_source"] = f"{SERENDIPITY} movies.csv"
    else:
        frame = load_movielens_2018_movies()
        path = Path(frame.attrs["source_file"])
        frame.attrs["movies_source"] = "movielens-latest-2018-movies movies.csv (Serendipity-2018 movies.csv absent)"
    frame.attrs["source_file"] = str(path)
    return frame


def load_movielens_2018_movies(source: Source = None) -> pd.DataFrame:
    """``movies.csv`` of the full ml-latest release of 2018-09-26 (dataset movielens-latest-2018-movies; 58,098
    movies): the title and genre lookup for Serendipity-2018 ids.

    Columns: item_id (int64), title (str, year included), year (float), genres (tuple[str, ...])."""
    folder, _ = _folder("movielens-latest-2018-movies", source)
    path = folder / "movies.csv"
    return _label(_movielens_movies_csv(path), path, False)


GPT35_FILE = "gpt35_serendipity_ratings_tvergara2023.csv"


def load_gpt35_serendipity(source: Source = None) -> pd.DataFrame:
    """Recorded gpt-3.5-turbo serendipity judgments for the 2,150 Serendipity-2018 answers (tvergara/RecSysProject).

    The file repeats answers.csv row by row (with a leading unnamed index column, Likert answers written as floats,
    flags as True/False) and adds ``gpt-rating``: a 1–5 serendipity score (steps of 0.5, a few 4.2/3.75) that
    gpt-3.5-turbo gave when shown the user's first 15 training ratings and the target movie with the user's rating.

    Columns: all columns of :func:`load_serendipity_answers` (same names and types) and gpt35_score (float 1–5).
    """
    folder, synthetic = _folder(SERENDIPITY, source)
    path = folder / GPT35_FILE
    text = _csv.read_table(path, columns=[*_ANSWER_FILE_COLUMNS, "gpt-rating"])
    frame = _answers_frame(path, text)
    frame["gpt35_score"] = _csv.numeric(text, path, "gpt-rating", low=1, high=5)
    return _label(frame, path, synthetic)


# ----------------------------------------------------------------------------------------------------- Taobao
TAOBAO_FILE = "umap2020_TSD_Wang.csv"
TAOBAO_LIKERT5 = ("relevance", "novelty", "pur_diversity", "rec_diversity", "unexpectedness", "serendipity",
                  "timeliness", "user_satisfaction", "purchase_intention")


def load_taobao_survey(source: Source = None) -> pd.DataFrame:
    """Taobao Serendipity survey (``umap2020_TSD_Wang.csv``): one row per user and the one item recommended to them
    (11,383 rows, no missing values).

    Columns:
        user_id, item_id, category_id (int64; anonymised),
        clicked, purchased (bool; logged behaviour on the recommended item),
        relevance, novelty, pur_diversity (diversity w.r.t. the user's purchases), rec_diversity (w.r.t. the other
        recommendations), unexpectedness, serendipity ("a pleasant surprise"), timeliness, user_satisfaction,
        purchase_intention (float, 5-point Likert 1–5),
        c1..c10 (float 1–5; CEI-II curiosity items), p1..p10 (float 1–7; TIPI Big-Five items — P2, P4, P6, P8 and
        P10 are reverse-keyed and are NOT reversed here).
    """
    folder, _ = _folder("taobao-serendipity", source)
    path = folder / TAOBAO_FILE
    file_columns = ["UserId", "ItemId", "CategoryId", "Clicked", "Purchased", "Relevance", "Novelty", "Pur_diversity",
                    "Rec_diversity", "Unexpectedness", "Serendipity", "Timeliness", "User satisfaction",
                    "Purchase intention", *(f"C{i}" for i in range(1, 11)), *(f"P{i}" for i in range(1, 11))]
    text = _csv.read_table(path, columns=file_columns)
    columns: dict[str, pd.Series] = {
        "user_id": _csv.numeric(text, path, "UserId", integer=True),
        "item_id": _csv.numeric(text, path, "ItemId", integer=True),
        "category_id": _csv.numeric(text, path, "CategoryId", integer=True),
        "clicked": _csv.boolean(text, path, "Clicked"),
        "purchased": _csv.boolean(text, path, "Purchased"),
    }
    for file_column, column in zip(file_columns[5:14], TAOBAO_LIKERT5):
        columns[column] = _csv.numeric(text, path, file_column, low=1, high=5)
    for i in range(1, 11):
        columns[f"c{i}"] = _csv.numeric(text, path, f"C{i}", low=1, high=5)
    for i in range(1, 11):
        columns[f"p{i}"] = _csv.numeric(text, path, f"P{i}", low=1, high=7)
    return _label(pd.DataFrame(columns), path, False)


# -------------------------------------------------------------------------------------------------- MovieLens
Variant = Literal["latest-small", "100k", "1m"]
_VARIANT_DATASET = {"latest-small": "movielens-latest-small", "100k": "movielens-100k", "1m": "movielens-1m"}
#: How prose names each variant (the name its release uses): chapters glue it from their dataset parameter, so that a
#: copied chapter run on another variant never names the original's.
MOVIELENS_NAMES = {"latest-small": "ml-latest-small", "100k": "ML-100K", "1m": "ML-1M"}


def movielens_name(variant: str) -> str:
    """The name prose gives the MovieLens variant ``variant`` ("latest-small" -> "ml-latest-small")."""
    try:
        return MOVIELENS_NAMES[variant]
    except KeyError:
        raise ValueError(f"unknown MovieLens variant {variant!r}; expected one of {sorted(MOVIELENS_NAMES)}") from None


@dataclass
class MovieLens:
    """One MovieLens variant as tidy frames.

    ratings: user_id, item_id (int64), rating (float), timestamp (datetime64[ns, UTC]); for a partial 1M copy also
        ``split`` (train_pos / val / test, see ``note``).
    items: item_id (int64), title (str, year included as in the file), year (float), genres (tuple[str, ...]);
        100K adds release_date (datetime64[ns, UTC]) and imdb_url.
    tags: user_id, item_id, tag (str), timestamp — latest-small only, else None.
    users: user_id, gender, age, occupation, zip_code — 100K (age in years, occupation as text) and 1M (age and
        occupation as the README's codes), else None.
    pairs: 1M partial copy only: all 1,000,209 (user_id, item_id) rating pairs without rating or time.
    status: "complete", "partial" or "sample" (the committed copy of ml-latest-small); note: what that means.
    """

    variant: str
    ratings: pd.DataFrame
    items: pd.DataFrame
    tags: pd.DataFrame | None
    users: pd.DataFrame | None
    status: str
    note: str
    directory: Path
    pairs: pd.DataFrame | None = None


def _ratings(text: pd.DataFrame, path: Path, names: tuple[str, str, str, str], *, header: bool = True) -> pd.DataFrame:
    user, item, rating, stamp = names
    frame = pd.DataFrame({"user_id": _csv.identifier(text, path, user, header=header),
                         "item_id": _csv.identifier(text, path, item, header=header),
                         "rating": _csv.numeric(text, path, rating, low=0.5, high=5, header=header),
                         "timestamp": _csv.epoch_utc(text, path, stamp, header=header)})
    _csv.require_unique(frame, path, ["user_id", "item_id"], header=header, what="rating of (user, item)")
    return frame


def _resolve_variant(variant: str, source: Source) -> tuple[Path, str]:
    if variant not in _VARIANT_DATASET:
        raise ValueError(f"unknown MovieLens variant {variant!r}; choose from {sorted(_VARIANT_DATASET)}")
    dataset = _VARIANT_DATASET[variant]
    if source is not None:
        return Path(source), "complete"
    folder = fetch(dataset, quiet=True)
    found = locate(dataset)
    origin = "sample" if found is not None and found.path == folder and found.origin == "sample" else "complete"
    return folder, origin


def load_movielens(variant: Variant, source: Source = None) -> MovieLens:
    """Load a MovieLens variant ("latest-small", "100k" or "1m") as a :class:`MovieLens` (frames documented there).

    1M: when ``ratings.dat`` is absent (as in the mirror), the ratings come from ``derived-partial/``: 663,062 of the
    1,000,209 ratings (every rating of the latest 20% by time and the earlier ratings >= 4), status "partial", and
    ``pairs`` holds all 1,000,209 (user, item) pairs. ``note`` says exactly what is missing."""
    folder, status = _resolve_variant(variant, source)
    if variant == "latest-small":
        return _latest_small(folder, status)
    if variant == "100k":
        return _ml100k(folder)
    return _ml1m(folder)


def _latest_small(folder: Path, status: str) -> MovieLens:
    ratings_path, tags_path = folder / "ratings.csv", folder / "tags.csv"
    ratings = _ratings(_csv.read_table(ratings_path, columns=["userId", "movieId", "rating", "timestamp"]),
                       ratings_path, ("userId", "movieId", "rating", "timestamp"))
    tags_text = _csv.read_table(tags_path, columns=["userId", "movieId", "tag", "timestamp"], text_columns=["tag"])
    tags = pd.DataFrame({"user_id": _csv.identifier(tags_text, tags_path, "userId"),
                         "item_id": _csv.identifier(tags_text, tags_path, "movieId"),
                         "tag": tags_text["tag"], "timestamp": _csv.epoch_utc(tags_text, tags_path, "timestamp")})
    items = _movielens_movies_csv(folder / "movies.csv")
    note = ("ml-latest-small (2018-09-26): 100,836 ratings, 610 users, 9,742 movies; a small development subset of "
            "MovieLens")
    if status == "sample":
        note += "; read from the committed copy under data/sample (redistributable under its README.txt licence)"
    return MovieLens("latest-small", ratings, items, tags, None, status, note, folder)


def _ml100k(folder: Path) -> MovieLens:
    data_path = folder / "u.data"
    ratings = _ratings(_csv.read_table(data_path, sep="\t", names=["user", "item", "rating", "timestamp"],
                                            quoting=csv.QUOTE_NONE),
                       data_path, ("user", "item", "rating", "timestamp"), header=False)
    genre_path = folder / "u.genre"
    genre_text = _csv.read_table(genre_path, sep="|", names=["genre", "index"], encoding="latin-1",
                                      text_columns=["genre"])
    genre_text = genre_text[genre_text["genre"].fillna("") != ""]
    genres = list(genre_text["genre"])
    item_path = folder / "u.item"
    item_names = ["item_id", "title", "release_date", "video_release_date", "imdb_url", *genres]
    item_text = _csv.read_table(item_path, sep="|", names=item_names, encoding="latin-1",
                                     quoting=csv.QUOTE_NONE,
                                     text_columns=["title", "release_date", "video_release_date", "imdb_url"])
    flags = np.column_stack([_csv.numeric(item_text, item_path, g, integer=True, low=0, high=1, header=False)
                             for g in genres]).astype(bool)
    release = pd.to_datetime(item_text["release_date"].replace("", None), format="%d-%b-%Y", errors="coerce",
                             utc=True)
    titles = item_text["title"].fillna("")
    items = pd.DataFrame({
        "item_id": _csv.identifier(item_text, item_path, "item_id", header=False), "title": titles,
        "year": year_from_title(titles).fillna(release.dt.year.astype("float64")),
        "genres": [tuple(g for g, on in zip(genres, row) if on and g != "unknown") for row in flags],
        "release_date": release, "imdb_url": item_text["imdb_url"],
    })
    _csv.require_unique(items, item_path, ["item_id"], header=False, what="movie id")
    user_path = folder / "u.user"
    user_text = _csv.read_table(user_path, sep="|", names=["user_id", "age", "gender", "occupation", "zip"],
                                     text_columns=["gender", "occupation", "zip"])
    users = pd.DataFrame({"user_id": _csv.identifier(user_text, user_path, "user_id", header=False),
                          "gender": user_text["gender"],
                          "age": _csv.numeric(user_text, user_path, "age", integer=True, header=False),
                          "occupation": user_text["occupation"], "zip_code": user_text["zip"]})
    _csv.require_unique(users, user_path, ["user_id"], header=False, what="user id")
    note = "ml-100k: 100,000 ratings (1–5) of 1,682 movies by 943 users, 1997-09 to 1998-04"
    return MovieLens("100k", ratings, items, None, users, "complete", note, folder)


#: First and last timestamp (Unix seconds, UTC) of the ML-1M ratings of 1-3 that the partial copy lacks.
ML1M_MISSING_SPAN = (956703932, 975768738)
# The copy's status ("partial") is said beside this note where it is shown, so the note does not repeat it.
ML1M_PARTIAL_NOTE = (
    "ratings.dat is missing. The ratings hold 663,062 of the 1,000,209 ML-1M ratings: every rating of the latest "
    "20% by time (global temporal split; split 'val' and 'test', 100,021 each) and the earlier ratings of 4 or 5 "
    "(split 'train_pos', 463,020). Missing: the 337,147 earlier ratings of 1, 2 or 3 (rated from "
    + " to ".join(pd.Timestamp(second, unit="s").strftime("%Y-%m-%d") for second in ML1M_MISSING_SPAN)
    + "; 45,338 ones, 84,619 twos, 207,190 threes), so rating means and distributions are biased upwards. All "
    "1,000,209 (user, item) pairs are in `pairs`. Use for implicit-feedback or positives-only work, not as explicit "
    "ratings or full per-user histories."
)


def _ml1m(folder: Path) -> MovieLens:
    movies_path = folder / "movies.dat"
    movie_text = _csv.read_table(movies_path, names=["item_id", "title", "genres"], encoding="latin-1",
                                      double_colon=True, quoting=csv.QUOTE_NONE, text_columns=["title", "genres"])
    titles = movie_text["title"].fillna("")
    items = pd.DataFrame({"item_id": _csv.identifier(movie_text, movies_path, "item_id", header=False),
                          "title": titles, "year": year_from_title(titles),
                          "genres": _genre_tuples(movie_text["genres"], "|")})
    _csv.require_unique(items, movies_path, ["item_id"], header=False, what="movie id")
    users_path = folder / "users.dat"
    user_text = _csv.read_table(users_path, names=["user_id", "gender", "age", "occupation", "zip"],
                                     encoding="latin-1", double_colon=True, quoting=csv.QUOTE_NONE,
                                     text_columns=["gender", "zip"])
    users = pd.DataFrame({"user_id": _csv.identifier(user_text, users_path, "user_id", header=False),
                          "gender": user_text["gender"],
                          "age": _csv.numeric(user_text, users_path, "age", integer=True, header=False),
                          "occupation": _csv.numeric(user_text, users_path, "occupation", integer=True, header=False),
                          "zip_code": user_text["zip"]})
    _csv.require_unique(users, users_path, ["user_id"], header=False, what="user id")
    ratings_path = folder / "ratings.dat"
    if ratings_path.is_file():
        text = _csv.read_table(ratings_path, names=["user", "item", "rating", "timestamp"], encoding="latin-1",
                                    double_colon=True, quoting=csv.QUOTE_NONE)
        ratings = _ratings(text, ratings_path, ("user", "item", "rating", "timestamp"), header=False)
        note = "ml-1m: 1,000,209 ratings (1–5) of 3,706 movies by 6,040 users"
        return MovieLens("1m", ratings, items, None, users, "complete", note, folder)
    partial_path = folder / "derived-partial" / "ratings_partial_663062.csv"
    pairs_path = folder / "derived-partial" / "pairs_all_1000209.csv"
    if not partial_path.is_file():
        raise MissingDataError(f"{ratings_path} does not exist and neither does {partial_path}: no MovieLens 1M "
                               "ratings are available")
    text = _csv.read_table(partial_path, columns=["user_id", "movie_id", "rating", "timestamp", "split"],
                                text_columns=["split"])
    ratings = _ratings(text, partial_path, ("user_id", "movie_id", "rating", "timestamp"))
    unknown = sorted(set(text["split"]) - {"train_pos", "val", "test"})
    if unknown:
        raise DataSchemaError(partial_path, f"unknown split value(s) {unknown}", column="split")
    ratings["split"] = text["split"].to_numpy()
    pairs = None
    if pairs_path.is_file():
        pair_text = _csv.read_table(pairs_path, columns=["user_id", "movie_id"])
        pairs = pd.DataFrame({"user_id": _csv.identifier(pair_text, pairs_path, "user_id"),
                              "item_id": _csv.identifier(pair_text, pairs_path, "movie_id")})
    return MovieLens("1m", ratings, items, None, users, "partial", ML1M_PARTIAL_NOTE, folder, pairs)


# ------------------------------------------------------------------------------------------- Amazon Beauty
def load_amazon_beauty_sequences(source: Source = None) -> pd.DataFrame:
    """Amazon Beauty 5-core as preprocessed by S3-Rec/ICLRec (``Beauty.txt``: one line per user,
    ``user item item ...`` in chronological order; 198,502 interactions of 22,363 users with 12,101 items).

    Columns: user_id, item_id (int64; remapped ids — no ASINs, titles, ratings or timestamps exist), position
    (int64, 0-based order of the interaction in the user's sequence)."""
    folder, _ = _folder("amazon-beauty-5core-s3rec", source)
    path = _csv.require_file(folder / "Beauty.txt")
    users, items, positions = [], [], []
    first_line: dict[int, int] = {}
    int64_max = int(np.iinfo(np.int64).max)
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataSchemaError(path, f"not valid UTF-8: {error.reason} (byte 0x{raw[error.start]:02x})",
                                      row=line_number) from None
            if "\x00" in line:
                raise DataSchemaError(path, "contains a NUL byte", row=line_number)
            fields = line.split()
            if not fields:
                continue
            try:
                ids = [int(field) for field in fields]
            except ValueError as error:
                raise DataSchemaError(path, f"non-integer id: {error}", row=line_number) from None
            outside = next((value for value in ids if not 0 <= value <= int64_max), None)
            if outside is not None:
                raise DataSchemaError(path, f"id {outside} is not between 0 and 2**63-1", row=line_number)
            if len(ids) < 2:
                raise DataSchemaError(path, "a user line needs a user id and at least one item", row=line_number)
            if ids[0] in first_line:
                raise DataSchemaError(path, f"user {ids[0]} has a second line (first at line {first_line[ids[0]]})",
                                      row=line_number)
            first_line[ids[0]] = line_number
            users.extend([ids[0]] * (len(ids) - 1))
            items.extend(ids[1:])
            positions.extend(range(len(ids) - 1))
    if not users:
        raise DataSchemaError(path, "has no user lines")
    frame = pd.DataFrame({"user_id": np.asarray(users, dtype=np.int64), "item_id": np.asarray(items, dtype=np.int64),
                          "position": np.asarray(positions, dtype=np.int64)})
    return _label(frame, path, False)
