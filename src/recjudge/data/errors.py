"""Errors raised by the data layer. Every message names the file and, where it applies, the column and row."""

from __future__ import annotations


class DataError(Exception):
    """Base class of every data-layer error."""


class MissingDataError(DataError, FileNotFoundError):
    """A dataset or one of its files is not available (no mirror copy, no fetched copy, download impossible)."""


class DataSchemaError(DataError, ValueError):
    """A file does not have the documented layout: missing/renamed column, truncated row, non-numeric field..."""

    def __init__(self, file: object, message: str, *, column: str | None = None, row: int | None = None) -> None:
        self.file = str(file)
        self.column = column
        self.row = row
        where = [f"file {self.file}"]
        if column is not None:
            where.append(f"column {column!r}")
        if row is not None:
            where.append(f"line {row}")
        super().__init__(f"{', '.join(where)}: {message}")


class ChecksumError(DataError):
    """A file's sha256 differs from the registry's."""

    def __init__(self, file: object, expected: str, got: str, *, source: str = "") -> None:
        self.file = str(file)
        self.expected = expected
        self.got = got
        origin = f" ({source})" if source else ""
        super().__init__(f"sha256 mismatch for {self.file}: expected {expected}{origin}, got {got}")


class UnsafeArchiveError(DataError):
    """An archive member would be written outside the target folder (absolute path, '..', or a link)."""


class DataQualityWarning(UserWarning):
    """A file loads, but some of its values look damaged (e.g. mojibake); the message names file, column and lines."""
