"""A notebook's declared parameters and the checks a run's values pass (``runplan.parameters``): every parameter
settable, values of the default's type, a copy's results folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runplan_project import make_project, parameters_cell_namespace, write_notebook, write_plan

from recjudge.compendium import runplan
from recjudge.compendium.runplan import (
    RunPlanError,
    load_runplan,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


@pytest.mark.parametrize("notebook", sorted(p.name for p in (Path(__file__).resolve().parents[1] / "notebooks")
                                                      .iterdir() if p.suffix in runplan.NOTEBOOK_SUFFIXES))
def test_every_parameter_of_every_notebook_is_accepted(notebook: str, tmp_path: Path) -> None:
    import yaml

    root = Path(__file__).resolve().parents[1]
    namespace = parameters_cell_namespace(root / "notebooks" / notebook)
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


PROMPT_PARAMETERS = 'prompt = "kang_basic"\nlocal_prompts = ["kang_basic", "kang_fewshot"]\nother_families = []'


@pytest.mark.parametrize(("value", "where"), [
    ("{prompt: kang_basik}", "'prompt': 'kang_basik'"),
    ("{local_prompts: [kang_basic, kang_fewshott]}", "'local_prompts': item 2: 'kang_fewshott'"),
    ("{other_families: [{provider: local, model: m, prompt: tokutake_cott}]}",
     "'other_families': item 1: field 'prompt': 'tokutake_cott'"),
])
def test_an_unknown_prompt_is_named_with_the_known_ones_before_anything_runs(project: Path, value: str,
                                                                             where: str) -> None:
    """A prompt name mistyped in the run plan reached the kernel as a KeyError: a parameter that names prompts
    takes the names of the package's prompt templates."""
    from recjudge.prompts import list_templates

    write_notebook(project / "notebooks" / "prompts.ipynb", "pass", parameters=PROMPT_PARAMETERS)
    write_plan(project, f"runs:\n  - name: prompts\n    notebook: notebooks/prompts.ipynb\n    parameters: {value}\n")
    with pytest.raises(RunPlanError) as caught:
        load_runplan(root=project)
    message = str(caught.value)
    assert where in message and "is not a prompt template" in message
    assert all(name in message for name in list_templates())
    write_plan(project, "runs:\n  - name: prompts\n    notebook: notebooks/prompts.ipynb\n    parameters: "
                        "{prompt: tokutake_cot, local_prompts: [kang_llm4seren], other_families: [{prompt: "
                        "kang_fewshot}]}\n")
    load_runplan(root=project)


def test_the_values_a_parameter_allows_may_be_said_in_the_comment_above_it(project: Path) -> None:
    """A parameters cell reads best with comments above the values (a long comment beside one made the formatter
    wrap the value in parentheses over three lines): the allowed values are read from that comment too."""
    parameters = ('# "small" (the default, embedded) or "large" (from the mirror,\n'
                  '# which the data tour lists)\nDATASET = "small"\nLABEL = "x"  # any label\n')
    write_notebook(project / "notebooks" / "typed.ipynb", "pass", parameters=parameters)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        "    parameters: {DATASET: huge, LABEL: y}\n")
    with pytest.raises(RunPlanError, match=r"'DATASET': 'huge' is not one of the values the notebook allows: "
                                           r"'small', 'large'"):
        load_runplan(root=project)
    write_plan(project, "runs:\n  - name: typed\n    notebook: notebooks/typed.ipynb\n"
                        "    parameters: {DATASET: large, LABEL: y}\n")
    assert load_runplan(root=project)[0].parameters["DATASET"] == "large"
