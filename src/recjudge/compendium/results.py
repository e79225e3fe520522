"""Every table a notebook shows is also written as CSV under results/<notebook>/<name>.csv.

Committed results must be exactly what the code computes from the committed inputs, so a rebuild leaves them
unchanged: ``save_table`` refuses columns that hold measurements of the run itself (seconds, latency, elapsed time).
Such figures belong in the executed notebook's output or the run log, or in a benchmark.

A variant's tables carry a reader's own text (a judge's label), so their text cells are escaped against spreadsheet
formulas (``escape_formulas``) and read back unescaped; the committed tables hold the project's own text only and
are written as they are, so that they stay byte-identical."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from recjudge.paths import RUN_NAME_ENV, project_root, results_dir, shown_in_project

#: A plain file name: letters, digits, '_', '-' and '.', not starting with '.' (so never '.' or '..').
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
#: Column names that measure the run rather than the data: they would change at every build.
_RUN_MEASUREMENT = re.compile(r"(^|[_\s(])(seconds|elapsed|latency|wall[_ ]?time|duration|executed[_ ]at)($|[_\s)])",
                              re.IGNORECASE)


#: A text cell starting with one of these is a formula to a spreadsheet (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The mark of an escaped cell: a spreadsheet shows the rest as text.  A cell that itself starts with it is escaped
#: too, so that ``unescape_formulas`` gives back exactly what was written.
ESCAPE = "'"


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells starting with = + - @ tab or CR (or the escape mark itself) get a leading single quote (OWASP's
    rule against CSV injection), so a spreadsheet shows them as text instead of running them; numeric columns are
    left as they are."""
    escaped = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object:
            # element by element: an object column may hold no text at all (integers beside missing values)
            risky = values.map(lambda value: isinstance(value, str) and value.startswith((*FORMULA_STARTS, ESCAPE)))
            if risky.any():
                escaped[column] = values.where(~risky, ESCAPE + values.astype(str))
    return frame.assign(**escaped) if escaped else frame


def unescape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """The inverse of ``escape_formulas``: the leading single quote of each text cell is removed."""
    unescaped = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object:
            marked = values.map(lambda value: isinstance(value, str) and value.startswith(ESCAPE))
            if marked.any():
                unescaped[column] = values.where(~marked, values.str[1:])
    return frame.assign(**unescaped) if unescaped else frame


def save_table(table: pd.DataFrame, notebook: str, name: str, *, index: bool = False) -> pd.DataFrame:
    """Write ``table`` to results/<notebook>/<name>.csv and return it unchanged, so a notebook cell can end with
    ``save_table(df, NOTEBOOK, "table2")`` and both show and persist the same object.  Under ``recjudge run``
    (``RECJUDGE_RUN_NAME`` set) ``notebook`` must be the run's name: a run never writes another run's tables."""
    for label, value in (("notebook", notebook), ("name", name)):
        if not _SAFE_NAME.match(value):
            raise ValueError(f"{label} {value!r} must be a plain file name (letters, digits, '_', '-', '.'; "
                             "not starting with '.')")
    run = os.environ.get(RUN_NAME_ENV, "").strip()
    if run and notebook != run:  # a copied chapter that kept its original's NOTEBOOK would overwrite its tables
        raise ValueError(f"table {notebook}/{name}: this is the run {run!r}, whose tables go to results/{run}/, not "
                         f"to results/{notebook}/ (another run's); set NOTEBOOK = {run!r} in the parameters cell, or "
                         f"give the run the parameter NOTEBOOK: {run} in runplan.yaml")
    measured = [str(column) for column in table.columns if _RUN_MEASUREMENT.search(str(column))]
    if measured:
        raise ValueError(f"table {notebook}/{name}: column(s) {measured} measure the run (time), not the data, and "
                         "would differ at every build; show them in the notebook instead of saving them")
    path = results_path(notebook, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    (escape_formulas(table) if in_variant() else table).to_csv(path, index=index, float_format="%.6g")
    return table


def results_path(notebook: str, name: str) -> Path:
    return results_dir() / notebook / f"{name}.csv"


def load_table(notebook: str, name: str) -> pd.DataFrame:
    path = results_path(notebook, name)
    if not path.is_file():
        raise FileNotFoundError(f"{shown_in_project(path)} does not exist: run the notebook {notebook!r} first "
                                "(make run)")
    table = pd.read_csv(path)
    return unescape_formulas(table) if in_variant() else table


def committed_results_dir() -> Path:
    """The committed book's tables (``results/``), whatever ``RECJUDGE_RESULTS`` says."""
    return project_root() / "results"


def in_variant() -> bool:
    """True when the tables go elsewhere than the committed ``results/`` (a variant's run, ``RECJUDGE_RESULTS``)."""
    return results_dir().resolve() != committed_results_dir().resolve()


def load_committed_table(notebook: str, name: str) -> pd.DataFrame:
    """A table of the committed book, also from a variant's run (to show the book's number beside the variant's)."""
    path = committed_results_dir() / notebook / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{shown_in_project(path)} does not exist: run the notebook {notebook!r} of the "
                                "committed book first (make run)")
    return pd.read_csv(path)


def load_table_or_committed(notebook: str, name: str) -> pd.DataFrame:
    """This run's table, or the committed book's when this run (a variant that ran only some chapters) has none:
    a chapter a variant did not run is the committed book's."""
    try:
        return load_table(notebook, name)
    except FileNotFoundError:
        if not in_variant():
            raise
        return load_committed_table(notebook, name)
