"""A notebook's declared parameters (its ``parameters`` cell) and the checks a run's parameters must pass against
them: declared names, values of the declared default's kind, values papermill can inject, and prompt templates'
names where a parameter names prompts.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recjudge.compendium.runplan.run import RunPlanError

#: The parameter naming a chapter's results folder (``save_table(table, NOTEBOOK, name)``).
RESULTS_FOLDER_PARAMETER = "NOTEBOOK"
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def _uninjectable(value: Any) -> str | None:
    """Why papermill cannot write ``value`` into a notebook as a Python literal, or None when it can."""
    if value is None or isinstance(value, (bool, int, str)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r} is not a finite number"
    if isinstance(value, list):
        return next((problem for item in value if (problem := _uninjectable(item))), None)
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return "a mapping whose keys are not all strings"
        return next((problem for item in value.values() if (problem := _uninjectable(item))), None)
    return f"a YAML {type(value).__name__} value ({value!r})"


def _with_results_folder(name: str, notebook_path: Path, parameters: dict[str, Any], where: str) -> dict[str, Any]:
    """A run's tables go to results/<its name>/: a run whose notebook's NOTEBOOK default names another folder (a
    copied chapter, or another run of the same notebook) is given ``NOTEBOOK: <its name>``, so that copying a chapter
    needs no edit of its parameters cell; a NOTEBOOK given in the run plan that names another folder is refused,
    since it would overwrite another run's committed tables."""
    given = parameters.get(RESULTS_FOLDER_PARAMETER)
    if given is not None and given != name:
        raise RunPlanError(f"{where}: its tables would go to results/{given}/, not results/{name}/ (its parameter "
                           f"{RESULTS_FOLDER_PARAMETER} is {given!r}); give {RESULTS_FOLDER_PARAMETER}: {name}, or "
                           "leave it out (the run's name is passed)")
    default = _literal_default(notebook_path, RESULTS_FOLDER_PARAMETER)
    if given is None and default is not None and default != name:
        return {**parameters, RESULTS_FOLDER_PARAMETER: name}
    return parameters


def _literal_default(notebook_path: Path, parameter: str) -> Any:
    """The literal value the notebook's parameters cell assigns to ``parameter``, or None (not assigned, or not a
    literal)."""
    default = declared_defaults(notebook_path).get(parameter)
    return default.value if default is not None else None


@dataclass(frozen=True)
class DeclaredDefault:
    """A parameter's literal default in a notebook's parameters cell, and the values its comment allows: a text
    default whose comment quotes it among other quoted texts (``DATASET = "100k"  # "100k" or "1m"``) allows those
    texts only."""

    value: Any
    allowed: tuple[str, ...] = ()


def declared_defaults(notebook_path: Path) -> dict[str, DeclaredDefault]:
    """The parameters the notebook's parameters cell assigns a Python literal (a default computed by an expression
    is left out: its type is not known before the cell runs); empty when the notebook or its cell cannot be read
    (that is reported where its parameters are read)."""
    import ast
    import io
    import tokenize

    try:
        notebook = read_source_notebook(notebook_path, copy=False)
    except Exception:
        return {}
    cell = next((c for c in notebook.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])),
                None)
    if cell is None:
        return {}
    try:
        tree = ast.parse(cell.source)
        tokens = tokenize.generate_tokens(io.StringIO(cell.source).readline)
        found = [token for token in tokens if token.type == tokenize.COMMENT]
        # a comment beside a value, and whole-line comments (a block of them just above a value documents it)
        comments = ({token.start[0]: token.string for token in found if token.line[:token.start[1]].strip()},
                    {token.start[0]: token.string for token in found if not token.line[:token.start[1]].strip()})
    except (SyntaxError, tokenize.TokenError):
        return {}
    defaults: dict[str, DeclaredDefault] = {}
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        try:
            value = ast.literal_eval(statement.value)
        except ValueError:
            continue
        allowed: tuple[str, ...] = ()
        if isinstance(value, str):
            quoted = [a or b for a, b in _QUOTED.findall(_comment_of(statement, comments))]
            if value in quoted and len(set(quoted)) > 1:
                allowed = tuple(dict.fromkeys(quoted))
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            if isinstance(target, ast.Name):
                defaults.setdefault(target.id, DeclaredDefault(value, allowed))
    return defaults


def _comment_of(statement: Any, comments: tuple[dict[int, str], dict[int, str]]) -> str:
    """The comment that documents a parameter: the one beside it (on its last line), else the block of whole-line
    comments just above it (``comments``: those beside code and those on lines of their own, by line)."""
    beside, whole_line = comments
    if statement.end_lineno in beside:
        return beside[statement.end_lineno]
    block, line = [], statement.lineno - 1
    while line in whole_line:
        block.insert(0, whole_line[line])
        line -= 1
    return " ".join(block)


def _expected_kind(default: Any) -> tuple[tuple[type, ...], str] | None:
    """The types a value may have where the notebook's default is ``default``, and their name for a message; None
    when any value goes (a default of None means "not set", which the notebook decides how to read)."""
    if default is None:
        return None
    if isinstance(default, bool):
        return (bool,), "true or false (bool)"
    if isinstance(default, int):
        return (int,), "a whole number (int)"
    if isinstance(default, float):
        return (int, float), "a number (float)"
    if isinstance(default, str):
        return (str,), "text (str)"
    if isinstance(default, (list, tuple)):
        return (list, tuple), "a list"
    if isinstance(default, dict):
        return (dict,), "a mapping"
    return None


#: The field of a judge's mapping (``JudgeConfig`` fields, as a chapter's ``other_families`` gives them) that names
#: its prompt template.
PROMPT_FIELD = "prompt"


def prompt_problem(value: Any, default: Any) -> str | None:
    """Why ``value`` names no prompt where it must: where the notebook's ``default`` names one (a text that is a
    template's name, or a list of them: each item), or where a judge's mapping (a list's item) names its ``prompt``;
    None otherwise. The chapter would otherwise meet the name only in a cell, as a KeyError."""
    from recjudge.prompts import list_templates

    known = list_templates()

    def named(item: Any, names_a_prompt: bool) -> str | None:
        if isinstance(item, dict) and isinstance(item.get(PROMPT_FIELD), str):
            inner = named(item[PROMPT_FIELD], True)
            return f"field {PROMPT_FIELD!r}: {inner}" if inner else None
        if names_a_prompt and isinstance(item, str) and item not in known:
            return f"{item!r} is not a prompt template (known: {', '.join(known)})"
        return None

    if isinstance(value, list):
        prompts = (isinstance(default, (list, tuple)) and bool(default)
                   and all(isinstance(item, str) and item in known for item in default))
        for position, item in enumerate(value):
            problem = named(item, prompts)
            if problem:
                return f"item {position + 1}: {problem}"
        return None
    return named(value, isinstance(default, str) and default in known)


def parameter_problem(value: Any, default: DeclaredDefault) -> str | None:
    """Why ``value`` does not fit a parameter whose notebook default is ``default`` (its type, the type of every
    element of a list whose default's elements share one, the allowed values, and a prompt's name where one is
    asked for: ``prompt_problem``), or None when it fits. None is always accepted."""
    if value is None:
        return None
    return prompt_problem(value, default.value) or _kind_problem(value, default)


def _kind_problem(value: Any, default: DeclaredDefault) -> str | None:
    if value is None:
        return None
    kind = _expected_kind(default.value)
    if kind is not None:
        types, name = kind
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            hint = " (write it without quotes)" if isinstance(value, str) and int in types else ""
            return (f"{value!r} is {type(value).__name__}, but the notebook's default {default.value!r} makes it "
                    f"{name}{hint}")
        if isinstance(default.value, (list, tuple)) and default.value:
            element_types = {type(item) for item in default.value}
            if len(element_types) == 1 and not isinstance(default.value[0], (list, tuple, dict)):
                for position, item in enumerate(value):
                    problem = _kind_problem(item, DeclaredDefault(default.value[0]))
                    if problem:
                        return f"item {position + 1}: {problem}"
    if default.allowed and value not in default.allowed:
        return f"{value!r} is not one of the values the notebook allows: {', '.join(map(repr, default.allowed))}"
    return None


def _check_parameters(notebook_path: Path, parameters: dict[str, Any], where: str, notebook: str) -> None:
    """Parameter values papermill can write, under names the notebook's parameters cell declares, of the type of
    the default it gives them (``parameter_problem``), so that a wrong value is answered here with the parameter's
    name rather than by an error deep in a cell."""
    for key, value in parameters.items():
        problem = _uninjectable(value)
        if problem:
            raise RunPlanError(f"{where}, {key!r}: {problem} (papermill writes parameters into the "
                               "notebook as Python literals: strings, numbers, booleans, null, and lists or mappings "
                               "of those; quote a date or a value YAML reads as something else)")
    if parameters:
        declared = _declared_parameters(notebook_path, where)
        undeclared = sorted(set(parameters) - set(declared))
        if undeclared:
            raise RunPlanError(f"{where}: {undeclared} not in the parameters cell of {notebook} "
                               f"(it declares {sorted(declared) or 'nothing'})")
        defaults = declared_defaults(notebook_path)
        for key, value in parameters.items():
            problem = parameter_problem(value, defaults[key]) if key in defaults else None
            if problem:
                raise RunPlanError(f"{where}, parameter {key!r}: {problem}")


#: Source notebooks read in this process: resolved path -> ((size, mtime), notebook). The run plan's checks read each
#: chapter's notebook several times (its parameters, their defaults, every run of it), and reading a MyST text
#: notebook (jupytext, then nbformat's schema check of every cell) is what made loading the plan take seconds.
_READ: dict[Path, tuple[tuple[int, int], Any]] = {}


def read_source_notebook(path: Path, *, copy: bool = True):
    """A source notebook as an nbformat v4 notebook: an ``.ipynb`` file, or a MyST markdown text notebook (``.md``,
    read with jupytext), the form in which a chapter's prose and code diff, grep and review as text. Each call
    returns a notebook of its own (a copy of the one read, which is read again when the file changes); ``copy=False``
    returns the one held, for a caller that only reads it."""
    import copy as copying

    import nbformat

    resolved = Path(path).resolve()
    stamp = _stamp(resolved)
    held = _READ.get(resolved)
    if held is None or held[0] != stamp:
        if resolved.suffix == ".md":
            import jupytext

            notebook = jupytext.read(resolved, fmt="md:myst")
            for position, cell in enumerate(notebook.cells):  # stable ids, so an executed chapter is reproducible
                cell["id"] = f"cell-{position}"
        else:
            notebook = nbformat.read(str(resolved), as_version=4)
        held = _READ[resolved] = (stamp, notebook)
    return copying.deepcopy(held[1]) if copy else held[1]


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


#: What papermill's inspection found in a notebook's parameters cell, per (resolved path, size and mtime): writing
#: a MyST notebook out as .ipynb for papermill (nbformat checks every cell against its schema) was, once per run of
#: the plan, the slowest part of loading it.
_INSPECTED: dict[tuple[Path, tuple[int, int]], dict[str, Any]] = {}


def _declared_parameters(notebook_path: Path, where: str) -> dict[str, Any]:
    """Names the notebook's ``parameters`` cell assigns (name -> papermill's inspection of it, or None).

    papermill's own inspection (``papermill.inspect_notebook``) skips every line holding more than one ``=``, so a
    parameter documented as ``MAX_INTERVALS = None   # None = every interval`` would be missing; the cell is
    therefore read with Python's parser (every name bound at the cell's top level counts) and papermill's
    inspection only adds its details. A cell that is not plain Python (e.g. an IPython magic) falls back to
    papermill's inspection alone."""
    import logging

    import nbformat
    import papermill

    # papermill warns about each line it skips ("Unable to parse line ..."); those lines are read below, so the
    # warning only confuses the reader of `recjudge run`.
    translators = logging.getLogger("papermill.translators")
    level = translators.level
    translators.setLevel(logging.ERROR)
    try:
        notebook = read_source_notebook(notebook_path, copy=False)
        memo = (Path(notebook_path).resolve(), _stamp(Path(notebook_path)))
        if memo in _INSPECTED:
            inspected = _INSPECTED[memo]
        elif notebook_path.suffix == ".ipynb":
            inspected = _INSPECTED[memo] = papermill.inspect_notebook(str(notebook_path))
        else:
            with tempfile.TemporaryDirectory() as folder:  # papermill inspects .ipynb files only
                converted = Path(folder) / "notebook.ipynb"
                nbformat.write(notebook, converted)
                inspected = _INSPECTED[memo] = papermill.inspect_notebook(str(converted))
    except Exception as error:  # unreadable notebook: say which entry points at it
        raise RunPlanError(f"{where}: cannot read the parameters cell of {notebook_path}: {error}") from error
    finally:
        translators.setLevel(level)
    cell = next((c for c in notebook.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])),
                None)
    if cell is None:
        return dict(inspected)
    try:
        names = parameter_names(cell.source)
    except SyntaxError:
        return dict(inspected)
    return {name: inspected.get(name) for name in names}


def parameter_names(source: str) -> list[str]:
    """Names bound at the top level of a parameters cell's source (assignments, annotated and augmented
    assignments, tuple targets), in order of first appearance. Raises SyntaxError for source that is not Python."""
    import ast

    names: list[str] = []

    def add(target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if target.id not in names:
                names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                add(element)
        elif isinstance(target, ast.Starred):
            add(target.value)

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add(node.target)
    return names
