"""The committed record of reply-reading rule changes: for each change of the parsing rules (``llm.parsing`` and the
readers built on it), how many stored replies each reader read differently, per chapter that uses the reader.

The record (``data/llm/reading_changes.csv``) is written by ``scripts/parser_changes.py --write REVISION`` from the
committed store and the package at REVISION (``chapters.reply_readings.change_record``); a chapter reads it here, so a
build needs neither git history (a clone may be shallow) nor the older package. A test recomputes the latest change
wherever git history holds its ``from_version``.

Columns: reader, chapter, replies (stored replies the reader was applied to), replies_moved (stored replies read
differently: another score, newly read or no longer read), distinct_texts (distinct reply texts among them),
from_version and to_version (the package's commits before and after the change). A reader is applied to every stored
reply, including replies to prompts no chapter reads with it, so a count is an upper bound on what moved in a chapter.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recjudge.paths import project_root

COLUMNS = ["reader", "chapter", "replies", "replies_moved", "distinct_texts", "from_version", "to_version"]
_COUNTS = ["replies", "replies_moved", "distinct_texts"]


class RecordError(ValueError):
    """The record cannot be read: the message names the file and the row or field."""


def record_path() -> Path:
    return project_root() / "data" / "llm" / "reading_changes.csv"


def load(path: Path | None = None) -> pd.DataFrame:
    """The record (empty when there is none), checked: every column present, counts whole and not negative."""
    path = Path(path) if path is not None else record_path()
    if not path.is_file():
        return pd.DataFrame(columns=COLUMNS)
    try:
        record = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not a readable CSV ({exc})") from None
    missing = [column for column in COLUMNS if column not in record.columns]
    if missing:
        raise RecordError(f"{path}: missing column(s) {', '.join(missing)}")
    for column in _COUNTS:
        numbers = pd.to_numeric(record[column], errors="coerce")
        bad = record.index[numbers.isna() | (numbers < 0) | (numbers % 1 != 0)]
        if len(bad):
            row = int(bad[0]) + 2  # the header is line 1
            raise RecordError(f"{path}, line {row}: {column} {record.at[bad[0], column]!r} is not a count")
        record[column] = numbers.astype(int)
    return record[COLUMNS]


def chapter_sentence(chapter: str, record: pd.DataFrame | None = None) -> str | None:
    """One sentence for ``chapter``: what each recorded change of the reading rules moved among the stored replies
    of the readers it uses; None when no recorded change concerns the chapter."""
    record = load() if record is None else record
    rows = record[record["chapter"] == chapter]
    if rows.empty:
        return None
    clauses = []
    for (before, after), change in rows.groupby(["from_version", "to_version"], sort=False):
        moved = change[change["replies_moved"] > 0]
        if moved.empty:
            clauses.append(f"the change from `{before}` to `{after}` moved none of the stored replies this chapter's "
                           "readers read")
            continue
        parts = [f"{row.replies_moved:,} of {row.replies:,} read with `{row.reader}` ({row.distinct_texts:,} distinct "
                 f"{'text' if row.distinct_texts == 1 else 'texts'})" for row in moved.itertuples()]
        clauses.append(f"the change from `{before}` to `{after}` moved at most " + "; ".join(parts))
    return ("Reply-reading rules: " + "; ".join(clauses) + " (stored replies; a reader is applied to every stored "
            "reply, so each count is an upper bound for this chapter).")
