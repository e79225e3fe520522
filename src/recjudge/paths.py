"""Where things live: project root, data folders, the response store and the results folder.

Every location can be overridden by an environment variable so that a notebook copied elsewhere, a test, or CI can
point the package at its own folders.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Folder holding one sub-folder per dataset (same layout as the official archives); read before any download.
DATA_MIRROR_ENV = "RECJUDGE_DATA_MIRROR"
#: Overrides the project root (the folder holding pyproject.toml of recjudge).
HOME_ENV = "RECJUDGE_HOME"
#: Overrides the results folder (default: <root>/results).
RESULTS_ENV = "RECJUDGE_RESULTS"
#: The run plan's name of the run a kernel executes (set by ``recjudge run``): its tables go to results/<name>/ only.
RUN_NAME_ENV = "RECJUDGE_RUN_NAME"
#: An explicit response-store folder, used for reads and writes alone (default: the layered store below).
STORE_ENV = "RECJUDGE_STORE"


def project_root() -> Path:
    """The project root: $RECJUDGE_HOME, else the nearest parent of the working directory (or of this package)
    that holds the recjudge pyproject.toml, else the working directory."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).resolve()
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            candidate = folder / "pyproject.toml"
            if candidate.is_file() and 'name = "recjudge"' in candidate.read_text(encoding="utf-8", errors="ignore"):
                return folder
    return Path.cwd()


def shown_in_project(path: Path) -> str:
    """``path`` relative to the project where it lies inside it, else as given: what a message that can reach a page
    names (a built page never shows a folder of the machine that built it)."""
    try:
        return Path(path).resolve().relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return str(path)


def data_mirror() -> Path | None:
    """The configured mirror folder, or None when the variable is unset or empty."""
    value = os.environ.get(DATA_MIRROR_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def raw_data_dir() -> Path:
    """Fetched, non-redistributable datasets (git-ignored)."""
    return project_root() / "data" / "raw"


def sample_data_dir() -> Path:
    """Committed, redistributable sample data."""
    return project_root() / "data" / "sample"


def committed_store_dir() -> Path:
    """The book's committed response store (``data/llm``): the replies the book replays."""
    return project_root() / "data" / "llm"


def reader_store_dir() -> Path:
    """Where replies that are not the book's committed ones go by default: ``variants/store`` (git-ignored), so
    judging a reader's own model or lists never changes a tracked file."""
    return project_root() / "variants" / "store"


def explicit_store_dir() -> Path | None:
    """$RECJUDGE_STORE, or None when it is unset or empty."""
    value = os.environ.get(STORE_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def store_dir() -> Path:
    """The response store replies are written to: $RECJUDGE_STORE when set (a maintainer regenerating the book's
    replies sets it to data/llm), else the reader's store (``reader_store_dir``)."""
    return explicit_store_dir() or reader_store_dir()


def store_layers() -> list[Path]:
    """The response stores read, lowest first: $RECJUDGE_STORE alone when set, else the committed store and the
    reader's store above it (the one written)."""
    explicit = explicit_store_dir()
    return [explicit] if explicit else [committed_store_dir(), reader_store_dir()]


def book_store_dir() -> Path:
    """The store whose replies the book's own runs stand on: $RECJUDGE_STORE when set, else the committed one."""
    return explicit_store_dir() or committed_store_dir()


def results_dir() -> Path:
    """CSV tables written by the notebooks."""
    if os.environ.get(RESULTS_ENV):
        return Path(os.environ[RESULTS_ENV]).resolve()
    return project_root() / "results"


def temporary_folder_problem() -> str | None:
    """Why no temporary file can be made (a ``TMPDIR`` that is missing, not a folder or read-only; or no usable
    temporary folder at all), as one line naming the folder; None when one can. The commands check it first: papermill,
    git and Jupyter Book all write temporary files, and each would otherwise fail with its own traceback."""
    import tempfile

    named = os.environ.get("TMPDIR", "")
    folder = Path(named) if named else None
    try:
        if folder is not None:
            if not folder.is_dir():
                return (f"TMPDIR={named} is not a folder that exists: create it, or point TMPDIR at a writable "
                        "folder (or unset it)")
            with tempfile.TemporaryFile(dir=folder):
                pass
        else:
            with tempfile.TemporaryFile():
                pass
    except OSError as error:
        where = named or getattr(error, "filename", None)
        if not where:  # no folder at all: tempfile names those it tried (asking it again would fail the same way)
            return f"no usable temporary folder ({error.strerror or error}): point TMPDIR at a writable folder"
        return (f"cannot write a temporary file in {where} ({error.strerror or error}): point TMPDIR at a writable "
                "folder")
    return None
