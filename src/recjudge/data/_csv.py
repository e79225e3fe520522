"""Strict CSV reading with errors that name the file, the column and the line (header = line 1).

pandas' C parser infers the types (fast on a million rows); a column that should be numeric but comes back as text
holds a bad value, which is then located row by row. Free-text columns are read as text (``text_columns``) so that
e.g. zip codes keep their leading zeros and a title "NA" stays a title."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from recjudge.data.errors import DataSchemaError, MissingDataError

#: Text read as "not available" in survey files ("NA" = the respondent did not remember / did not answer).
NA_TOKENS = frozenset({"", "NA", "NaN", "nan", "N/A"})
_TRUE = frozenset({"TRUE", "True", "true", "1"})
_FALSE = frozenset({"FALSE", "False", "false", "0"})
# Plausible epoch range for these data sets (1990-01-01 .. 2035-01-01), in seconds.
_EPOCH_MIN, _EPOCH_MAX = 631_152_000, 2_051_222_400


def require_file(path: Path, what: str = "") -> Path:
    if not path.is_file():
        raise MissingDataError(f"{path} does not exist{': ' + what if what else ''}")
    return path


def read_table(path: Path, *, columns: Iterable[str] | None = None, sep: str = ",", encoding: str = "utf-8-sig",
                    names: list[str] | None = None, quoting: int = csv.QUOTE_MINIMAL,
                    double_colon: bool = False, text_columns: Iterable[str] = ()) -> pd.DataFrame:
    """Read ``path``: ``text_columns`` as text ('' for empty fields), other columns with inferred types where the NA
    tokens (NA, empty, ...) become NaN; a short (truncated) row gets NaN in its missing fields.

    ``encoding='utf-8-sig'`` drops a BOM; universal newlines take care of CRLF. ``columns`` lists the columns that
    must be present (a missing or renamed one raises DataSchemaError naming it). ``double_colon`` reads the
    MovieLens 1M '::' format. A row with too many fields raises DataSchemaError with its line."""
    require_file(path)
    try:
        if double_colon:
            text = path.read_bytes().decode(encoding).replace("::", "\t")
            source: object = io.StringIO(text)
            sep = "\t"
        else:
            source = path
        text_columns = list(text_columns)
        expected = list(names or columns or [])
        frame = pd.read_csv(source, sep=sep, dtype={column: str for column in text_columns}, keep_default_na=False,
                            na_values={column: sorted(NA_TOKENS) for column in expected if column not in text_columns},
                            encoding=None if double_colon else encoding, header=None if names else "infer",
                            names=names, quoting=quoting, engine="c", low_memory=False)
        for column in text_columns:
            if column in frame.columns:
                frame[column] = frame[column].fillna("")
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        raise DataSchemaError(path, f"cannot be parsed: {error}") from error
    except pd.errors.EmptyDataError as error:
        raise DataSchemaError(path, "is empty") from error
    if columns is not None:
        missing = [column for column in columns if column not in frame.columns]
        if missing:
            raise DataSchemaError(path, f"missing column(s) {missing}; found {list(frame.columns)}", column=missing[0])
    return frame


def _line(frame: pd.DataFrame, position: int, header: bool) -> int:
    return position + (2 if header else 1)


def _missing(values: pd.Series) -> np.ndarray:
    return (values.isna() | values.isin(NA_TOKENS)).to_numpy()


def numeric(frame: pd.DataFrame, path: Path, column: str, *, required: bool = True, integer: bool = False,
            low: float | None = None, high: float | None = None, header: bool = True) -> pd.Series:
    """Column ``column`` as float64 (NA tokens → NaN) or int64 when ``integer``.

    Raises DataSchemaError naming file, column and line for a non-numeric value, a missing value where ``required``
    (also the sign of a truncated row) or a value outside [low, high]."""
    text = frame[column]
    if pd.api.types.is_numeric_dtype(text) and not pd.api.types.is_bool_dtype(text):
        values = text.astype("float64")
        missing = values.isna().to_numpy()
        bad = np.empty(0, dtype=int)
    else:  # text: some value is not a number (or the column was read as text on purpose)
        missing = _missing(text)
        values = pd.to_numeric(text.where(~missing), errors="coerce")
        bad = np.flatnonzero(values.isna().to_numpy() & ~missing)
    if bad.size:
        row = int(bad[0])
        raise DataSchemaError(path, f"value {text.iloc[row]!r} is not a number", column=column,
                              row=_line(frame, row, header))
    if required and missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise DataSchemaError(path, "value missing (empty field or truncated row)", column=column,
                              row=_line(frame, row, header))
    if low is not None or high is not None:
        outside = ((values < low) if low is not None else False) | ((values > high) if high is not None else False)
        outside = np.flatnonzero(np.asarray(outside, dtype=bool))
        if outside.size:
            row = int(outside[0])
            raise DataSchemaError(path, f"value {text.iloc[row]!r} outside [{low}, {high}]", column=column,
                                  row=_line(frame, row, header))
    if integer:
        if not required and missing.any():
            return values.astype("Int64")
        whole = values.to_numpy(dtype=float)
        fraction = np.flatnonzero(whole != np.round(whole))
        if fraction.size:
            row = int(fraction[0])
            raise DataSchemaError(path, f"value {text.iloc[row]!r} is not an integer", column=column,
                                  row=_line(frame, row, header))
        return values.astype("int64")
    return values.astype("float64")


def boolean(frame: pd.DataFrame, path: Path, column: str, *, header: bool = True) -> pd.Series:
    """Column of TRUE/FALSE (any case) or 1/0 as bool; anything else raises DataSchemaError."""
    text = frame[column]
    if pd.api.types.is_bool_dtype(text):
        return text.astype(bool)
    if pd.api.types.is_numeric_dtype(text):
        text = text.map(lambda value: "" if pd.isna(value) else f"{value:g}")
    text = text.fillna("").astype(str)
    truth = text.isin(_TRUE)
    bad = np.flatnonzero(~(truth | text.isin(_FALSE)).to_numpy())
    if bad.size:
        row = int(bad[0])
        raise DataSchemaError(path, f"value {text.iloc[row]!r} is not TRUE/FALSE", column=column,
                              row=_line(frame, row, header))
    return truth.astype(bool)


def epoch_utc(frame: pd.DataFrame, path: Path, column: str, *, unit: str = "auto", header: bool = True) -> pd.Series:
    """Epoch timestamps as datetime64[ns, UTC].

    ``unit='auto'`` reads values of 1e11 and more as milliseconds (Serendipity-2018 writes milliseconds although
    its README says seconds), smaller ones as seconds; the whole column must use one unit. Dates outside
    1990–2035 raise DataSchemaError (a wrong unit or a corrupt value)."""
    values = numeric(frame, path, column, header=header)
    if unit == "auto":
        unit = "ms" if (values >= 1e11).any() else "s"
    seconds = values / 1000.0 if unit == "ms" else values
    outside = np.flatnonzero(((seconds < _EPOCH_MIN) | (seconds > _EPOCH_MAX)).to_numpy())
    if outside.size:
        row = int(outside[0])
        raise DataSchemaError(path, f"timestamp {frame[column].iloc[row]!r} (read as {unit}) is not between 1990 and "
                              "2035: mixed or wrong units?", column=column, row=_line(frame, row, header))
    return pd.to_datetime(values.astype("int64"), unit=unit, utc=True).astype("datetime64[ns, UTC]")
