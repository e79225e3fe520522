"""The run plan: validation messages, input fingerprints, skipping unchanged runs, papermill execution."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from recjudge.compendium import runplan
from recjudge.compendium.runplan import (
    Run,
    RunFailedError,
    RunPlanError,
    execute_plan,
    fingerprint,
    fingerprint_hash,
    load_runplan,
)


def write_notebook(path: Path, body: str, parameters: str = "value = 1") -> Path:
    """A tiny notebook: a title, a `parameters` cell and one code cell."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Tiny chapter"),
        nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(body),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A minimal project: package source, a notebook, a response store, results folder, all under tmp_path."""
    root = tmp_path / "project"
    (root / "src" / "recjudge").mkdir(parents=True)
    (root / "src" / "recjudge" / "module.py").write_text("ANSWER = 1\n")
    (root / "data" / "llm").mkdir(parents=True)
    (root / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "3"}\n')
    write_notebook(root / "notebooks" / "tiny.ipynb", "print('result', value * 2)")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_STORE", str(root / "data" / "llm"))
    monkeypatch.setenv("RECJUDGE_RESULTS", str(root / "results"))
    return root


def write_plan(root: Path, text: str) -> Path:
    path = root / "runplan.yaml"
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------------------------
# Validation


def test_valid_plan_is_read(project: Path) -> None:
    write_plan(project, "runs:\n  - name: tiny\n    notebook: notebooks/tiny.ipynb\n    parameters: {value: 21}\n"
                        "    datasets: [movielens-latest-small]\n    timeout: 60\n")
    (run,) = load_runplan(root=project, known_datasets={"movielens-latest-small"})
    assert run == Run("tiny", "notebooks/tiny.ipynb", {"value": 21}, ("movielens-latest-small",), 60)
    assert run.output_path(project) == project / "book" / "notebooks" / "tiny.ipynb"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("  - name: tiny\n    notebook: notebooks/absent.ipynb\n",
         "field 'notebook': notebooks/absent.ipynb does not exist"),
        ("  - name: tiny\n    notebook: notebooks/tiny.ipynb\n    paramters: {value: 2}\n",
         "unknown field(s) ['paramters']"),
        ("  - name: tiny\n    notebook: notebooks/tiny.ipynb\n    parameters: {valeu: 2}\n",
         "['valeu'] not in the parameters cell of notebooks/tiny.ipynb (it declares ['value'])"),
        ("  - name: tiny\n    notebook: notebooks/tiny.ipynb\n    datasets: [movielens-huge]\n",
         "unknown dataset(s) ['movielens-huge']"),
        ("  - name: tiny\n    notebook: notebooks/tiny.ipynb\n    timeout: -5\n", "field 'timeout' must be a positive"),
        ("  - notebook: notebooks/tiny.ipynb\n", "field 'name' is required"),
        ("  - name: ../escape\n    notebook: notebooks/tiny.ipynb\n", "field 'name' must be a plain file name"),
        ("  - name: tiny\n    notebook: notebooks/tiny.py\n", "must name an .ipynb file"),
    ],
)
def test_bad_entries_name_file_entry_and_field(project: Path, entry: str, expected: str) -> None:
    # A valid first run, so the faulty entry is #2 and its line is 4.
    plan = write_plan(project, "runs:\n  - name: first\n    notebook: notebooks/tiny.ipynb\n" + entry)
    with pytest.raises(RunPlanError) as caught:
        load_runplan(root=project, known_datasets={"movielens-latest-small"})
    message = str(caught.value)
    assert message.startswith(f"{plan}: run #2 (line 4)")
    assert expected in message


def test_duplicate_names_and_bad_top_level_are_rejected(project: Path) -> None:
    write_plan(project, "runs:\n  - {name: a, notebook: notebooks/tiny.ipynb}\n"
                        "  - {name: a, notebook: notebooks/tiny.ipynb}\n")
    with pytest.raises(RunPlanError, match=r"run #2: name 'a' already used by run #1"):
        load_runplan(root=project, known_datasets=set())
    write_plan(project, "run:\n  - {name: a, notebook: notebooks/tiny.ipynb}\n")
    with pytest.raises(RunPlanError,
                       match=r"runplan.yaml: the top level must be a mapping with the key 'runs' and optionally"):
        load_runplan(root=project, known_datasets=set())
    write_plan(project, "runs: [\n")
    with pytest.raises(RunPlanError, match="not valid YAML"):
        load_runplan(root=project, known_datasets=set())


# ---------------------------------------------------------------------------------------------------------------
# Fingerprints


def test_each_input_changes_the_fingerprint(project: Path) -> None:
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 1})

    def current(of: Run = run) -> str:
        return fingerprint_hash(fingerprint(of, project))

    base = current()
    assert current() == base, "an unchanged run must keep its fingerprint"
    assert current(Run("tiny", "notebooks/tiny.ipynb", {"value": 2})) != base

    changes = [
        lambda: write_notebook(project / "notebooks" / "tiny.ipynb", "print('result', value * 3)"),
        lambda: (project / "src" / "recjudge" / "module.py").write_text("ANSWER = 2\n"),
        lambda: (project / "src" / "recjudge" / "templates.txt").write_text("### user\n{question}\n"),
        lambda: (project / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "4"}\n'),
        lambda: (project / "data" / "llm" / "more.jsonl").write_text('{"key": "b", "reply": "1"}\n'),
    ]
    ignored = [  # lock files and caches are not inputs
        lambda: (project / "data" / "llm" / ".locks").mkdir(),
        lambda: (project / "data" / "llm" / ".locks" / "more.jsonl.lock").write_text(""),
        lambda: (project / "src" / "recjudge" / "__pycache__").mkdir(),
        lambda: (project / "src" / "recjudge" / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\0"),
    ]
    seen = {base}
    for change in changes:
        change()
        value = current()
        assert value not in seen
        seen.add(value)
    settled = current()
    for change in ignored:
        change()
    assert current() == settled


def test_dataset_files_enter_the_fingerprint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import recjudge.data as data

    name = "movielens-latest-small"
    first_file = data.REGISTRY[name].files[0].path
    folder = tmp_path / name
    (folder / first_file).parent.mkdir(parents=True, exist_ok=True)
    (folder / first_file).write_text("a,b\n1,2\n")
    monkeypatch.setattr(data, "dataset_dir", lambda dataset: folder)
    hasher = runplan.FileHasher()
    before = runplan.dataset_fingerprint(name, hasher)
    assert before[first_file] != "absent"
    assert all(value == "absent" for path, value in before.items() if path != first_file)
    (folder / first_file).write_text("a,b\n1,3\n")
    assert runplan.dataset_fingerprint(name, runplan.FileHasher())[first_file] != before[first_file]

    def unavailable(dataset: str) -> Path:
        raise data.MissingDataError(f"{dataset} is not available")

    monkeypatch.setattr(data, "dataset_dir", unavailable)
    assert runplan.dataset_fingerprint(name, hasher) == "missing"


def test_file_hasher_memo_follows_file_changes(tmp_path: Path) -> None:
    memo = tmp_path / "memo.json"
    target = tmp_path / "file.bin"
    target.write_bytes(b"one")
    hasher = runplan.FileHasher(memo)
    first = hasher(target)
    hasher.save()
    target.write_bytes(b"two, longer")
    assert runplan.FileHasher(memo)(target) != first
    assert json.loads(memo.read_text())  # the memo was written and is readable


# ---------------------------------------------------------------------------------------------------------------
# Execution (papermill, real kernel; tiny notebooks)


def test_execute_then_skip_then_rerun_on_store_change(project: Path) -> None:
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    messages: list[str] = []
    (first,) = execute_plan([run], project, log=messages.append)
    assert first.status == "executed"
    executed = nbformat.read(run.output_path(project), as_version=4)
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "result 42" in outputs, "the run's parameter must reach the notebook"
    injected = [cell for cell in executed.cells if "injected-parameters" in cell.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" not in injected[0].metadata["tags"], "the run's values are shown"
    assert injected[0].source.startswith(runplan.RUN_PARAMETERS_HEADING + "\n")

    (second,) = execute_plan([run], project, log=messages.append)
    assert second.status == "skipped"

    (project / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "5"}\n')
    (third,) = execute_plan([run], project, log=messages.append)
    assert third.status == "executed" and "store" in third.reason


def test_failure_names_notebook_and_cell_and_keeps_earlier_runs(project: Path) -> None:
    write_notebook(project / "notebooks" / "broken.ipynb", "raise ValueError('bad column rating_x')")
    good = Run("tiny", "notebooks/tiny.ipynb")
    broken = Run("broken", "notebooks/broken.ipynb")
    broken.output_path(project).parent.mkdir(parents=True, exist_ok=True)
    broken.output_path(project).write_text("last good output")

    with pytest.raises(RunFailedError) as caught:
        execute_plan([good, broken], project, log=lambda message: None)
    message = str(caught.value)
    assert "run 'broken': notebook notebooks/broken.ipynb failed in cell" in message
    assert "ValueError: bad column rating_x" in message
    assert good.output_path(project).is_file()
    assert runplan.RunCache(project / runplan.CACHE_DIR).load(good) is not None, "the successful run is recorded"
    assert broken.output_path(project).read_text() == "last good output", "a failure never replaces the output"
    assert (project / ".runplan-cache" / "failed" / "broken.ipynb").is_file()
    assert runplan.RunCache(project / runplan.CACHE_DIR).load(broken) is None


MYST_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter written as text

```{code-cell} ipython3
:tags: [parameters]

value = 1  # a parameter = documented
```

Prose between the cells.

```{code-cell} ipython3
print('text result', value * 3)
```
"""


def test_a_myst_text_notebook_is_validated_and_executed(project: Path) -> None:
    (project / "notebooks" / "text.md").write_text(MYST_NOTEBOOK)
    write_plan(project, "runs:\n  - name: text\n    notebook: notebooks/text.md\n    parameters: {value: 5}\n")
    (run,) = load_runplan(project / "runplan.yaml", root=project, known_datasets=set())
    (result,) = execute_plan([run], project, log=lambda message: None)
    assert result.status == "executed"
    executed = nbformat.read(run.output_path(project), as_version=4)
    assert executed.cells[0].source == "# A chapter written as text"
    outputs = "".join(output.get("text", "") for cell in executed.cells for output in cell.get("outputs", []))
    assert "text result 15" in outputs
    assert not list((project / "book" / "notebooks").glob(".*")), "no temporary notebook is left behind"
    write_plan(project, "runs:\n  - name: text\n    notebook: notebooks/text.md\n    parameters: {valeu: 5}\n")
    with pytest.raises(RunPlanError, match=r"\['valeu'\] not in the parameters cell of notebooks/text.md"):
        load_runplan(project / "runplan.yaml", root=project, known_datasets=set())


def test_a_notebook_of_another_format_is_refused(project: Path) -> None:
    (project / "notebooks" / "chapter.py").write_text("value = 1\n")
    write_plan(project, "runs:\n  - name: chapter\n    notebook: notebooks/chapter.py\n")
    with pytest.raises(RunPlanError, match="must name an .ipynb file or a MyST markdown notebook"):
        load_runplan(project / "runplan.yaml", root=project, known_datasets=set())


def test_cli_rejects_unknown_only_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_plan(project, "runs:\n  - {name: tiny, notebook: notebooks/tiny.ipynb}\n")
    parser = __import__("argparse").ArgumentParser()
    runplan.add_arguments(parser)
    assert runplan.run_command(parser.parse_args(["--only", "nope"])) == 2
    assert "--only ['nope']: no such run" in capsys.readouterr().err
    assert runplan.run_command(parser.parse_args(["--list"])) == 0
    assert "will run (no previous run)" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------------
# Every notebook parameter can be set from the run plan


def _parameters_cell_namespace(notebook_path: Path) -> dict:
    """Execute a notebook's parameters cell alone and return the names it binds (the oracle the check is held to)."""
    notebook = runplan.read_source_notebook(notebook_path)
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    namespace: dict = {}
    exec(compile(cell.source, str(notebook_path), "exec"), namespace)  # plain assignments of constants
    namespace.pop("__builtins__", None)
    return namespace


@pytest.mark.parametrize("notebook", sorted(p.name for p in (Path(__file__).resolve().parents[1] / "notebooks")
                                                      .iterdir() if p.suffix in runplan.NOTEBOOK_SUFFIXES))
def test_every_parameter_of_every_notebook_is_accepted(notebook: str, tmp_path: Path) -> None:
    import yaml

    root = Path(__file__).resolve().parents[1]
    namespace = _parameters_cell_namespace(root / "notebooks" / notebook)
    assert namespace, f"{notebook}: empty parameters cell"
    parameters = json.loads(json.dumps(namespace, default=list))  # tuples -> lists, as YAML would give them
    plan = tmp_path / "runplan.yaml"
    name = namespace.get("NOTEBOOK", "probe")  # a run's tables go to results/<its name>/
    plan.write_text(yaml.safe_dump({"runs": [{"name": name, "notebook": f"notebooks/{notebook}",
                                              "parameters": parameters}]}))
    (run,) = load_runplan(plan, root=root, known_datasets=set())
    assert set(run.parameters) == set(namespace)


def test_parameters_with_an_equals_sign_in_their_comment_are_declared(project: Path) -> None:
    write_notebook(project / "notebooks" / "eq.ipynb", "print(MAX_INTERVALS, LIMIT, a, b)",
                   parameters="MAX_INTERVALS = None   # None = every interval\nLIMIT: int = 3  # 3 = small\n"
                              "a, b = 1, 2\n")
    write_plan(project, "runs:\n  - name: eq\n    notebook: notebooks/eq.ipynb\n"
                        "    parameters: {MAX_INTERVALS: 5, LIMIT: 1, a: 3, b: 4}\n")
    (run,) = load_runplan(root=project, known_datasets=set())
    assert run.parameters == {"MAX_INTERVALS": 5, "LIMIT": 1, "a": 3, "b": 4}
    assert runplan.parameter_names("x = 1 # x = y\ny += 2\n(z, *w) = [1, 2]\n") == ["x", "y", "z", "w"]


def test_a_summary_run_re_runs_when_the_tables_it_reads_change(project: Path) -> None:
    summary = Run("summary", "notebooks/tiny.ipynb", {"value": 1}, results_of=("tiny",))
    plain = Run("summary", "notebooks/tiny.ipynb", {"value": 1})
    before = fingerprint_hash(fingerprint(summary, project))
    before_plain = fingerprint_hash(fingerprint(plain, project))
    (project / "results" / "tiny").mkdir(parents=True)
    (project / "results" / "tiny" / "table.csv").write_text("method,pearson\nSOG,9.3\n")
    after = fingerprint_hash(fingerprint(summary, project))
    assert after != before
    assert fingerprint_hash(fingerprint(plain, project)) == before_plain  # runs that read no results ignore them
    (project / "results" / "tiny" / "table.csv").write_text("method,pearson\nSOG,9.4\n")
    assert fingerprint_hash(fingerprint(summary, project)) != after


def test_results_of_must_name_an_earlier_run(project: Path) -> None:
    write_plan(project, "runs:\n  - name: summary\n    notebook: notebooks/tiny.ipynb\n    results_of: [tiny]\n"
                        "  - name: tiny\n    notebook: notebooks/tiny.ipynb\n")
    with pytest.raises(RunPlanError, match=r"'results_of': \['tiny'\] must name runs listed before it"):
        load_runplan(project / "runplan.yaml", root=project, known_datasets=[])


def test_every_chapter_that_asks_an_llm_takes_the_readers_judges_and_defaults_to_none() -> None:
    from recjudge.compendium.runplan import JUDGES_PARAMETER, with_judges

    root = Path(__file__).resolve().parents[1]
    runs = load_runplan(root / "runplan.yaml", root=root, known_datasets=None)
    asking = [run for run in runs if run.asks_llm]
    judged, left_out, _ = with_judges(runs, [{"label": "J", "provider": "openai", "model": "gpt-4o-mini"}], root)
    assert [run.name for run in left_out] == []  # `recjudge run --judge` leaves no LLM chapter out
    assert [run.name for run in judged] == [run.name for run in asking]
    for notebook in sorted({run.notebook for run in asking}):
        # [] in the committed book: a reader's judge goes beside the chapter's own, never in its place
        assert _parameters_cell_namespace(root / notebook)[JUDGES_PARAMETER] == [], notebook


# ---------------------------------------------------------------------------------------------------------------
# A run's tables go to results/<its name>/ only


def test_a_copied_chapter_is_given_its_runs_name_as_its_results_folder(project: Path) -> None:
    write_notebook(project / "notebooks" / "copy.ipynb", "print(NOTEBOOK)", parameters='NOTEBOOK = "original"')
    write_plan(project, "runs:\n  - name: copy\n    notebook: notebooks/copy.ipynb\n")
    assert load_runplan(root=project)[0].parameters == {"NOTEBOOK": "copy"}
    write_plan(project, "runs:\n  - name: original\n    notebook: notebooks/copy.ipynb\n")
    assert load_runplan(root=project)[0].parameters == {}  # the chapter's own run: nothing injected
    write_plan(project, "runs:\n  - name: copy\n    notebook: notebooks/copy.ipynb\n"
                        "    parameters: {NOTEBOOK: original}\n")
    with pytest.raises(RunPlanError, match=r"results/original/.*NOTEBOOK: copy"):
        load_runplan(root=project)


def test_a_runs_kernel_is_told_the_runs_name(project: Path) -> None:
    run = Run("copy", "notebooks/copy.ipynb", {}, (), 60)
    assert runplan.Target.book(project).run_environment(run)["RECJUDGE_RUN_NAME"] == "copy"


def test_the_reproducibility_pages_full_run_example_is_a_valid_run(project: Path) -> None:
    import re

    import yaml

    repository = Path(__file__).resolve().parents[1]
    page = (repository / "book" / "reproducibility.md").read_text(encoding="utf-8")
    example = next(block for block in re.findall(r"```yaml\n(.*?)```", page, re.S) if "_full" in block)
    (project / "notebooks" / "normalised_surprise.md").write_bytes(
        (repository / "notebooks" / "normalised_surprise.md").read_bytes())
    (run,) = yaml.safe_load(example)["runs"]
    write_plan(project, yaml.safe_dump({"runs": [run]}))
    (loaded,) = load_runplan(root=project, known_datasets=set(run.get("datasets", [])))
    assert loaded.parameters.get("NOTEBOOK") == loaded.name


# ---------------------------------------------------------------------------------------------------------------
# Parameter values have the type of the notebook's default


TYPED_PARAMETERS = '''N = 20
RATE = 0.5
FLAG = True
NAMES = ["a", "b"]
SIZES = (6, 9)
LIMIT = None
DATASET = "small"   # "small" (default) or "large"
LABEL = "x"         # any text, e.g. "y"
'''


@pytest.mark.parametrize(("value", "expected"), [
    ('"20"', r"parameter 'N': '20' is str, but the notebook's default 20 makes it a whole number \(int\) "
             r"\(write it without quotes\)"),
    ("true", r"parameter 'N': True is bool"),
    ("2.5", r"parameter 'N': 2.5 is float"),
])
def test_a_value_of_another_type_is_refused_naming_the_parameter_and_type(project: Path, value: str,
                                                                          expected: str) -> None:
    write_notebook(project / "notebooks" / "typed.ipynb", "pass", parameters=TYPED_PARAMETERS)
    write_plan(project, f"runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        f"    parameters: {{N: {value}}}\n")
    with pytest.raises(RunPlanError, match=expected):
        load_runplan(root=project)


def test_values_of_the_defaults_type_none_and_lists_for_tuples_are_accepted(project: Path) -> None:
    write_notebook(project / "notebooks" / "typed.ipynb", "pass", parameters=TYPED_PARAMETERS)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n    parameters: {N: 3, RATE: 1, "
                        "FLAG: false, NAMES: [c], SIZES: [1, 2, 3], LIMIT: 7, DATASET: large, LABEL: z}\n")
    assert load_runplan(root=project)[0].parameters["SIZES"] == [1, 2, 3]


def test_list_items_and_declared_values_are_checked(project: Path) -> None:
    write_notebook(project / "notebooks" / "typed.ipynb", "pass", parameters=TYPED_PARAMETERS)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        "    parameters: {SIZES: [1, '2']}\n")
    with pytest.raises(RunPlanError, match=r"'SIZES': item 2: '2' is str.*int"):
        load_runplan(root=project)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        "    parameters: {DATASET: huge}\n")
    with pytest.raises(RunPlanError, match=r"'DATASET': 'huge' is not one of the values the notebook allows: "
                                           r"'small', 'large'"):
        load_runplan(root=project)


def test_a_profile_value_of_another_type_is_refused_naming_the_profile(project: Path) -> None:
    write_notebook(project / "notebooks" / "typed.ipynb", "pass", parameters=TYPED_PARAMETERS)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        "profiles:\n  smoke:\n    typed: {RATE: fast}\n")
    load_runplan(root=project)
    with pytest.raises(RunPlanError, match=r"profile 'smoke', run 'typed', parameter 'RATE': 'fast' is str.*float"):
        load_runplan(root=project, profile="smoke")


def test_a_build_records_which_chapters_were_executed_from_other_sources(project: Path) -> None:
    """What `recjudge book` writes into build-info.json (`chapters`) and publishing compares: a chapter whose
    notebook changed after its execution, or that was never executed, does not match its sources."""
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 21})
    assert runplan.executed_from([run], project)["tiny"]["executed"] is None
    execute_plan([run], project, log=lambda line: None)
    state = runplan.executed_from([run], project)["tiny"]
    assert state["executed"] == state["fingerprint"]
    write_notebook(project / "notebooks" / "tiny.ipynb", "print('result', value * 3)")
    state = runplan.executed_from([run], project)["tiny"]
    assert state["executed"] is not None and state["executed"] != state["fingerprint"]


@pytest.mark.parametrize("parameters_tags, shown", [(["parameters"], True), (["parameters", "remove-cell"], False)])
def test_the_runs_values_are_shown_where_the_page_shows_its_parameters(tmp_path: Path, parameters_tags, shown):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("value = 1", metadata={"tags": parameters_tags}),
                      nbformat.v4.new_code_cell("# Parameters\nvalue = 21\n",
                                                metadata={"tags": ["injected-parameters"]})]
    path = tmp_path / "executed.ipynb"
    nbformat.write(notebook, path)
    runplan.execution._show_run_parameters(path)
    injected = nbformat.read(path, as_version=4).cells[1]
    assert ("remove-cell" not in injected.metadata["tags"]) is shown
    assert injected.source == f"{runplan.RUN_PARAMETERS_HEADING}\nvalue = 21\n"
    assert injected["id"] == "injected-parameters-0"
