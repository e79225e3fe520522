"""The code a chapter shows a reader runs as printed: the parameters cell (the chapter's interface) is shown, every
name a shown cell reads is a builtin or bound by an earlier shown cell, the parameters cell first (never only by a
cell the page hides), a shown cell is short, and it is formatted to fit the book's code box."""

import ast
import builtins
import io
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import jupytext
import pytest

from recjudge.compendium import cell_selection
from recjudge.compendium.book import SHOWN_CODE_COLUMNS
from recjudge.compendium.runplan import load_runplan
from recjudge.paths import project_root

NOTEBOOKS = sorted((project_root() / "notebooks").glob("*.md"))
HIDDEN = {"remove-input", "remove-cell", "hide-input"}
#: A shown cell is one step of the analysis, read at a glance ...
MAX_SHOWN_LINES = 10
#: ... and the parameters cell, one line per parameter, the chapter's interface.
MAX_PARAMETER_LINES = 30


def code_cells(path):
    notebook = jupytext.read(path)
    return [(cell.metadata.get("tags", []), cell.source) for cell in notebook.cells if cell.cell_type == "code"]


def shown(tags) -> bool:
    return not set(tags) & HIDDEN


def bound_names(tree: ast.AST) -> set[str]:
    """Every name a cell binds anywhere: assignments, loop and comprehension targets, imports, definitions,
    arguments."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def read_names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def unbound_reads(path) -> list[tuple[int, set[str]]]:
    """(cell number, names) for every shown cell, the parameters cell among them, reading a name that nothing shown
    before it binds."""
    known = set(dir(builtins))
    problems = []
    for number, (tags, source) in enumerate(code_cells(path), start=1):
        tree = ast.parse(source)
        if shown(tags):
            missing = read_names(tree) - bound_names(tree) - known
            if missing:
                problems.append((number, missing))
            known |= bound_names(tree)
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_cells_run_as_printed(path):
    assert unbound_reads(path) == [], (
        f"{path.name}: shown cells read names bound only by hidden cells (cell number, names); bind them in a shown "
        "cell or read them from the parameters")


#: Pages that show no code at all (summaries of the book): nothing to run as printed, so no parameters shown.
NO_CODE_SHOWN = {"at_a_glance", "what_we_learned"}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem not in NO_CODE_SHOWN], ids=lambda p: p.stem)
def test_the_parameters_cell_is_shown_first_and_short(path):
    cells = code_cells(path)
    parameters = [number for number, (tags, _) in enumerate(cells, start=1) if "parameters" in tags]
    assert len(parameters) == 1, f"{path.name}: {len(parameters)} cells tagged parameters"
    tags, source = cells[parameters[0] - 1]
    assert shown(tags), f"{path.name}: the parameters cell is hidden ({sorted(set(tags) & HIDDEN)}): show it"
    assert not any(shown(tags) for tags, _ in cells[:parameters[0] - 1]), f"{path.name}: a shown cell before it"
    statements = len(ast.parse(source).body)  # its comments, above the values, document them and do not count
    assert statements <= MAX_PARAMETER_LINES, f"{path.name}: {statements} parameters"


#: No code cell, the parameters cell included, is longer than this (lines as written).
MAX_CELL_LINES = 40


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_code_cell_is_at_most_40_lines(path):
    long_cells = {number: len(source.splitlines()) for number, (_, source) in enumerate(code_cells(path), start=1)
                  if len(source.splitlines()) > MAX_CELL_LINES}
    assert long_cells == {}, f"{path.name}: code cells over {MAX_CELL_LINES} lines (cell number: lines)"


def wrapped_values(source: str) -> list[str]:
    """The parameters whose plain value the formatter wrapped in parentheses over several lines to make room for a
    comment beside it (``x = (\n    200  # ...\n)``): the comment belongs above the value."""
    return [statement.targets[0].id for statement in ast.parse(source).body
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.targets[0], ast.Name) and statement.end_lineno > statement.lineno]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem not in NO_CODE_SHOWN], ids=lambda p: p.stem)
def test_a_parameters_comment_stands_above_its_value_not_beside_it_in_parentheses(path):
    source = next(source for tags, source in code_cells(path) if "parameters" in tags)
    assert wrapped_values(source) == [], f"{path.name}: values wrapped in parentheses for a comment beside them"


def test_the_wrapped_value_check_finds_a_value_wrapped_for_its_comment():
    assert wrapped_values("a = 1  # short\nb = (\n    200  # a comment too long for one line\n)\n") == ["b"]


def logical_lines(source: str) -> int:
    """Statements and comment lines: a call the formatter spreads over several lines, one argument a line, is one
    step of the analysis, as long as it was on one line."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    statements = sum(1 for token in tokens if token.type == tokenize.NEWLINE)
    comments = sum(1 for token in tokens if token.type == tokenize.COMMENT and not token.line[:token.start[1]].strip())
    return statements + comments


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_cells_are_short(path):
    long_cells = {number: n for number, (tags, source) in enumerate(code_cells(path), start=1)
                  if shown(tags) and "parameters" not in tags and (n := logical_lines(source)) > MAX_SHOWN_LINES}
    assert long_cells == {}, f"{path.name}: shown cells over {MAX_SHOWN_LINES} lines (cell number: lines)"


def ruff() -> str:
    """The venv's ruff (the one `make lint` runs)."""
    found = Path(sys.executable).with_name("ruff")
    return str(found) if found.is_file() else (shutil.which("ruff") or pytest.skip("ruff is not installed"))


def unformatted_shown_cells(path: Path, workdir: Path) -> list[int]:
    """The numbers of the shown code cells of a chapter that ``ruff format`` at the book's code width would change
    (what a reader sees and copies is the source, so the source is formatted, not the build's copy)."""
    cells = {number: source for number, (tags, source) in enumerate(code_cells(path), start=1) if shown(tags)}
    for number, source in cells.items():
        (workdir / f"cell_{number:03d}.py").write_text(source + "\n", encoding="utf-8")
    if not cells:
        return []
    # --isolated: the project's own settings (120 columns, notebooks excluded) are for the package, not the book.
    result = subprocess.run([ruff(), "format", "--isolated", "--check", "--line-length", str(SHOWN_CODE_COLUMNS),
                             str(workdir)], capture_output=True, text=True)
    assert result.returncode in (0, 1), f"ruff format failed on {path.name}: {result.stderr}"
    return sorted(number for number in cells if f"cell_{number:03d}.py" in result.stdout)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_cells_are_formatted_to_the_code_box_width(path, tmp_path):
    assert unformatted_shown_cells(path, tmp_path) == [], (
        f"{path.name}: shown code cells (numbers) not formatted at {SHOWN_CODE_COLUMNS} columns, so they wrap "
        f"mid-call in the book's code box: run `ruff format --isolated --line-length {SHOWN_CODE_COLUMNS}` on them")


def test_the_format_check_finds_a_long_call_and_ignores_hidden_cells(tmp_path):
    chapter = tmp_path / "chapter.md"
    long_call = "frame = load(" + ", ".join(f"argument_{i}={i}" for i in range(12)) + ")"
    chapter.write_text(f"```{{code-cell}}\n\nx = 1\n```\n\n```{{code-cell}}\n\n{long_call}\n```\n\n"
                       f"```{{code-cell}}\n:tags: [remove-input]\n\n{long_call}\n```\n", encoding="utf-8")
    (tmp_path / "cells").mkdir()
    assert unformatted_shown_cells(chapter, tmp_path / "cells") == [2]
    assert logical_lines("# a step\ncall(\n    a,\n    b,\n)\n") == 2


def test_the_check_finds_a_name_bound_only_by_a_hidden_cell(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(
        "```{code-cell}\n:tags: [parameters]\n\nseed = 0\n```\n\n"
        "```{code-cell}\n:tags: [remove-input]\n\nhidden_frame = {'seed': seed}\n```\n\n"
        "```{code-cell}\n\nimport math\n\nrows = [math.sqrt(seed + i) for i in range(3)]\n"
        "shown_total = sum(rows)\n```\n\n"
        "```{code-cell}\n\nprint(shown_total, hidden_frame)\n```\n", encoding="utf-8")
    assert unbound_reads(chapter) == [(4, {"hidden_frame"})]
    # A hidden parameters cell binds nothing a reader sees: every shown cell reading a parameter is then reported.
    chapter.write_text(chapter.read_text().replace(":tags: [parameters]", ":tags: [parameters, remove-cell]"))
    assert unbound_reads(chapter) == [(3, {"seed"}), (4, {"hidden_frame"})]


def test_a_page_that_shows_no_code_hides_its_parameters_too():
    for path in NOTEBOOKS:
        if path.stem in NO_CODE_SHOWN:
            assert not any(shown(tags) for tags, _ in code_cells(path)), f"{path.name} shows code"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem not in NO_CODE_SHOWN], ids=lambda p: p.stem)
def test_a_chapter_shows_the_calls_into_recjudge_that_carry_its_analysis(path):
    shown_sources = [source for tags, source in code_cells(path) if shown(tags)]
    imports = {node.module.split(".")[0] for source in shown_sources for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.ImportFrom) and node.module}
    assert len(shown_sources) >= 3 and "recjudge" in imports, (
        f"{path.name}: {len(shown_sources)} shown cells, importing {sorted(imports)}")


RUNS = load_runplan()


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.name)
def test_without_its_data_a_run_reads_no_name_only_a_left_out_cell_binds(run):
    """Without the mirror, a run executes only the cells that need no declared dataset (``needs:NAME``; cell
    selection): none of them may read a name that only a left-out cell binds (an import, a frame)."""
    notebook = cell_selection.notebook_for_variant(jupytext.read(project_root() / run.notebook), run.variant)
    known = set(dir(builtins))
    problems = []
    for number, cell in enumerate((c for c in notebook.cells if c.cell_type == "code"), start=1):
        if cell_selection.needed_datasets(cell) & set(run.datasets):
            continue
        tree = ast.parse(cell.source)
        if missing := read_names(tree) - bound_names(tree) - known:
            problems.append((number, missing))
        known |= bound_names(tree)
    assert problems == [], f"{run.name}: cells kept without the data read names bound only by left-out cells"
