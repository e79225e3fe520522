"""One renderer for every table the book shows: numbers formatted by kind, the paper's beside ours.

A reproduced table puts, for each metric, the paper's number and ours in adjacent columns (optionally their
difference) under a two-level header, metric -> paper / ours / Δ::

    from recjudge.compendium.tables import paper_beside_ours, correlation, error, count
    display(paper_beside_ours(ours, paper, keys=["method"],
                              metrics={"pearson": correlation(), "mae": error(), "n_pairs": count()},
                              difference=True, caption="Table 2 of Kang et al. (2025) beside ours",
                              full_table=("proxy_vs_llm", "table2")))

Other tables go through :func:`format_table`, with the same rules:

- correlations and other shares in per cent (the spec says whether the input is a fraction or already per cent),
  errors (MAE, RMSE) with 3 decimals, counts as integers with thousands separators, p-values as "< 0.001";
- a missing value is an en dash "–", never ``NaN`` or ``<NA>``; no scientific notation (1.9e-16 is "0.00");
- no index; headers in words (a ``labels`` mapping, else snake_case turned into a sentence-case phrase);
- a text column holding one value in every row is lifted into the caption ("Dataset: Serendipity-2018");
- the HTML is compact (small padding, tabular figures) so that some eight numeric columns fit the book's text column;
  long tables are saved in full with :func:`recjudge.compendium.results.save_table` and shown cut to ``max_rows``
  with a note naming the CSV (``full_table=(chapter, name)``).

The result is a :class:`Table`: ``_repr_html_`` for notebooks (class ``recjudge-table``, and ``paper-beside-ours``
for reproduced tables, which the browser test measures against the text column), a plain-text ``repr`` for
consoles, and ``.data``, the formatted cells as a DataFrame of strings.
"""

from __future__ import annotations

import functools
import html
import itertools
import math
import numbers
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

import pandas as pd

#: Shown for a missing value.
MISSING = "–"
#: CSS class of every rendered table, and the extra class of a paper-beside-ours table.
TABLE_CLASS = "recjudge-table"
PAPER_BESIDE_OURS_CLASS = "paper-beside-ours"

Kind = Literal["percent", "error", "count", "p_value", "number", "text"]
Scale = Literal["fraction", "percent"]

#: Words written in capitals (or a fixed spelling) when a header is derived from a column name.
ACRONYMS = {
    "mae": "MAE", "rmse": "RMSE", "mse": "MSE", "llm": "LLM", "llms": "LLMs", "id": "ID", "ids": "IDs",
    "sog": "SOG", "snpr": "SNPR", "purs": "PURS", "desr": "DESR", "bleu": "BLEU", "rouge": "ROUGE",
    "ndcg": "nDCG", "hr": "HR", "auc": "AUC", "ci": "CI", "cot": "CoT", "gpt": "GPT", "knn": "kNN", "msi": "MSI",
    "lsi": "LSI", "rbo": "RBO", "sd": "SD", "iqr": "IQR", "url": "URL", "csv": "CSV", "p": "p", "k": "k",
    "n": "n", "r": "r", "pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall",
    "movielens": "MovieLens",
}

#: The one map from a code identifier a table may hold (as a column name or as a row's label) to the words shown
#: for it. The results CSVs keep the identifiers (they are data); only the rendered tables show these words.
#: Identifiers not listed here are phrased by :func:`header_label` when they head a column, and kept as they are in
#: a cell (dataset field names such as ``s_ser_find`` are what a reader types to find them).
DISPLAY_NAMES: dict[str, str] = {
    # Serendipity-2018 ground-truth definitions (recjudge.serendipity.ground_truth)
    "unexpectedness_s4_s5_s6": "Unexpectedness, s4–s6 (primary)",
    "unexpectedness_complete": "Unexpectedness, s4–s6 all answered",
    "unexpectedness_s3r_s4_s5_s6": "Unexpectedness, 6−s3 and s4–s6",
    "unexpectedness_s3r_s5_s6": "Unexpectedness, 6−s3, s5, s6",
    "six_statements_s1_s6": "Novelty and unexpectedness, s1–s6",
    "novelty_unexpectedness_s1_s4_s5_s6": "Novelty and unexpectedness, s1 and s4–s6",
    "broadening_s8": "Broadened preferences, s8",
    # Serendipity proxy components (recjudge.serendipity.proxies)
    "history_dissimilarity": "Dissimilarity to the history",
    "unexpectedness_item": "Item unexpectedness",
    "unexpectedness_category": "Genre unexpectedness",
    "purs_unexpectedness": "PURS unexpectedness",
    "long_term_alignment": "Long-term alignment",
    "short_term_alignment": "Short-term alignment",
    # Rank similarities (recjudge.metamorphic.rank)
    "kendall_tau": "Kendall τ-b",
    "kendall_tau_shared": "Kendall τ-b, shared items",
    # Personality inputs (recjudge.serendipity.auxiliary_data)
    "big_five": "Big Five",
    "emotional_stability": "Emotional stability",
    # Explanation systems of the Lu et al. (2023) study (recjudge.data.lu2023): template-based, named by what they cite
    "attr_nonpersonal": "Movie attribute (not personalised)",
    "attr_personal": "Movie attribute (personalised)",
    "attr_peer": "Movie attribute, from peers",
    "attr_random": "Random movie attribute",
    "item_peer": "Similar movie, from peers",
    # BLEU and ROUGE options tried (recjudge.explanations.evaluators), "option=value" parts of a setting
    "tokenize=zh": "sacreBLEU zh tokens",
    "tokenize=char": "character tokens",
    "tokenize=jieba": "jieba word tokens",
    "tokenizer=char": "character tokens",
    "tokenizer=jieba": "jieba word tokens",
    "smooth_method=none": "no smoothing",
    "smooth_method=exp": "exponential smoothing",
}

#: A code identifier: lower-case words joined by underscores ("history_dissimilarity", "broadening_s8").
IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_])[a-z]+(?:_[a-z0-9]+)+(?![A-Za-z0-9_])")


def display_name(value: object) -> object:
    """The words shown for a cell holding a code identifier (:data:`DISPLAY_NAMES`), any identifier inside a short
    label ("curiosity + big_five") or part of a setting ("tokenize=zh, smooth_method=none") included; other values
    as they are."""
    if not isinstance(value, str):
        return value
    if value in DISPLAY_NAMES:
        return DISPLAY_NAMES[value]
    # A setting of options ("tokenize=zh, smooth_method=none"): each listed part in words.
    parts = value.split(", ")
    if len(parts) > 1 and any(part in DISPLAY_NAMES for part in parts):
        return ", ".join(str(display_name(part)) for part in parts)
    return IDENTIFIER.sub(lambda m: DISPLAY_NAMES.get(m.group(0), m.group(0)), value)


@dataclass(frozen=True)
class Format:
    """How one column is shown.

    ``kind``: ``percent`` (a share or correlation shown in per cent), ``error`` (MAE, RMSE), ``count`` (integer,
    thousands separators), ``p_value``, ``number`` (a plain decimal) or ``text``.
    ``decimals``: digits after the point (``None``: the kind's default: percent 1, error 3, number 2, p-value 3).
    ``scale``: for ``percent``, whether our input is a ``fraction`` (0.123 -> 12.3) or already a ``percent``;
    ``paper_scale`` the same for the paper's column (default: as ``scale``).
    ``label``: the header (default: derived from the column name; a percent header gets " (%)").
    ``p_threshold``: p-values below it are shown as "< threshold".
    """

    kind: Kind = "number"
    decimals: int | None = None
    scale: Scale = "fraction"
    paper_scale: Scale | None = None
    label: str | None = None
    p_threshold: float = 0.001

    def __post_init__(self) -> None:
        if self.kind not in _DEFAULT_DECIMALS:
            raise ValueError(f"unknown format kind {self.kind!r}; one of {sorted(_DEFAULT_DECIMALS)}")
        for name in ("scale", "paper_scale"):
            value = getattr(self, name)
            if value is not None and value not in ("fraction", "percent"):
                raise ValueError(f"{name} must be 'fraction' or 'percent', not {value!r}")
        if self.decimals is not None and not (isinstance(self.decimals, int) and 0 <= self.decimals <= 6):
            raise ValueError(f"decimals must be an integer from 0 to 6, not {self.decimals!r}")

    @property
    def digits(self) -> int:
        return _DEFAULT_DECIMALS[self.kind] if self.decimals is None else self.decimals

    @property
    def numeric(self) -> bool:
        return self.kind != "text"

    def header(self, column: str) -> str:
        label = self.label if self.label is not None else header_label(column)
        if self.kind == "percent" and self.label is None:
            label = f"{label} (%)"
        return label

    def to_display_units(self, values: pd.Series, *, paper: bool = False) -> pd.Series:
        """Numbers in the units shown (per cent for ``percent`` given as fractions); text left as it is."""
        if self.kind == "text":  # "2" or "1,000" in a text column is text, not a number to reformat
            return values.astype(object)
        numbers_ = _as_numbers(values)
        if self.kind == "percent":
            scale = (self.paper_scale or self.scale) if paper else self.scale
            if scale == "fraction":
                numbers_ = numbers_.map(lambda v: v * 100 if isinstance(v, float) else v)
        return numbers_

    def text(self, value: object) -> str:
        """One cell, in display units already (see :meth:`to_display_units`)."""
        if _is_missing(value):
            return MISSING
        if self.kind == "text" or not isinstance(value, float):
            return str(value)
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if self.kind == "count":
            return f"{round(value):,d}"
        if self.kind == "p_value":
            if value < self.p_threshold:
                return f"< {_plain(self.p_threshold)}"
            return _fixed(value, self.digits)
        return _fixed(value, self.digits)

    def difference_text(self, value: object) -> str:
        """A signed difference: "+1.2", "-0.8", "0.0" (no sign on a difference that rounds to zero)."""
        if _is_missing(value) or not isinstance(value, float):
            return MISSING
        digits = 0 if self.kind == "count" else self.digits
        body = f"{abs(value):,.{digits}f}" if self.kind == "count" else f"{abs(value):.{digits}f}"
        if float(body.replace(",", "")) == 0:
            return body
        return ("+" if value > 0 else "-") + body


_DEFAULT_DECIMALS = {"percent": 1, "error": 3, "count": 0, "p_value": 3, "number": 2, "text": 0}


def correlation(decimals: int = 1, *, scale: Scale = "fraction", paper_scale: Scale | None = None,
                label: str | None = None) -> Format:
    """Pearson, Spearman, Kendall (or any share) shown in per cent; ``scale`` says what the input is."""
    return Format("percent", decimals, scale, paper_scale, label)


def percent(decimals: int = 1, *, scale: Scale = "fraction", paper_scale: Scale | None = None,
            label: str | None = None) -> Format:
    """A share shown in per cent (the same as :func:`correlation`)."""
    return Format("percent", decimals, scale, paper_scale, label)


def error(decimals: int = 3, *, label: str | None = None) -> Format:
    """MAE, RMSE and other errors in the data's own units."""
    return Format("error", decimals, label=label)


def count(*, label: str | None = None) -> Format:
    """An integer with thousands separators."""
    return Format("count", label=label)


def p_value(decimals: int = 3, *, threshold: float = 0.001, label: str | None = None) -> Format:
    """A p-value: "< 0.001" below ``threshold``, else ``decimals`` digits."""
    return Format("p_value", decimals, label=label, p_threshold=threshold)


def number(decimals: int = 2, *, label: str | None = None) -> Format:
    """A plain decimal number."""
    return Format("number", decimals, label=label)


def text(*, label: str | None = None) -> Format:
    """Shown as it is."""
    return Format("text", label=label)


def mean_sd(frame: pd.DataFrame, metric: str, decimals: int = 2, scale: float = 100.0) -> list[str]:
    """"m ± s" per row from the columns ``<metric>_mean`` and ``<metric>_std`` (times ``scale``: percent points by
    default)."""
    pairs = frame[[f"{metric}_mean", f"{metric}_std"]].itertuples(index=False)
    return [f"{scale * m:.{decimals}f} ± {scale * s:.{decimals}f}" for m, s in pairs]


FormatLike = Union[Format, str]
_KIND_ALIASES = {
    "correlation": "percent", "pearson": "percent", "spearman": "percent", "kendall": "percent", "share": "percent",
    "percent": "percent", "mae": "error", "rmse": "error", "error": "error", "count": "count", "int": "count",
    "integer": "count", "p": "p_value", "p_value": "p_value", "pvalue": "p_value", "number": "number",
    "float": "number", "text": "text", "str": "text",
}


def as_format(spec: FormatLike) -> Format:
    """A :class:`Format` from a Format or a kind's name ("correlation", "error", "count", "p_value", ...)."""
    if isinstance(spec, Format):
        return spec
    if isinstance(spec, str) and spec.lower() in _KIND_ALIASES:
        return Format(_KIND_ALIASES[spec.lower()])  # type: ignore[arg-type]
    raise ValueError(f"unknown format {spec!r}: give a Format (correlation(), error(), count(), p_value(), "
                     f"number(), text()) or one of {sorted(_KIND_ALIASES)}")


def header_label(column: object) -> str:
    """A header in words from a column name: ``n_users`` -> "Number of users", ``llm_mae`` -> "LLM MAE",
    ``ground_truth`` -> "Ground truth"; a name of :data:`DISPLAY_NAMES` gets its words. In a name with spaces or
    capitals only the identifiers inside are put in words ("kendall_tau (p = 0.5)" -> "Kendall τ-b (p = 0.5)")."""
    name = str(column)
    if name in DISPLAY_NAMES:
        return DISPLAY_NAMES[name]
    if " " in name or name != name.lower():
        return IDENTIFIER.sub(lambda m: header_label(m.group(0)), name)
    words = [w for w in re.split(r"[_\s]+", name.strip("_")) if w]
    if not words:
        return name
    if words[0] == "n" and len(words) > 1:
        words = ["number", "of", *words[1:]]
    shown = [ACRONYMS.get(w.lower(), w) for w in words]
    first = shown[0]
    if words[0].lower() not in ACRONYMS:
        first = first[:1].upper() + first[1:]
    return " ".join([first, *shown[1:]])


# ---------------------------------------------------------------------------------------------------------------
# The rendered table


@dataclass
class Table:
    """A formatted table: ``data`` holds the cells as strings (MultiIndex columns for paper-beside-ours tables)."""

    data: pd.DataFrame
    caption: str | None = None
    note: str | None = None
    numeric_columns: frozenset = field(default_factory=frozenset)
    classes: tuple[str, ...] = (TABLE_CLASS,)
    #: The CSV holding the table in full, relative to the project root ("results/<chapter>/<name>.csv"); the book
    #: publishes ``results/`` beside its pages, so the note links to it.
    full_table: str | None = None
    #: Its number in the chapter ("Table 6.3." in chapter 6), given the first time a notebook displays a captioned
    #: table: a chapter runs in a kernel of its own, so its tables are numbered in the order the reader meets them.
    number: str | None = field(default=None, compare=False)
    #: An audit table (tuned values, fold sizes, variants of a computation): shown collapsed under its caption,
    #: unnumbered, so the page keeps the tables a reader needs to follow the argument.
    collapsed: bool = False

    def _repr_html_(self) -> str:
        if self.caption and self.number is None and not self.collapsed:
            chapter = chapter_number()
            self.number = f"{chapter}.{next(_TABLE_NUMBERS)}" if chapter else str(next(_TABLE_NUMBERS))
        return _to_html(self)

    def to_html(self) -> str:
        return _to_html(self)

    def __repr__(self) -> str:
        flat = self.data.copy()
        if isinstance(flat.columns, pd.MultiIndex):
            flat.columns = [" ".join(str(p) for p in col if p) for col in flat.columns]
        lines = [self.caption] if self.caption else []
        lines.append(flat.to_string(index=False))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


_CSS = (
    "<style>"
    f"table.{TABLE_CLASS}{{border-collapse:collapse;font-size:0.85em;line-height:1.3;margin:0.4em 0 0.2em;"
    "width:auto;max-width:100%}"
    f"table.{TABLE_CLASS} caption{{caption-side:top;text-align:left;font-size:0.95em;padding:0 0 0.3em;color:inherit}}"
    f"table.{TABLE_CLASS} th,table.{TABLE_CLASS} td{{padding:0.2em 0.45em;border:none;vertical-align:baseline}}"
    f"table.{TABLE_CLASS} thead th{{vertical-align:bottom}}"
    f"table.{TABLE_CLASS} thead th{{font-weight:600;text-align:center;border-bottom:1px solid #999}}"
    f"table.{TABLE_CLASS} thead th.key{{text-align:left}}"
    f"table.{TABLE_CLASS} thead th.group{{border-bottom:1px solid #999}}"
    f"table.{TABLE_CLASS} tbody tr:nth-child(even){{background:rgba(127,127,127,0.07)}}"
    f"table.{TABLE_CLASS} td.num{{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}}"
    f"table.{TABLE_CLASS} td.key{{text-align:left;max-width:16em}}"
    # Notes and differences are told apart by size and place, not faded: opacity takes text below WCAG AA's 4.5:1.
    f"p.{TABLE_CLASS}-note{{font-size:0.8em;margin:0 0 1em}}"
    # A table wider than a phone's screen scrolls in its own box, not the whole page.
    f"div.{TABLE_CLASS}-scroll{{overflow-x:auto;max-width:100%}}"
    f"details.{TABLE_CLASS}-audit{{margin:0.4em 0 0.8em}}"
    f"details.{TABLE_CLASS}-audit>summary{{cursor:pointer;font-size:0.9em}}"
    "</style>"
)


_TABLE_NUMBERS = itertools.count(1)


@functools.cache
def chapter_number() -> int | str | None:
    """The number of the chapter this kernel runs (``RECJUDGE_RUN_NAME`` under ``recjudge run``) in the book's table
    of contents, so its tables read "Table 6.3" like its figures ("Fig. 6.1"), or an appendix page's letter ("Table
    A.1"); None outside a numbered chapter or an appendix."""
    from recjudge.compendium.toc import NOTEBOOK_CHAPTERS, TOC_FILE, chapter_labels
    from recjudge.paths import RUN_NAME_ENV, project_root

    run = os.environ.get(RUN_NAME_ENV, "").strip()
    toc = project_root() / TOC_FILE
    if not run or not toc.is_file():
        return None
    return chapter_labels(toc).get(NOTEBOOK_CHAPTERS + run)
#: From a chapter's page (book/notebooks/<chapter>.html) to the book's root, where ``results/`` is published.
PAGE_TO_ROOT = "../../"


def _header_html(header: object) -> str:
    """A header's HTML: a line break written in a label ("MR1:\\nMultiply") breaks the header there, so a narrow
    numeric column keeps a long header without widening the table."""
    return html.escape(str(header)).replace("\n", "<br>")


def _to_html(table: Table) -> str:
    data = table.data
    escape = html.escape
    out = [_CSS]
    if table.collapsed:
        out.append(f'<details class="{TABLE_CLASS}-audit"><summary>{escape(table.caption or "Audit table")}</summary>')
    out.append(f'<div class="{TABLE_CLASS}-scroll"><table class="{" ".join(table.classes)}">')
    if table.caption and not table.collapsed:
        number = f'<span class="caption-number">Table {table.number}. </span>' if table.number else ""
        out.append(f"<caption>{number}{escape(table.caption)}</caption>")
    out.append("<thead>")
    columns = list(data.columns)
    if isinstance(data.columns, pd.MultiIndex):
        # Row 1: key headers spanning both rows, metric headers spanning their paper/ours/Δ columns.
        row = ["<tr>"]
        i = 0
        while i < len(columns):
            top, sub = columns[i]
            if sub == "":
                row.append(f'<th class="key" rowspan="2" scope="col">{_header_html(top)}</th>')
                i += 1
                continue
            span = 1
            while i + span < len(columns) and columns[i + span][0] == top and columns[i + span][1] != "":
                span += 1
            row.append(f'<th class="group" colspan="{span}" scope="colgroup">{_header_html(top)}</th>')
            i += span
        row.append("</tr>")
        out.append("".join(row))
        out.append("<tr>" + "".join(f'<th scope="col">{_header_html(sub)}</th>' for _, sub in columns if sub != "")
                   + "</tr>")
    else:
        out.append("<tr>" + "".join(
            f'<th class="{"num" if c in table.numeric_columns else "key"}" scope="col">{_header_html(c)}</th>'
            for c in columns) + "</tr>")
    out.append("</thead><tbody>")
    kinds = []
    for column in columns:
        if column in table.numeric_columns:
            kinds.append("num diff" if isinstance(column, tuple) and column[1] == DIFFERENCE else "num")
        else:
            kinds.append("key")
    for values in data.itertuples(index=False, name=None):
        out.append("<tr>" + "".join(f'<td class="{kind}">{escape(str(v))}</td>' for kind, v in zip(kinds, values))
                   + "</tr>")
    out.append("</tbody></table></div>")
    if table.note:
        note = escape(table.note)
        if table.full_table:
            path = escape(table.full_table)
            note = note.replace(path, f'<a href="{PAGE_TO_ROOT}{path}">{path}</a>')
        out.append(f'<p class="{TABLE_CLASS}-note">{note}</p>')
    if table.collapsed:
        out.append("</details>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# The two entry points

PAPER, OURS, DIFFERENCE = "paper", "ours", "Δ"


def format_table(df: pd.DataFrame, formats: Mapping[str, FormatLike] | None = None, *,
                 labels: Mapping[str, str] | None = None, caption: str | None = None,
                 full_table: tuple[str, str] | str | None = None, max_rows: int | None = None,
                 lift_constant: bool = True, audit: bool = False) -> Table:
    """Any table, formatted by column: ``formats`` maps a column to a :class:`Format` or a kind's name.

    Columns without a format: integers are counts, other numbers have 2 decimals, the rest is text. The index is
    dropped (reset it first if it holds data). ``labels`` overrides headers; a text column with one value in every
    row (of several) goes into the caption; ``max_rows`` cuts the table shown, and ``full_table`` names the CSV
    holding it in full ("full table: results/<chapter>/<name>.csv"). ``audit``: a table kept for the record rather
    than the argument (tuned values, fold sizes, variants of a computation), shown collapsed and unnumbered."""
    formats = dict(formats or {})
    unknown = sorted(set(formats) - set(map(str, df.columns)))
    if unknown:
        raise KeyError(f"formats name column(s) {unknown} that the table does not have; columns: {list(df.columns)}")
    specs = {column: as_format(formats[column]) if column in formats else _default_format(df[column])
             for column in df.columns}
    labels = dict(labels or {})
    df = df.reset_index(drop=True)

    lifted, dropped = _lift_constant(df, [c for c in df.columns if not specs[c].numeric], labels) \
        if lift_constant else ([], [])
    keep = [c for c in df.columns if c not in dropped]
    total = len(df)
    shown = df[keep] if max_rows is None else df[keep].head(max_rows)

    cells = {}
    numeric = set()
    for column in keep:
        spec = specs[column]
        header = labels.get(column, spec.header(column) if spec.numeric else (spec.label or header_label(column)))
        if header in cells:
            raise ValueError(f"two columns would both be headed {header!r}: give `labels`")
        values = shown[column] if spec.numeric else shown[column].map(display_name)
        cells[header] = spec.to_display_units(values).map(spec.text)
        if spec.numeric:
            numeric.add(header)
    data = pd.DataFrame(cells, index=range(len(shown)))
    return Table(data, _caption(caption, lifted), _note(full_table, len(shown), total), frozenset(numeric),
                 full_table=_full_table_path(full_table), collapsed=audit)


def paper_beside_ours(ours: pd.DataFrame, paper: pd.DataFrame, keys: Sequence[str] | str,
                      metrics: Mapping[str, FormatLike] | Sequence[str], *,
                      difference: bool | Iterable[str] = False, labels: Mapping[str, str] | None = None,
                      caption: str | None = None, full_table: tuple[str, str] | str | None = None,
                      max_rows: int | None = None, long: tuple[str, str] | None = None,
                      order: Literal["paper", "ours"] = "paper", names: tuple[str, str] = (PAPER, OURS),
                      lift_constant: bool = True, audit: bool = False) -> Table:
    """The paper's numbers beside ours, joined on ``keys``: for each metric, paper | ours (| Δ = ours - paper).

    ``ours`` and ``paper`` are wide (one column per metric) or long (``long=("metric", "value")``: one row per key
    and metric). ``metrics`` maps each metric column to its :class:`Format` (or a kind's name; a plain list means
    numbers with 2 decimals). Rows are matched on ``keys`` (outer join: a row only one side has shows "–" on the
    other); they come in the paper's order, then ours not in the paper (``order="ours"`` for the reverse). A metric
    only one side has gets only that side's column.
    ``difference`` adds Δ for every numeric metric (``True``) or for the metrics named (never for p-values or
    text). Headers, caption, ``full_table`` and ``max_rows`` as in :func:`format_table`; ``names`` are the
    sub-headers of the two sides; ``audit`` as in :func:`format_table`."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise ValueError("paper_beside_ours needs at least one key column to join on")
    specs = {m: Format() for m in metrics} if not isinstance(metrics, Mapping) else \
        {m: as_format(s) for m, s in metrics.items()}
    if not specs:
        raise ValueError("paper_beside_ours needs at least one metric")
    labels = dict(labels or {})
    if long is not None:
        ours, paper = _wide(ours, keys, long, "ours"), _wide(paper, keys, long, "paper")
    for side, frame in (("ours", ours), ("paper", paper)):
        missing = [c for c in keys if c not in frame.columns]
        if missing:
            raise KeyError(f"{side} has no key column(s) {missing}; columns: {list(frame.columns)}")
        duplicated = frame[frame.duplicated(keys, keep=False)][keys]
        if len(duplicated):
            raise ValueError(f"{side} has several rows for the same key(s): "
                             f"{duplicated.drop_duplicates().to_dict('records')}")
    absent = [m for m in specs if m not in ours.columns and m not in paper.columns]
    if absent:
        raise KeyError(f"metric(s) {absent} are in neither table; ours: {list(ours.columns)}, "
                       f"paper: {list(paper.columns)}")
    with_difference = set(specs) if difference is True else set() if difference is False else set(difference)
    unknown = sorted(with_difference - set(specs))
    if unknown:
        raise KeyError(f"difference asked for metric(s) {unknown} that are not among the metrics {list(specs)}")

    ours_part = ours[keys + [m for m in specs if m in ours.columns]].copy()
    paper_part = paper[keys + [m for m in specs if m in paper.columns]].copy()
    for key in keys:  # join 1 with "1" rather than failing on the dtype
        if ours_part[key].dtype != paper_part[key].dtype:
            ours_part[key] = ours_part[key].astype(str)
            paper_part[key] = paper_part[key].astype(str)
    first, second = (paper_part, ours_part) if order == "paper" else (ours_part, paper_part)
    first = first.assign(_first=range(len(first)))
    second = second.assign(_second=range(len(second)))
    merged = first.merge(second, on=keys, how="outer", suffixes=("_1", "_2"), indicator=False, sort=False)
    merged = merged.sort_values(["_first", "_second"], na_position="last", kind="stable").reset_index(drop=True)

    def side_values(metric: str, side: str) -> pd.Series:
        part = paper_part if side == "paper" else ours_part
        if metric not in part.columns:
            return pd.Series([float("nan")] * len(merged), index=merged.index)
        if metric in merged.columns:  # only this side has the column
            return merged[metric]
        which = "_1" if (side == "paper") == (order == "paper") else "_2"
        return merged[metric + which]

    lifted, dropped = _lift_constant(merged, keys, labels) if lift_constant else ([], [])
    kept_keys = [k for k in keys if k not in dropped]
    total = len(merged)
    rows = merged.index if max_rows is None else merged.index[:max_rows]

    columns: dict[tuple[str, str], pd.Series] = {}
    numeric = set()
    for key in kept_keys:
        columns[(labels.get(key, header_label(key)), "")] = merged.loc[rows, key].map(
            lambda v: MISSING if _is_missing(v) else str(display_name(v)))
    for metric, spec in specs.items():
        header = labels.get(metric, spec.header(metric))
        theirs = spec.to_display_units(side_values(metric, "paper"), paper=True).loc[rows]
        mine = spec.to_display_units(side_values(metric, "ours")).loc[rows]
        # A metric only one side reports gets only that side's column.
        sides = [(name, values) for name, values, part in ((names[0], theirs, paper_part), (names[1], mine, ours_part))
                 if metric in part.columns]
        for name, values in sides:
            columns[(header, name)] = values.map(spec.text)
            if spec.numeric:
                numeric.add((header, name))
        if metric in with_difference and len(sides) == 2 and spec.kind not in ("text", "p_value"):
            delta = [m - t if isinstance(m, float) and isinstance(t, float) else float("nan")
                     for m, t in zip(mine, theirs)]
            columns[(header, DIFFERENCE)] = pd.Series(delta, index=rows).map(spec.difference_text)
            numeric.add((header, DIFFERENCE))
    data = pd.DataFrame({k: v.to_numpy() for k, v in columns.items()}, index=range(len(rows)))
    data.columns = pd.MultiIndex.from_tuples(list(columns))
    return Table(data, _caption(caption, lifted), _note(full_table, len(rows), total), frozenset(numeric),
                 (TABLE_CLASS, PAPER_BESIDE_OURS_CLASS), full_table=_full_table_path(full_table), collapsed=audit)


# ---------------------------------------------------------------------------------------------------------------
# Helpers


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and value.strip().lower() in ("", "nan", "<na>", MISSING):
        return True
    try:
        return bool(pd.isna(value)) if not isinstance(value, (str, bytes)) else False
    except (TypeError, ValueError):
        return False


def _as_number(value: object) -> object:
    """A float for anything numeric (numpy scalars, numeric strings), None when missing, else the value."""
    if _is_missing(value):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", "").replace("−", "-"))
        except ValueError:
            return None if value.strip().lower() in _MISSING_WORDS else value
    return value


def _as_numbers(values: pd.Series) -> pd.Series:
    return pd.Series([_as_number(v) for v in values], index=values.index, dtype=object)


_MISSING_WORDS = {"-", "n/a", "na", "none", "null", "nan"}


def _plain(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".")


def _fixed(value: float, digits: int) -> str:
    shown = f"{value:.{digits}f}"
    return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown  # no "-0.00"


def _default_format(column: pd.Series) -> Format:
    if pd.api.types.is_bool_dtype(column):
        return Format("text")
    if pd.api.types.is_integer_dtype(column):
        return Format("count")
    if pd.api.types.is_numeric_dtype(column):
        return Format("number")
    return Format("text")


def _lift_constant(df: pd.DataFrame, candidates: Sequence[str], labels: Mapping[str, str]
                   ) -> tuple[list[str], list[str]]:
    """Which ``candidates`` hold one (non-missing) value in every row of several: the caption's phrases
    ["Label: value", ...] and the columns lifted."""
    lifted = []
    if len(df) > 1:
        for column in candidates:
            values = df[column]
            if values.map(_is_missing).any():
                continue
            distinct = values.astype(str).unique()
            if len(distinct) == 1:
                lifted.append(column)
    # Keep at least one column to read rows by.
    if lifted and len(lifted) == len(df.columns):
        lifted = lifted[:-1]
    phrases = [f"{labels.get(c, header_label(c))}: {display_name(df[c].iloc[0])}" for c in lifted]
    return phrases, lifted


def _caption(caption: str | None, lifted: list[str]) -> str | None:
    parts = [caption.rstrip()] if caption else []
    if lifted:
        if parts and not parts[0].endswith((".", ":", "?", "!")):
            parts[0] += "."
        parts.append("; ".join(lifted) + ".")
    return " ".join(parts) or None


def _full_table_path(full_table: tuple[str, str] | str | None) -> str | None:
    if full_table is None or isinstance(full_table, str):
        return full_table
    chapter, name = full_table
    return f"results/{chapter}/{name}.csv"


def _note(full_table: tuple[str, str] | str | None, shown: int, total: int) -> str | None:
    cut = f"Showing {shown:,d} of {total:,d} rows." if shown < total else None
    path = _full_table_path(full_table)
    if path is None:
        return cut
    full = f"Full table: {path}"
    return f"{cut} {full}" if cut else full


def _wide(frame: pd.DataFrame, keys: list[str], long: tuple[str, str], side: str) -> pd.DataFrame:
    metric, value = long
    missing = [c for c in (*keys, metric, value) if c not in frame.columns]
    if missing:
        raise KeyError(f"{side} (long form) has no column(s) {missing}; columns: {list(frame.columns)}")
    duplicated = frame[frame.duplicated([*keys, metric], keep=False)]
    if len(duplicated):
        raise ValueError(f"{side} has several values for the same key and metric: "
                         f"{duplicated[[*keys, metric]].drop_duplicates().to_dict('records')}")
    order = frame[keys].drop_duplicates()
    wide = frame.pivot(index=keys, columns=metric, values=value).reset_index()
    wide.columns.name = None
    return order.merge(wide, on=keys, how="left")


__all__ = ["Format", "Table", "MISSING", "TABLE_CLASS", "PAPER_BESIDE_OURS_CLASS", "correlation", "percent",
           "error", "count", "p_value", "number", "text", "as_format", "header_label", "display_name",
           "DISPLAY_NAMES", "format_table",
           "paper_beside_ours"]
