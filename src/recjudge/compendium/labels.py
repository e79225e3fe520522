"""A chapter's cross-reference labels belong to its run, so that two runs of one chapter never share a label.

A chapter names its figures in its text (``:name: fig-greedy-ratio`` in a ``glue:figure`` directive) and cites them
(``{numref}`fig-greedy-ratio```). Sphinx's labels are global to the book, so a second run of the same text (a
student's copy of a chapter, a chapter's demonstration on synthetic data) would define every label twice, which
fails the build (``duplicate label``). The labels a chapter defines are therefore derived from the run's name:

- the chapter's own run (its run name is the ``NOTEBOOK`` default of its parameters cell) keeps them as written, so
  the committed book's anchors do not change;
- any other run of the text gets each one prefixed with its name after the kind: ``fig-greedy-ratio`` becomes
  ``fig-my_surprise-greedy-ratio`` in the run ``my_surprise``, and so do the chapter's references to it (``numref``,
  ``ref`` and ``eq`` roles, ``(#label)`` links). References to other pages' labels are left as they are.

The book applies this when Sphinx reads an executed notebook (``recjudge.compendium.sphinx_extension`` connects
:func:`relabel_notebook_text` to ``source-read``), so a copied chapter needs no edit of its labels.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

#: The parameter that names a chapter's run (and its results folder).
RUN_NAME_PARAMETER = "NOTEBOOK"
#: Label kinds kept in front, so a relabelled figure still reads as one: fig-<run>-rest.
_KINDS = ("fig", "tbl", "table", "eq", "sec")
_NAME_OPTION = re.compile(r"^(?P<lead>[ \t]*:name:[ \t]*)(?P<label>\S+)[ \t]*$", re.MULTILINE)
_TARGET = re.compile(r"^\((?P<label>[^()\s]+)\)=[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r"\{(?P<role>numref|ref|eq)\}`(?P<body>[^`]*)`")
_LINK = re.compile(r"\]\(#(?P<label>[^)\s]+)\)")


def chapter_name(notebook: dict[str, Any]) -> str | None:
    """The ``NOTEBOOK`` default of the notebook's parameters cell (the chapter's own run name), or None."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            try:
                tree = ast.parse(_text(cell.get("source", "")))
            except SyntaxError:
                return None
            for statement in tree.body:
                named = [target.id for target in getattr(statement, "targets", []) if isinstance(target, ast.Name)]
                if isinstance(statement, ast.Assign) and RUN_NAME_PARAMETER in named:
                    try:
                        value = ast.literal_eval(statement.value)
                    except ValueError:
                        return None
                    return value if isinstance(value, str) else None
    return None


def run_label(label: str, run: str) -> str:
    """``label`` of a chapter's text as defined in the run ``run`` that is not the chapter's own."""
    kind, _, rest = label.partition("-")
    return f"{kind}-{run}-{rest}" if kind in _KINDS and rest else f"{run}-{label}"


def defined_labels(notebook: dict[str, Any]) -> list[str]:
    """The labels the notebook's markdown cells define (``:name:`` options and ``(label)=`` targets), in order."""
    found: list[str] = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = _text(cell.get("source", ""))
            for match in (*_NAME_OPTION.finditer(source), *_TARGET.finditer(source)):
                if match["label"] not in found:
                    found.append(match["label"])
    return found


def relabel(notebook: dict[str, Any], run: str) -> dict[str, Any]:
    """``notebook`` (nbformat JSON as a dict) with its labels those of the run ``run`` (see the module docstring);
    the same object when the run is the chapter's own or the chapter defines no label."""
    own = chapter_name(notebook)
    labels = defined_labels(notebook)
    if own is None or own == run or not labels:
        return notebook
    renamed = {label: run_label(label, run) for label in labels}

    def role(match: re.Match[str]) -> str:
        body = match["body"]
        title = re.fullmatch(r"(?P<text>.*<)(?P<label>[^<>]+)>", body, re.S)
        if title and title["label"] in renamed:
            body = f"{title['text']}{renamed[title['label']]}>"
        elif body in renamed:
            body = renamed[body]
        return f"{{{match['role']}}}`{body}`"

    cells = []
    for cell in notebook["cells"]:
        if cell.get("cell_type") == "markdown":
            source = _text(cell.get("source", ""))
            source = _NAME_OPTION.sub(lambda m: m["lead"] + renamed.get(m["label"], m["label"]), source)
            source = _TARGET.sub(lambda m: f"({renamed.get(m['label'], m['label'])})=", source)
            source = _ROLE.sub(role, source)
            source = _LINK.sub(lambda m: f"](#{renamed.get(m['label'], m['label'])})", source)
            cell = {**cell, "source": source}
        cells.append(cell)
    return {**notebook, "cells": cells}


def relabel_notebook_text(text: str, run: str) -> str:
    """:func:`relabel` on a notebook's JSON text; the text unchanged when nothing is relabelled (or it is not a
    notebook)."""
    try:
        notebook = json.loads(text)
    except ValueError:
        return text
    if not isinstance(notebook, dict):
        return text
    relabelled = relabel(notebook, run)
    return text if relabelled is notebook else json.dumps(relabelled, ensure_ascii=False, indent=1)


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else source


# ------------------------------------------------------------------------------------------------ a copy's title
_TITLE = re.compile(r"^# (?P<title>\S.*?)[ \t]*$", re.MULTILINE)


def titles(notebook: dict[str, Any]) -> list[str]:
    """The page titles (``# `` headings) of the notebook's markdown cells, in order (a chapter with variants has one
    per variant, each in a cell of its own)."""
    return [match["title"] for cell in notebook.get("cells", []) if cell.get("cell_type") == "markdown"
            for match in _TITLE.finditer(_text(cell.get("source", "")))]


def copy_title(title: str, run: str) -> str:
    """The title of the run ``run`` of a copied chapter that kept its original's ``title``: the run's name said
    after it, so that the table of contents never shows two identical titles."""
    return f"{title} ({run})"


def retitle_copy(notebook: dict[str, Any], run: str, original_titles: list[str], source: str,
                 source_lines: dict[str, int]) -> dict[str, Any]:
    """``notebook`` (an executed run of the chapter copied into ``source``) with its first title made the run's own
    when it is still one of its original's (``original_titles``), followed by a note that says so and which line of
    ``source`` to edit (``source_lines``: title -> line number) to give the copy a title of its own. The same object
    when the copy has a title of its own already (or the run is the original's)."""
    for position, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = _text(cell.get("source", ""))
        match = _TITLE.search(text)
        if match is None:
            continue
        title = match["title"]
        if title not in original_titles:
            return notebook
        line = source_lines.get(title)
        where = f"line {line} of `{source}`" if line else f"its `# ` line in `{source}`"
        note = (f"\n\n```{{note}}\nA copy of the chapter *{title}*, run as `{run}`: the run's name is added to its "
                f"title. To title it yourself, edit {where}. The chapter's prose that depends on its parameters "
                f"(dataset, sample, thresholds) is computed from them; sentences you add are yours to keep true.\n```")
        retitled = f"{text[:match.start()]}# {copy_title(title, run)}{note}{text[match.end():]}"
        cells = list(notebook["cells"])
        cells[position] = {**cell, "source": retitled}
        return {**notebook, "cells": cells}
    return notebook


def title_lines(text: str) -> dict[str, int]:
    """Each ``# `` title of a MyST text notebook with its line number (1-based), outside code cells."""
    found: dict[str, int] = {}
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        opening = re.match(r"(`{3,}|~{3,})", stripped)
        if opening and fence is None:
            fence = opening[1]
        elif fence is not None and stripped.startswith(fence) and not stripped[len(fence):].strip():
            fence = None
        elif fence is None and (match := _TITLE.match(line)):
            found.setdefault(match["title"], number)
    return found
