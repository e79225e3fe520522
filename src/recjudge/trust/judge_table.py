"""Every judge the book knows, on one scale: the book's headline table and figure.

A judge is worth what it does for the use the papers put it to: ranking items (which list is more serendipitous,
which explanation better) more than reproducing a rating. So each row gives

- **Pearson with the users** (pooled over the answers where the reading is known) and its 95% interval: the papers'
  rows at the paper's own n (``recjudge.metaeval.paper_judges``), this book's on its own answers (intervals
  resampling users);
- **labels saved**: the share of human labels a judge correlating ρ with the users saves by the ρ² rule (part V), for
  pooled correlations only;
- **AUC**: how well the judge's scores rank the answers users called serendipitous (4 or 5) above the rest, where
  the answers are at hand (this book's judges, proxies, Random and a constant: 0.5, which ranks nothing);
- **MAE after calibration**, beside a constant answer's: a judge's raw MAE measures its scale as much as what it
  knows, so its scores are first mapped onto the users' scale on other users (``recjudge.trust.calibration``).

Rows come from the papers' tables (LLM judges, human annotators, proxies and reference metrics, Random), from the
trust chapter's judges on Serendipity-2018 (the book's tiny local models, the recorded gpt-3.5-turbo judgments, the
proxies, Random and a constant) and from a reader's judges when a variant ran them. :func:`draw_judges` puts them on
one axis, grouped by kind (:data:`GROUPS`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from recjudge.compendium import answer
from recjudge.compendium.pages import fmt
from recjudge.metaeval import paper_judges

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The figure's rows, top to bottom: who the judge is.
HUMANS, PAPER_LLMS, PROXIES, BASELINES, TINY, RECORDED, YOURS = (
    "Human annotators", "The papers' LLM judges", "Proxies and reference metrics", "Random and a constant",
    "This book's tiny local judges", "Recorded gpt-3.5-turbo", "Your judges")
GROUPS = (HUMANS, PAPER_LLMS, PROXIES, BASELINES, TINY, RECORDED, YOURS)
_PAPER_GROUP = {paper_judges.ANNOTATOR: HUMANS, paper_judges.LLM: PAPER_LLMS, paper_judges.PROXY: PROXIES,
                paper_judges.REFERENCE_METRIC: PROXIES, paper_judges.RANDOM: BASELINES}
_BOOK_GROUP = {"local LLM": TINY, "recorded LLM": RECORDED, "reader's LLM": YOURS, "proxy metric": PROXIES,
               "Random": BASELINES, "constant": BASELINES}

#: The reading of this book's correlations: one over every answer the judge scored.
BOOK_READING = paper_judges.POOLED
#: Where this book's rows come from.
BOOK_SOURCE = "this book, part V"

COLUMNS = ["group", "judge", "kind", "prompt", "dataset", "aspect", "reading", "source", "n", "pearson_pct",
           "pearson_ci_low", "pearson_ci_high", "labels_saved_pct", "auc", "auc_ci_low", "auc_ci_high",
           "mae_calibrated", "mae_constant"]


def paper_rows() -> pd.DataFrame:
    """The papers' printed rows (``metaeval.paper_judges.paper_judges``) in the table's columns."""
    rows = paper_judges.paper_judges()
    return rows.assign(group=rows["kind"].map(_PAPER_GROUP), source=rows["paper"] + ", " + rows["table"],
                       auc=math.nan, auc_ci_low=math.nan, auc_ci_high=math.nan, mae_calibrated=math.nan,
                       mae_constant=math.nan)[COLUMNS]


def book_rows(agreement: pd.DataFrame, kinds: pd.DataFrame, calibration_errors: pd.DataFrame, dataset: str
              ) -> pd.DataFrame:
    """This book's judges on ``dataset``: ``agreement`` (``serendipity.ground_truth.agreement_table`` rows with the
    ranking columns, one per judge reading shown), ``kinds`` (judge → kind: local LLM, recorded LLM, reader's LLM,
    proxy metric, Random, constant) and ``calibration_errors`` (``trust.calibration.error_table_per_judge``: the
    isotonic calibration's MAE and the constant answer's, per judge)."""
    kind_of = dict(zip(kinds["judge"], kinds["kind"]))
    errors = calibration_errors.pivot_table(index="judge", columns="reading", values="mae", sort=False)
    rows = []
    for row in agreement.itertuples(index=False):
        kind = kind_of.get(row.method)
        if kind is None:
            raise KeyError(f"judge {row.method!r} has an agreement row but no kind")
        pearson = float(row.pearson_pct)
        rows.append({
            "group": _BOOK_GROUP[kind], "judge": row.method, "kind": kind, "prompt": "", "dataset": dataset,
            "aspect": "serendipity", "reading": BOOK_READING, "source": BOOK_SOURCE, "n": int(row.n),
            "pearson_pct": pearson, "pearson_ci_low": float(row.pearson_ci_low),
            "pearson_ci_high": float(row.pearson_ci_high),
            "labels_saved_pct": paper_judges.labels_saved_pct(pearson) if np.isfinite(pearson) else 0.0,
            "auc": float(row.auc), "auc_ci_low": float(row.auc_ci_low), "auc_ci_high": float(row.auc_ci_high),
            # a constant is its own calibration and its own constant answer
            "mae_calibrated": float(row.mae) if kind == "constant" else _error(errors, row.method,
                                                                             "calibrated (isotonic)"),
            "mae_constant": float(row.mae) if kind == "constant" else _error(errors, row.method, "constant answer")})
    return pd.DataFrame(rows, columns=COLUMNS)


def _error(errors: pd.DataFrame, judge: str, reading: str) -> float:
    if judge not in errors.index or reading not in errors.columns:
        return math.nan
    return float(errors.at[judge, reading])


def judge_table(*parts: pd.DataFrame) -> pd.DataFrame:
    """The rows of every part, in the order of :data:`GROUPS`, then source, dataset, aspect and judge."""
    table = pd.concat([part for part in parts if len(part)], ignore_index=True)[COLUMNS]
    order = {group: i for i, group in enumerate(GROUPS)}
    table = table.assign(_group=table["group"].map(order)).sort_values(
        ["_group", "source", "dataset", "aspect", "judge"], kind="stable")
    return table.drop(columns="_group").reset_index(drop=True)


def highest(table: pd.DataFrame, group: str, *, pooled: bool = True) -> pd.Series | None:
    """The row of ``group`` with the highest Pearson (pooled readings only, by default); None when it has none."""
    rows = table[(table["group"] == group) & table["pearson_pct"].notna()]
    if pooled:
        rows = rows[rows["reading"].isin(paper_judges.POOLED_READINGS)]
    return None if rows.empty else rows.loc[rows["pearson_pct"].idxmax()]


def ceiling_span(table: pd.DataFrame) -> tuple[float, float, int] | None:
    """The human annotators' pooled correlations with the users (lowest, highest %, rows): how well a second human
    reading of the same texts agrees with the users who rated them."""
    rows = table[(table["group"] == HUMANS) & table["reading"].isin(paper_judges.POOLED_READINGS)]
    if rows.empty:
        return None
    return float(rows["pearson_pct"].min()), float(rows["pearson_pct"].max()), len(rows)


def draw_judges(table: pd.DataFrame) -> Figure:
    """Every judge of ``table`` on one axis: Pearson with the users and its 95% interval (left; a hollow point is a
    number that may not be one pooled correlation, a cross a constant, whose correlation is undefined and which
    ranks nothing), the share of labels saved on the top axis, and the AUC of ranking the answers users called
    serendipitous above the rest where the answers are at hand (right). One row per kind of judge."""
    import matplotlib.pyplot as plt

    from recjudge.compendium import figures

    groups = [group for group in GROUPS if (table["group"] == group).any()]
    fig, (left, right) = plt.subplots(1, 2, figsize=(figures.FIGURE_WIDTH_IN, 0.55 * len(groups) + 2.0),
                                      sharey=True, gridspec_kw={"width_ratios": [3, 1.4], "wspace": 0.06})
    rng = np.random.default_rng(0)  # a fixed jitter within a row, so that a rebuild draws the same figure
    colour = figures.colours(1)[0]
    marks = {"pooled": ([], []), "other": ([], []), "constant": ([], []), "auc": ([], [])}
    for y, group in enumerate(groups):
        rows = table[table["group"] == group]
        ys = y + (rng.uniform(-0.28, 0.28, len(rows)) if len(rows) > 1 else np.zeros(len(rows)))
        for (_, row), row_y in zip(rows.iterrows(), ys):
            if pd.isna(row["pearson_pct"]):
                kind = "constant"
                x = 0.0
            else:
                kind = "pooled" if row["reading"] in paper_judges.POOLED_READINGS else "other"
                x = row["pearson_pct"] / 100
                left.hlines(row_y, row["pearson_ci_low"] / 100, row["pearson_ci_high"] / 100, color=colour,
                            alpha=0.3, linewidth=1)
            marks[kind][0].append(x)
            marks[kind][1].append(row_y)
            if pd.notna(row["auc"]):
                right.hlines(row_y, row["auc_ci_low"], row["auc_ci_high"], color=colour, alpha=0.3, linewidth=1)
                marks["auc"][0].append(row["auc"])
                marks["auc"][1].append(row_y)
    styles = {"pooled": dict(marker="o", color=colour, label="one pooled correlation"),
              "other": dict(marker="o", facecolors="white", edgecolors=colour,
                            label="may be a mean of correlations"),
              "constant": dict(marker="x", color="black", label="a constant (r undefined)")}
    for kind, style in styles.items():
        if marks[kind][0]:
            left.scatter(*marks[kind], s=16, zorder=3, **style)
    if marks["auc"][0]:
        right.scatter(*marks["auc"], s=16, zorder=3, marker="o", color=colour)
    left.axvline(0, color="black", linewidth=0.8)
    right.axvline(0.5, color="black", linewidth=0.8)
    left.set(yticks=range(len(groups)), yticklabels=groups, xlabel="Pearson r with the users (95% interval)",
             ylabel="Judges, by kind", ylim=(len(groups) - 0.5, -0.5))
    top = left.secondary_xaxis("top", functions=(_labels_saved_of_r, _r_of_labels_saved))
    top.set_xlabel("labels saved (%) by the ρ² rule")
    top.set_xticks([0, 1, 4, 9])
    right.set(xlabel="AUC, ranking the answers\nusers called serendipitous", xlim=(0.35, 0.75))
    right.tick_params(axis="y", length=0)
    left.legend(loc="upper center", bbox_to_anchor=(0.65, -0.22), ncol=3, frameon=False)
    return fig


def figure_alt(table: pd.DataFrame) -> str:
    """The headline figure's alt text: its finding, where the papers' strongest LLM judge lies against the human
    annotators (``answer.placement``'s words), where the other kinds of judge lie, and how well the judges whose
    answers are at hand rank, every number and word read from ``table``."""
    best = highest(table, PAPER_LLMS)
    ceiling = ceiling_span(table)
    parts = []
    if best is not None:
        strongest = (f"Pearson r with the users, every judge on one axis: the papers' strongest LLM judge, "
                     f"{best['judge']} ({best['aspect']}, {best['source']}), reaches r = "
                     f"{fmt(best['pearson_pct'] / 100, 2)} [{fmt(best['pearson_ci_low'] / 100, 2)}, "
                     f"{fmt(best['pearson_ci_high'] / 100, 2)}]")
        if ceiling is not None:
            strongest += (f", {answer.placement(best['pearson_ci_low'], best['pearson_ci_high'], *ceiling[:2])} "
                          f"the {paper_judges.annotators(table)} human annotators' {_between(*ceiling[:2])}")
        parts.append(strongest)
    for group in (PROXIES, TINY, RECORDED, YOURS):
        rows = table[(table["group"] == group) & table["reading"].isin(paper_judges.POOLED_READINGS)
                     & table["pearson_pct"].notna()]
        if len(rows):
            parts.append(f"{group[0].lower()}{group[1:]} "
                         f"{_between(rows['pearson_pct'].min(), rows['pearson_pct'].max())}")
    ranked = table[table["auc"].notna() & (table["group"] != BASELINES)]
    if len(ranked):
        parts.append(f"ranking the answers users called serendipitous, the judges whose answers are at hand reach "
                     f"{_between(100 * ranked['auc'].min(), 100 * ranked['auc'].max(), 'AUC')}, against "
                     f"{fmt(answer.CHANCE_AUC, 1)} for a constant and Random")
    return "; ".join(parts) + "."


def _between(low_pct: float, high_pct: float, name: str = "r") -> str:
    """"r = 0.29", or "r = −0.05 to 0.14" when the two ends print differently (values in %, printed as fractions)."""
    low, high = fmt(low_pct / 100, 2), fmt(high_pct / 100, 2)
    return f"{name} = {low}" if low == high else f"{name} = {low} to {high}"


def figure_markdown(table: pd.DataFrame, path: str, name: str = "fig-judges") -> str:
    """The headline figure as a MyST ``figure``: ``path`` (relative to the page), a caption saying how to read it and
    alt text stating its finding (:func:`figure_alt`), every number read from ``table``."""
    caption = ("Every judge the book knows, by kind: Pearson r with the users and its 95% interval (a hollow point "
               "may not be one pooled correlation: Kang et al.'s Serendipity-2018 rows and Zhang et al.'s averages "
               "over aspects; a cross is a constant, whose r is undefined), the share of human labels the ρ² rule "
               "says it saves (top axis), and its AUC of ranking the answers users called serendipitous (4 or 5) "
               "above the rest where the answers are at hand. The papers' rows are at the papers' own n; the table is "
               "`results/trust_judges/judge_table.csv`.")
    return "\n".join([f"```{{figure}} {path}", f":name: {name}", f":alt: {figure_alt(table)}", "", caption, "```"])


def _labels_saved_of_r(r):
    r = np.asarray(r, dtype=float)
    return 100 * r**2 * np.sign(r)


def _r_of_labels_saved(share):
    share = np.asarray(share, dtype=float)
    return np.sign(share) * np.sqrt(np.abs(share) / 100)


__all__ = ["BASELINES", "BOOK_READING", "BOOK_SOURCE", "COLUMNS", "GROUPS", "HUMANS", "PAPER_LLMS", "PROXIES",
           "RECORDED", "TINY", "YOURS", "book_rows", "ceiling_span", "draw_judges", "figure_alt", "figure_markdown",
           "highest", "judge_table", "paper_rows"]
