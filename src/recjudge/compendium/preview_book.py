"""A book of a few chapters: ``recjudge book --only NAME`` (repeatable) shows a student's chapter without executing
the whole book first.

It executes the named runs of the run plan and the runs whose tables they read (``results_of``), each skipped when
unchanged as ``recjudge run --only`` skips it, then stages a book in ``_build/preview/source`` (git-ignored) with
the committed ``_config.yml``, ``_toc.yml``, prose and tables, in which every other chapter is a page holding its
title and a "Not run in this build" box, the way a variant's book marks the chapters it did not run
(``variant_book.chapter_note``). Its HTML is at ``_build/preview/html``. A preview is not a book to publish: it
records no build (``build-info.json``), so ``recjudge book --check-only --publish`` refuses it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Sequence

from recjudge.compendium.claim_evidence import NOT_RUN_TITLE
from recjudge.compendium.pages import myst_text
from recjudge.compendium.toc import chapter_title
from recjudge.compendium.variant_book import NOTEBOOKS, _config_with_title, _write_if_changed, title_page

PREVIEW_DIR = Path("_build") / "preview"
#: A chapter's title in its MyST source: the first level-one heading.
#: What a staged book reads from ``results/``: the tables, and the markdown a run writes for a prose page.
STAGED_RESULTS = ("*.csv", "*.md")


class PreviewBookError(ValueError):
    """A preview cannot be built; the message names the run, the option or the file."""


def runs_needed(runs: Sequence[Any], names: Sequence[str]) -> list[Any]:
    """The runs named, and the runs whose tables they read (``results_of``, transitively), in the plan's order.
    An unknown name is a :class:`PreviewBookError` listing the plan's runs."""
    by_name = {run.name: run for run in runs}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise PreviewBookError(f"--only {', '.join(unknown)}: no such run in runplan.yaml (its runs: "
                               f"{', '.join(by_name)})")
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(by_name[name].results_of)
    return [run for run in runs if run.name in wanted]


def not_run_note(names: Sequence[str]) -> str:
    """The box of a chapter a preview did not run."""
    asked = " ".join(f"--only {name}" for name in names)
    return (f":::{{admonition}} {NOT_RUN_TITLE}\n:class: warning\n"
            f"This build (`recjudge book {myst_text(asked)}`) ran only {myst_text(', '.join(names))} and what "
            "they need; this chapter was not executed, so its page is empty here. `recjudge book` builds the whole "
            "book (`make book` runs every chapter first).\n:::\n")


def not_run_notebook(title: str, names: Sequence[str]) -> Any:
    """The page of a chapter the preview did not run: its title and the box."""
    return title_page(title, not_run_note(names))


def preview_chapters(root: Path, chapters: Sequence[str], ran: Sequence[str]) -> dict[str, str]:
    """Chapter -> where its staged page comes from: ``"executed"`` (a run of ``ran``, executed) or ``"not run"``."""
    return {chapter: "executed" if chapter in ran and (Path(root) / NOTEBOOKS / f"{chapter}.ipynb").is_file()
            else "not run" for chapter in chapters}


def stage_preview_book(root: Path, runs: Sequence[Any], names: Sequence[str]) -> Path:
    """Write the preview's sources to ``_build/preview/source`` (see the module docstring) and link
    ``_build/preview/html`` to where Jupyter Book writes them; returns the source folder. ``runs``: the run plan;
    ``names``: the runs asked for (their needs are executed too). Unchanged files are not rewritten."""
    import nbformat

    from recjudge.compendium.toc import TOC_FILE, toc_files

    root = Path(root)
    source = root / PREVIEW_DIR / "source"
    ran = [run.name for run in runs_needed(runs, names)]
    for path in sorted((root / "book").rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not relative.is_relative_to(NOTEBOOKS):
            _write_if_changed(source / relative, path.read_bytes())
    for path in sorted((root / "notebooks").rglob("*")) if (root / "notebooks").is_dir() else []:
        if path.is_file():
            _write_if_changed(source / path.relative_to(root), path.read_bytes())
    _write_if_changed(source / TOC_FILE, (root / TOC_FILE).read_bytes())
    config = _config_with_title(root, f"only {', '.join(names)}")
    _write_if_changed(source / "_config.yml", config.encode("utf-8"))
    chapters = [Path(entry).name.removesuffix(".ipynb") for entry in toc_files(root / TOC_FILE)
                if entry.startswith(f"{NOTEBOOKS.as_posix()}/")]
    missing = [name for name in names if name not in chapters]
    if missing:
        raise PreviewBookError(f"--only {', '.join(missing)}: not in {TOC_FILE} (add `- file: "
                               f"{NOTEBOOKS.as_posix()}/{missing[0]}`)")
    by_name = {run.name: run for run in runs}
    for chapter, origin in preview_chapters(root, chapters, ran).items():
        if origin == "executed":
            content = (root / NOTEBOOKS / f"{chapter}.ipynb").read_bytes()
        else:
            run = by_name.get(chapter)
            title = chapter_title(run, root) if run is not None else chapter
            content = nbformat.writes(not_run_notebook(title, names)).encode("utf-8")
        _write_if_changed(source / NOTEBOOKS / f"{chapter}.ipynb", content)
    results = root / "results"
    for path in sorted(path for pattern in STAGED_RESULTS for path in results.rglob(pattern)) \
            if results.is_dir() else []:
        _write_if_changed(source / "results" / path.relative_to(results), path.read_bytes())
    link = root / PREVIEW_DIR / "html"
    if not link.is_symlink():
        if link.exists():
            shutil.rmtree(link)
        link.symlink_to(Path("source") / "_build" / "html", target_is_directory=True)
    return source


__all__ = ["PREVIEW_DIR", "PreviewBookError", "chapter_title", "not_run_note", "preview_chapters", "runs_needed",
           "stage_preview_book"]
