"""The run plan: which notebooks, with which parameters, make up the book (``runplan.yaml``).

``recjudge run`` executes every run with papermill (kernel ``python3``, working directory = project root) into
``book/notebooks/<name>.ipynb``. A run is skipped when its *input fingerprint* is unchanged since its last
successful execution and its output notebook is still the one that execution wrote. The fingerprint covers what can
change a notebook's outputs:

- the source notebook file and the run's parameters;
- the package source (``src/recjudge/**``: Python files, prompt templates, package data);
- the files of every dataset the run declares (sha256 of each registry file found in the dataset folder; a dataset
  that is not available is recorded as ``"missing"``, so fetching it later triggers a re-run);
- the LLM response store: for the book's own runs the committed ``data/llm/**`` (or ``$RECJUDGE_STORE``), for a
  variant's runs also the reader's store ``variants/store/**`` (``recjudge.paths.store_layers``);
- the result tables of the earlier runs it reads (``results_of``), so a summary page re-runs when a chapter's
  numbers change.

Jupyter Book's own execution cache keys only on cell text, which is why the book does not execute notebooks itself.
``recjudge run --jobs N`` executes up to N runs at once, each kernel held to its share of the CPUs' threads; a run
that reads other runs' tables (``results_of``) starts after them. The outputs are those of an execution in order.
Fingerprints live in ``.runplan-cache/`` (git-ignored); a failed run leaves its partially executed notebook in
``.runplan-cache/failed/`` and never overwrites the last good output.

Failed judgments.  Each run's kernel gets env ``RECJUDGE_FAILURE_LOG`` (``.runplan-cache/failures/<run>.jsonl``), to
which every judge job with failed judgments (a server that stopped, refusals, retries run out) appends a line
(``recjudge.llm.report.log_failures``).  A run with failures is executed (its tables leave those judgments out) but
not done: it says how many failed and of which kind, keeps no skip record (the next invocation executes it again and
asks only what is missing), and ``recjudge run`` exits with status 4 unless ``--allow-failures`` is given.

Run plan format::

    runs:
      - name: data_tour                  # output book/notebooks/data_tour.ipynb; used by --only
        notebook: notebooks/data_tour.md
        parameters: {sample_size: 100}      # names must exist in the notebook's `parameters` cell
        datasets: [movielens-latest-small]  # dataset names of recjudge.data.REGISTRY the notebook reads
        timeout: 600                        # optional: seconds allowed per cell
        results_of: [proxy_vs_llm]          # optional: earlier runs whose results/<name>/ tables it reads
        variant: synthetic                  # optional: runs the cells tagged only:synthetic (see cell_selection)
        asks_llm: true                      # optional: the notebook asks an LLM judge (it takes --judge)
        reads_logprobs: true                # optional: a reader's judge plays a role that reads expected scores
                                            #   from token log-probabilities (judges without them are left out)
    profiles:                             # optional: scales of the whole book (recjudge run --profile NAME)
      smoke:                              # profile name -> run name -> parameter overrides
        proxy_vs_llm: {sample_size: 10}

Profiles.  ``default`` is the book as committed and has no overrides (its results are the committed ones); other
profiles (``paper``: the papers' populations; ``smoke``: a few prompts per chapter) override parameters of named
runs, checked against the notebook's parameters cell like the run's own. Resolution: ``load_runplan(profile=P)``;
an unknown profile is an error listing the ones the plan defines. They live in the run plan, not in code, so a
chapter's scales sit beside its default parameters.

The judge convention.  Every chapter that asks an LLM (``asks_llm: true``) takes the judges a reader brings through
ONE parameter, ``judges``: a list of ``recjudge.llm.judge_spec.JudgeSpec.to_parameter()`` dicts (``label``,
``provider``, ``model`` and, when set, ``served_model``, ``base_url``, ``temperature``, ``seed``, ``options``,
``batch``), read back with ``JudgeSpec.from_parameter`` and put into each of the chapter's LLM roles with
``to_config(prompt=..., scoring=..., max_tokens=..., runs=...)``. A chapter asks them beside its own judge(s); the
default of ``judges`` in the notebook is ``[]``, so the committed book passes nothing. At a profile other than
``default`` only the reader's judges are asked: the kernels get env ``RECJUDGE_LLM_ASK_ONLY`` naming them, so the
chapters' own judges take the store's replies and leave the rest out (``recjudge.llm.runner``; each chapter's page in
the variant's book names them, ``variant_book.left_out_judgments``); ``--with-book-judges`` asks them too.
Every job's summary line goes to ``<cache>/jobs/<run>.jsonl`` (env ``RECJUDGE_JOB_LOG``), which ``recjudge run``
sums per judge when it ends (``judge_summary``). ``recjudge run --judge SPEC``
passes ``judges`` to every run that asks an LLM and whose notebook declares it (``with_judges``; every chapter of
the book does); a run that asks an LLM but does not declare it is named and left out of the judged run (papermill
rejects undeclared parameters, and running it would only repeat the default judge under the reader's name); a page
that reads the judged runs' tables (``results_of``) and asks no LLM runs again with them (``with_summaries``), given
``judges`` too when it declares it (the at-a-glance page finds each judge's rows by its label). Such
runs write into a variant (``recjudge.compendium.variants``), never into ``results/`` or ``book/notebooks/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple

import yaml

from recjudge.compendium.kernels import thread_share_environment, use_common_numeric_kernels
from recjudge.paths import RESULTS_ENV, RUN_NAME_ENV, book_store_dir, project_root, results_dir, store_dir, store_layers
from recjudge.stopping import worker_ends_with_its_children

if TYPE_CHECKING:
    import pandas as pd

RUNPLAN_FILE = "runplan.yaml"
CACHE_DIR = ".runplan-cache"
OUTPUT_DIR = Path("book") / "notebooks"
KERNEL_NAME = "python3"
#: Source notebooks: Jupyter JSON, or MyST markdown text read with jupytext.
NOTEBOOK_SUFFIXES = (".ipynb", ".md")
#: Bumped when the fingerprint's composition changes, so old cache entries stop matching.
FINGERPRINT_VERSION = 2

_RUN_FIELDS = {"name", "notebook", "parameters", "datasets", "timeout", "results_of", "variant", "asks_llm",
               "reads_logprobs"}
_TOP_LEVEL = {"runs", "profiles"}
#: The book as committed: no overrides, ever (the committed results are this profile's).
DEFAULT_PROFILE = "default"
#: The parameter through which every chapter that asks an LLM takes the reader's judges (see the module docstring).
JUDGES_PARAMETER = "judges"
_REQUIRED_FIELDS = ("name", "notebook")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_PACKAGE_SUFFIXES = {".py", ".txt", ".yaml", ".yml", ".json"}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class RunPlanError(ValueError):
    """The run plan is malformed; the message names the file, the run entry and the field."""


class RunFailedError(RuntimeError):
    """A notebook of the run plan failed; the message names the notebook and the failing cell."""


@dataclass(frozen=True)
class Run:
    """One entry of the run plan: a notebook executed with one parameter set."""

    name: str
    notebook: str
    parameters: dict[str, Any] = field(default_factory=dict)
    datasets: tuple[str, ...] = ()
    timeout: int | None = None
    results_of: tuple[str, ...] = ()
    variant: str | None = None
    asks_llm: bool = False
    reads_logprobs: bool = False

    def output_path(self, root: Path) -> Path:
        return root / OUTPUT_DIR / f"{self.name}.ipynb"


# --------------------------------------------------------------------------------------------------------------------
# Loading and validation


def load_runplan(path: Path | str | None = None, *, root: Path | None = None,
                 known_datasets: Iterable[str] | None = None, profile: str = DEFAULT_PROFILE) -> list[Run]:
    """Read and validate a run plan, with the parameter overrides of ``profile`` applied (see the module
    docstring). Every problem raises :class:`RunPlanError` naming the file, the entry (index, name and line) and the
    field. ``known_datasets`` defaults to ``recjudge.data.REGISTRY`` when it can be imported."""
    root = Path(root) if root is not None else project_root()
    path = Path(path) if path is not None else root / RUNPLAN_FILE
    document, node = _read_document(path)
    entries = document["runs"]
    if not isinstance(entries, list) or not entries:
        raise RunPlanError(f"{path}: 'runs' must be a non-empty list of run entries")
    lines = _entry_lines(node)
    if known_datasets is None:
        known_datasets = _registry_names()
    known = set(known_datasets) if known_datasets is not None else None

    runs: list[Run] = []
    for index, entry in enumerate(entries):
        where = f"{path}: run #{index + 1}" + (f" (line {lines[index]})" if index < len(lines) else "")
        runs.append(_parse_entry(entry, where, root, known))
    seen: dict[str, int] = {}
    for index, run in enumerate(runs):
        if run.name in seen:
            raise RunPlanError(f"{path}: run #{index + 1}: name {run.name!r} already used by run #{seen[run.name] + 1}"
                               " (names must be unique: they name the output notebook)")
        not_earlier = [name for name in run.results_of if name not in seen]
        if not_earlier:
            raise RunPlanError(f"{path}: run #{index + 1} {run.name!r}: field 'results_of': {not_earlier} must name "
                               "runs listed before it (they write the tables it reads)")
        seen[run.name] = index
    overrides = _profiles(document, path, runs).get(profile)
    if overrides is None:
        raise RunPlanError(f"{path}: unknown profile {profile!r} (--profile); the run plan defines "
                           f"{sorted(_profiles(document, path, runs))}")
    by_name = {run.name: run for run in runs}
    for name, changes in overrides.items():
        _check_parameters(root / by_name[name].notebook, changes,
                          f"{path}: profile {profile!r}, run {name!r}", by_name[name].notebook)
    return [replace(run, parameters={**run.parameters, **overrides.get(run.name, {})}) for run in runs]


def profile_names(path: Path | str | None = None, *, root: Path | None = None) -> list[str]:
    """The profiles a run plan defines (``default`` always), for help texts and messages."""
    root = Path(root) if root is not None else project_root()
    path = Path(path) if path is not None else root / RUNPLAN_FILE
    document, _ = _read_document(path)
    return sorted({DEFAULT_PROFILE, *(document.get("profiles") or {})})


def _read_document(path: Path) -> tuple[dict[str, Any], yaml.Node | None]:
    if not path.is_file():
        raise RunPlanError(f"{path}: run plan not found")
    text = path.read_text(encoding="utf-8")
    try:
        document = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise RunPlanError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(document, dict) or "runs" not in document or not set(document) <= _TOP_LEVEL:
        found = sorted(document) if isinstance(document, dict) else type(document).__name__
        raise RunPlanError(f"{path}: the top level must be a mapping with the key 'runs' and optionally 'profiles' "
                           f"(found {found})")
    return document, node


def _profiles(document: dict[str, Any], path: Path, runs: list[Run]) -> dict[str, dict[str, dict[str, Any]]]:
    """Profile name -> run name -> parameter overrides, checked for shape (the parameter names are checked against
    the notebooks for the profile in use). ``default`` is always there and has no overrides."""
    profiles = document.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise RunPlanError(f"{path}: 'profiles' must map profile names to {{run name: parameter overrides}}")
    names = {run.name for run in runs}
    checked: dict[str, dict[str, dict[str, Any]]] = {DEFAULT_PROFILE: {}}
    for profile, overrides in profiles.items():
        where = f"{path}: profile {profile!r}"
        if not isinstance(profile, str) or not _SAFE_NAME.match(profile):
            raise RunPlanError(f"{where}: a profile name must be a plain name (it names the variant folder)")
        overrides = overrides or {}
        if profile == DEFAULT_PROFILE and overrides:
            raise RunPlanError(f"{where}: must have no overrides (it is the committed book; its results are "
                               "committed)")
        if not isinstance(overrides, dict):
            raise RunPlanError(f"{where}: must map run names to parameter overrides, got {overrides!r}")
        unknown = sorted(set(map(str, overrides)) - names)
        if unknown:
            raise RunPlanError(f"{where}: no run named {unknown} in the run plan")
        for name, changes in overrides.items():
            if not isinstance(changes, dict) or not all(isinstance(key, str) for key in changes) or not changes:
                raise RunPlanError(f"{where}, run {name!r}: must be a non-empty mapping of parameter names to values")
        checked[profile] = overrides
    return checked


def _entry_lines(node: yaml.Node | None) -> list[int]:
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "runs" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _registry_names() -> set[str] | None:
    try:
        from recjudge.data import REGISTRY
    except Exception:  # the data layer may be absent in a partial checkout; dataset names are then not checked
        return None
    return set(REGISTRY)


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


def _parse_entry(entry: Any, where: str, root: Path, known: set[str] | None) -> Run:
    if not isinstance(entry, dict):
        raise RunPlanError(f"{where}: must be a mapping with fields {sorted(_RUN_FIELDS)}, got {entry!r}")
    if isinstance(entry.get("name"), str):
        where = f"{where} {entry['name']!r}"
    unknown = sorted(set(map(str, entry)) - _RUN_FIELDS)
    if unknown:
        raise RunPlanError(f"{where}: unknown field(s) {unknown} (allowed: {sorted(_RUN_FIELDS)})")
    for name in _REQUIRED_FIELDS:
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise RunPlanError(f"{where}: field '{name}' is required and must be a non-empty string")
    name = entry["name"]
    if not _SAFE_NAME.match(name):
        raise RunPlanError(f"{where}: field 'name' must be a plain file name (letters, digits, '_', '-', '.')")

    notebook = entry["notebook"]
    notebook_path = (root / notebook).resolve()
    if notebook_path.suffix not in NOTEBOOK_SUFFIXES:
        raise RunPlanError(f"{where}: field 'notebook' must name an .ipynb file or a MyST markdown notebook (.md), "
                           f"got {notebook!r}")
    if not notebook_path.is_relative_to(root.resolve()):
        raise RunPlanError(f"{where}: field 'notebook' must lie inside the project, got {notebook!r}")
    if not notebook_path.is_file():
        raise RunPlanError(f"{where}: field 'notebook': {notebook} does not exist")

    parameters = entry.get("parameters") or {}
    if not isinstance(parameters, dict) or not all(isinstance(key, str) for key in parameters):
        raise RunPlanError(f"{where}: field 'parameters' must be a mapping of parameter names to values")
    _check_parameters(notebook_path, parameters, f"{where}: field 'parameters'", notebook)
    parameters = _with_results_folder(name, notebook_path, parameters, where)

    datasets = entry.get("datasets") or []
    if not isinstance(datasets, list) or not all(isinstance(item, str) for item in datasets):
        raise RunPlanError(f"{where}: field 'datasets' must be a list of dataset names")
    if known is not None:
        unknown_sets = sorted(set(datasets) - known)
        if unknown_sets:
            raise RunPlanError(f"{where}: field 'datasets': unknown dataset(s) {unknown_sets} "
                               f"(known: {sorted(known)})")

    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        raise RunPlanError(f"{where}: field 'timeout' must be a positive whole number of seconds, got {timeout!r}")
    results_of = entry.get("results_of") or []
    if not isinstance(results_of, list) or not all(isinstance(item, str) for item in results_of):
        raise RunPlanError(f"{where}: field 'results_of' must be a list of run names")
    variant = entry.get("variant")
    if variant is not None and (not isinstance(variant, str) or not _SAFE_NAME.match(variant)):
        raise RunPlanError(f"{where}: field 'variant' must be a plain name (cells tagged only:<variant> run in it)")
    flags = {}
    for flag in ("asks_llm", "reads_logprobs"):
        flags[flag] = entry.get(flag, False)
        if not isinstance(flags[flag], bool):
            raise RunPlanError(f"{where}: field {flag!r} must be true or false, got {flags[flag]!r}")
    return Run(name=name, notebook=notebook, parameters=dict(parameters), datasets=tuple(datasets), timeout=timeout,
               results_of=tuple(results_of), variant=variant, **flags)


#: The parameter naming a chapter's results folder (``save_table(table, NOTEBOOK, name)``).
RESULTS_FOLDER_PARAMETER = "NOTEBOOK"


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


_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def declared_defaults(notebook_path: Path) -> dict[str, DeclaredDefault]:
    """The parameters the notebook's parameters cell assigns a Python literal (a default computed by an expression
    is left out: its type is not known before the cell runs); empty when the notebook or its cell cannot be read
    (that is reported where its parameters are read)."""
    import ast
    import io
    import tokenize

    try:
        notebook = read_source_notebook(notebook_path)
    except Exception:
        return {}
    cell = next((c for c in notebook.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])),
                None)
    if cell is None:
        return {}
    try:
        tree = ast.parse(cell.source)
        tokens = tokenize.generate_tokens(io.StringIO(cell.source).readline)
        comments = {token.start[0]: token.string for token in tokens if token.type == tokenize.COMMENT}
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
            quoted = [a or b for a, b in _QUOTED.findall(comments.get(statement.end_lineno, ""))]
            if value in quoted and len(set(quoted)) > 1:
                allowed = tuple(dict.fromkeys(quoted))
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            if isinstance(target, ast.Name):
                defaults.setdefault(target.id, DeclaredDefault(value, allowed))
    return defaults


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


def parameter_problem(value: Any, default: DeclaredDefault) -> str | None:
    """Why ``value`` does not fit a parameter whose notebook default is ``default`` (its type, the type of every
    element of a list whose default's elements share one, and the allowed values), or None when it fits. None is
    always accepted."""
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
                    problem = parameter_problem(item, DeclaredDefault(default.value[0]))
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


class JudgedRuns(NamedTuple):
    """``with_judges``: the runs a reader's judges go to (each with its ``judges`` parameter), the LLM runs whose
    notebook does not declare that parameter, and for runs that read log-probabilities, the judges left out of
    them (run name -> judge labels)."""

    accepting: list[Run]
    refusing: list[Run]
    without_logprobs: dict[str, list[str]]


def with_judges(runs: list[Run], judges: list[dict[str, Any]], root: Path) -> JudgedRuns:
    """The runs that ask an LLM, each given ``judges`` (``JudgeSpec.to_parameter()`` dicts) as its ``judges``
    parameter, and the runs that ask an LLM but whose notebook does not declare that parameter yet (papermill would
    reject it), which are left out. Runs that ask no LLM are neither: a judge changes nothing in them. A run marked
    ``reads_logprobs`` gets only the judges whose replies carry log-probabilities (``JudgeSpec.gives_logprobs``); left
    with none, it is left out too."""
    from recjudge.llm.judge_spec import JudgeSpec

    accepting, refusing, without_logprobs = [], [], {}
    declared: dict[str, dict[str, Any]] = {}
    for run in runs:
        if not run.asks_llm:
            continue
        if run.notebook not in declared:
            declared[run.notebook] = _declared_parameters((root / run.notebook).resolve(), f"run {run.name!r}")
        if JUDGES_PARAMETER not in declared[run.notebook]:
            refusing.append(run)
            continue
        given = list(judges)
        if run.reads_logprobs:
            given = [judge for judge in judges if JudgeSpec.from_parameter(judge).gives_logprobs()]
            if len(given) < len(judges):
                without_logprobs[run.name] = [judge["label"] for judge in judges if judge not in given]
        if given:
            accepting.append(replace(run, parameters={**run.parameters, JUDGES_PARAMETER: given}))
    return JudgedRuns(accepting, refusing, without_logprobs)


def with_summaries(runs: list[Run], judged: list[Run], judges: list[dict[str, Any]], root: Path) -> list[Run]:
    """The judged runs and, in the run plan's order, the pages that read their tables (``results_of``) and ask no
    LLM themselves (the at-a-glance page): a judge changes their numbers through the tables they read. A page whose
    notebook declares the ``judges`` parameter gets every judge of ``judges``, to find each one's rows."""
    chosen = {run.name: run for run in judged}
    for run in runs:
        if not run.asks_llm and set(run.results_of) & set(chosen):
            declared = _declared_parameters((root / run.notebook).resolve(), f"run {run.name!r}")
            chosen[run.name] = (replace(run, parameters={**run.parameters, JUDGES_PARAMETER: list(judges)})
                                if JUDGES_PARAMETER in declared else run)
    return [chosen[run.name] for run in runs if run.name in chosen]


def read_source_notebook(path: Path):
    """A source notebook as an nbformat v4 notebook: an ``.ipynb`` file, or a MyST markdown text notebook (``.md``,
    read with jupytext), the form in which a chapter's prose and code diff, grep and review as text."""
    import nbformat

    if Path(path).suffix == ".md":
        import jupytext

        notebook = jupytext.read(path, fmt="md:myst")
        for position, cell in enumerate(notebook.cells):  # stable ids, so an executed chapter is reproducible
            cell["id"] = f"cell-{position}"
        return notebook
    return nbformat.read(str(path), as_version=4)


def _declared_parameters(notebook_path: Path, where: str) -> dict[str, Any]:
    """Names the notebook's ``parameters`` cell assigns (name -> papermill's inspection of it, or None).

    papermill's own inspection (``papermill.inspect_notebook``) skips every line holding more than one ``=``, so a
    parameter documented as ``MAX_INTERVALS = None   # None = every interval`` would be missing; the cell is
    therefore read with Python's parser (every name bound at the cell's top level counts) and papermill's
    inspection only adds its details. A cell that is not plain Python (e.g. an IPython magic) falls back to
    papermill's inspection alone."""
    import logging
    import tempfile

    import nbformat
    import papermill

    # papermill warns about each line it skips ("Unable to parse line ..."); those lines are read below, so the
    # warning only confuses the reader of `recjudge run`.
    translators = logging.getLogger("papermill.translators")
    level = translators.level
    translators.setLevel(logging.ERROR)
    try:
        notebook = read_source_notebook(notebook_path)
        if notebook_path.suffix == ".ipynb":
            inspected = papermill.inspect_notebook(str(notebook_path))
        else:
            with tempfile.TemporaryDirectory() as folder:  # papermill inspects .ipynb files only
                converted = Path(folder) / "notebook.ipynb"
                nbformat.write(notebook, converted)
                inspected = papermill.inspect_notebook(str(converted))
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


# --------------------------------------------------------------------------------------------------------------------
# Fingerprints


class FileHasher:
    """sha256 of files, memoised on (size, mtime) in a JSON file so that large data files are read once."""

    def __init__(self, memo_path: Path | None = None) -> None:
        self.memo_path = memo_path
        self._memo: dict[str, list[Any]] = {}
        if memo_path is not None and memo_path.is_file():
            try:
                self._memo = json.loads(memo_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._memo = {}  # a damaged memo only costs re-hashing

    def __call__(self, path: Path) -> str:
        stat = path.stat()
        key = str(path.resolve())
        cached = self._memo.get(key)
        if cached and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
            return cached[2]
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        value = digest.hexdigest()
        self._memo[key] = [stat.st_size, stat.st_mtime_ns, value]
        return value

    def entries(self) -> dict[str, list[Any]]:
        """The memo (path -> size, mtime, sha256), to hand to another hasher's :meth:`merge`."""
        return dict(self._memo)

    def merge(self, entries: dict[str, list[Any]]) -> None:
        self._memo.update(entries)

    def save(self) -> None:
        if self.memo_path is not None:
            _write_json_atomic(self.memo_path, self._memo)


def _tree_digest(folder: Path, hasher: Callable[[Path], str], suffixes: set[str] | None = None) -> str:
    """One sha256 over the relative paths and contents of every file below ``folder`` (``"absent"`` if none).
    Hidden files and folders (lock files, ``.gitignore``) and ``__pycache__`` do not hold inputs and are left out."""
    if not folder.is_dir():
        return "absent"
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") or part == "__pycache__"
                               for part in p.relative_to(folder).parts)
                   and (suffixes is None or p.suffix in suffixes))
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0{hasher(path)}\n".encode())
    return digest.hexdigest() if files else "absent"


def dataset_fingerprint(name: str, hasher: Callable[[Path], str]) -> dict[str, str] | str:
    """sha256 of each registry file of dataset ``name`` in its folder (``"absent"`` for a file not there), or
    ``"missing"`` when the dataset is not available or the data layer cannot say where it is."""
    try:
        from recjudge.data import REGISTRY, dataset_dir

        folder = Path(dataset_dir(name))
    except Exception:  # MissingDataError, or a data layer that cannot be imported: either way nothing to hash
        return "missing"
    spec = REGISTRY.get(name)
    declared = [file.path for file in getattr(spec, "files", ())]
    if not declared:  # registry without a file list: take the folder as it is
        return {"*": _tree_digest(folder, hasher)}
    return {path: hasher(folder / path) if (folder / path).is_file() else "absent" for path in sorted(declared)}


def fingerprint(run: Run, root: Path, hasher: Callable[[Path], str] | None = None) -> dict[str, Any]:
    """The inputs that decide a run's outputs, as a JSON-serialisable mapping (see the module docstring)."""
    hasher = hasher or FileHasher()
    return {
        "version": FINGERPRINT_VERSION,
        "notebook": hasher(root / run.notebook),
        "parameters": json.loads(json.dumps(run.parameters, sort_keys=True, default=str)),
        "timeout": run.timeout,
        "variant": run.variant,
        "package": _tree_digest(root / "src" / "recjudge", hasher, _PACKAGE_SUFFIXES),
        "datasets": {name: dataset_fingerprint(name, hasher) for name in sorted(run.datasets)},
        "store": store_fingerprint(root, hasher),
        "results": {name: _tree_digest(results_dir() / name, hasher) for name in sorted(run.results_of)},
        # Which judges are asked (a reader's judge alone, or with the book's): only when limited, so the book's
        # own records keep matching
        **({"asks_only": asks_only} if (asks_only := os.environ.get(ASK_ONLY_ENV, "").strip()) else {}),
    }


def store_fingerprint(root: Path, hasher: Callable[[Path], str]) -> str:
    """The response store a run stands on: for the book's own runs the committed store (or $RECJUDGE_STORE), so a
    reader's own replies (``variants/store``) never make the book stale; for a variant's runs (tables outside
    ``results/``) every layer it reads."""
    if results_dir().resolve() == (root / "results").resolve():
        return _tree_digest(book_store_dir(), hasher)
    return "+".join(_tree_digest(folder, hasher) for folder in store_layers())


def fingerprint_hash(components: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(components, sort_keys=True).encode()).hexdigest()


def changed_components(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Names of the fingerprint components that differ (all of them when there is no previous record)."""
    if not old:
        return ["no previous run"]
    old_components = old.get("components", {})
    return [key for key in new if old_components.get(key) != new[key]]


# --------------------------------------------------------------------------------------------------------------------
# Execution


@dataclass
class RunOutcome:
    run: Run
    status: str  # "executed" | "skipped"
    seconds: float
    reason: str
    #: judgments that failed while the run executed (each job's line of its failure log: judge, count, kinds)
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n_failed_judgments(self) -> int:
        return sum(int(line["n_failed"]) for line in self.failures)


@dataclass(frozen=True)
class Target:
    """Where an execution of the run plan goes: the executed notebooks, the skip records, and the environment its
    kernels get (``RECJUDGE_RESULTS`` for a variant's tables). ``plan_logs``: a plan pass, whose kernels run the
    engine in its dry-run mode, each run's job lines in ``plan_logs/<run>.jsonl`` (``compendium.variants``)."""

    notebooks: Path
    cache: Path
    environment: tuple[tuple[str, str], ...] = ()
    plan_logs: Path | None = None
    #: the profile of the runs, and the runs whose parameters it changes: whether a run's local judges reuse the
    #: prompt prefix depends on both (``recjudge.llm.prefix_reuse.reuses_prefix``)
    profile: str = DEFAULT_PROFILE
    rescaled: frozenset[str] = frozenset()

    @classmethod
    def book(cls, root: Path) -> "Target":
        """The committed book: ``book/notebooks/`` and ``.runplan-cache/``; tables to ``results_dir()``."""
        return cls(root / OUTPUT_DIR, root / CACHE_DIR)

    def output_path(self, run: Run) -> Path:
        return self.notebooks / f"{run.name}.ipynb"

    def failure_log(self, run: Run) -> Path:
        """Where the engine's jobs in ``run``'s kernel record failed judgments (``recjudge.llm.report``)."""
        return self.cache / "failures" / f"{run.name}.jsonl"

    def job_log(self, run: Run) -> Path:
        """Where the engine's jobs in ``run``'s kernel write their summary lines (``recjudge.llm.report.log_job``)."""
        return job_log_path(self.cache, run.name)

    def run_environment(self, run: Run) -> dict[str, str]:
        from recjudge.llm.prefix_reuse import PREFIX_REUSE_ENV, reuses_prefix
        from recjudge.llm.report import FAILURE_LOG_ENV, JOB_LOG_ENV

        # save_table writes results/<name>/ only; the engine's jobs log their failed judgments and their summaries
        environment = {**dict(self.environment), RUN_NAME_ENV: run.name, FAILURE_LOG_ENV: str(self.failure_log(run)),
                       JOB_LOG_ENV: str(self.job_log(run))}
        # "0" too, so that a value in the calling shell never decides a run's store keys
        environment[PREFIX_REUSE_ENV] = "1" if reuses_prefix(run.name, self.profile,
                                                             rescaled=run.name in self.rescaled) else "0"
        if self.plan_logs is not None:
            from recjudge.compendium.variants import PLAN_LOG_ENV, PLAN_MODE, plan_log_path

            environment.update({MODE_ENV: PLAN_MODE, PLAN_LOG_ENV: str(plan_log_path(self.plan_logs, run.name))})
        return environment


def job_log_path(cache: Path, run_name: str) -> Path:
    """The job summaries of a run's last execution, under a target's skip-record folder (``Target.job_log``)."""
    return Path(cache) / "jobs" / f"{run_name}.jsonl"


#: Exit status of ``recjudge run`` when judgments failed (``--allow-failures``: 0), as ``recjudge judge``'s.
EXIT_FAILED_JUDGMENTS = 4
#: The engine's mode variable (``recjudge.llm.runner``), named here so that importing the run plan stays light.
MODE_ENV = "RECJUDGE_LLM_MODE"
#: The engine's variable naming the only judges asked (``recjudge.llm.ask_options.ASK_ONLY_ENV``), likewise.
ASK_ONLY_ENV = "RECJUDGE_LLM_ASK_ONLY"


@contextmanager
def _environment(values: dict[str, str]):
    """``values`` in ``os.environ`` (for the kernels started meanwhile), the previous values restored after."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class RunCache:
    """Per-run records of the last successful execution, one JSON file each under ``<cache>/runs/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def record_path(self, run: Run) -> Path:
        return self.folder / "runs" / f"{run.name}.json"

    def load(self, run: Run) -> dict[str, Any] | None:
        path = self.record_path(run)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def store(self, run: Run, record: dict[str, Any]) -> None:
        _write_json_atomic(self.record_path(run), record)


def _write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def execute_notebook(run: Run, root: Path, output: Path, failed_copy: Path, *, plan: bool = False) -> None:
    """Execute ``run`` with papermill into ``output``. The notebook is written to a temporary file first, so a failure
    never replaces the last good output; the partial notebook is kept at ``failed_copy`` for inspection. ``plan``: a
    plan pass, which stops after the chapter's last judge call (``cell_selection.notebook_for_plan``)."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from recjudge.compendium.cell_selection import notebook_for_available_data, notebook_for_plan, notebook_for_variant

    output.parent.mkdir(parents=True, exist_ok=True)
    # Names of this run's own (two runs of one chapter never share them), removed however the run ends.
    temporary = _private_path(output, ".running.ipynb")
    source = root / run.notebook
    original = read_source_notebook(source)
    # The plan's end first: it is a position in the chapter, whichever cells the variant or the data leave out
    selected, missing = notebook_for_available_data(
        notebook_for_variant(notebook_for_plan(original) if plan else original, run.variant), run.datasets)
    selecting = selected is not original or source.suffix != ".ipynb"
    if selecting:  # execute a copy with the cells of this variant whose data are present (compendium.cell_selection)
        source = _private_path(output, ".selected-cells.ipynb")
        nbformat.write(selected, source)
    try:
        papermill.execute_notebook(
            str(source), str(temporary), parameters=dict(run.parameters), kernel_name=KERNEL_NAME,
            cwd=str(root), progress_bar=False, log_output=False, execution_timeout=run.timeout,
        )
    except PapermillExecutionError as error:
        _keep_failed(temporary, failed_copy)
        frames = [_ANSI.sub("", entry) for entry in (error.traceback or [])]
        # The frame inside the notebook's own cell says which line failed; the full traceback is in the copy.
        cell_frames = [frame for frame in frames if frame.lstrip().startswith("Cell In[")]
        where = cell_frames[-1] if cell_frames else "\n".join(frames[-1:])
        raise RunFailedError(
            f"run {run.name!r}: notebook {run.notebook} failed in cell In[{error.exec_count}] (cell index "
            f"{error.cell_index} of the executed notebook): {error.ename}: {error.evalue}\n{where.rstrip()}\n"
            f"full traceback in the partially executed notebook {failed_copy}") from error
    except Exception as error:  # kernel death, cell timeout, unreadable notebook...
        _keep_failed(temporary, failed_copy)
        raise RunFailedError(f"run {run.name!r}: notebook {run.notebook} could not be executed: "
                             f"{type(error).__name__}: {error}") from error
    else:
        _remove_injected_parameters(temporary)
        os.replace(temporary, output)
    finally:
        if selecting:
            source.unlink(missing_ok=True)
        temporary.unlink(missing_ok=True)  # an interrupted run leaves nothing behind


def _remove_injected_parameters(path: Path) -> None:
    """Tag papermill's "# Parameters" cell ``remove-cell``: it is plumbing, not part of the chapter's page (the
    chapter's opening box says what the run is; the run plan holds its parameters). Its random cell id becomes a
    fixed one, so that an executed chapter is reproducible like its source's cells."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    injected = [cell for cell in notebook.cells if "injected-parameters" in cell.metadata.get("tags", [])]
    for position, cell in enumerate(injected):
        if "remove-cell" not in cell.metadata["tags"]:
            cell.metadata["tags"].append("remove-cell")
        if "id" in cell:
            cell["id"] = f"injected-parameters-{position}"
    if injected:
        nbformat.write(notebook, path)


#: What papermill and the kernel record about an execution rather than its content: timestamps, durations and the
#: private file names of the run (notebook metadata ``papermill``; each cell's ``execution`` and ``papermill``).
_EXECUTION_RECORDS = ("papermill", "execution")


def executed_content(path: Path) -> str:
    """An executed notebook without what records its execution (``_EXECUTION_RECORDS``): its cells' sources and
    outputs and the rest of the metadata, as nbformat writes them. Two executions that computed the same give the same
    text (the notebooks in ``book/notebooks/`` themselves differ in their timestamps)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for metadata in (notebook.metadata, *(cell.metadata for cell in notebook.cells)):
        for name in _EXECUTION_RECORDS:
            metadata.pop(name, None)
    return nbformat.writes(notebook)


def _private_path(output: Path, suffix: str) -> Path:
    """A new hidden file beside ``output`` whose name no other run uses."""
    handle, name = tempfile.mkstemp(prefix=f".{output.stem}.", suffix=suffix, dir=output.parent)
    os.close(handle)
    return Path(name)


def _keep_failed(temporary: Path, failed_copy: Path) -> None:
    if temporary.exists():
        failed_copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(temporary), failed_copy)


def execute_plan(runs: list[Run], root: Path, *, force: bool = False, log: Callable[[str], None] = print,
                 target: Target | None = None, jobs: int = 1) -> list[RunOutcome]:
    """Execute (or skip) each run in order into ``target`` (default: the committed book); stop at the first failure,
    keeping what already succeeded. ``jobs`` > 1: up to that many runs at once (``_execute_at_once``)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of at least 1, got {jobs!r}")
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    outcomes: list[RunOutcome] = []
    restore_environment = use_common_numeric_kernels()  # the same results on AVX2 and AVX-512 machines
    try:
        if jobs > 1:
            outcomes = _execute_at_once(runs, root, target, hasher, force, log, jobs)
        else:
            for run in runs:
                with _environment(target.run_environment(run)):
                    outcomes.append(_execute_run(run, root, target, cache, hasher, force, log))
    finally:
        hasher.save()
        restore_environment()
    return outcomes


@dataclass
class _RunReport:
    """What a worker of ``_execute_at_once`` hands back: the run's outcome or its error, its log lines, and the file
    hashes it computed (for the caller's memo)."""

    outcome: RunOutcome | None
    error: Exception | None
    lines: list[str]
    file_hashes: dict[str, list[Any]]


def _execute_at_once(runs: list[Run], root: Path, target: Target, hasher: FileHasher, force: bool,
                     log: Callable[[str], None], jobs: int) -> list[RunOutcome]:
    """``recjudge run --jobs N``: up to ``jobs`` runs at once, each in a worker process (its own ``os.environ``, which
    its kernel inherits), in the run plan's order as workers free up. A run that reads other runs' tables
    (``results_of``) starts once those of them in ``runs`` have ended. Each kernel gets its share of the CPUs'
    threads (``kernels.thread_share_environment``). A run's log lines are printed together when it ends, so runs
    going at once do not interleave. As in order: after a failure no run starts, the runs already going finish and
    keep their work, and the first failure is raised."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    position = {run.name: index for index, run in enumerate(runs)}
    for run in runs:
        later = [name for name in run.results_of if position.get(name, -1) > position[run.name]]
        if later:
            raise RunPlanError(f"run {run.name!r}: 'results_of' {later} must come before it in the runs executed")
    threads = thread_share_environment(jobs)
    waiting = list(runs)
    ended: dict[str, RunOutcome] = {}
    running: dict[Future, Run] = {}
    failure: Exception | None = None
    # "spawn": a fresh interpreter per worker; forking a process that may hold threads (the store's, papermill's) is
    # unsafe.
    # Each worker ignores Ctrl-C and, when ended, ends its kernels with it (recjudge.stopping).
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=worker_ends_with_its_children) as pool:
        try:
            while waiting or running:
                ready = [run for run in waiting if all(name in ended for name in run.results_of if name in position)]
                for run in ready[:jobs - len(running)] if failure is None else ():
                    waiting.remove(run)
                    log(f"[run] {run.name}: started")
                    running[pool.submit(_execute_run_alone, run, root, target, force, threads)] = run
                if not running:  # a failure: what has not started stays so
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda future: position[running[future].name]):
                    run = running.pop(future)
                    report = future.result()
                    for line in report.lines:
                        log(line)
                    hasher.merge(report.file_hashes)
                    if report.error is not None:
                        failure = failure or report.error
                    else:
                        ended[run.name] = report.outcome
        except BaseException:
            # Ctrl-C, SIGTERM (recjudge.stopping.Terminated) or a broken pool: end the workers and their kernels
            # now, so that none goes on writing a chapter after `recjudge run` has ended.
            workers = list((pool._processes or {}).values())
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.join(timeout=30)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    if failure is not None:
        raise failure
    return [ended[run.name] for run in runs]


def _execute_run_alone(run: Run, root: Path, target: Target, force: bool, threads: dict[str, str]) -> _RunReport:
    """One run in a worker process of ``_execute_at_once``, in its target's environment and thread share."""
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    lines: list[str] = []
    try:
        with _environment({**threads, **target.run_environment(run)}):
            outcome = _execute_run(run, root, target, cache, hasher, force, lines.append)
    except Exception as error:  # handed to the caller, which raises it as an execution in order would
        return _RunReport(None, error, lines, hasher.entries())
    return _RunReport(outcome, None, lines, hasher.entries())


def _execute_run(run: Run, root: Path, target: Target, cache: RunCache, hasher: FileHasher, force: bool,
                 log: Callable[[str], None]) -> RunOutcome:
    """Execute one run unless its inputs and output are unchanged (called in its target's environment)."""
    started = time.perf_counter()
    output = target.output_path(run)
    before = fingerprint(run, root, hasher)
    record = cache.load(run)
    up_to_date = (record is not None and record.get("hash") == fingerprint_hash(before)
                  and output.is_file() and record.get("output_sha256") == hasher(output))
    if up_to_date and not force:
        log(f"[run] {run.name}: up to date (inputs unchanged), skipped")
        return RunOutcome(run, "skipped", time.perf_counter() - started, "inputs unchanged")
    if force:
        reason = "forced"
    elif record is not None and not output.is_file():
        reason = "output missing"
    else:
        reason = "changed: " + ", ".join(changed_components(record, before) or ["output notebook"])
    log(f"[run] {run.name}: executing {run.notebook} ({reason})")
    if target.plan_logs is not None:  # the engine appends: a fresh log, so the plan counts this execution only
        from recjudge.compendium.variants import plan_log_path

        log_path = plan_log_path(target.plan_logs, run.name)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.unlink(missing_ok=True)
    from recjudge.llm.report import read_failure_log

    failure_log = target.failure_log(run)
    failure_log.parent.mkdir(parents=True, exist_ok=True)
    failure_log.unlink(missing_ok=True)  # the engine appends: this execution's failures only
    target.job_log(run).unlink(missing_ok=True)  # and this execution's job summaries
    execute_notebook(run, root, output, cache.folder / "failed" / f"{run.name}.ipynb",
                     plan=target.plan_logs is not None)
    failures = read_failure_log(failure_log)
    seconds = time.perf_counter() - started
    if failures:
        # No skip record: the next invocation executes the run again and asks what failed.
        outcome = RunOutcome(run, "executed", seconds, reason, failures)
        log(f"[run] {run.name}: executed in {seconds:.1f} s with {_failure_summary(failures)}; its tables leave "
            f"them out -> {_shown(output, root)}")
        return outcome
    # A run in live/auto mode may add replies to the store: record the store as the run left it, so the
    # next invocation does not re-run for its own additions. Other inputs are taken from before the run.
    after = dict(before, store=fingerprint(run, root, hasher)["store"])
    cache.store(run, {"hash": fingerprint_hash(after), "components": after,
                      "output_sha256": hasher(output), "notebook": run.notebook,
                      "executed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    log(f"[run] {run.name}: done in {seconds:.1f} s -> {_shown(output, root)}")
    return RunOutcome(run, "executed", seconds, reason)


def _failure_summary(failures: list[dict[str, Any]]) -> str:
    """"3 failed judgment(s) (2 unreachable, 1 not_asked; first: why)" for the lines of one run's failure log."""
    kinds: dict[str, int] = {}
    for line in failures:
        for kind, count in (line.get("failed_by_kind") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(count)
    total = sum(int(line["n_failed"]) for line in failures)
    first = next((line["first_error"] for line in failures if line.get("first_error")), None)
    return (f"{total} failed judgment(s) ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}"
            + (f"; first: {str(first)[:200]}" if first else "") + ")")


def _shown(path: Path, root: Path) -> Path:
    """``path`` relative to the project when it lies inside it."""
    return path.relative_to(root) if path.is_relative_to(root) else path


def describe_plan(runs: list[Run], root: Path, target: Target | None = None) -> list[dict[str, Any]]:
    """For ``--list``: each run with its state (up to date / would run and why) in ``target``."""
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    rows = []
    for run in runs:
        with _environment(target.run_environment(run)):
            current = fingerprint(run, root, hasher)
        record = cache.load(run)
        output = target.output_path(run)
        if record and record.get("hash") == fingerprint_hash(current) and output.is_file() \
                and record.get("output_sha256") == hasher(output):
            state = "up to date"
        elif record and not output.is_file():
            state = "will run (output missing)"
        else:
            state = "will run (" + (", ".join(changed_components(record, current)) or "output notebook") + ")"
        missing = [name for name, value in current["datasets"].items() if value == "missing"]
        rows.append({"name": run.name, "notebook": run.notebook, "parameters": run.parameters, "state": state,
                     "missing_datasets": missing})
    hasher.save()
    return rows


def executed_from(runs: list[Run], root: Path, target: Target | None = None) -> dict[str, dict[str, str | None]]:
    """For a build's record (``build-info.json``): each run's input fingerprint now (``"fingerprint"``) and the one
    its executed notebook was made from (``"executed"``: the run cache's, None when the run has no record or its
    notebook is not the one that execution wrote). A chapter whose two differ was executed from other sources than
    the checkout's: its page is stale."""
    target = target or Target.book(root)
    cache = RunCache(target.cache)
    hasher = FileHasher(cache.folder / "file-hashes.json")
    states: dict[str, dict[str, str | None]] = {}
    for run in runs:
        with _environment(target.run_environment(run)):
            current = fingerprint_hash(fingerprint(run, root, hasher))
        record = cache.load(run) or {}
        output = target.output_path(run)
        written = output.is_file() and record.get("output_sha256") == hasher(output)
        states[run.name] = {"fingerprint": current, "executed": record.get("hash") if written else None}
    hasher.save()
    return states


# --------------------------------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runplan", type=Path, default=None, metavar="FILE",
                        help=f"run plan file (default: <root>/{RUNPLAN_FILE})")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="execute only this run (repeatable)")
    parser.add_argument("--force", action="store_true", help="execute even when the inputs are unchanged")
    parser.add_argument("--list", action="store_true", help="list the runs and whether each would execute")
    parser.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                        help="execute up to N runs at once (default 1), each kernel with its share of the CPUs' "
                             "threads; a run that reads other runs' tables (results_of) starts after them")
    parser.add_argument("--allow-failures", action="store_true",
                        help=f"exit 0 even when judgments failed (without it: exit status {EXIT_FAILED_JUDGMENTS}); "
                             "a chapter with failures is executed again next time either way")
    judged = parser.add_argument_group(
        "your judge, the whole book", "re-run every chapter that asks an LLM with your judge(s) and/or at another "
        "scale, into variants/<judge>-<profile>/ (git-ignored); the committed results and book are never written")
    judged.add_argument("--judge", action="append", metavar="SPEC",
                        help="provider:model (openai:gpt-4o-mini, anthropic:claude-3-5-haiku, local:/path/model.gguf "
                             "or a local model's name) or a judge file (.yaml); repeatable: several judges")
    judged.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server for an openai:IDENTITY judge")
    judged.add_argument("--served-model", metavar="NAME",
                        help="the name that server knows the weights by (the model in SPEC is then their identity)")
    judged.add_argument("--batch", action="store_true", help="ask through the providers' batch APIs (half price)")
    judged.add_argument("--profile", default=DEFAULT_PROFILE, metavar="NAME",
                        help="scale: default (the committed book), paper (the papers' populations), smoke (a few "
                             "prompts per chapter); defined in the run plan")
    judged.add_argument("--with-book-judges", action="store_true",
                        help="with --judge and a profile other than default, ask the chapters' own judges too (by "
                             "default only your judges are asked; the book's replay what the store holds and their "
                             "missing rows are left out, named on each page)")
    judged.add_argument("--plan", action="store_true",
                        help="ask nothing: execute the chapters with the engine in its dry-run mode and print, per "
                             "chapter and in total, the missing judgments, tokens, cost and time")
    judged.add_argument("--yes", action="store_true",
                        help="confirm a live run estimated above the cost limit (env RECJUDGE_LLM_MAX_USD)")


def _jobs(text: str) -> int:
    """``--jobs``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


class _UsageError(ValueError):
    """Options that do not go together; the message names them."""


@dataclass
class _Invocation:
    """What ``recjudge run`` was asked to do, checked before anything runs."""

    runs: list[Run]
    judges: tuple[Any, ...]
    left_out: list[Run]
    variant: str | None  # None: the committed book
    folder: Path | None
    profile: str = DEFAULT_PROFILE
    #: runs whose parameters the profile changes
    rescaled: frozenset[str] = frozenset()
    #: the only judges asked (``provider:model``): a reader's judges at a profile other than default; () asks all
    ask_only: tuple[str, ...] = ()

    def judge_environment(self) -> tuple[tuple[str, str], ...]:
        return ((ASK_ONLY_ENV, ",".join(self.ask_only)),) if self.ask_only else ()

    def paid(self) -> bool:
        """True when a judge costs money (not a local model, not the reader's own server)."""
        return any(judge.provider != "local" and not judge.own_server() for judge in self.judges)

    def target(self, root: Path, *, confirmed: bool = False) -> Target:
        if self.folder is None:
            return Target.book(root)
        from recjudge.compendium.variants import batch_environment
        from recjudge.llm.estimate import CONFIRM_COST_ENV

        environment = [(RESULTS_ENV, str(self.folder / "results")), *batch_environment(self.judges, wait=False),
                       *self.judge_environment()]
        if confirmed:  # --yes: the chapters' jobs must not refuse what the reader confirmed for the whole run
            environment.append((CONFIRM_COST_ENV, "1"))
        return Target(self.folder / "notebooks", self.folder / CACHE_DIR, tuple(environment), profile=self.profile,
                      rescaled=self.rescaled)

    def plan_target(self, root: Path) -> Target:
        """The plan pass: its own notebooks, tables and skip records, so it never stands in for a real run."""
        from recjudge.compendium.variants import batch_environment, variant_folder, variant_name

        folder = (self.folder or variant_folder(root, variant_name((), DEFAULT_PROFILE))) / "plan"
        environment = ((RESULTS_ENV, str(folder / "results")), *batch_environment(self.judges, wait=True),
                       *self.judge_environment())
        return Target(folder / "notebooks", folder / CACHE_DIR, environment, plan_logs=folder / "logs",
                      profile=self.profile, rescaled=self.rescaled)


def _prepare(args: argparse.Namespace, root: Path) -> _Invocation:
    """Every check that needs no execution, in the order a reader would fix them (raises with one clear message)."""
    from recjudge.compendium.variants import variant_folder, variant_name
    from recjudge.llm.estimate import cost_limit
    from recjudge.llm.judge_spec import parse_judges

    try:  # read now, not after a pricing pass
        cost_limit()
    except ValueError as error:
        raise _UsageError(str(error)) from None
    given = [option for option, value in (("--base-url", args.base_url), ("--served-model", args.served_model),
                                          ("--batch", args.batch)) if value]
    if given and not args.judge:
        raise _UsageError(f"{', '.join(given)} describe(s) a judge: give it with --judge provider:model")
    if args.with_book_judges and not args.judge:
        raise _UsageError("--with-book-judges asks the book's judges beside yours: give yours with --judge "
                          "provider:model (without --judge the book's judges are the ones asked)")
    judges = parse_judges(args.judge or [], base_url=args.base_url, served_model=args.served_model, batch=args.batch)
    runs = load_runplan(args.runplan, root=root, profile=args.profile)
    every_run = {run.name for run in runs}
    rescaled = rescaled_runs(runs, load_runplan(args.runplan, root=root))
    left_out: list[Run] = []
    without_logprobs: dict[str, list[str]] = {}
    if judges:
        judged, left_out, without_logprobs = with_judges(runs, [judge.to_parameter() for judge in judges], root)
        for run_name, labels in without_logprobs.items():
            print(f"note: --judge: {run_name} reads expected scores from token log-probabilities, which "
                  f"{', '.join(labels)} do(es) not return: left out of it", file=sys.stderr)
        if not judged:
            raise _UsageError(f"--judge: no chapter of the run plan can take these judges (chapters that ask an "
                              f"LLM but take no '{JUDGES_PARAMETER}' parameter: {sorted(r.name for r in left_out)}; "
                              f"that read log-probabilities: {sorted(without_logprobs)})")
        runs = with_summaries(runs, judged, [judge.to_parameter() for judge in judges], root)
    if args.only:
        unknown = sorted(set(args.only) - every_run)
        if unknown:
            raise _UsageError(f"--only {unknown}: no such run in the run plan (runs: {sorted(every_run)})")
        refused = sorted(set(args.only) & {run.name for run in left_out})
        if refused:
            raise _UsageError(f"--only {refused} with --judge: these chapters ask an LLM but do not take the "
                              f"'{JUDGES_PARAMETER}' parameter yet")
        unplayable = sorted(set(args.only) - {run.name for run in runs} & set(without_logprobs))
        if unplayable:
            raise _UsageError(f"--only {unplayable} with --judge: these chapters read expected scores from token "
                              "log-probabilities, which no judge given returns")
        no_llm = sorted(set(args.only) - {run.name for run in runs} - set(refused))
        if no_llm:
            raise _UsageError(f"--only {no_llm} with --judge: these chapters ask no LLM and read no judged chapter's "
                              "tables; a judge changes nothing in them")
        runs = [run for run in runs if run.name in set(args.only)]
    # Only a run that may ask needs keys: not a plan, a listing or a replay.
    live = not (args.plan or args.list) and os.environ.get(MODE_ENV, "").strip().lower() != "replay"
    problems = [problem for judge in judges for problem in judge.readiness_problems(live=live)]
    if problems:
        raise _UsageError("\n".join(problems))
    if not judges and args.profile == DEFAULT_PROFILE:
        invocation = _Invocation(runs, judges, left_out, None, None)
    else:
        name = variant_name(judges, args.profile)
        # A reader's judge at another scale is asked alone unless the book's judges are wanted too
        ask_only = (tuple(dict.fromkeys(f"{judge.provider}:{judge.model}" for judge in judges))
                    if judges and args.profile != DEFAULT_PROFILE and not args.with_book_judges else ())
        invocation = _Invocation(runs, judges, left_out, name, variant_folder(root, name), args.profile, rescaled,
                                 ask_only)
    return invocation


def rescaled_runs(runs: Iterable[Run], default_runs: Iterable[Run]) -> frozenset[str]:
    """Names of the runs of a profile (``runs``) whose parameters differ from the default profile's."""
    default = {run.name: run.parameters for run in default_runs}
    return frozenset(run.name for run in runs if run.parameters != default.get(run.name))


def run_command(args: argparse.Namespace) -> int:
    from recjudge.compendium.variants import PlanLogError
    from recjudge.llm.judge_spec import JudgeSpecError

    root = project_root()
    try:
        invocation = _prepare(args, root)
    except (RunPlanError, JudgeSpecError, _UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if invocation.left_out:
        print(f"note: --judge: {len(invocation.left_out)} chapter(s) ask an LLM but do not take the "
              f"'{JUDGES_PARAMETER}' parameter yet, so they are left out of this variant: "
              f"{', '.join(run.name for run in invocation.left_out)}", file=sys.stderr)
    runs = invocation.runs
    if args.list:
        target = invocation.plan_target(root) if args.plan else invocation.target(root)
        for row in describe_plan(runs, root, target):
            missing = f"; datasets missing: {', '.join(row['missing_datasets'])}" if row["missing_datasets"] else ""
            print(f"{row['name']:<32} {row['notebook']:<44} {row['state']}{missing}")
            if row["parameters"]:
                print(f"{'':<32} parameters: {json.dumps(row['parameters'], sort_keys=True)}")
        return 0
    started = time.perf_counter()
    try:
        if args.plan:
            table, by_judge = _plan(invocation, root, force=args.force)
            print(_plan_heading(invocation, args.profile))
            from recjudge.compendium.variants import format_plan

            print(format_plan(table))
            print("\nThe same plan by judge (a judge not asked: what asking it too would take):")
            print(format_plan(by_judge))
            from recjudge.compendium.variants import left_out_line, limit_line, not_fetched_line

            for line in (left_out_line(by_judge), not_fetched_line(by_judge), limit_line(table, invocation.paid())):
                if line:
                    print(line)
            print(f"[plan] priced in {time.perf_counter() - started:.0f} s: each chapter that asks an LLM ran up to "
                  "its last judge call, nothing asked")
            return 0
        if invocation.folder is not None:
            status = _gate_cost(invocation, root, args)
            if status:
                return status
            from recjudge.compendium.variants import describe_variant

            describe_variant(invocation.folder, invocation.judges, args.profile, [run.name for run in runs],
                             [run.name for run in invocation.left_out])
        force = args.force or _collecting_batches(invocation)
        outcomes = execute_plan(runs, root, force=force, target=invocation.target(root, confirmed=args.yes),
                                jobs=args.jobs)
    except RunFailedError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except PlanLogError as error:  # a plan log that breaks the engine's contract
        print(f"error: {error}", file=sys.stderr)
        return 1
    executed = sum(outcome.status == "executed" for outcome in outcomes)
    where = f" -> {_shown(invocation.folder, root)}" if invocation.folder is not None else ""
    print(f"[run] {executed} executed, {len(outcomes) - executed} up to date, "
          f"{time.perf_counter() - started:.1f} s in all{where}")
    with_failures = [outcome for outcome in outcomes if outcome.failures]
    if with_failures:
        print(f"{'warning' if args.allow_failures else 'error'}: judgments failed in "
              f"{len(with_failures)} chapter(s): "
              + "; ".join(f"{outcome.run.name}: {_failure_summary(outcome.failures)}" for outcome in with_failures)
              + ". Their tables leave them out; run again to ask them (stored replies are not asked again)"
              + ("" if args.allow_failures else "; --allow-failures exits 0"), file=sys.stderr)
    _report_batches(invocation)
    summary = judge_summary(outcomes, invocation.target(root))
    if summary:
        print("[run] judges, this run's executed chapters:\n" + summary)
    if invocation.variant is not None:
        print(f"[run] its book: `recjudge book --variant {invocation.variant}` builds "
              f"_build/variants/{invocation.variant}/html (`make book` with the same JUDGE=/PROFILE= runs and "
              "builds in one command)")
    return EXIT_FAILED_JUDGMENTS if with_failures and not args.allow_failures else 0


#: The job-summary counts ``recjudge run`` prints per judge, and their headings.
SUMMARY_COUNTS = {"n_replies_wanted": "judgments", "n_asked": "asked", "n_from_store": "from store",
                  "n_failed": "failed", "n_unparsable": "unparsable", "n_shape_violations": "out of shape",
                  "n_left_out": "left out"}


def judge_summary(outcomes: list[RunOutcome], target: Target) -> str:
    """One line per judge summed over the executed runs' job logs (``recjudge.llm.report.log_job``): judgments
    wanted, asked, from the store, failed, unparsable, out of shape, left out; empty when no judge was asked."""
    import pandas as pd

    from recjudge.llm.report import read_job_log

    lines = [line for outcome in outcomes if outcome.status == "executed"
             for line in read_job_log(target.job_log(outcome.run))]
    if not lines:
        return ""
    frame = pd.DataFrame(lines)
    frame["judge"] = frame["provider"] + ":" + frame["model"]
    table = frame.groupby("judge", sort=False)[list(SUMMARY_COUNTS)].sum().reset_index()
    return table.rename(columns=SUMMARY_COUNTS).to_string(index=False)


def _collecting_batches(invocation: _Invocation) -> bool:
    """True when a batch judge has batches with its provider: the judged chapters run again (their inputs may be
    unchanged) so that their jobs poll them and store what has ended."""
    from recjudge.compendium.variants import pending_batches

    pending = pending_batches(store_dir(), invocation.judges)
    if pending:
        print(f"[run] collecting batches: {_pending_prompts(pending)} were with the provider; the judged chapters "
              "run again to read them")
    return bool(pending)


def _pending_prompts(pending: dict[str, int]) -> str:
    return ", ".join(f"{n:,} prompt(s) of {name}" for name, n in pending.items())


def _report_batches(invocation: _Invocation) -> None:
    """After a --batch pass: what is still with the providers, and that the same command collects it."""
    from recjudge.compendium.variants import pending_batches

    pending = pending_batches(store_dir(), invocation.judges)
    if pending:
        print(f"[run] submitted in one pass, not yet answered: {_pending_prompts(pending)}"
              + ". The variant's tables lack them (NaN) until then: run the same command again later (providers "
              "answer within 24 h) to collect them; chained prompts (least-to-most) need one pass per step.")


def _plan(invocation: _Invocation, root: Path, *, force: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Execute the runs that ask an LLM in the engine's dry-run mode, each up to its last judge call (a page that
    only reads other runs' tables asks nothing, and what a chapter draws after its judges is not needed to count
    them), and sum their job lines by chapter and by judge (``compendium.variants.plan_table``, ``plan_by_judge``);
    both are also written beside the logs, as CSV."""
    from recjudge.compendium.variants import plan_by_judge, plan_log_path, plan_table

    target = invocation.plan_target(root)
    asking = [run for run in invocation.runs if run.asks_llm]
    execute_plan(asking, root, force=force, target=target)
    free = {(judge.provider, judge.model) for judge in invocation.judges if judge.own_server()}
    logs = {run.name: plan_log_path(target.plan_logs, run.name) for run in asking}
    tables = plan_table(logs, free), plan_by_judge(logs, free)
    for table, name in zip(tables, ("plan_by_chapter.csv", "plan_by_judge.csv")):
        table.to_csv(target.plan_logs.parent / name, index=False)
    return tables


def _plan_heading(invocation: _Invocation, profile: str) -> str:
    judges = ", ".join(f"{judge.provider}:{judge.model}" for judge in invocation.judges) or "the chapters' own"
    return (f"Plan (nothing asked): judges {judges}, profile {profile}; estimates (tokens from characters, output at "
            "the reply-length limit, time at the configured concurrency and rate limit)")


def _gate_cost(invocation: _Invocation, root: Path, args: argparse.Namespace) -> int:
    """A live run with a paid judge is priced first (a plan pass) and stops before its first request when the
    estimate is above the limit; 0 to go on. Confirmed (--yes) or replaying, there is nothing to guard."""
    replaying = os.environ.get(MODE_ENV, "").strip().lower() == "replay"
    if not invocation.paid() or args.yes or replaying:
        return 0
    from recjudge.compendium.variants import cost_gate, format_plan

    print("[run] pricing the run before anything is asked (a plan pass)")
    table, _ = _plan(invocation, root)
    print(format_plan(table))
    refusal = cost_gate(table, args.yes)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    return 0
