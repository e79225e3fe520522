"""Reading ``runplan.yaml``: its runs, checked field by field, and its scale profiles; and the judge convention
(``with_judges``, ``with_summaries``) that passes a reader's judges to the runs that ask an LLM.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import yaml

from recjudge.compendium.runplan.parameters import _check_parameters, _declared_parameters, _with_results_folder
from recjudge.compendium.runplan.run import (
    DEFAULT_PROFILE,
    JUDGES_PARAMETER,
    NOTEBOOK_SUFFIXES,
    RUNPLAN_FILE,
    Run,
    RunPlanError,
)
from recjudge.paths import project_root

_RUN_FIELDS = {"name", "notebook", "parameters", "datasets", "timeout", "results_of", "variant", "asks_llm",
               "reads_logprobs"}
_TOP_LEVEL = {"runs", "profiles"}
#: a profile's value for a run it does not run (``check`` leaves out the synthetic demonstrations: they run the same
#: notebooks as their chapters, so a judge asked there proves nothing more)
LEAVE_OUT = "leave out"
LEFT_OUT: Any = object()  # what _profiles records for a run left out
_REQUIRED_FIELDS = ("name", "notebook")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


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
        if changes is not LEFT_OUT:
            _check_parameters(root / by_name[name].notebook, changes,
                              f"{path}: profile {profile!r}, run {name!r}", by_name[name].notebook)
    kept = stand_ins_for_absent_data(runs, {name for name, changes in overrides.items() if changes is LEFT_OUT})
    return [replace(run, parameters={**run.parameters, **overrides.get(run.name, {})})
            if overrides.get(run.name) is not LEFT_OUT else run
            for run in runs if overrides.get(run.name) is not LEFT_OUT or run.name in kept]


def left_out_runs(path: Path | str | None = None, *, root: Path | None = None, profile: str = DEFAULT_PROFILE,
                  runs: list[Run] | None = None) -> set[str]:
    """The runs ``profile`` maps to :data:`LEAVE_OUT`; ``runs``: the plan's runs when already loaded."""
    root = Path(root) if root is not None else project_root()
    path = Path(path) if path is not None else root / RUNPLAN_FILE
    document, _ = _read_document(path)
    runs = runs if runs is not None else load_runplan(path, root=root)
    overrides = _profiles(document, path, runs).get(profile) or {}
    return {name for name, changes in overrides.items() if changes is LEFT_OUT}


def stand_ins_for_absent_data(runs: list[Run], left_out: set[str]) -> dict[str, list[str]]:
    """The runs among ``left_out`` (by a profile) that run all the same, each with the datasets absent here: a run
    of the same notebook that is not left out needs them, so without them its judge calls are not made and this run
    (a synthetic demonstration) is the one that exercises the notebook's judges.  It runs at its default scale."""
    from recjudge.compendium.cell_selection import missing_datasets

    absent = {run.notebook: missing for run in runs if run.name not in left_out and run.datasets
              for missing in [missing_datasets(run.datasets)] if missing}
    return {run.name: absent[run.notebook] for run in runs if run.name in left_out and run.notebook in absent}


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
        overrides = dict(overrides)
        for name, changes in overrides.items():
            if changes == LEAVE_OUT:
                overrides[name] = LEFT_OUT
                continue
            if not isinstance(changes, dict) or not all(isinstance(key, str) for key in changes) or not changes:
                raise RunPlanError(f"{where}, run {name!r}: must be a non-empty mapping of parameter names to values, "
                                   f"or {LEAVE_OUT!r} (not run at this profile)")
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
    from recjudge.llm.judge_spec import JudgeSpec, reader_labels

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
                without_logprobs[run.name] = reader_labels(judge for judge in judges if judge not in given)
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
