"""The explanation user study of Lu et al. (TOIS 2023) as used by Zhang et al. (RecSys 2024).

39 users of a movie recommendation platform each received about 8 movies, and for every (user, movie) pair 6–9
explanation texts produced by different explanation systems (user-based, item-based, popularity, attribute
templates, peer-written, ...). Users rated each explanation on four 1–5 Likert aspects and wrote, per movie, a
*self-explanation* of why they would watch it. Zhang et al. added two third-party annotators who rated every
explanation on the same four aspects. The text is Chinese.

Files (dataset ``llm-explanation-eval-lu2023``, read from the data mirror, never redistributed):

- ``df_explanation_selected.csv`` — the 2,536 rated explanations with the users' ratings, *with missing user ratings
  already replaced by 3* by Zhang et al.'s export script;
- ``third_party.csv`` — row-aligned with the file above (no user id): clean explanation text, the same user ratings,
  annotator 1 (``_1``), annotator 2 (``_2``) and their mean (``_avergae`` [sic]);
- ``df_explanation_full.pseudonymised.jsonl`` — the original study table (same rows, same order) holding the users'
  ratings *with* their missing values, and the users' self-explanations;
- ``user_demo.csv`` — demographics of 40 users (one of them has no rated explanation).

Aspect names follow the paper: persuasiveness, transparency, accuracy (the files' ``interest_accuracy`` /
``accuracy``) and satisfaction (``satisfaction`` / ``satisfactory``).

NA handling: a user rating left blank in the study (3 persuasiveness and 6 transparency ratings) is NaN in every
frame of :class:`ExplanationStudy`. Zhang et al. replace it by 3 ("unknown attitude"); that convention is applied
by the meta-evaluation only when asked for (``recjudge.explanations.evaluators``), never here. Annotator ratings have no gaps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from recjudge.data.errors import DataSchemaError, MissingDataError
from recjudge.paths import data_mirror

__all__ = [
    "ANNOTATORS",
    "ASPECTS",
    "DATASET",
    "ExplanationStudy",
    "load_explanation_study",
    "study_folder",
]

DATASET = "llm-explanation-eval-lu2023"
#: The four aspects in the paper's order.
ASPECTS: tuple[str, ...] = ("persuasiveness", "transparency", "accuracy", "satisfaction")
#: The third-party raters: two annotators and their per-explanation mean (as shipped in the file).
ANNOTATORS: tuple[str, ...] = ("annotator_1", "annotator_2", "annotator_mean")

SELECTED_FILE = "df_explanation_selected.csv"
THIRD_PARTY_FILE = "third_party.csv"
FULL_FILE = "df_explanation_full.pseudonymised.jsonl"
#: The official repository's original of FULL_FILE (what a download without the mirror yields).
FULL_PICKLE = "df_explanation.pkl"
DEMOGRAPHICS_FILE = "user_demo.csv"

# aspect -> column name in each file
_SELECTED_ASPECTS = {
    "persuasiveness": "persuasiveness",
    "transparency": "transparency",
    "accuracy": "interest_accuracy",
    "satisfaction": "satisfaction",
}
_THIRD_PARTY_ASPECTS = {
    "persuasiveness": "persuasiveness",
    "transparency": "transparency",
    "accuracy": "accuracy",
    "satisfaction": "satisfactory",
}
_THIRD_PARTY_SUFFIX = {"annotator_1": "_1", "annotator_2": "_2", "annotator_mean": "_avergae"}
_FULL_KEYS = ("user_id", "movie_id", "explanation_type", "self_explanation", *_SELECTED_ASPECTS.values())
_DEMOGRAPHIC_COLUMNS = {
    "user_id": "user_id",
    "gender": "gender",
    "user_movie_interest": "movie_interest",
    "peryear": "movies_per_year",
    "total": "movies_watched_total",
}


@dataclass
class ExplanationStudy:
    """The study as tidy frames. ``row_id`` (0..2535, the files' shared row order) identifies a rated explanation.

    explanations:       row_id, user_id, item_id, movie_title, explanation_type (the explanation system, 9 kinds),
                        explanation_text (clean text, from third_party.csv), explanation_html (as shown to the user,
                        with the <span> markup of attribute names).
    user_ratings:       row_id, user_id, item_id, explanation_type, persuasiveness, transparency, accuracy,
                        satisfaction — float 1–5, NaN where the user left the question blank.
    annotator_ratings:  row_id, user_id, item_id, explanation_type, annotator (annotator_1, annotator_2,
                        annotator_mean), and the four aspects (float). One row per explanation and annotator.
    self_explanations:  user_id, item_id, self_explanation — the user's own reason to watch the movie (one per pair;
                        the reference text of BLEU/ROUGE).
    users:              user_id, gender, movie_interest, movies_per_year, movies_watched_total (Chinese answer
                        categories as in the file, HTML entities decoded), in_study (False for the one respondent
                        without rated explanations).
    folder:             where the files were read from.
    """

    explanations: pd.DataFrame
    user_ratings: pd.DataFrame
    annotator_ratings: pd.DataFrame
    self_explanations: pd.DataFrame
    users: pd.DataFrame
    folder: Path

    @property
    def n_users(self) -> int:
        return int(self.user_ratings["user_id"].nunique())

    @property
    def n_rated_explanations(self) -> int:
        return len(self.user_ratings)

    def wide(self) -> pd.DataFrame:
        """One row per rated explanation with everything the meta-evaluation needs side by side.

        Columns: row_id, user_id, item_id, movie_title, explanation_type, explanation_text, self_explanation,
        ``user_<aspect>`` (NaN kept) and ``<annotator>_<aspect>`` for the three annotator columns.
        """
        table = self.explanations.drop(columns=["explanation_html"]).merge(
            self.self_explanations, on=["user_id", "item_id"], how="left", validate="many_to_one"
        )
        users = self.user_ratings.set_index("row_id")[list(ASPECTS)].add_prefix("user_")
        table = table.join(users, on="row_id")
        for annotator, frame in self.annotator_ratings.groupby("annotator", sort=False):
            part = frame.set_index("row_id")[list(ASPECTS)].add_prefix(f"{annotator}_")
            table = table.join(part, on="row_id")
        return table.reset_index(drop=True)


def study_folder() -> Path:
    """The folder holding the study's files: ``recjudge.data.fetch`` (mirror folder, else the verified download)
    when the data layer provides it, else $RECJUDGE_DATA_MIRROR/llm-explanation-eval-lu2023."""
    import recjudge.data as data_layer  # imported here: the data package itself imports this module

    fetch = getattr(data_layer, "fetch", None)
    if callable(fetch):
        return Path(fetch(DATASET))
    mirror = data_mirror()
    if mirror is None or not (mirror / DATASET).is_dir():
        raise MissingDataError(
            f"dataset {DATASET!r} is not available: set RECJUDGE_DATA_MIRROR to a folder holding {DATASET}/"
        )
    return mirror / DATASET


def load_explanation_study(folder: str | Path | None = None) -> ExplanationStudy:
    """Read and cross-check the four files of the study (see the module docstring) into an :class:`ExplanationStudy`.

    The three per-explanation files are row-aligned; the alignment is verified on (movie_id, explanation_type) and,
    for the user ratings, on the values themselves (the CSVs' value = the original value, or 3 where it is missing).
    Any disagreement raises :class:`DataSchemaError` naming the file, column and line.
    """
    folder = Path(folder) if folder is not None else study_folder()
    for name in (SELECTED_FILE, THIRD_PARTY_FILE, DEMOGRAPHICS_FILE):
        if not (folder / name).is_file():
            raise MissingDataError(f"{folder / name} does not exist (dataset {DATASET!r} incomplete)")
    if not (folder / FULL_FILE).is_file() and not (folder / FULL_PICKLE).is_file():
        raise MissingDataError(f"neither {folder / FULL_FILE} nor {folder / FULL_PICKLE} exists (dataset {DATASET!r} "
                               "incomplete: the self-explanations and the missing user ratings live there)")

    selected = _read_csv(folder / SELECTED_FILE, ["user_id", "movie_id", "movie_title", "explanation_type",
                                                  "explanation", *_SELECTED_ASPECTS.values()])
    third = _read_csv(folder / THIRD_PARTY_FILE, ["movie_id", "movie_title", "explanation_type", "explanation_text",
                                                  *[f"{c}{s}" for c in _THIRD_PARTY_ASPECTS.values()
                                                    for s in ("", *_THIRD_PARTY_SUFFIX.values())]])
    full_path = folder / FULL_FILE if (folder / FULL_FILE).is_file() else folder / FULL_PICKLE
    full = _read_jsonl(full_path, _FULL_KEYS) if full_path.name == FULL_FILE else _read_pickle(full_path, selected)
    demo = _read_csv(folder / DEMOGRAPHICS_FILE, list(_DEMOGRAPHIC_COLUMNS))

    n = len(selected)
    for path, frame in ((folder / THIRD_PARTY_FILE, third), (full_path, full)):
        if len(frame) != n:
            raise DataSchemaError(path, f"has {len(frame)} rows but {SELECTED_FILE} has {n}; the files must be "
                                        "row-aligned")
        for column in ("movie_id", "explanation_type"):
            _check_equal(path, column, frame[column].to_numpy(), selected[column].to_numpy())
    _check_equal(full_path, "user_id", full["user_id"].to_numpy(), selected["user_id"].to_numpy())

    user_ratings = pd.DataFrame({
        "row_id": np.arange(n),
        "user_id": selected["user_id"].astype("int64"),
        "item_id": selected["movie_id"].astype("int64"),
        "explanation_type": selected["explanation_type"].astype(str),
    })
    for aspect, column in _SELECTED_ASPECTS.items():
        original = _numeric(full_path, full, column)
        _check_likert(full_path, column, original)
        # The CSV exports hold the same ratings with NaN already replaced by 3: verify, then keep the NaN.
        _check_equal(folder / SELECTED_FILE, column, _numeric(folder / SELECTED_FILE, selected, column),
                     np.where(np.isnan(original), 3.0, original))
        third_column = _THIRD_PARTY_ASPECTS[aspect]
        _check_equal(folder / THIRD_PARTY_FILE, third_column, _numeric(folder / THIRD_PARTY_FILE, third, third_column),
                     np.where(np.isnan(original), 3.0, original))
        user_ratings[aspect] = original

    explanations = pd.DataFrame({
        "row_id": np.arange(n),
        "user_id": user_ratings["user_id"],
        "item_id": user_ratings["item_id"],
        "movie_title": selected["movie_title"].astype(str),
        "explanation_type": user_ratings["explanation_type"],
        "explanation_text": third["explanation_text"].astype(str).str.strip(),
        "explanation_html": selected["explanation"].astype(str),
    })

    parts = []
    for annotator, suffix in _THIRD_PARTY_SUFFIX.items():
        part = user_ratings[["row_id", "user_id", "item_id", "explanation_type"]].copy()
        part.insert(4, "annotator", annotator)
        for aspect, column in _THIRD_PARTY_ASPECTS.items():
            values = _numeric(folder / THIRD_PARTY_FILE, third, f"{column}{suffix}")
            if np.isnan(values).any():
                row = int(np.flatnonzero(np.isnan(values))[0])
                raise DataSchemaError(folder / THIRD_PARTY_FILE, "annotator rating missing", column=f"{column}{suffix}",
                                      row=row + 2)
            # the mean of two integer ratings moves in steps of 0.5
            step = 0.5 if annotator == "annotator_mean" else 1.0
            _check_likert(folder / THIRD_PARTY_FILE, f"{column}{suffix}", values, step=step)
            part[aspect] = values
        parts.append(part)
    annotator_ratings = pd.concat(parts, ignore_index=True)

    pairs = full[["user_id", "movie_id", "self_explanation"]].rename(columns={"movie_id": "item_id"})
    per_pair = pairs.groupby(["user_id", "item_id"], sort=False)["self_explanation"].nunique(dropna=False)
    if (per_pair > 1).any():
        bad = per_pair[per_pair > 1].index[0]
        raise DataSchemaError(full_path, f"user {bad[0]} movie {bad[1]} has several different "
                                                  "self-explanations", column="self_explanation")
    self_explanations = pairs.drop_duplicates(["user_id", "item_id"]).reset_index(drop=True)
    self_explanations["user_id"] = self_explanations["user_id"].astype("int64")
    self_explanations["item_id"] = self_explanations["item_id"].astype("int64")
    self_explanations["self_explanation"] = self_explanations["self_explanation"].astype("string").str.strip()

    users = demo.rename(columns=_DEMOGRAPHIC_COLUMNS)[list(_DEMOGRAPHIC_COLUMNS.values())].copy()
    repeated = users["user_id"].duplicated(keep=False).to_numpy()
    if repeated.any():
        lines = [int(r) + 2 for r in np.flatnonzero(repeated)]
        raise DataSchemaError(folder / DEMOGRAPHICS_FILE, f"user_id {users['user_id'].iloc[lines[0] - 2]} appears "
                              f"more than once (lines {', '.join(map(str, lines[:5]))})", column="user_id",
                              row=lines[0])
    for column in ("gender", "movie_interest", "movies_per_year", "movies_watched_total"):
        # the file stores "<100" HTML-escaped
        users[column] = users[column].astype(str).str.replace("&lt;", "<", regex=False).str.replace(
            "&gt;", ">", regex=False)
    users["in_study"] = users["user_id"].isin(set(user_ratings["user_id"]))

    return ExplanationStudy(
        explanations=explanations,
        user_ratings=user_ratings,
        annotator_ratings=annotator_ratings,
        self_explanations=self_explanations,
        users=users,
        folder=folder,
    )


# --------------------------------------------------------------------------------------------------------------------
# Reading helpers: every error names the file, the column and (1-based, header = line 1) the line
# --------------------------------------------------------------------------------------------------------------------
def _read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    from recjudge.data._csv import nul_byte_line, undecodable_line

    nul = nul_byte_line(path)
    if nul is not None:
        raise DataSchemaError(path, "contains a NUL byte (a corrupt or binary file)", row=nul)
    try:
        frame = pd.read_csv(path, encoding="utf-8-sig", dtype={"user_id": "string"})
    except pd.errors.EmptyDataError as error:
        raise DataSchemaError(path, "is empty") from error
    except UnicodeDecodeError as error:
        where = undecodable_line(path, "utf-8-sig")
        raise DataSchemaError(path, f"is not valid UTF-8: {where[1] if where else error}",
                              row=where[0] if where else None) from error
    except (pd.errors.ParserError, ValueError) as error:
        raise DataSchemaError(path, f"cannot be parsed as UTF-8 CSV: {error}") from error
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DataSchemaError(path, f"missing column(s) {missing}; found {list(frame.columns)}", column=missing[0])
    if frame.empty:
        raise DataSchemaError(path, "has a header but no data rows")
    if "user_id" in frame.columns:
        frame["user_id"] = _int64_ids(path, frame["user_id"], line_offset=2)
    return frame


def _int64_ids(path: Path, values: pd.Series, *, line_offset: int) -> pd.Series:
    """The study's user ids (signed 64-bit hashes: negative ones are normal) parsed exactly, never through a float;
    a value that is not an integer within int64 raises DataSchemaError naming the line."""
    parsed = []
    for row, value in enumerate(values.tolist()):
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            number = None
        if number is None or not -2**63 <= number < 2**63:
            raise DataSchemaError(path, f"user_id {value!r} is not a 64-bit integer id", column="user_id",
                                  row=row + line_offset)
        parsed.append(number)
    return pd.Series(np.asarray(parsed, dtype=np.int64), index=values.index)


def _read_jsonl(path: Path, keys: tuple[str, ...]) -> pd.DataFrame:
    records = []
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise DataSchemaError(path, f"not valid UTF-8: {error.reason} (byte 0x{raw[error.start]:02x})",
                                      row=line_number) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataSchemaError(path, f"not valid JSON: {error}", row=line_number) from error
            if not isinstance(record, dict):
                raise DataSchemaError(path, f"line is a JSON {type(record).__name__}, not an object", row=line_number)
            missing = [k for k in keys if k not in record]
            if missing:
                raise DataSchemaError(path, f"object lacks key(s) {missing}", column=missing[0], row=line_number)
            records.append({k: record[k] for k in keys})
    if not records:
        raise DataSchemaError(path, "has no records")
    frame = pd.DataFrame.from_records(records, columns=list(keys))
    frame["user_id"] = _int64_ids(path, frame["user_id"], line_offset=1)
    return frame


def _read_pickle(path: Path, selected: pd.DataFrame) -> pd.DataFrame:
    """The official df_explanation.pkl. Unpickling runs code, so the file is read only when its sha256 equals the
    registry's (checked here, whatever folder it came from). Its user ids are phone-number-shaped; they are replaced
    by the hashed ids of the row-aligned selected CSV."""
    from recjudge.data.errors import ChecksumError
    from recjudge.data.fetch import sha256_file
    from recjudge.data.registry import get_spec

    expected = next((f.sha256 for f in get_spec(DATASET).files if f.path == FULL_PICKLE), None)
    if not expected:
        raise DataSchemaError(path, "no registered sha256 for this pickle: refusing to unpickle an unverified file")
    got = sha256_file(path)
    if got != expected:
        raise ChecksumError(path, expected, got, source="not unpickled: a pickle is read only when verified")
    try:
        frame = pd.read_pickle(path)
    except Exception as error:  # an unreadable or incompatible pickle
        raise DataSchemaError(path, f"cannot be read as a pandas pickle: {error}") from error
    missing = [k for k in _FULL_KEYS if k not in frame.columns]
    if missing:
        raise DataSchemaError(path, f"missing column(s) {missing}", column=missing[0])
    frame = frame[list(_FULL_KEYS)].reset_index(drop=True)
    if len(frame) != len(selected):
        raise DataSchemaError(path, f"has {len(frame)} rows but {SELECTED_FILE} has {len(selected)}")
    frame["user_id"] = selected["user_id"].to_numpy()
    return frame


def _numeric(path: Path, frame: pd.DataFrame, column: str) -> np.ndarray:
    line_offset = 1 if path.suffix == ".jsonl" else 2
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataSchemaError(path, f"value {frame[column].iloc[row]!r} is not a number", column=column, row=row + line_offset)
    return values.to_numpy(dtype=float)


def _check_likert(path: Path, column: str, values: np.ndarray, step: float = 1.0) -> None:
    line_offset = 1 if path.suffix == ".jsonl" else 2
    finite = values[~np.isnan(values)]
    bad = ~np.isin(finite, np.arange(1.0, 5.0 + step / 2, step))
    if bad.any():
        row = int(np.flatnonzero(~np.isnan(values))[np.flatnonzero(bad)[0]])
        raise DataSchemaError(path, f"value {values[row]!r} is not a 1–5 rating in steps of {step}", column=column,
                              row=row + line_offset)


def _check_equal(path: Path, column: str, got: np.ndarray, expected: np.ndarray) -> None:
    line_offset = 1 if path.suffix == ".jsonl" else 2  # JSONL has no header line
    got_s, expected_s = pd.Series(got), pd.Series(expected)
    same = (got_s == expected_s) | (got_s.isna() & expected_s.isna())
    if not same.all():
        row = int(np.flatnonzero(~same.to_numpy())[0])
        raise DataSchemaError(path, f"value {got_s.iloc[row]!r} disagrees with the aligned row of the study "
                                    f"({expected_s.iloc[row]!r}); the files must be row-aligned", column=column,
                              row=row + line_offset)
