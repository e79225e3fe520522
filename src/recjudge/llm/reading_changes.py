"""The committed record of reply-reading rule changes: for each change of the parsing rules (``llm.parsing`` and the
readers built on it), how many stored replies each reader read differently, per chapter that uses the reader.

The record (``data/llm/reading_changes.csv``) is written by ``scripts/parser_changes.py --write REVISION --rule NAME``
from the committed store and the package at REVISION (``chapters.reply_readings.change_record``); a chapter reads it
here, so a build needs neither git history (a clone may be shallow) nor the older package. A test recomputes the
latest change wherever git history holds its ``from_version``.

Columns: reader, chapter, replies (stored replies the reader was applied to), replies_moved (stored replies read
differently: another score, newly read or no longer read), distinct_texts (distinct reply texts among them),
from_version and to_version (the package's commits before and after the change: the record's provenance, which a
test recomputes), judge, and rule (the change's name, which the pages show: a reader's page is no changelog of
commits). Two kinds of rows:

* ``judge`` empty: the reader applied to every stored reply, including replies to prompts no chapter reads with it,
  listed for each chapter that uses the reader (``chapter`` a notebook): an upper bound on what moved in a chapter;
* ``judge`` a judge run's label: the stored replies that judge run read from their text with that reader in the
  chapter's last execution (``chapter`` a run of the run plan), counted exactly; a run whose last execution read no
  stored reply from its text has one row with neither reader nor judge and no replies.

A chapter says what a change moved from its exact rows where the record has them, else from the upper bounds, and
names the change by its rule; the reproducibility page lists every change by rule (:func:`record_markdown`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recjudge.paths import project_root

COLUMNS = ["reader", "chapter", "replies", "replies_moved", "distinct_texts", "from_version", "to_version", "judge",
           "rule"]
#: The name of a change recorded before changes had names.
UNNAMED = "an unnamed change of the reading rules"
#: Where a chapter's page points for every recorded change (relative to an executed chapter in book/notebooks/).
REPRODUCIBILITY_PAGE = "{doc}`the reproducibility page <../reproducibility>`"
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
    if "judge" not in record.columns:  # a record from before exact rows: every row an upper bound
        record["judge"] = ""
    if "rule" not in record.columns:  # a record from before changes had names
        record["rule"] = ""
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


def chapter_sentence(chapter: str, record: pd.DataFrame | None = None, notebook: str | None = None) -> str | None:
    """One sentence for ``chapter`` (a run of the run plan; ``notebook``, its notebook when the name differs): what
    each recorded change of the reading rules moved among the stored replies it reads, counted exactly where the
    record has the chapter's judge runs, else as upper bounds over the readers it uses; None when no recorded change
    concerns the chapter."""
    record = load() if record is None else record
    exact = record[(record["chapter"] == chapter) & ((record["judge"] != "") | (record["reader"] == ""))]
    bounds = record[(record["chapter"] == (notebook or chapter)) & (record["judge"] == "") & (record["reader"] != "")]
    changes = pd.concat([exact, bounds])[["from_version", "to_version", "rule"]].drop_duplicates(
        ["from_version", "to_version"])
    if changes.empty:
        return None
    clauses, bounded = [], False
    for before, after, rule in changes.itertuples(index=False):
        change = f"the change to {rule or UNNAMED}"
        rows = exact[(exact["from_version"] == before) & (exact["to_version"] == after)]
        if len(rows):
            clauses.append(_exact_clause(change, rows))
            continue
        bounded = True
        rows = bounds[(bounds["from_version"] == before) & (bounds["to_version"] == after)]
        moved = rows[rows["replies_moved"] > 0]
        if moved.empty:
            clauses.append(f"{change} moved none of the stored replies this chapter's readers read")
            continue
        parts = [f"{row.replies_moved:,} of {row.replies:,} read with `{row.reader}` ({_texts(row.distinct_texts)})"
                 for row in moved.itertuples()]
        clauses.append(f"{change} moved at most " + "; ".join(parts))
    note = (" (stored replies; a reader is applied to every stored reply, so each count marked \"at most\" is an "
            "upper bound for this chapter)") if bounded else " (stored replies, as this chapter last read them)"
    return ("Reply-reading rules: " + "; ".join(clauses) + note + f"; every recorded change: {REPRODUCIBILITY_PAGE}.")


def record_markdown(record: pd.DataFrame | None = None) -> str:
    """Every recorded change of the reading rules as a Markdown table for the reproducibility page, by rule and
    chapter: the readings of a stored reply's text each chapter's judge runs made and how many the change read
    differently (exact), or, for a chapter without exact rows, the upper bound over every stored reply its readers
    read ("at most"). Named by the rule, never by a commit."""
    record = load() if record is None else record
    if record.empty:
        return "No change of the reading rules is recorded.\n"
    lines = ["| Change of the reading rules | Chapter | Stored replies read | Read differently |", "|---|---|---|---|"]
    for (before, after), change in record.groupby(["from_version", "to_version"], sort=False):
        rule = next((name for name in change["rule"] if name), UNNAMED)
        exact = change[(change["judge"] != "") | (change["reader"] == "")]
        for chapter in dict.fromkeys(change["chapter"]):
            mine = exact[exact["chapter"] == chapter]
            mine = mine[mine["reader"] != ""] if len(mine) else mine
            if len(exact[exact["chapter"] == chapter]):
                read, moved = int(mine["replies"].sum()), int(mine["replies_moved"].sum())
                lines.append(f"| {rule} | {chapter} | {read:,} | {moved:,} |")
            else:
                bounds = change[(change["chapter"] == chapter) & (change["judge"] == "")]
                lines.append(f"| {rule} | {chapter} | at most {int(bounds['replies'].max()):,} | at most "
                             f"{int(bounds['replies_moved'].sum()):,} |")
    return "\n".join(lines) + "\n"


def _texts(count: int) -> str:
    return f"{count:,} distinct {'text' if count == 1 else 'texts'}"


def _exact_clause(change: str, rows: pd.DataFrame) -> str:
    """What a change moved among the stored replies the chapter's judge runs read from their text (a reply read with
    two readers is two readings)."""
    rows = rows[rows["reader"] != ""]
    total = int(rows["replies"].sum())
    if not total:
        return f"{change} moved nothing here: this chapter reads no stored reply from its text"
    moved = rows[rows["replies_moved"] > 0]
    readings = f"{total:,} {'reading' if total == 1 else 'readings'} of a stored reply's text"
    if moved.empty:
        return f"{change} moved none of this chapter's {readings}"
    parts = [f"{row.replies_moved:,} of the {row.replies:,} of `{row.judge}` read with `{row.reader}` "
             f"({_texts(row.distinct_texts)})" for row in moved.itertuples()]
    return (f"{change} reads {int(moved['replies_moved'].sum()):,} of this chapter's {readings} differently: "
            + "; ".join(parts))
