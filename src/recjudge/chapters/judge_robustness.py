"""The page of the chapter "Metamorphic robustness of the LLM judges": the opening box, the relations as a judge sees
them, the robustness tables and the glued findings with the rules that choose their words."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import claim_evidence, figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import Table, count, format_table, number, percent
from recjudge.llm.judge_spec import reader_labels
from recjudge.metaeval.baselines import RANDOM
from recjudge.metamorphic import judges as mr
from recjudge.metamorphic.judges import RobustnessRun
from recjudge.prompts.tokutake import STRATEGY_NAMES

#: The page's sentences (``notebooks/prose/judge_robustness.md``).
PROSE = Prose("judge_robustness")
#: What each run of the chapter (its key in ``runs``) judged, in every table its numbers appear in (the synthetic
#: survey is no real users); the rules below tell the runs apart by these names.
SYNTHETIC_DATA = PROSE("data.synthetic")
SERENDIPITY_DATA = PROSE("data.serendipity")
EXPLANATION_DATA = PROSE("data.explanation")
DATA = {"synthetic": SYNTHETIC_DATA, "serendipity": SERENDIPITY_DATA, "explanation": EXPLANATION_DATA}


def data_of(runs: Mapping[str, RobustnessRun]) -> dict[str, str]:
    """Each judge under test (a constrained twin under its free judge's label) -> the data it ran on."""
    return {judge.label.removesuffix(mr.CONSTRAINED): DATA[key] for key, run in runs.items()
            for judge in run.under_test}


def judges_shown(runs: Mapping[str, RobustnessRun]) -> list:
    """The book's judges (not the reader's, not the twins), in the order they ran."""
    return [judge for run in runs.values() for judge in run.judges]


def unscored_note(runs: Mapping[str, RobustnessRun]) -> str:
    """The sentence on the Tokutake judges' original replies that hold no score ("" when all do)."""
    unscored = []
    for run in runs.values():
        for label in [judge.label for judge in run.judges if judge.label.startswith("Tokutake")]:
            originals = run.scores[run.scores["judge"] == label].drop_duplicates("case")["original"]
            if originals.isna().any():
                unscored.append(PROSE("opening.unscored.replies", n_unscored=f"{int(originals.isna().sum())}",
                                      n_replies=f"{len(originals)}", judge=label))
    return "" if not unscored else " " + PROSE("opening.unscored", replies="; ".join(unscored))


def opening(runs: Mapping[str, RobustnessRun], *, judges: Sequence[Mapping], tokutake_strategy: str,
            constrained: bool, kang_cases: int, tokutake_cases: int, serendipity_cases: int,
            serendipity_tokutake_cases: int, explanation_texts: int) -> Markdown:
    """The opening box: the judges, the data and samples, the relations, and the caveat on a tiny model."""
    serendipity_run = SERENDIPITY_DATA in data_of(runs).values()
    serendipity_facts = (PROSE("opening.data.serendipity", kang_cases=f"{serendipity_cases}",
                               tokutake_cases=f"{serendipity_tokutake_cases}")
                         if serendipity_run else PROSE("opening.data.serendipity.missing"))
    readers = ", ".join(reader_labels(judges))
    return pages.opening([
        ("Judges", PROSE("opening.judges", strategy=STRATEGY_NAMES[tokutake_strategy])
                   + ("; " + PROSE("opening.judges.constrained") if constrained else "")
                   + ("" if not judges else "; " + PROSE("opening.judges.readers", judges=readers))),
        ("Data", PROSE("opening.data", serendipity=serendipity_facts, kang_cases=f"{kang_cases}",
                       tokutake_cases=f"{tokutake_cases}", explanation_texts=f"{explanation_texts}")),
        ("Relations", PROSE("opening.relations")),
    ], PROSE("opening.caveat",
             your_judges=(" " + PROSE("opening.caveat.your_judges", judges=readers)) if judges else "")
       + unscored_note(runs))


def _wrap(body: str) -> str:
    return "\n".join(textwrap.fill(line, 72) for line in body.splitlines())


def show_relations(runs: Mapping[str, RobustnessRun], relations: Sequence[str]) -> None:
    """One prompt of the first judge before and after each relation, and its paraphrased instruction."""
    shown_judges = judges_shown(runs)
    if not shown_judges:
        return
    first = shown_judges[0]
    original = first.requests[0].messages[-1]["content"]
    shown = [("Original", original)] + [
        (mr.RELATION_NAMES[r], mr.perturb(first, r)[0].messages[-1]["content"])
        for r in relations if r != "paraphrase" and mr.applicable(first, r)[0]]
    display(Markdown("\n\n".join(f"**{name}**\n\n```text\n{_wrap(body)}\n```" for name, body in shown)))
    para = mr.perturb(first, "paraphrase")[0].messages[0]["content"]
    display(Markdown("**Paraphrased instruction** (system turn)\n\n```text\n" + _wrap(para) + "\n```"))


def with_data(table: pd.DataFrame, runs: Mapping[str, RobustnessRun]) -> pd.DataFrame:
    """``table`` (one row per judge, a constrained twin under its own label) with the data each judge ran on."""
    return table.assign(data=table["judge"].str.removesuffix(mr.CONSTRAINED).map(data_of(runs)))


def show_robustness(table: pd.DataFrame, scores: pd.DataFrame, runs: Mapping[str, RobustnessRun],
                    judges: Sequence[Mapping], notebook: str) -> Table:
    """The robustness table (``with_data``); each judge's scores and rows saved in a file of its own, so a build
    without the mirror rewrites only the synthetic survey's judges."""
    for label, part in scores.groupby("judge", sort=False):
        save_table(part, notebook, f"scores_{mr.judge_slug(label)}")
        save_table(table[table["judge"] == label], notebook, f"robustness_{mr.judge_slug(label)}")
    in_roles = table["judge"].str.removesuffix(mr.CONSTRAINED)
    roles = {reader: judge for run in runs.values() for reader, judge in run.roles.items()}
    # the book's judges are SmolLM2-135M in each role; a reader's judge plays a role under "<its label> ..."
    judges_in_roles = {"SmolLM2-135M": set(in_roles) - set(roles),
                       **{label: {name for name in roles if name.endswith(f", {label}")}
                          for label in reader_labels(judges)}}
    # the baselines' rows beside the judges': what Random would change by under any relation, and a constant (0)
    baselines = save_table(mr.baseline_robustness(), notebook, "robustness_baselines")
    shown = pd.concat([shown_robustness(table).drop(columns="data"), baselines.drop(columns="spearman_note")],
                      ignore_index=True)
    return format_table(shown, {
        "cases": count(), "filtered": count(label="Filt."), "scored": count(label="n"),
        "mean_abs_change": number(2, label="|Δ| mean"), "verdict_flip_rate": percent(0, label="Flips (%)"),
        "spearman": number(2, label="Spearman ρ"), "delta_pearson_truth": number(2, label="Δ r truth")},
        labels={"judge": "Judge", "relation": "Relation"},
        caption=PROSE("robustness.caption", judges=pages.judges_in(in_roles, judges_in_roles),
                      min_answers=f"{pages.MIN_ANSWERS}"))


def draw_robustness(table: pd.DataFrame) -> None:
    """Figure fig-judge-robustness: each judge's mean absolute change and verdict flip rate under each relation (one
    marker per relation), beside Random's under any relation (dashed); a judge with no scored case is named in the
    caption, not drawn."""
    import matplotlib.pyplot as plt

    scored = table[table["scored"] > 0]
    unscored = sorted(set(table["judge"]) - set(scored["judge"]))
    judges = list(dict.fromkeys(scored["judge"]))
    relations = list(dict.fromkeys(scored["relation"]))
    figures.check_series_count(len(relations))
    styles = figures.series_styles(relations)
    random = mr.baseline_robustness().set_index("judge").loc[RANDOM]
    fig, axes = plt.subplots(1, 2, figsize=(figures.FIGURE_WIDTH_IN, 0.45 * len(judges) + 2.2), sharey=True)
    y = {judge: len(judges) - 1 - i for i, judge in enumerate(judges)}
    offsets = dict(zip(relations, np.linspace(-0.25, 0.25, len(relations)) if len(relations) > 1 else [0.0]))
    for ax, column, scale, label in ((axes[0], "mean_abs_change", 1, PROSE("figure.change.xlabel")),
                                     (axes[1], "verdict_flip_rate", 100, "Verdict flips (%)")):
        for relation in relations:
            part = scored[scored["relation"] == relation]
            ax.plot(scale * part[column], [y[j] + offsets[relation] for j in part["judge"]], linestyle="none",
                    marker=styles[relation].marker, color=styles[relation].colour, label=relation)
        ax.axvline(scale * random[column], color="0.3", linestyle="--", linewidth=1.2, label=f"{RANDOM}, any relation")
        ax.set(xlabel=label)
        ax.set_xlim(left=-0.05 * scale * max(random[column], scored[column].max()))
        ax.grid(axis="y", alpha=0)
    axes[0].set_yticks(list(y.values()), list(y))
    axes[0].set_ylabel("Judge")
    axes[0].legend(loc="upper center", bbox_to_anchor=(1.0, -0.28), ncols=3, frameon=False)
    figures.glue_figure("fig-judge-robustness", fig,
                        PROSE("figure.caption", random_change=pages.fmt(random["mean_abs_change"], 2),
                              random_flips=pages.fmt(100 * random["verdict_flip_rate"], 0),
                              cases=pages.span(scored["scored"].min(), scored["scored"].max(), 0))
                        + (" " + PROSE("figure.caption.unscored", judges=", ".join(unscored)) if unscored else ""))


def not_applicable(runs: Mapping[str, RobustnessRun]) -> pd.DataFrame:
    """The relations that do not apply to a judge, over every run."""
    return pd.concat([run.skipped for run in runs.values()], ignore_index=True)


def show_not_applicable(runs: Mapping[str, RobustnessRun], notebook: str) -> None:
    """The relations that do not apply (an audit table), one file per judge."""
    skipped_all = not_applicable(runs)
    for label, part in skipped_all.groupby("judge", sort=False):
        save_table(part, notebook, f"not_applicable_{mr.judge_slug(label)}")
    if len(skipped_all):
        display(format_table(skipped_all, labels={"judge": "Judge", "relation": "Relation",
                                                  "reason": "Not run because"},
                             caption=PROSE("not_applicable.caption"), audit=True))


SHAPE_EFFECT_MEASURES = ("filtered", "mean_abs_change", "verdict_flip_rate", "spearman")


def shape_effect_long(shaped: pd.DataFrame) -> pd.DataFrame:
    """``mr.shape_effect``'s table (each measure ``_free`` and ``_constrained``) with one row per judge, relation and
    kind of reply: the free and the constrained reading of a measure sit one above the other in one column."""
    keys = [c for c in shaped.columns if not c.endswith(("_free", "_constrained"))]
    rows = []
    for replies in ("free", "constrained"):
        part = shaped[keys + [f"{m}_{replies}" for m in SHAPE_EFFECT_MEASURES]]
        rows.append(part.rename(columns={f"{m}_{replies}": m for m in SHAPE_EFFECT_MEASURES})
                    .assign(replies=replies, _order=range(len(part))))
    return (pd.concat(rows, ignore_index=True).sort_values("_order", kind="stable").drop(columns="_order")
            [[*keys, "replies", *SHAPE_EFFECT_MEASURES]].reset_index(drop=True))


def show_shape_effect(shaped: pd.DataFrame, runs: Mapping[str, RobustnessRun], notebook: str) -> None:
    """The generating judges with free and constrained replies one above the other, one file per judge (nothing when no
    judge ran constrained)."""
    if not len(shaped):
        return
    shaped = shaped.assign(data=shaped["judge"].map(data_of(runs)))
    for label, part in shaped.groupby("judge", sort=False):
        save_table(part, notebook, f"constrained_vs_free_{mr.judge_slug(label)}")
    display(format_table(shape_effect_long(shaped.drop(columns="data")), {
        "cases": count(), "filtered": count(label="Filt."), "mean_abs_change": number(2, label="|Δ| mean"),
        "verdict_flip_rate": percent(0, label="Flips (%)"), "spearman": number(2, label="Spearman ρ")},
        labels={"judge": "Judge", "relation": "Relation", "replies": "Replies"},
        caption=PROSE("shape_effect.caption"), audit=True))



def _cell_scores(scores: pd.DataFrame | None, judge: str, relations: Sequence[str]) -> list[pd.DataFrame]:
    if scores is None or scores.empty:
        return []
    mine = scores[scores["judge"] == judge]
    return [mine[mine["relation"] == relation] for relation in relations]


def flips_in(rates: pd.Series, cells: Sequence[pd.DataFrame] = ()) -> str:
    """The flip rates of a judge's cells; when none flipped, whether one could have (``mr.flip_within_reach`` over the
    cells' scores, when given)."""
    if rates.max() > 0:
        return PROSE("flips.some", rates=pages.span(100 * rates.min(), 100 * rates.max(), 0))
    if cells and not any(mr.flip_within_reach(cell) for cell in cells):
        return PROSE("flips.none_possible")
    return PROSE("flips.none")


def serendipity_finding(table: pd.DataFrame, scores: pd.DataFrame | None = None) -> str:
    """How far the judges move on the real Serendipity-2018 answers (rows of ``table`` whose data are these): on fewer
    scored answers per relation than this book's minimum, too few answers; ``scores``: the cases, to say whether a
    flip could happen at all."""
    real = table[table["data"] == SERENDIPITY_DATA]
    if real.empty:
        return PROSE("serendipity.not_run", not_run=claim_evidence.NOT_RUN)
    per_judge = real.dropna(subset=["verdict_flip_rate"]).groupby("judge", sort=False)

    def judged(label: str, part: pd.DataFrame) -> str:
        scored = pages.span(part["scored"].min(), part["scored"].max(), 0)
        cases = f"{int(part['cases'].max())}"
        return f"{label}: " + pages.unless_too_few(
            PROSE("serendipity.judge",
                  flips=flips_in(part["verdict_flip_rate"], _cell_scores(scores, label, part["relation"])),
                  change=pages.span(part["mean_abs_change"].min(), part["mean_abs_change"].max(), 2),
                  scored=scored, cases=cases, n_relations=f"{len(part)}"),
            int(part["scored"].min()),
            detail=PROSE("serendipity.judge.too_few_detail", scored=scored, cases=cases))

    return PROSE("serendipity.finding", judges="; ".join(judged(label, part) for label, part in per_judge))


def shown_robustness(table: pd.DataFrame) -> pd.DataFrame:
    """The robustness table as shown: a row's measures on fewer scored cases than this book's minimum read "too few
    answers (n)" (the CSV keeps every number)."""
    return pages.unless_too_few_rows(table, ROW_MEASURES, n_column="scored")


#: The measures of a robustness row, each read on its scored cases.
ROW_MEASURES = ("mean_abs_change", "verdict_flip_rate", "spearman", "delta_pearson_truth")


def constrained_finding(shaped: pd.DataFrame) -> str:
    """Whether holding the replies to their shape keeps more cases, and the flip rates free and constrained."""
    if not len(shaped):
        return PROSE("constrained.not_run")
    totals = shaped.groupby("judge", sort=False)[["cases", "filtered_free", "filtered_constrained"]].sum()
    flips = shaped.groupby("judge", sort=False)[["verdict_flip_rate_free", "verdict_flip_rate_constrained"]].mean()
    def rate(value: float) -> str:  # a judge with no scored case under a relation has no flip rate
        return "no scored case" if pd.isna(value) else f"{pages.fmt(100 * value, 0)}%"

    judges = "; ".join(
        PROSE("constrained.judge", judge=label, filtered=f"{int(totals.loc[label, 'filtered_constrained']):,}",
              cases=f"{int(totals.loc[label, 'cases']):,}",
              filtered_free=f"{int(totals.loc[label, 'filtered_free']):,}",
              flips=rate(flips.loc[label, "verdict_flip_rate_constrained"]),
              flips_free=rate(flips.loc[label, "verdict_flip_rate_free"])) for label in totals.index)
    kept = (totals["filtered_constrained"] <= totals["filtered_free"]).all()
    return PROSE("constrained.finding", judges=judges,
                 cases_kept=PROSE("constrained.finding.kept" if kept else "constrained.finding.lost"))


#: The invariance rule's word for judges whose verdicts move under a relation (``invariance``).
NOT_INVARIANT = "not invariant"
#: This book's threshold (no paper states one): a judge keeps the order of its scores over cases under a relation when
#: Spearman's ρ between its original and perturbed scores is at least this.
KEPT_ORDER_SPEARMAN = 0.9


def order_kept(spearman: pd.Series) -> str:
    """Whether the judges keep the order of their scores over cases, from every cell's Spearman ρ (NaN: a cell with
    fewer than three scored cases or constant scores): kept in every cell, only partly (every ρ positive), or not;
    the verdict word is the claims rule's own."""
    rho = spearman.dropna()
    if rho.empty:
        return PROSE("order.not_measured")
    if (rho >= KEPT_ORDER_SPEARMAN).all():
        return PROSE("order.kept")
    if (rho > 0).all():
        return PROSE("order.positive_only", verdict_word=claim_evidence.PARTLY)
    return PROSE("order.lost")


def pooled_flips(table: pd.DataFrame) -> dict[str, str]:
    """The flips of every cell pooled (flips in scored cases, with a Wilson interval, and the mean absolute change
    over those cases), and the largest cell's flip rate, named as selected among the cells and carrying its n (or
    "too few answers (n)" below this book's minimum): a maximum chosen on the same answers is no finding alone."""
    from statsmodels.stats.proportion import proportion_confint

    scored = table[table["scored"] > 0]
    flips = int((scored["verdict_flip_rate"] * scored["scored"]).round().sum())
    cases = int(scored["scored"].sum())
    low, high = proportion_confint(flips, cases, method="wilson") if cases else (float("nan"),) * 2
    change = float((scored["mean_abs_change"] * scored["scored"]).sum() / cases) if cases else float("nan")
    largest = scored.sort_values("verdict_flip_rate", ascending=False).iloc[0] if cases else None
    return {
        "pooled_flips": PROSE("pooled.flips", flips=pages.count(flips, "verdict flip"), cases=f"{cases:,}",
                              share=pages.fmt(100 * flips / cases, 0), low=pages.fmt(100 * low, 0),
                              high=pages.fmt(100 * high, 0))
                        if cases else PROSE("pooled.flips.none_scored", flips=pages.count(flips, "verdict flip"),
                                            cases=f"{cases:,}"),
        "pooled_change": pages.fmt(change, 2) if cases else "–",
        "largest_flip": "–" if largest is None else pages.unless_too_few(
            PROSE("pooled.largest", rate=pages.fmt(100 * largest["verdict_flip_rate"], 0), judge=largest["judge"],
                  relation=largest["relation"], n_scored=f"{int(largest['scored'])}"), int(largest["scored"])),
    }


def baseline_flips() -> str:
    """The flip rates a judge's are read against, from ``mr.baseline_robustness`` selected by name."""
    baselines = mr.baseline_robustness().set_index("judge")["verdict_flip_rate"]
    return PROSE("baselines.flips", random=pages.fmt(100 * baselines[RANDOM], 0),
                 constant=pages.fmt(100 * baselines[mr.CONSTANT_ANSWER], 0))


def invariance(table: pd.DataFrame, runs: Mapping[str, RobustnessRun]) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """The invariance rule on the cells with enough scored cases (``pages.MIN_ANSWERS``): (its words, those cells,
    the cells among them where a verdict flips). A cell of three cases flips or not by chance: it is too few."""
    # Any cell with a verdict flip, among the cells with at least this book's minimum of scored cases, makes the judges
    # not invariant; with none flipping, the words say whether a flip could have happened there
    readable = table[~table["scored"].map(pages.too_few) & (table["scored"] > 0)]
    moving = readable[readable["verdict_flip_rate"] > 0]
    if readable.empty:
        detail = PROSE("invariance.too_few_detail", n_scored=f"{int(table['scored'].max())}")
        return pages.too_few_text(table["scored"].max(), detail=detail) + ".", readable, moving
    if len(moving):
        return PROSE("invariance.not_invariant", verdict=NOT_INVARIANT), readable, moving
    scores = pd.concat([run.scores for run in runs.values() if len(run.scores)], ignore_index=True) \
        if any(len(run.scores) for run in runs.values()) else None
    cells = [cell for judge, part in readable.groupby("judge", sort=False)
             for cell in _cell_scores(scores, judge, part["relation"])]
    if cells and not any(mr.flip_within_reach(cell) for cell in cells):
        return PROSE("invariance.no_flip_possible"), readable, moving
    return PROSE("invariance.no_flips"), readable, moving


def findings(table: pd.DataFrame, shaped: pd.DataFrame, runs: Mapping[str, RobustnessRun]) -> dict[str, object]:
    """The glued values of the verdict (``table`` with its data column, ``with_data``): text, and Markdown for the
    two findings written as sentences."""
    words, readable, moving = invariance(table, runs)
    scores = pd.concat([run.scores for run in runs.values() if len(run.scores)], ignore_index=True) \
        if any(len(run.scores) for run in runs.values()) else None
    return {
        "invariance": words,
        "n_moving": f"{len(moving)}",
        "n_cells": f"{len(readable)}",
        "n_too_few": f"{len(table) - len(readable)}",
        "min_answers": f"{pages.MIN_ANSWERS}",
        **pooled_flips(table),
        "baseline_flips": baseline_flips(),
        "order_kept": order_kept(table["spearman"]),
        "spearman_low": pages.fmt(table["spearman"].min(), 2),
        "spearman_high": pages.fmt(table["spearman"].max(), 2),
        "n_spearman": f"{int(table['spearman'].notna().sum())}",
        "serendipity_finding": Markdown(serendipity_finding(table, scores)),
        "n_cases": f"{int(table['cases'].sum()):,}",
        "n_filtered": f"{int(table['filtered'].sum()):,}",
        "n_not_applicable": f"{len(not_applicable(runs))}",
        "constrained_finding": Markdown(constrained_finding(shaped)),
    }
