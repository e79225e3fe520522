"""Scale profiles and the judge convention of the run plan: resolution, checks, and the real runplan.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
from papermill.translators import PythonTranslator
from runplan_project import write_notebook

from recjudge.compendium.runplan import (
    JUDGES_PARAMETER,
    RunPlanError,
    load_runplan,
    parameter_names,
    profile_names,
    read_source_notebook,
    with_judges,
)
from recjudge.compendium.runplan.plan import left_out_runs, stand_ins_for_absent_data
from recjudge.paths import project_root

PLAN = """runs:
  - name: chapter
    notebook: notebooks/chapter.ipynb
    asks_llm: true
    parameters: {sample_size: 50}
  - name: plain
    notebook: notebooks/plain.ipynb
  - name: old_llm
    notebook: notebooks/old_llm.ipynb
    asks_llm: true
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_notebook(tmp_path / "notebooks" / "chapter.ipynb", "pass", "sample_size = 200\nseed = 0\njudges = []")
    write_notebook(tmp_path / "notebooks" / "plain.ipynb", "pass", "rows = 10")
    write_notebook(tmp_path / "notebooks" / "old_llm.ipynb", "pass", "local_model = 'x'")
    return tmp_path


def plan(root: Path, profiles: str = "") -> Path:
    path = root / "runplan.yaml"
    path.write_text(PLAN + profiles)
    return path


def parameters(root: Path, profile: str) -> dict[str, dict]:
    return {run.name: run.parameters for run in load_runplan(root=root, known_datasets=set(), profile=profile)}


def test_profiles_override_named_runs_only(root: Path) -> None:
    plan(root, "profiles:\n  default: {}\n  smoke:\n    chapter: {sample_size: 5, seed: 1}\n"
               "  paper:\n    plain: {rows: 1000}\n")
    assert profile_names(root=root) == ["default", "paper", "smoke"]
    assert parameters(root, "default") == {"chapter": {"sample_size": 50}, "plain": {}, "old_llm": {}}
    assert parameters(root, "smoke") == {"chapter": {"sample_size": 5, "seed": 1}, "plain": {}, "old_llm": {}}
    assert parameters(root, "paper")["plain"] == {"rows": 1000}


def test_default_profile_exists_without_a_profiles_section(root: Path) -> None:
    plan(root)
    assert profile_names(root=root) == ["default"]
    assert parameters(root, "default")["chapter"] == {"sample_size": 50}


@pytest.mark.parametrize(
    ("profiles", "profile", "expected"),
    [
        ("", "smoke", "unknown profile 'smoke' (--profile); the run plan defines ['default']"),
        ("profiles:\n  smoke:\n    chapter: {sample_size: 5}\n", "huge",
         "unknown profile 'huge' (--profile); the run plan defines ['default', 'smoke']"),
        ("profiles:\n  default:\n    chapter: {sample_size: 5}\n", "default",
         "profile 'default': must have no overrides"),
        ("profiles:\n  smoke:\n    chapterr: {sample_size: 5}\n", "smoke",
         "profile 'smoke': no run named ['chapterr']"),
        ("profiles:\n  smoke:\n    chapter: {sample_sise: 5}\n", "smoke",
         "profile 'smoke', run 'chapter': ['sample_sise'] not in the parameters cell of notebooks/chapter.ipynb"),
        ("profiles:\n  smoke:\n    chapter: {sample_size: .nan}\n", "smoke",
         "'sample_size': nan is not a finite number"),
        ("profiles:\n  smoke:\n    chapter: 5\n", "smoke", "run 'chapter': must be a non-empty mapping"),
        ("profiles: [smoke]\n", "smoke", "'profiles' must map profile names"),
        ("profiles:\n  ../up: {}\n", "default", "a profile name must be a plain name"),
    ],
)
def test_bad_profiles_name_the_profile_run_and_parameter(root: Path, profiles: str, profile: str,
                                                         expected: str) -> None:
    path = plan(root, profiles)
    with pytest.raises(RunPlanError) as caught:
        load_runplan(root=root, known_datasets=set(), profile=profile)
    assert str(caught.value).startswith(str(path)) and expected in str(caught.value)


def test_a_judge_without_log_probabilities_is_left_out_of_runs_that_read_them(root: Path) -> None:
    write_notebook(root / "notebooks" / "expected.ipynb", "pass", "judges = []")
    (root / "runplan.yaml").write_text(PLAN + "  - {name: expected, notebook: notebooks/expected.ipynb, asks_llm: true,"
                                              " reads_logprobs: true}\n")
    runs = load_runplan(root=root, known_datasets=set())
    gpt = {"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"}
    claude = {"label": "Haiku", "provider": "anthropic", "model": "claude-3-5-haiku"}
    judged = with_judges(runs, [gpt, claude], root)
    given = {run.name: run.parameters[JUDGES_PARAMETER] for run in judged.accepting}
    assert given == {"chapter": [gpt, claude], "expected": [gpt]}
    assert judged.without_logprobs == {"expected": ["Haiku"]}
    alone = with_judges(runs, [claude], root)
    assert [run.name for run in alone.accepting] == ["chapter"] and alone.without_logprobs == {"expected": ["Haiku"]}
    (root / "runplan.yaml").write_text("runs:\n  - {name: plain, notebook: notebooks/plain.ipynb, "
                                       "reads_logprobs: maybe}\n")
    with pytest.raises(RunPlanError, match="field 'reads_logprobs' must be true or false"):
        load_runplan(root=root, known_datasets=set())


def test_asks_llm_must_be_a_switch(root: Path) -> None:
    (root / "runplan.yaml").write_text("runs:\n  - {name: plain, notebook: notebooks/plain.ipynb, asks_llm: yes-ish}\n")
    with pytest.raises(RunPlanError, match="field 'asks_llm' must be true or false"):
        load_runplan(root=root, known_datasets=set())


def test_judges_go_to_llm_runs_that_declare_them(root: Path) -> None:
    plan(root)
    runs = load_runplan(root=root, known_datasets=set())
    judges = [{"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"}]
    accepting, refusing, _ = with_judges(runs, judges, root)
    assert [(run.name, run.parameters) for run in accepting] == [
        ("chapter", {"sample_size": 50, JUDGES_PARAMETER: judges})]
    assert [run.name for run in refusing] == ["old_llm"]  # asks an LLM, no `judges` parameter yet
    # the run that asks no LLM is neither: a judge changes nothing in it


# ---------------------------------------------------------------------------------------------------------------
# The real run plan


def test_every_profile_of_the_real_run_plan_resolves() -> None:
    names = profile_names(root=project_root())
    assert {"default", "paper", "smoke"} <= set(names)
    default = {run.name: run for run in load_runplan(root=project_root(), profile="default")}
    smoke = {run.name: run for run in load_runplan(root=project_root(), profile="smoke")}
    assert set(default) == set(smoke)
    # smoke makes every chapter that asks an LLM smaller somewhere, and touches nothing else
    llm_runs = {name for name, run in default.items() if run.asks_llm}
    assert {name for name in default if smoke[name].parameters != default[name].parameters} <= llm_runs
    assert load_runplan(root=project_root(), profile="paper")


def test_the_check_profile_judges_the_smoke_samples_with_fewer_prompts() -> None:
    """`check` (what CI asks of a real server) keeps the smoke profile's samples, so the book's own judges replay their
    committed smoke replies, and only ever asks less: a list parameter is a subset of smoke's (or the default's), a
    number at most smoke's; it touches no chapter that asks no LLM."""
    plans = {profile: {run.name: run.parameters for run in load_runplan(root=project_root(), profile=profile)}
             for profile in ("default", "smoke", "check")}
    llm_runs = {run.name for run in load_runplan(root=project_root()) if run.asks_llm}
    left_out = left_out_runs(root=project_root(), profile="check")
    for name, check in plans["check"].items():
        if name in left_out:  # a stand-in for a chapter whose data are absent here: at its default scale
            assert check == plans["default"][name], name
            continue
        if name not in llm_runs:
            assert check == plans["default"][name], name
            continue
        smoke = plans["smoke"][name]
        for parameter, value in check.items():
            reference = smoke.get(parameter, plans["default"][name].get(parameter))
            if parameter in ("sample_size", "aux_pool_size", "seed", "sample_seed", "user_seed", "n_users",
                             "pairs_per_user", "judged_users_per_fold", "iterations"):
                assert value == reference, f"{name}.{parameter}: the smoke sample, so the committed replies replay"
            elif isinstance(value, list) and reference is not None:
                assert set(map(str, value)) <= set(map(str, reference)), f"{name}.{parameter}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and reference is not None:
                assert value <= reference, f"{name}.{parameter}"


def test_the_check_profile_leaves_out_only_runs_whose_notebook_another_run_still_judges() -> None:
    # CI asks a real server at `check`: a synthetic demonstration runs the notebook of its chapter, so leaving it out
    # still takes the judge through every LLM notebook, and no page that reads results loses a run it reads.
    every_run = load_runplan(root=project_root())
    left_out_names = left_out_runs(root=project_root(), profile="check")
    checked = {run.name: run for run in every_run if run.name not in left_out_names}
    left_out = [run for run in every_run if run.name in left_out_names]
    assert left_out and all(run.variant == "synthetic" for run in left_out)
    assert {run.notebook for run in every_run if run.asks_llm} == {run.notebook for run in checked.values()
                                                                      if run.asks_llm}
    assert not {name for run in checked.values() for name in run.results_of} - set(checked)


def test_a_run_a_profile_leaves_out_runs_when_its_chapters_data_are_absent(tmp_path: Path, monkeypatch) -> None:
    """Without a chapter's data its real run makes no judge call, so the synthetic run of the same notebook, left out
    by the profile, is kept (at its default scale) as the run that exercises the chapter's judges; with the data it is
    left out."""
    from recjudge.compendium import cell_selection

    write_notebook(tmp_path / "nb.ipynb", "print(n)", parameters="n = 1")
    write_notebook(tmp_path / "other.ipynb", "print(n)", parameters="n = 1")
    (tmp_path / "runplan.yaml").write_text(
        "runs:\n  - {name: real, notebook: nb.ipynb, datasets: [serendipity-2018], parameters: {n: 5}}\n"
        "  - {name: demo, notebook: nb.ipynb, variant: synthetic, parameters: {n: 2}}\n"
        "  - {name: other_demo, notebook: other.ipynb, variant: synthetic}\n"
        "profiles:\n  quick: {real: {n: 3}, demo: leave out, other_demo: leave out}\n")
    plan = tmp_path / "runplan.yaml"
    monkeypatch.setattr(cell_selection, "missing_datasets", lambda names: [])
    assert [run.name for run in load_runplan(plan, root=tmp_path, profile="quick")] == ["real"]
    monkeypatch.setattr(cell_selection, "missing_datasets", lambda names: sorted(names))
    runs = {run.name: run for run in load_runplan(plan, root=tmp_path, profile="quick")}
    assert sorted(runs) == ["demo", "real"]
    assert runs["demo"].parameters == {"n": 2} and runs["real"].parameters == {"n": 3}
    assert stand_ins_for_absent_data(load_runplan(plan, root=tmp_path), left_out_runs(plan, root=tmp_path,
                                                                                      profile="quick")) \
        == {"demo": ["serendipity-2018"]}


def test_a_run_left_out_by_a_profile_is_not_run_and_a_misspelt_value_is_named(tmp_path: Path) -> None:
    write_notebook(tmp_path / "nb.md", "n = 1")
    runs = "runs:\n  - {name: first, notebook: nb.md}\n  - {name: second, notebook: nb.md}\n"
    plan = tmp_path / "runplan.yaml"
    plan.write_text(runs + "profiles:\n  quick: {second: leave out}\n")
    assert [run.name for run in load_runplan(plan, root=tmp_path, profile="quick")] == ["first"]
    assert [run.name for run in load_runplan(plan, root=tmp_path)] == ["first", "second"]
    plan.write_text(runs + "profiles:\n  quick: {second: leave it}\n")
    with pytest.raises(RunPlanError, match="run 'second'.*'leave out'"):
        load_runplan(plan, root=tmp_path, profile="quick")


def test_asks_llm_marks_exactly_the_notebooks_with_an_llm_mode() -> None:
    # Every chapter that asks an LLM exposes `llm_mode` (replay/live/auto); the run plan's asks_llm must agree, so a
    # new LLM chapter is not silently left out of `recjudge run --judge`.
    for run in load_runplan(root=project_root()):
        notebook = read_source_notebook(project_root() / run.notebook)
        cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
        assert run.asks_llm == ("llm_mode" in cell.source), run.name


def test_papermill_reads_every_parameter_of_every_notebook() -> None:
    # Papermill warns "Passed unknown parameter" for a name it cannot parse (an "=" inside the comment after a value,
    # for instance), and a reader copying a chapter then cannot tell a real typo from that noise.
    for run in load_runplan(root=project_root()):
        notebook = read_source_notebook(project_root() / run.notebook)
        cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
        inspected = [parameter.name for parameter in PythonTranslator.inspect(cell)]
        assert inspected == parameter_names(cell.source), run.notebook
