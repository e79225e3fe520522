"""Loader of the Lu et al. (2023) explanation study: schema checks on tiny synthetic files, counts on the mirror."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recjudge.data.errors import DataSchemaError, MissingDataError
from recjudge.data.lu2023 import ASPECTS, DATASET, load_explanation_study

# --------------------------------------------------------------------------------------------------------------------
# A synthetic study (2 users x 2 movies x 2 explanation systems), written in the four files' layouts
# --------------------------------------------------------------------------------------------------------------------
SYNTHETIC = [
    # user, movie, system, user ratings (pers, trans, acc, sat) with None = left blank, annotator 1, annotator 2
    (11, 1, "user", (4, 3, 4, 4), (3, 5, 3, 3), (4, 4, 4, 4)),
    (11, 1, "pop", (2, None, 2, 3), (2, 4, 2, 2), (3, 3, 2, 3)),
    (11, 2, "user", (5, 5, 4, 5), (4, 5, 4, 4), (5, 4, 4, 4)),
    (11, 2, "pop", (3, 3, 3, 3), (2, 5, 2, 2), (2, 3, 3, 3)),
    (-22, 1, "user", (None, 2, 2, 2), (3, 5, 3, 3), (4, 4, 4, 4)),
    (-22, 1, "pop", (1, 1, 1, 1), (2, 4, 2, 2), (3, 3, 2, 3)),
    (-22, 3, "user", (4, 4, 4, 4), (4, 5, 4, 4), (5, 4, 4, 4)),
    (-22, 3, "pop", (3, 4, 3, 3), (2, 5, 2, 2), (2, 3, 3, 3)),
]
SELF = {(11, 1): "我喜欢这部电影", (11, 2): "很多人看过", (-22, 1): "导演很好", (-22, 3): "题材吸引我"}


def write_study(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    selected, third, full = [], [], []
    for index, (user, movie, system, ratings, first, second) in enumerate(SYNTHETIC):
        filled = [3 if r is None else r for r in ratings]
        title = f"电影{movie} Movie {movie}"
        text = f"解释{system}{movie}"
        selected.append({"user_id": user, "movie_id": movie, "movie_title": title, "explanation_type": system,
                         "explanation": f"<span>{text}</span>", "persuasiveness": float(filled[0]),
                         "transparency": float(filled[1]), "satisfaction": filled[3],
                         "interest_accuracy": filled[2]})
        row = {"": index, "movie_id": movie, "movie_title": title, "explanation_type": system,
               "explanation_text": text}
        for name, value in zip(("persuasiveness", "transparency", "accuracy", "satisfactory"), filled):
            row[name] = value
        for suffix, scores in (("_1", first), ("_2", second)):
            for name, value in zip(("persuasiveness", "transparency", "accuracy", "satisfactory"), scores):
                row[name + suffix] = value
        for i, name in enumerate(("persuasiveness", "transparency", "accuracy", "satisfactory")):
            row[name + "_avergae"] = (first[i] + second[i]) / 2
        third.append(row)
        full.append({"user_id": user, "movie_id": movie, "explanation_type": system, "explanation": "x",
                     "persuasiveness": ratings[0], "transparency": ratings[1], "interest_accuracy": ratings[2],
                     "satisfaction": ratings[3], "self_explanation": SELF[(user, movie)]})
    pd.DataFrame(selected).to_csv(folder / "df_explanation_selected.csv", index=False)
    pd.DataFrame(third).to_csv(folder / "third_party.csv", index=False)
    with open(folder / "df_explanation_full.pseudonymised.jsonl", "w", encoding="utf-8") as handle:
        for record in full:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    pd.DataFrame({"gender": ["男", "女", "女"], "user_movie_interest": ["喜欢", "一般", "喜欢"],
                  "peryear": ["5-10部", "10-20部", "5-10部"], "total": ["&lt;100", "100-200", ">500"],
                  "user_id": [11, -22, 33]}).to_csv(folder / "user_demo.csv", index=False)
    return folder


def test_synthetic_study_frames(tmp_path):
    study = load_explanation_study(write_study(tmp_path / DATASET))
    assert study.n_users == 2 and study.n_rated_explanations == 8
    ratings = study.user_ratings
    assert list(ratings.columns) == ["row_id", "user_id", "item_id", "explanation_type", *ASPECTS]
    # the blanks stay NaN (the CSVs hold 3 there)
    assert np.isnan(ratings.loc[1, "transparency"]) and np.isnan(ratings.loc[4, "persuasiveness"])
    assert ratings[list(ASPECTS)].isna().sum().sum() == 2
    annotators = study.annotator_ratings
    assert set(annotators["annotator"]) == {"annotator_1", "annotator_2", "annotator_mean"}
    mean = annotators[annotators["annotator"] == "annotator_mean"].set_index("row_id")
    assert mean.loc[0, "persuasiveness"] == 3.5
    assert len(study.self_explanations) == 4
    assert study.users.loc[study.users["user_id"] == 11, "movies_watched_total"].item() == "<100"
    assert study.users["in_study"].tolist() == [True, True, False]
    wide = study.wide()
    assert len(wide) == 8 and wide.loc[0, "self_explanation"] == "我喜欢这部电影"
    assert wide.loc[0, "explanation_text"] == "解释user1"
    assert wide.loc[0, "annotator_2_transparency"] == 4


def test_missing_column_names_file_and_column(tmp_path):
    folder = write_study(tmp_path / DATASET)
    frame = pd.read_csv(folder / "third_party.csv").drop(columns=["accuracy_2"])
    frame.to_csv(folder / "third_party.csv", index=False)
    with pytest.raises(DataSchemaError, match=r"third_party.csv.*accuracy_2"):
        load_explanation_study(folder)


def test_misaligned_rows_are_reported_with_line(tmp_path):
    folder = write_study(tmp_path / DATASET)
    frame = pd.read_csv(folder / "third_party.csv")
    frame.loc[2, "movie_id"] = 99
    frame.to_csv(folder / "third_party.csv", index=False)
    with pytest.raises(DataSchemaError, match=r"third_party.csv.*'movie_id'.*line 4"):
        load_explanation_study(folder)


def test_rating_disagreeing_with_the_original_is_reported(tmp_path):
    folder = write_study(tmp_path / DATASET)
    frame = pd.read_csv(folder / "df_explanation_selected.csv")
    frame.loc[0, "satisfaction"] = 1
    frame.to_csv(folder / "df_explanation_selected.csv", index=False)
    with pytest.raises(DataSchemaError, match=r"df_explanation_selected.csv.*'satisfaction'.*line 2"):
        load_explanation_study(folder)


def test_out_of_range_rating_is_reported(tmp_path):
    folder = write_study(tmp_path / DATASET)
    frame = pd.read_csv(folder / "third_party.csv")
    frame.loc[5, "transparency_1"] = 7
    frame.to_csv(folder / "third_party.csv", index=False)
    with pytest.raises(DataSchemaError, match=r"transparency_1.*line 7.*1–5"):
        load_explanation_study(folder)


def test_bad_json_line_is_reported(tmp_path):
    folder = write_study(tmp_path / DATASET)
    path = folder / "df_explanation_full.pseudonymised.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-1]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataSchemaError, match=r"jsonl.*line 4"):
        load_explanation_study(folder)


def test_missing_file_raises_missing_data(tmp_path):
    folder = write_study(tmp_path / DATASET)
    (folder / "user_demo.csv").unlink()
    with pytest.raises(MissingDataError, match="user_demo.csv"):
        load_explanation_study(folder)


# --------------------------------------------------------------------------------------------------------------------
# The real study (mirror only)
# --------------------------------------------------------------------------------------------------------------------
needs_mirror = pytest.mark.skipif(
    not os.environ.get("RECJUDGE_DATA_MIRROR"),
    reason="RECJUDGE_DATA_MIRROR unset: the Lu et al. study is not redistributable and has no official download",
)


@needs_mirror
def test_real_study_counts():
    study = load_explanation_study()
    assert study.n_users == 39
    assert study.n_rated_explanations == 2536
    assert study.user_ratings["item_id"].nunique() == 140
    assert len(study.self_explanations) == 310
    assert study.user_ratings["explanation_type"].nunique() == 9
    # 3 persuasiveness and 6 transparency ratings were left blank
    assert study.user_ratings[list(ASPECTS)].isna().sum().to_dict() == {
        "persuasiveness": 3, "transparency": 6, "accuracy": 0, "satisfaction": 0}
    assert len(study.users) == 40 and study.users["in_study"].sum() == 39
    assert len(study.annotator_ratings) == 3 * 2536


@pytest.mark.parametrize("name", ["third_party.csv", "user_demo.csv"])
def test_empty_or_header_only_files_are_named(tmp_path, name):
    folder = write_study(tmp_path / DATASET)
    header = (folder / name).read_text(encoding="utf-8").splitlines()[0]
    (folder / name).write_text("", encoding="utf-8")
    with pytest.raises(DataSchemaError, match=rf"{name}: is empty"):
        load_explanation_study(folder)
    (folder / name).write_text(header + "\n", encoding="utf-8")
    with pytest.raises(DataSchemaError, match=rf"{name}: has a header but no data rows"):
        load_explanation_study(folder)


def test_invalid_utf8_in_the_jsonl_names_the_line(tmp_path):
    folder = write_study(tmp_path / DATASET)
    path = folder / "df_explanation_full.pseudonymised.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace("很多人看过".encode("utf-8"), b"\xe5\xbe")
    path.write_bytes(b"".join(lines))
    with pytest.raises(DataSchemaError, match=r"pseudonymised\.jsonl, line 3: not valid UTF-8"):
        load_explanation_study(folder)


def test_duplicate_demographics_user_is_an_error(tmp_path):
    folder = write_study(tmp_path / DATASET)
    path = folder / "user_demo.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(DataSchemaError, match=r"user_demo\.csv, column 'user_id', line 2: user_id .* appears more"):
        load_explanation_study(folder)


def test_an_unverified_pickle_is_never_unpickled(tmp_path, monkeypatch):
    import pickle

    from recjudge.data.errors import ChecksumError

    folder = write_study(tmp_path / DATASET)
    (folder / "df_explanation_full.pseudonymised.jsonl").unlink()
    unpickled = []
    monkeypatch.setattr(pd, "read_pickle", lambda *a, **k: unpickled.append(a) or pd.DataFrame())
    (folder / "df_explanation.pkl").write_bytes(pickle.dumps({"any": "object"}))
    with pytest.raises(ChecksumError, match="not unpickled"):
        load_explanation_study(folder)
    assert unpickled == []
