"""The frame every chapter shares: an opening box saying what this run is, a closing verdict whose numbers come from
the computation, and download links to the chapter's notebook and result tables.

Each function returns an ``IPython.display.Markdown`` object; the book reads displayed Markdown as MyST
(``nb_render_markdown_format: myst`` in ``_config.yml``), so admonitions and roles render as in prose pages.

A name a reader chose (a judge's label, model, served name or base URL) holds no markup: it is refused where it
enters (``recjudge.llm.judge_spec.reader_text``), so the frame shows it as it is.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from IPython.display import Markdown

from recjudge.llm import reading_changes
from recjudge.paths import project_root, results_dir

if TYPE_CHECKING:
    import pandas as pd

#: CSS class of the opening box and of the verdict (the browser test looks for them).
OPENING_CLASS = "run-facts"
VERDICT_CLASS = "verdict"


def myst_text(value: object) -> str:
    """``value`` as literal text inside MyST Markdown: one line (control characters and line separators become
    spaces) with every character that can open markup backslash-escaped, so a folder or run name written into a
    box (a variant's, a chapter's) can open no directive, role, HTML tag, link, math or emphasis, and renders as
    written. (A reader's judge's names need none of it: they hold no markup, ``judge_spec.reader_text``.)"""
    text = "".join(" " if unicodedata.category(char)[0] in "CZ" and char != " " else char for char in str(value))
    return "".join(f"\\{char}" if char in _MARKUP_CHARACTERS else char for char in text)


#: What can open markup in the middle of a line of MyST (a line break cannot reach: ``myst_text`` removes it). An
#: underscore is left as it is: the underscores of names such as q4_1 are never emphasis.
_MARKUP_CHARACTERS = frozenset("\\`*{}[]()<>#!|~$&^")


#: What prose says for a statistic that is not defined (a missing number, NaN): never Python's "nan".
UNDEFINED = "undefined"


def fmt(value: float, decimals: int = 1) -> str:
    """A number for prose: fixed decimals, a true minus sign, and no "-0.0" for a value that rounds to zero; an
    undefined one (NaN) is ``UNDEFINED``."""
    if value != value:  # NaN, whatever its type
        return UNDEFINED
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "\u2212")


#: This book's own threshold (no paper states one): a number measured on fewer answers than this is not shown as a
#: number but as "too few answers (n)": in the headline table, the claims' key numbers, the findings and the verdicts.
MIN_ANSWERS = 10


def too_few(n: float | None) -> bool:
    """Whether a number measured on ``n`` answers (users, texts, cases) is too few to read (``MIN_ANSWERS``); an
    unknown n is not."""
    try:
        value = float(n)
    except (TypeError, ValueError):
        return False
    return value < MIN_ANSWERS  # NaN (unknown) compares False


def too_few_text(n: float, noun: str = "answers", detail: str = "") -> str:
    """"too few answers (5)", or with ``detail`` "too few answers (5–6 per held-out half)"."""
    return f"too few {noun} ({detail or f'{int(n):,}'})"


def unless_too_few(text: str, n: float | None, noun: str = "answers", detail: str = "") -> str:
    """``text`` when the number it states rests on at least ``MIN_ANSWERS`` answers; else "too few answers (n)"."""
    return too_few_text(n, noun, detail) if too_few(n) else text


def unless_too_few_rows(frame: "pd.DataFrame", columns: Sequence[str], n_column: str = "n", noun: str = "answers",
                        n_max_column: str | None = None, per: str = "") -> "pd.DataFrame":
    """``frame`` as a table shows it: in each row whose ``n_column`` is below ``MIN_ANSWERS`` (and above 0), every
    one of ``columns`` reads "too few answers (n)" (with ``n_max_column``, "too few answers (5–6 per held-out half)"
    when ``per`` is " per held-out half"); the saved table keeps every number."""
    shown = frame.copy().astype({column: object for column in columns if column in frame})
    for index, row in frame.iterrows():
        n = row[n_column]
        if not too_few(n) or not n:
            continue
        high = row[n_max_column] if n_max_column and n_max_column in frame else n
        detail = (f"{int(n)}" if int(high) == int(n) else f"{int(n)}–{int(high)}") + per
        for column in columns:
            if column in shown:
                shown.at[index, column] = too_few_text(n, noun, detail if per or high != n else "")
    return shown


def count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 user", "3 users", "1,024 replies": a count and its noun in the right number (``plural`` for irregular
    nouns; the default adds "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def judges_in(names: Iterable[str], judges: Mapping[str, Iterable[str]]) -> str:
    """The judges whose rows or columns a table holds, for its caption: each judge of ``judges`` (its label -> the
    names its rows or columns go by) with a name among ``names``, in order ("SmolLM2-135M and gpt-4o-mini"), so a
    caption never names a judge the table lacks nor leaves out one it holds."""
    held = set(names)
    found = [label for label, own in judges.items() if held & set(own)]
    if not found:
        return "no LLM judge"
    return found[0] if len(found) == 1 else ", ".join(found[:-1]) + " and " + found[-1]


def capable_judge_advice(judges: Sequence[Mapping[str, object]]) -> str:
    """The end of a chapter's caveat on its tiny judge: how to test the paper's claim with a capable one, or, in a
    variant that ran a reader's ``judges`` (the chapter's parameter), where their rows are."""
    if not judges:
        return "Run the book with a capable judge (`recjudge run --judge SPEC`) to test the paper's claim."
    from recjudge.llm.judge_spec import reader_labels

    names = ", ".join(reader_labels(judges))
    return (f"This variant ran your judge{'s' if len(judges) > 1 else ''} ({names}) beside it: "
            f"{'their' if len(judges) > 1 else 'its'} rows, with their n and 95% intervals, are the ones that "
            "speak to the paper's claim.")


def percent(value: float, decimals: int = 1) -> str:
    """"12.3%" for prose, or ``UNDEFINED`` (no unit) when the value is NaN."""
    text = fmt(value, decimals)
    return text if text == UNDEFINED else f"{text}%"


def span(low: float, high: float, decimals: int = 2) -> str:
    """A range for prose, "0.12–0.48", or the one value when both ends print the same ("0.00", not "0.00–0.00")."""
    a, b = fmt(low, decimals), fmt(high, decimals)
    return a if a == b else f"{a}–{b}"


def glue_text(values: Mapping[str, object]) -> None:
    """Glue each value under its key (not displayed): a ``Markdown`` value as Markdown, for a ``{glue:md}`` role,
    any other as text, for the ``{glue:text}`` roles of a chapter's prose."""
    from myst_nb import glue

    for key, value in values.items():
        glue(key, value if isinstance(value, Markdown) else str(value), display=False)


def opening(facts: Sequence[tuple[str, str]], caveat: str | None = None) -> Markdown:
    """The box that opens a chapter: what this run is (data, judges, sample, what is real, partial or synthetic),
    one fact per line, and at most one caveat, said once for the whole chapter."""
    lines = ["```{admonition} What this run is", f":class: note {OPENING_CLASS}", ""]
    lines += [f"- **{label}:** {text}" for label, text in facts]
    if caveat:
        lines += ["", caveat]
    lines.append("```")
    return Markdown("\n".join(lines))


def verdict(findings: Iterable[str], question: str | None = None) -> Markdown:
    """The closing verdict: the paper's question answered from this book's numbers, one finding per bullet."""
    lines = ["```{admonition} Verdict", f":class: tip {VERDICT_CLASS}", ""]
    if question:
        lines += [f"*{question}*", ""]
    lines += [f"- {finding}" for finding in findings]
    lines.append("```")
    return Markdown("\n".join(lines))


def downloads(chapter: str, notebook: str | None = None) -> Markdown:
    """Links to download the chapter's source notebook and every result table it wrote (``results/<chapter>/``), and
    what the recorded changes of the reply-reading rules moved among the replies the chapter reads
    (``llm.reading_changes``).

    Paths are relative to the executed notebook in ``book/notebooks/``, which is where Sphinx resolves them."""
    notebook = notebook or chapter
    # A chapter's source is MyST markdown text (read with jupytext) or a Jupyter notebook.
    text_source = (project_root() / "notebooks" / f"{notebook}.md").is_file()
    source = f"{notebook}.md" if text_source else f"{notebook}.ipynb"
    # Commands in code spans: in prose, "--" would be typeset as a dash. The notebook is written outside the
    # checkout, which stays clean.
    alone = (f"`jupytext --to ipynb -o /tmp/{notebook}.ipynb notebooks/{source}`, then papermill"
             if text_source else "papermill")
    lines = [f"- {{download}}`The parameterised notebook <../../notebooks/{source}>`: to adapt it, copy it under a "
             f"new name ({{doc}}`../adapt_chapter`); to run it alone, {alone}"]
    folder = results_dir() / chapter
    tables = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if tables:
        links = ", ".join(f"{{download}}`{path.stem} <../../results/{chapter}/{path.name}>`" for path in tables)
        lines.append(f"- Result tables (CSV): {links}")
    # How many stored replies the last changes of the reading rules moved, from the committed record (no git needed)
    if (readings := reading_changes.chapter_sentence(chapter, notebook=notebook)) is not None:
        lines.append(f"- {readings}")
    return Markdown("\n".join(lines))

