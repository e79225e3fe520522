"""Strict CSV reading with errors that name the file, the column and the line (header = line 1).

pandas' C parser infers the types (fast on a million rows); a column that should be numeric but comes back as text
holds a bad value, which is then located row by row. Free-text columns are read as text (``text_columns``) so that
e.g. zip codes keep their leading zeros and a title "NA" stays a title."""

from __future__ import annotations

import csv
import io
import re
import warnings
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from recjudge.data.errors import DataQualityWarning, DataSchemaError, MissingDataError

#: Text read as "not available" in survey files ("NA" = the respondent did not remember / did not answer).
NA_TOKENS = frozenset({"", "NA", "NaN", "nan", "N/A"})
_TRUE = frozenset({"TRUE", "True", "true", "1"})
_FALSE = frozenset({"FALSE", "False", "false", "0"})
# Plausible epoch range for these data sets (1990-01-01 .. 2035-01-01), in seconds.
_EPOCH_MIN, _EPOCH_MAX = 631_152_000, 2_051_222_400
#: Integers a float64 holds exactly; an integer column read as floats must stay within it (larger ids would be
#: silently rounded) and an int64 column within the int64 range.
_EXACT_FLOAT_INT = 2**53
_INT64_MAX = np.iinfo(np.int64).max
_SCAN_BLOCK = 1 << 22


def nul_byte_line(path: Path) -> int | None:
    """1-based line of the first NUL byte in ``path``, or None. pandas' C parser ends a field at a NUL, so
    "4\x007" would be read as 4: such files are refused rather than read wrong."""
    line = 1
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_SCAN_BLOCK), b""):
            position = block.find(b"\x00")
            if position >= 0:
                return line + block.count(b"\n", 0, position)
            line += block.count(b"\n")
    return None


def undecodable_line(path: Path, encoding: str) -> tuple[int, str] | None:
    """(1-based line, error) of the first byte sequence in ``path`` that is not valid ``encoding``, or None."""
    data = path.read_bytes()
    try:
        data.decode(encoding)
    except UnicodeDecodeError as error:
        return data.count(b"\n", 0, error.start) + 1, f"{error.reason} (byte 0x{data[error.start]:02x})"
    return None


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
    nul = nul_byte_line(path)
    if nul is not None:
        raise DataSchemaError(path, "contains a NUL byte (a corrupt or binary file; fields would be cut at it)",
                              row=nul)
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
    except pd.errors.EmptyDataError as error:  # a ValueError too: caught first
        raise DataSchemaError(path, "is empty") from error
    except UnicodeDecodeError as error:
        where = undecodable_line(path, encoding)
        if where is None:
            raise DataSchemaError(path, f"cannot be decoded as {encoding}: {error}") from error
        raise DataSchemaError(path, f"is not valid {encoding}: {where[1]}", row=where[0]) from error
    except (pd.errors.ParserError, ValueError) as error:
        raise DataSchemaError(path, f"cannot be parsed: {error}") from error
    if frame.empty:
        raise DataSchemaError(path, "has no data rows" + ("" if names else " (a header only)"))
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
    if integer and pd.api.types.is_integer_dtype(text) and not pd.api.types.is_bool_dtype(text):
        return _exact_integers(text, path, column, low=low, high=high, header=header)
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
    infinite = np.flatnonzero(np.isinf(values.to_numpy(dtype=float)))
    if infinite.size:
        row = int(infinite[0])
        raise DataSchemaError(path, f"value {text.iloc[row]!r} is not a finite number", column=column,
                              row=_line(frame, row, header))
    if integer:
        huge = np.flatnonzero(np.abs(values.to_numpy(dtype=float)) >= _EXACT_FLOAT_INT)
        if huge.size:
            row = int(huge[0])
            raise DataSchemaError(path, f"value {text.iloc[row]!r} is too large for an exact integer id (limit "
                                  f"2**53 when read as a number)", column=column, row=_line(frame, row, header))
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


def _exact_integers(text: pd.Series, path: Path, column: str, *, low: float | None, high: float | None,
                    header: bool) -> pd.Series:
    """An integer column (int64 or uint64 as pandas read it) as int64, without a detour through float64 (which
    would round ids above 2**53) and refusing values above the int64 range (which would wrap around)."""
    if text.dtype == np.uint64:
        over = np.flatnonzero(text.to_numpy() > np.uint64(_INT64_MAX))
        if over.size:
            row = int(over[0])
            raise DataSchemaError(path, f"value {int(text.iloc[row])} is larger than a 64-bit signed integer",
                                  column=column, row=_line(text.to_frame(), row, header))
    values = text.astype("int64")
    outside = np.zeros(len(values), dtype=bool)
    if low is not None:
        outside |= (values < low).to_numpy()
    if high is not None:
        outside |= (values > high).to_numpy()
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise DataSchemaError(path, f"value {int(values.iloc[row])} outside [{low}, {high}]", column=column,
                              row=_line(text.to_frame(), row, header))
    return values


def identifier(frame: pd.DataFrame, path: Path, column: str, *, header: bool = True) -> pd.Series:
    """An id column: whole numbers, present, finite, non-negative and exact (int64)."""
    return numeric(frame, path, column, integer=True, low=0, header=header)


def require_unique(frame: pd.DataFrame, path: Path, columns: list[str], *, header: bool = True,
                   what: str = "") -> None:
    """DataSchemaError naming the file, the columns and the lines of the first repeated key (``columns`` of
    ``frame`` as read; line numbers are those of the file)."""
    repeated = frame.duplicated(subset=columns, keep=False).to_numpy()
    if repeated.any():
        rows = np.flatnonzero(repeated)
        first = frame.iloc[rows[0]][columns].tolist()
        lines = [_line(frame, int(r), header) for r in rows[(frame.iloc[rows][columns] == first).all(axis=1)
                                                             .to_numpy()][:5]]
        raise DataSchemaError(path, f"{what or 'key'} {dict(zip(columns, first))} appears more than once (lines "
                              f"{', '.join(map(str, lines))}); {int(repeated.sum())} rows share a key",
                              column=", ".join(columns), row=lines[0])


#: Text that was UTF-8, decoded as Latin-1/cp1252 ("MisÃ©rables"): a lead byte character followed by a
#: continuation-range one.
_MOJIBAKE = re.compile("[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192"
                       "\u02c6\u02dc\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a"
                       "\u20ac\u2122]")


def _undo_mojibake(value: str) -> str | None:
    """The text ``value`` was before UTF-8 bytes were decoded as cp1252/Latin-1, or None if it was not that."""
    for codec in ("cp1252", "latin-1"):
        try:
            fixed = value.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        if fixed != value:
            return fixed
    return None


def repair_mojibake(values: pd.Series, path: Path, column: str, *, header: bool = True) -> pd.Series:
    """Texts that are UTF-8 read as cp1252 (mojibake, e.g. "MisÃ©rables") are repaired with ``ftfy`` when it is
    installed; either way a DataQualityWarning names the file, the column and the lines (without ftfy the values
    are left as they are)."""
    text = values.fillna("").astype(str)
    suspect = text.str.contains(_MOJIBAKE)
    rows = [int(r) for r in np.flatnonzero(suspect.to_numpy()) if _undo_mojibake(text.iloc[int(r)]) is not None]
    if not rows:
        return values
    lines = ", ".join(str(_line(values.to_frame(), r, header)) for r in rows[:10]) + (" ..." if len(rows) > 10
                                                                                       else "")
    try:
        import ftfy
    except ImportError:
        warnings.warn(f"file {path}, column {column!r}: {len(rows)} value(s) look like UTF-8 read as cp1252 "
                      f"(mojibake, e.g. {text.iloc[rows[0]]!r}) at line(s) {lines}; left unchanged (install ftfy to "
                      "repair them)", DataQualityWarning, stacklevel=2)
        return values
    repaired = values.copy()
    for row in rows:
        repaired.iloc[row] = ftfy.fix_text(text.iloc[row])
    warnings.warn(f"file {path}, column {column!r}: repaired {len(rows)} mojibake value(s) with ftfy at line(s) "
                  f"{lines} (e.g. {text.iloc[rows[0]]!r} -> {repaired.iloc[rows[0]]!r})", DataQualityWarning,
                  stacklevel=2)
    return repaired


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

    ``unit='auto'`` reads the column as milliseconds when at least half its values are 1e11 or more (Serendipity-2018
    writes milliseconds although its README says seconds), else as seconds; the whole column must use one unit, so
    the first value of the other unit is the line quoted. Dates outside 1990–2035 raise DataSchemaError (a wrong
    unit or a corrupt value)."""
    values = numeric(frame, path, column, header=header)
    if unit == "auto":
        unit = "ms" if (values >= 1e11).mean() >= 0.5 else "s"
    seconds = values / 1000.0 if unit == "ms" else values
    outside = np.flatnonzero(((seconds < _EPOCH_MIN) | (seconds > _EPOCH_MAX)).to_numpy())
    if outside.size:
        row = int(outside[0])
        value = frame[column].iloc[row]
        raise DataSchemaError(path, f"timestamp {value if not isinstance(value, str) else repr(value)} (read as {unit}) "
                              "is not between 1990 and "
                              "2035: mixed or wrong units?", column=column, row=_line(frame, row, header))
    return pd.to_datetime(values.astype("int64"), unit=unit, utc=True).astype("datetime64[ns, UTC]")
