"""The book's table of contents (``_toc.yml``): the files it lists, the numbers its chapters get and their titles.

Read by the build (``book``), a variant's book (``variant_book``) and the tables' captions (``tables``); it imports
none of them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

TOC_FILE = "_toc.yml"
NOTEBOOK_CHAPTERS = "book/notebooks/"


class BookError(RuntimeError):
    """The book cannot be built or failed a check; the message says which step and why."""


def toc_files(toc_path: Path) -> list[str]:
    """Every ``file:`` (and the ``root:``) of a Jupyter Book ``_toc.yml``, in order."""
    try:
        toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise BookError(f"{toc_path}: cannot read the table of contents ({error})") from error
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("root", "file") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def chapter_numbers(toc_path: Path) -> dict[str, int]:
    """The number Jupyter Book gives each chapter (``file:`` -> 1, 2, ...): the chapters of the parts marked
    ``numbered: true``, counted in order across those parts, as the built book numbers them ("6." and "Fig. 6.1")."""
    try:
        toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise BookError(f"{toc_path}: cannot read the table of contents ({error})") from error
    numbers: dict[str, int] = {}
    for part in (toc or {}).get("parts", []) or []:
        if isinstance(part, dict) and part.get("numbered"):
            for chapter in part.get("chapters", []) or []:
                if isinstance(chapter, dict) and isinstance(chapter.get("file"), str):
                    numbers[chapter["file"]] = len(numbers) + 1
    return numbers


#: A part of the table of contents whose caption starts so holds appendices: its pages are lettered, not numbered.
APPENDIX_CAPTION = "Appendix"


def appendix_letters(toc_path: Path) -> dict[str, str]:
    """The letter each page of the appendix parts gets (``file:`` -> "A", "B", ...), in order, so that its tables
    and figures read "Table A.1" and "Fig. B.2" rather than numbers that collide with the chapters'."""
    try:
        toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise BookError(f"{toc_path}: cannot read the table of contents ({error})") from error
    files = [chapter["file"] for part in (toc or {}).get("parts", []) or []
             if isinstance(part, dict) and str(part.get("caption", "")).startswith(APPENDIX_CAPTION)
             for chapter in part.get("chapters", []) or []
             if isinstance(chapter, dict) and isinstance(chapter.get("file"), str)]
    if len(files) > 26:
        raise BookError(f"{toc_path}: {len(files)} appendix pages, more than the 26 letters A-Z")
    return {file: chr(ord("A") + i) for i, file in enumerate(files)}


def chapter_labels(toc_path: Path) -> dict[str, int | str]:
    """What each numbered chapter's and appendix page's tables and figures are numbered under: the chapter's
    number (:func:`chapter_numbers`) or the appendix's letter (:func:`appendix_letters`)."""
    return {**chapter_numbers(toc_path), **appendix_letters(toc_path)}


_TITLE = re.compile(r"^# (.+)$", re.MULTILINE)


def chapter_title(run: Any, root: Path) -> str:
    """The title of the chapter a run makes: its notebook's first heading (and the run's variant, which shares it)."""
    path = Path(root) / run.notebook
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":  # a notebook's JSON: its markdown cells hold the title
            import nbformat

            text = "\n".join(cell.source for cell in nbformat.reads(text, as_version=4).cells
                              if cell.cell_type == "markdown")
    except (OSError, ValueError):
        text = ""
    found = _TITLE.search(text)
    title = found.group(1).strip() if found else run.name
    return f"{title} ({run.variant})" if run.variant else title
