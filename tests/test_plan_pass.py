"""A plan pass (`recjudge run --plan`) counts what the chapters would ask without drawing their pages: each chapter
that asks an LLM runs up to its last judge call (the cell tagged `plan-ends-here`), and no cell after it asks one.
And every chapter, run to its end in plan mode with a reader's judge and an empty store (no scores at all), renders
its page instead of failing. Cells before the plan's end that only feed the page are tagged `plan-skip`, and no cell a
plan keeps reads a name that only a skipped cell binds."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import nbformat
import pytest
from test_shown_code import bound_names, read_names

from recjudge.compendium import cell_selection
from recjudge.compendium.runplan import load_runplan, read_source_notebook
from recjudge.paths import project_root

ROOT = project_root()
#: The engine's entry point: every judgment a chapter asks goes through it.
ENGINE_CALLS = {"run_judge"}


def called_names(tree: ast.AST, external: frozenset[str] = frozenset()) -> set[str]:
    """The names a piece of code calls (``f(...)`` and ``x.f(...)`` alike: a method is known by its name), except
    calls into another library: ``f(...)`` or ``m.f(...)`` where ``f`` or ``m`` is in ``external`` (``subprocess.run``
    is not a judge's ``run``)."""
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id not in external:
            names.add(node.func.id)
        elif isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                           and node.func.value.id in external):
            names.add(node.func.attr)
    return names


def external_imports(tree: ast.AST) -> frozenset[str]:
    """The names a module binds by importing from outside the package (modules and their members)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if not alias.name.startswith("recjudge"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and not (node.module or "").startswith("recjudge"):
            names.update(alias.asname or alias.name for alias in node.names)
    return frozenset(names)


def judge_asking_functions() -> set[str]:
    """Names of the package's functions that call the engine, directly or through others (by name: a name shared by
    an unrelated function of the package counts too, which errs on the safe side)."""
    calls: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "recjudge").rglob("*.py"):
        module = ast.parse(path.read_text(encoding="utf-8"))
        external = external_imports(module)
        for node in ast.walk(module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls.setdefault(node.name, set()).update(called_names(node, external))
    asking, grown = set(ENGINE_CALLS), True
    while grown:
        new = {name for name, called in calls.items() if name not in asking and called & asking}
        asking |= new
        grown = bool(new)
    return asking


def asks(cell, asking: set[str]) -> bool:
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:  # IPython magics: no judge call
        return False
    return bool(called_names(tree) & asking)


ASKING_RUNS = sorted({run.notebook for run in load_runplan(root=ROOT) if run.asks_llm})


@pytest.mark.parametrize("notebook", ASKING_RUNS)
def test_a_chapter_that_asks_a_judge_marks_where_a_plan_ends_and_asks_none_after_it(notebook: str) -> None:
    cells = [cell for cell in read_source_notebook(ROOT / notebook).cells if cell.cell_type == "code"]
    asking = judge_asking_functions()
    ends = [index for index, cell in enumerate(cells) if cell_selection.PLAN_ENDS_TAG in cell.metadata.get("tags", [])]
    assert len(ends) == 1, f"{notebook}: tag its last cell that asks a judge {cell_selection.PLAN_ENDS_TAG!r}, once"
    assert asks(cells[ends[0]], asking), f"{notebook}: the cell tagged {cell_selection.PLAN_ENDS_TAG!r} asks no judge"
    later = [index for index in range(ends[0] + 1, len(cells)) if asks(cells[index], asking)]
    assert not later, (f"{notebook}: code cell(s) {later} ask a judge after the plan's end (cell {ends[0]}): a plan "
                       "would not count their requests; move the tag")


def test_a_call_into_another_library_does_not_make_a_function_ask_a_judge() -> None:
    module = ast.parse("import subprocess\nfrom os import remove\nfrom recjudge.llm import run_judge\n"
                       "def publish():\n    subprocess.run(['git'])\n    remove('x')\n    run_judge()\n")
    assert called_names(module, external_imports(module)) == {"run_judge"}
    assert "check_branch_name" not in judge_asking_functions()  # it calls subprocess.run, not a judge's run


def test_a_plan_pass_executes_a_notebook_up_to_its_plan_end_and_a_whole_notebook_without_one() -> None:
    cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("asked = run_judge()"),
             nbformat.v4.new_code_cell("draw(asked)")]
    notebook = nbformat.v4.new_notebook(cells=cells)
    assert cell_selection.notebook_for_plan(notebook) is notebook
    cells[1].metadata["tags"] = ["needs:serendipity-2018", cell_selection.PLAN_ENDS_TAG]
    assert [cell.source for cell in cell_selection.notebook_for_plan(notebook).cells] == ["a = 1",
                                                                                         "asked = run_judge()"]


def kept_cells_reading_unbound_names(notebook: nbformat.NotebookNode) -> list[tuple[int, set[str]]]:
    """(code cell number, names) for every code cell a plan keeps that reads a name no earlier kept cell binds."""
    known, problems = set(dir(builtins)), []
    for number, cell in enumerate((c for c in notebook.cells if c.cell_type == "code"), start=1):
        tree = ast.parse(cell.source)
        if missing := read_names(tree) - bound_names(tree) - known:
            problems.append((number, missing))
        known |= bound_names(tree)
    return problems


@pytest.mark.parametrize("run", [run for run in load_runplan(root=ROOT) if run.asks_llm], ids=lambda run: run.name)
def test_the_cells_a_plan_keeps_read_only_names_that_kept_cells_bind(run) -> None:
    notebook = cell_selection.notebook_for_variant(
        cell_selection.notebook_for_plan(read_source_notebook(ROOT / run.notebook)), run.variant)
    assert kept_cells_reading_unbound_names(notebook) == [], (
        f"{run.name}: cells a plan keeps read names bound only by cells tagged {cell_selection.PLAN_SKIP_TAG!r} "
        "(code cell number in the plan, names); untag the binding cell or tag the reading one too")


def test_a_plan_skips_the_cells_that_only_feed_the_page_and_the_check_finds_a_skipped_binding() -> None:
    cells = [nbformat.v4.new_code_cell("from lib import bootstrap, draw, load, run_judge\nstudy = load()"),
             nbformat.v4.new_code_cell("table = bootstrap(study)"),
             nbformat.v4.new_code_cell("asked = run_judge(study)"), nbformat.v4.new_code_cell("draw(table)")]
    cells[1].metadata["tags"] = [cell_selection.PLAN_SKIP_TAG]
    cells[2].metadata["tags"] = [cell_selection.PLAN_ENDS_TAG]
    notebook = nbformat.v4.new_notebook(cells=cells)
    plan = cell_selection.notebook_for_plan(notebook)
    assert [cell.source for cell in plan.cells] == [cells[0].source, "asked = run_judge(study)"]
    assert kept_cells_reading_unbound_names(plan) == []
    cells[2].source = "asked = run_judge(table)"  # reads what only the skipped cell binds
    assert kept_cells_reading_unbound_names(cell_selection.notebook_for_plan(notebook)) == [(2, {"table"})]


@pytest.mark.timeout(1800)  # every chapter of the book, one after another (minutes on a busy two-core machine)
def test_every_chapter_renders_its_page_with_no_scores_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The smoke profile, a reader's paid judge and an empty store: in plan mode nothing is asked and no judge has a
    single score, yet every chapter runs to its end (its figures as labelled placeholders, its tables empty). With the
    data mirror (RECJUDGE_DATA_MIRROR) every chapter computes; without it, the chapters whose data are absent too."""
    from recjudge.compendium.runplan import ASK_ONLY_ENV, MODE_ENV, Target, execute_plan, with_judges, with_summaries
    from recjudge.llm.judge_spec import parse_judges
    from recjudge.paths import RESULTS_ENV

    monkeypatch.setenv("RECJUDGE_STORE", str(tmp_path / "empty-store"))
    judges = [judge.to_parameter() for judge in parse_judges(["openai:gpt-4o-mini"])]
    runs = load_runplan(root=ROOT, profile="smoke")
    judged, _, _ = with_judges(runs, judges, ROOT)
    runs = with_summaries(runs, judged, judges, ROOT)
    # Not a plan pass (which stops at each chapter's last judge call): whole chapters, the engine in plan mode
    target = Target(tmp_path / "notebooks", tmp_path / "cache",
                    ((MODE_ENV, "plan"), (RESULTS_ENV, str(tmp_path / "results")),
                     (ASK_ONLY_ENV, "openai:gpt-4o-mini")), profile="smoke")
    outcomes = execute_plan(runs, ROOT, target=target, log=lambda line: None)  # raises naming a chapter that fails
    assert [outcome.run.name for outcome in outcomes] == [run.name for run in runs]


def test_a_plan_prices_its_chapters_as_many_at_once_as_jobs_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """`recjudge run --plan --jobs 2` executes two chapters at a time, as a run does (the plan is mostly kernel starts
    and prompt building, one core each)."""
    from recjudge.cli import main
    from recjudge.compendium.runplan import command

    class Priced(Exception):
        pass

    seen = {}

    def fake_execute_plan(runs, root, **options):
        seen.update(options, names=[run.name for run in runs])
        raise Priced

    monkeypatch.setattr(command, "execute_plan", fake_execute_plan)
    with pytest.raises(Priced):
        main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--plan", "--jobs", "2",
              "--only", "trust_judges", "--only", "judge_robustness"])
    assert seen["jobs"] == 2 and seen["target"].plan_logs is not None
    assert sorted(seen["names"]) == ["judge_robustness", "trust_judges"]
    monkeypatch.setattr(command.os, "cpu_count", lambda: 16)
    with pytest.raises(Priced):  # without --jobs: as many as the CPUs, at most MAX_PLAN_JOBS
        main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--plan", "--only", "trust_judges"])
    assert seen["jobs"] == command.MAX_PLAN_JOBS < 16
    monkeypatch.setattr(command.os, "cpu_count", lambda: 2)
    with pytest.raises(Priced):
        main(["run", "--judge", "openai:gpt-4o-mini", "--profile", "smoke", "--plan", "--only", "trust_judges"])
    assert seen["jobs"] == 2


def test_a_plan_says_what_its_time_went_into_and_names_its_slowest_chapters() -> None:
    from recjudge.compendium.runplan import command
    from recjudge.compendium.runplan.execution import RunOutcome

    runs = {run.name: run for run in load_runplan(root=ROOT)}
    outcomes = [RunOutcome(runs["trust_judges"], "executed", 30.4, ""),
                RunOutcome(runs["judge_robustness"], "executed", 9.0, ""),
                RunOutcome(runs["metamorphic_recommender"], "skipped", 0.0, "unchanged")]
    line = command.plan_time_line(outcomes, 41.2, 1)
    assert line.startswith("[plan] priced in 41 s; --jobs 2 prices two chapters at once")
    assert "kernel start" in line and "every prompt" in line
    assert line.endswith("slowest: trust_judges 30 s, judge_robustness 9 s")
    assert "2 chapters at once" in command.plan_time_line(outcomes, 41.2, 2)


def names_judge_calls_read(notebook: nbformat.NotebookNode, asking: set[str]) -> set[str]:
    """The names the statements that ask a judge read, directly or through the statements before them that bind
    those names (statement by statement over the code cells, in order)."""
    statements = [statement for cell in notebook.cells if cell.cell_type == "code"
                  for statement in ast.parse(cell.source).body]
    needed: set[str] = set()
    for statement in reversed(statements):
        if called_names(statement) & asking or bound_names(statement) & needed:
            needed |= read_names(statement)
    return needed


def test_the_judge_call_check_follows_names_back_through_earlier_statements() -> None:
    cells = [nbformat.v4.new_code_cell("rows = sample(n_rows)\nboot = resample(rows, n_boot)"),
             nbformat.v4.new_code_cell("asked = run_judge(rows)\ntable = bootstrap(asked, n_boot)")]
    read = names_judge_calls_read(nbformat.v4.new_notebook(cells=cells), {"run_judge"})
    assert "n_rows" in read and "n_boot" not in read
