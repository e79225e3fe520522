"""A Sphinx extension numbering the figures of the book's appendix pages under their letter ("Fig. A.1").

Sphinx numbers the figures of a page outside the numbered parts 1, 2, ... (across all such pages), which reads like
a chapter's "Fig. 1" elsewhere in the book. The appendix pages (``_toc.yml``'s parts whose caption starts with
"Appendix", :func:`recjudge.compendium.toc.appendix_letters`) get their letter instead, counted per page, as their
tables do (:func:`recjudge.compendium.tables.chapter_number`); ``{numref}`` references follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from recjudge.compendium.sphinx_extension import source_version
from recjudge.compendium.toc import TOC_FILE, appendix_letters

Numbers = Mapping[str, Mapping[str, tuple]]


def lettered(numbers: Numbers, letter: str) -> dict[str, dict[str, tuple]]:
    """One page's figure numbers (figure type -> id -> number tuple) as letter.1, letter.2, ... in their order on
    the page; numbers already lettered stay as they are (an incremental build keeps the renumbered environment)."""
    out: dict[str, dict[str, tuple]] = {}
    for figtype, by_id in numbers.items():
        if all(number and number[0] == letter for number in by_id.values()):
            out[figtype] = dict(by_id)
            continue
        order = sorted(by_id, key=lambda figure_id: tuple(by_id[figure_id]))
        out[figtype] = {figure_id: (letter, i) for i, figure_id in enumerate(order, start=1)}
    return out


def _letter_appendix_figures(app, builder=None) -> None:  # noqa: ANN001 (Sphinx's event arguments)
    env = app.env
    toc = Path(app.srcdir) / TOC_FILE
    if not toc.is_file():
        return
    for docname, letter in appendix_letters(toc).items():
        if docname in env.toc_fignumbers:
            env.toc_fignumbers[docname] = lettered(env.toc_fignumbers[docname], letter)


def setup(app) -> dict[str, bool | int]:  # noqa: ANN001 (Sphinx application)
    """Sphinx entry point: renumber the appendix pages' figures once every figure has its number (before writing)."""
    app.connect("write-started", _letter_appendix_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": source_version(__file__)}


__all__ = ["lettered", "setup"]
