"""The tables typed in the book's prose (Markdown pipe tables) fit the text column: a row of many short cells (numbers,
names) that would scroll in its own box at 1280 px holds more text than the column can show side by side. A table of
a few prose columns wraps its text and is left alone."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: About as many characters of cell text as a row of the ≈676 px text column shows at the tables' font size.
COLUMN_CHARACTERS = 100
#: A table of at most this many columns is read as prose that wraps.
PROSE_COLUMNS = 4


def pipe_table_rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|") and not set(line) <= set("|-: ")]


@pytest.mark.parametrize("page", sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")]), ids=lambda p: p.name)
def test_a_table_typed_in_the_prose_fits_the_text_column(page):
    too_wide = [row for row in pipe_table_rows(page.read_text(encoding="utf-8"))
                if len(row) > PROSE_COLUMNS and sum(map(len, row)) + 2 * len(row) > COLUMN_CHARACTERS]
    assert not too_wide, f"{page.name}: split or shorten the table with the row {too_wide[0]}"


def test_pipe_table_rows_skip_the_rule_and_split_the_cells():
    assert pipe_table_rows("| a | b |\n|---|--:|\n| 1 | 2 |\ntext") == [["a", "b"], ["1", "2"]]
