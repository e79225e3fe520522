"""Prints, for every executed chapter (book/notebooks/*.ipynb), what its page holds: tables shown (numbered) and
collapsed (audit tables), figures, lines of code and of prose, their ratio, the median code cell, and how many code
cells the page shows; then the book's totals. Counts the executed notebooks, so run it after `make book`.

    python scripts/book_counts.py
    python scripts/book_counts.py --sources   # the chapters' sources (notebooks/*.md) instead, no build needed

With ``--sources``: per chapter source, the non-blank lines of its code cells (the parameters cell included) and of
its Markdown (directives and headings included), the lines of the passages of its prose file
(``notebooks/prose/<chapter>.md``, the sentences its page module fills in; headings and the note to writers left out),
code against Markdown alone and against both, and its longest code cell in lines as written.

Code lines are the non-blank source lines of every code cell but the parameters cell; prose lines the non-blank lines
of markdown cells (headings and directive lines excepted) and of the markdown a cell computes (glued findings, run
boxes). A cell tagged remove-input or remove-cell (or hide-input) is not shown.
"""

from __future__ import annotations

import json
import re
import statistics

from recjudge.paths import project_root

NUMBERED_TABLE = re.compile(r'caption-number">Table')
AUDIT_TABLE = re.compile(r'<details class="recjudge-table-audit"')
FIGURE = re.compile(r"```\{glue:figure\}")
HIDDEN = {"remove-input", "remove-cell", "hide-input"}


def lines(source: str | list[str]) -> list[str]:
    text = "".join(source) if isinstance(source, list) else source
    return [line for line in text.splitlines() if line.strip()]


def chapter_counts(path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    shown_tables = audit_tables = figures = prose = 0
    code_cells = []
    shown_cells = 0
    for cell in notebook["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] == "markdown":
            body = lines(cell["source"])
            figures += sum(bool(FIGURE.search(line)) for line in body)
            prose += sum(1 for line in body if not line.startswith(("```", ":", "{glue", "+++", "#")))
            continue
        if cell["cell_type"] != "code" or "parameters" in tags or "injected-parameters" in tags:
            continue
        code_cells.append(len(lines(cell["source"])))
        shown_cells += not (tags & HIDDEN)
        for output in cell.get("outputs", []):
            for kind, value in output.get("data", {}).items():
                if kind.endswith("text/markdown"):  # computed prose: glued findings, run boxes
                    prose += len(lines(value))
            html = output.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            shown_tables += len(NUMBERED_TABLE.findall(html))
            audit_tables += len(AUDIT_TABLE.findall(html))
    code = sum(code_cells)
    return {"tables": shown_tables, "audit": audit_tables, "figures": figures, "code": code, "prose": prose,
            "ratio": code / prose if prose else float("nan"),
            "median_cell": statistics.median(code_cells) if code_cells else 0, "cells_shown": shown_cells,
            "cells": code_cells}


def source_counts(path) -> dict:
    """Code and Markdown lines of one chapter source (``--sources``)."""
    import jupytext

    cells = jupytext.read(path).cells
    code = [cell.source for cell in cells if cell.cell_type == "code"]
    return {"code": sum(len(lines(source)) for source in code),
            "markdown": sum(len(lines(cell.source)) for cell in cells if cell.cell_type != "code"),
            "longest": max((len(source.splitlines()) for source in code), default=0)}


def prose_file_lines(chapter: str) -> int:
    """Non-blank lines of the passages of a chapter's prose file (0 if it has none)."""
    path = project_root() / "notebooks" / "prose" / f"{chapter}.md"
    if not path.is_file():
        return 0
    passages = path.read_text(encoding="utf-8").split("\n## ")[1:]  # the note to writers comes before the first
    return sum(len(lines(passage)) - 1 for passage in passages)  # each passage's heading line left out


def main_sources() -> None:
    print(f"{'chapter source':28} {'code':>5} {'markdown':>8} {'prose file':>10} {'code:markdown':>13} "
          f"{'code:prose':>10} {'longest cell':>12}")
    rows = {path.stem: {**source_counts(path), "prose": prose_file_lines(path.stem)}
            for path in sorted((project_root() / "notebooks").glob("*.md"))}
    for name, row in rows.items():
        print(f"{name:28} {row['code']:5d} {row['markdown']:8d} {row['prose']:10d} "
              f"{row['code'] / row['markdown']:13.2f} {row['code'] / (row['markdown'] + row['prose']):10.2f} "
              f"{row['longest']:12d}")
    code, markdown, prose = (sum(r[key] for r in rows.values()) for key in ("code", "markdown", "prose"))
    print(f"{'all':28} {code:5d} {markdown:8d} {prose:10d} {code / markdown:13.2f} {code / (markdown + prose):10.2f} "
          f"{max(r['longest'] for r in rows.values()):12d}")


def main() -> None:
    import sys

    if "--sources" in sys.argv[1:]:
        return main_sources()
    paths = sorted((project_root() / "book" / "notebooks").glob("[!.]*.ipynb"))
    if not paths:
        raise SystemExit("no executed chapter: run `make book` first")
    header = f"{'chapter':34} {'tables':>6} {'audit':>5} {'figs':>4} {'code':>5} {'prose':>5} {'code:prose':>10} " \
             f"{'median cell':>11} {'cells shown':>11}"
    print(header)
    rows = {path.stem: chapter_counts(path) for path in paths}
    for name, row in rows.items():
        print(f"{name:34} {row['tables']:6d} {row['audit']:5d} {row['figures']:4d} {row['code']:5d} "
              f"{row['prose']:5d} {row['ratio']:10.2f} {row['median_cell']:11.1f} {row['cells_shown']:11d}")
    all_cells = [n for row in rows.values() for n in row["cells"]]
    code, prose = sum(r["code"] for r in rows.values()), sum(r["prose"] for r in rows.values())
    print(f"{'book':34} {sum(r['tables'] for r in rows.values()):6d} {sum(r['audit'] for r in rows.values()):5d} "
          f"{sum(r['figures'] for r in rows.values()):4d} {code:5d} {prose:5d} {code / prose:10.2f} "
          f"{statistics.median(all_cells):11.1f} {sum(r['cells_shown'] for r in rows.values()):11d}")


if __name__ == "__main__":
    main()
