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
#: Overrides the response-store folder (default: <root>/data/llm).
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


def store_dir() -> Path:
    """The LLM response store (committed for the default configurations)."""
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV]).resolve()
    return project_root() / "data" / "llm"


def results_dir() -> Path:
    """CSV tables written by the notebooks."""
    if os.environ.get(RESULTS_ENV):
        return Path(os.environ[RESULTS_ENV]).resolve()
    return project_root() / "results"
