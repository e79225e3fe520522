"""Reading runplan.yaml (``runplan.plan``): its runs checked field by field, the order of ``results_of``, and the judge
convention."""

from __future__ import annotations

from pathlib import Path

import pytest
from runplan_project import make_project, parameters_cell_namespace, write_plan

from recjudge.compendium.runplan import (
    Run,
    RunPlanError,
    load_runplan,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


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


def test_a_notebook_of_another_format_is_refused(project: Path) -> None:
    (project / "notebooks" / "chapter.py").write_text("value = 1\n")
    write_plan(project, "runs:\n  - name: chapter\n    notebook: notebooks/chapter.py\n")
    with pytest.raises(RunPlanError, match="must name an .ipynb file or a MyST markdown notebook"):
        load_runplan(project / "runplan.yaml", root=project, known_datasets=set())


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
        assert parameters_cell_namespace(root / notebook)[JUDGES_PARAMETER] == [], notebook


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
