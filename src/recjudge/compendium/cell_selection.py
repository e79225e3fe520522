"""Which cells of a notebook a run executes: cells for one variant of a chapter, cells whose data are present, and in
a plan pass the cells up to the chapter's last judge call (:data:`PLAN_ENDS_TAG`).

**Variants.** One notebook can serve several runs (the real study, a pipeline demonstration on synthetic data). A
cell tagged ``only:NAME`` runs only in runs whose ``variant`` (run plan) is NAME; runs without a variant are
``default``. Untagged cells run in every variant. This is how the synthetic run gets its own title and introduction
and never shows the paper's numbers.

**Data needed.** Chapters whose data are absent still render: the cells that need a missing dataset are left out and
a labelled box says what is missing, under which licence, and how to obtain it. A notebook marks a cell that cannot
run without dataset NAME with the cell tag ``needs:NAME`` (a name from ``recjudge data list``). When a run declares
NAME in its ``datasets`` (run plan) and no folder holds it, the run executes the notebook without those cells, and
with a "Data needed" box after its title. Cells without such a tag (the method, prompts, the paper's own numbers,
whatever else can be computed) run as usual. A run that does not declare NAME (say, the same notebook on a synthetic
fixture) keeps every cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import nbformat

from recjudge.data.fetch import locate
from recjudge.data.registry import get_spec
from recjudge.paths import DATA_MIRROR_ENV

NEEDS_TAG_PREFIX = "needs:"
#: Tag of a chapter's last cell that asks a judge. A plan pass (``recjudge run --plan``) only counts what the chapters
#: would ask, so it executes each notebook up to that cell and no further: what follows draws the page from replies
#: a plan does not have (a test checks that no cell after it calls a function that asks a judge).
PLAN_ENDS_TAG = "plan-ends-here"
#: Tag of a cell before a chapter's plan end that only feeds the page (an ensemble average, a bootstrap, a table): a
#: plan pass skips it, so that a plan takes seconds, not the minutes the page's analysis takes. No cell a plan keeps
#: may read a name that only such a cell binds (a test checks every notebook).
PLAN_SKIP_TAG = "plan-skip"
ONLY_TAG_PREFIX = "only:"
DEFAULT_VARIANT = "default"
#: Tag of the inserted box, so that tests and readers of the executed notebook can find it.
DATA_NEEDED_TAG = "data-needed"


def missing_datasets(names: Iterable[str]) -> list[str]:
    """The names among ``names`` that no folder holds (mirror, data/raw or committed sample)."""
    return [name for name in names if locate(name) is None]


def needed_datasets(cell: nbformat.NotebookNode) -> set[str]:
    """Datasets a cell declares it needs through ``needs:NAME`` tags."""
    tags = cell.get("metadata", {}).get("tags", [])
    return {tag[len(NEEDS_TAG_PREFIX):] for tag in tags if tag.startswith(NEEDS_TAG_PREFIX)}


def variants_of(cell: nbformat.NotebookNode) -> set[str]:
    """Variants a cell is restricted to through ``only:NAME`` tags (empty: every variant)."""
    tags = cell.get("metadata", {}).get("tags", [])
    return {tag[len(ONLY_TAG_PREFIX):] for tag in tags if tag.startswith(ONLY_TAG_PREFIX)}


def notebook_for_variant(notebook: nbformat.NotebookNode, variant: str | None) -> nbformat.NotebookNode:
    """``notebook`` without the cells restricted to other variants (the same object when none is)."""
    variant = variant or DEFAULT_VARIANT
    kept = [cell for cell in notebook.cells if not variants_of(cell) or variant in variants_of(cell)]
    if len(kept) == len(notebook.cells):
        return notebook
    return nbformat.from_dict(dict(notebook, cells=kept))


def notebook_for_plan(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``notebook`` up to and including its last cell tagged :data:`PLAN_ENDS_TAG`, without the cells tagged
    :data:`PLAN_SKIP_TAG` (the same object when no cell is tagged either way: the whole notebook is executed)."""
    def tags(cell: nbformat.NotebookNode) -> list[str]:
        return cell.get("metadata", {}).get("tags", [])

    ends = [index for index, cell in enumerate(notebook.cells) if PLAN_ENDS_TAG in tags(cell)]
    upto = notebook.cells[:ends[-1] + 1] if ends else notebook.cells
    kept = [cell for cell in upto if PLAN_SKIP_TAG not in tags(cell)]
    if len(kept) == len(notebook.cells):
        return notebook
    return nbformat.from_dict(dict(notebook, cells=kept))


def data_needed_markdown(missing: Sequence[str], n_cells_left_out: int) -> str:
    """The box that opens a chapter whose data are absent (MyST admonition)."""
    specs = [get_spec(name) for name in missing]
    titles = ", ".join(spec.title for spec in specs)
    lines = [f"```{{admonition}} Data needed: {titles}", ":class: warning", ""]
    lines.append(f"This build has no copy of the data this chapter analyses, so {n_cells_left_out} step"
                 f"{'s' if n_cells_left_out != 1 else ''} that need them were left out; everything that can be "
                 "computed without them is shown below.")
    lines.append("")
    for spec in specs:
        redistribution = "may be redistributed" if spec.redistributable else "may not be redistributed"
        lines.append(f"- **{spec.title}** (`{spec.name}`, {redistribution}). Licence: {spec.licence}")
        how = (f"  Obtain it from <{spec.page_url}>, then put its files in `${DATA_MIRROR_ENV}/{spec.name}/` "
               f"(the mirror folder)")
        how += (f" or run `recjudge data fetch {spec.name}` with network access." if not spec.no_download_reason
                else f"; it cannot be downloaded automatically ({spec.no_download_reason}).")
        lines.append(how)
    lines.append("")
    lines.append("Then `make book` rebuilds this chapter in full.")
    lines.append("```")
    return "\n".join(lines)


def notebook_for_available_data(notebook: nbformat.NotebookNode, declared: Sequence[str]
                                ) -> tuple[nbformat.NotebookNode, list[str]]:
    """``notebook`` without the cells that need a declared, missing dataset, with the box after its first Markdown
    cell; returned unchanged (same object) when nothing is missing. Also returns the missing names."""
    missing = missing_datasets(declared)
    if not missing:
        return notebook, []
    kept = [cell for cell in notebook.cells if not needed_datasets(cell) & set(missing)]
    left_out = len(notebook.cells) - len(kept)
    # Only the datasets whose absence removed something are named.
    named = [name for name in missing if any(name in needed_datasets(cell) for cell in notebook.cells)]
    if not named:
        return notebook, []
    box = nbformat.v4.new_markdown_cell(data_needed_markdown(named, left_out))
    box.metadata["tags"] = [DATA_NEEDED_TAG]
    box["id"] = DATA_NEEDED_TAG  # a fixed id keeps the executed notebook identical from build to build
    first_markdown = next((i for i, cell in enumerate(kept) if cell.cell_type == "markdown"), -1)
    kept.insert(first_markdown + 1, box)
    reduced = nbformat.from_dict(dict(notebook, cells=kept))
    return reduced, named
