"""The numbers the five papers print, in one home: one CSV per printed table, named ``<key>_<table>.csv`` after the
paper's key in ``book/references.bib``.  Each file opens with ``#`` lines citing the paper, the table (and page or
section where the copy at hand marks it) and saying how the numbers were transcribed; the chapters set ours beside
them, never in their place.

``table(name)`` reads one (an empty cell is a missing value; every other cell is read as written, so a method called
"NA" stays "NA"); ``citation(name)`` gives its comment lines; ``names()`` lists them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FOLDER = Path(__file__).parent


def names() -> list[str]:
    """Every paper table held here, by name (``kang2025serendipity_table2``, ...)."""
    return sorted(path.stem for path in FOLDER.glob("*.csv"))


def path(name: str) -> Path:
    """The file of table ``name``; KeyError naming the tables held when there is none."""
    found = FOLDER / f"{name}.csv"
    if not found.is_file():
        raise KeyError(f"no paper table {name!r}; held: {', '.join(names())}")
    return found


def table(name: str) -> pd.DataFrame:
    """Table ``name`` as printed (see the module docstring)."""
    return pd.read_csv(path(name), comment="#", keep_default_na=False, na_values=[""])


def citation(name: str) -> str:
    """The comment lines that open table ``name``: which paper, which table, how transcribed."""
    lines = path(name).read_text(encoding="utf-8").splitlines()
    return " ".join(line.removeprefix("#").strip() for line in lines if line.startswith("#"))


__all__ = ["FOLDER", "citation", "names", "path", "table"]
