"""The page of the chapter "What is a judge worth?" (and its synthetic run): the opening box, the tables with their
captions, the calibration and interval-width figures, and the glued findings with the rules that choose their words.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown
from matplotlib.figure import Figure

from recjudge.compendium import figures, pages, trust_rules
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import Table, correlation, count, error, format_table, number, text
from recjudge.serendipity import ground_truth as ser
from recjudge.trust import calibration, papers_worth, population, ppi
from recjudge.trust.population import JudgedPopulation

PROXY = "proxy metric"
#: The labelled-set size shown beside the headline n in the table of labels worth.
LARGE_N = 500
#: A share of the human labels saved that this chapter counts as small (its own threshold).
SMALL_SAVING_PCT = 1.0
#: Correlations whose worth by the ρ² rule the width figure draws as references: a weak judge and a fair one.
REFERENCE_CORRELATIONS = (0.15, 0.5)
#: The page's sentences (``notebooks/prose/trust_judges.md``).
PROSE = Prose("trust_judges")
#: Characters per line of the worth figure's y-axis label (it stands beside a panel 4.4 inches high).
WORTH_AXIS_WIDTH = 30


def stacked(label: str, width: int) -> str:
    """A long label from the prose file broken into lines of at most ``width`` characters, at spaces only, for a
    narrow column or an axis (the line breaks are layout, the words the writer's)."""
    return textwrap.fill(label, width, break_long_words=False, break_on_hyphens=False)


def worth_axis_label() -> str:
    """The worth figure's y axis: what n labels plus the judge are worth in labels alone, per label (1: the judge
    adds nothing)."""
    return stacked(PROSE("worth_figure.y_axis"), WORTH_AXIS_WIDTH)


def save_judges(judged: JudgedPopulation, notebook: str, data: str) -> pd.DataFrame:
    """The table of judges (kind, family, scoring, answers scored, note) written to results/."""
    return save_table(judged.judges.assign(data=data), notebook, "judges")


def opening(study, judged: JudgedPopulation, judges: Sequence[Mapping], *, min_answers: int, draws: int,
            label_sizes: Sequence[int]) -> Markdown:
    """The opening box: the answers, the judges and the PPI experiment; the caveat says that no judge here is a capable
    LLM, which judges scored a sample and which are left out (``judges``: the reader's, the chapter's parameter)."""
    frame, judge_table = judged.frame, judged.judges
    analysed = judge_table["answers"] >= min_answers
    facts = [
        ("Data", PROSE("opening.data", data=study.data_label, n_answers=f"{len(frame):,}",
                       n_users=f"{frame['user_id'].nunique():,}")),
        ("Judges", "; ".join(PROSE("opening.judge", judge=row.judge, n_answers=f"{row.answers:,}")
                             for row in judge_table.itertuples() if row.scoring != "most likely score token")),
        ("Prediction-powered inference", PROSE("opening.ppi", draws=draws, smallest_n=min(label_sizes),
                                               largest_n=f"{max(label_sizes):,}")),
    ]
    sampled = [row.judge for row in judge_table.itertuples()
               if "random sample" in row.note and row.scoring != "most likely score token"]
    # The caveat's sentences, each present or not by its rule, joined as one paragraph
    recorded = population.RECORDED in judged.analysed(min_answers)
    caveat = [PROSE("opening.caveat.capable_recorded" if recorded else "opening.caveat.capable",
                    judges="the book's own judges" if judges else "these judges"),
              PROSE("opening.caveat.measured")]
    if sampled:
        caveat.append(PROSE("opening.caveat.sampled", judges=" and ".join(sampled)))
    caveat.append(PROSE("opening.caveat.valid"))
    if not analysed.all():
        caveat.append(PROSE("opening.caveat.not_analysed", min_answers=min_answers,
                            judges=", ".join(judge_table.loc[~analysed, "judge"])))
    if study.synthetic:
        caveat.insert(0, PROSE("opening.synthetic"))
    return pages.opening(facts, " ".join(caveat))


# ---------------------------------------------------------------------------------------------------------------
# The judges and the human ratings

def show_agreement_table(agreement: pd.DataFrame, judged: JudgedPopulation, *, notebook: str, data: str) -> Table:
    """Each judge's Pearson (%) with its interval, MAE and RMSE (``ser.agreement_table`` rows), with its kind."""
    agreement = agreement.merge(judged.judges[["judge", "kind"]], left_on="method",
                                right_on="judge").drop(columns="judge")
    save_table(agreement.assign(data=data), notebook, "agreement")
    shown = agreement.assign(pearson=[
        PROSE("agreement.undefined") if np.isnan(r.pearson_pct) else
        f"{pages.fmt(r.pearson_pct, 1)}" + ("" if np.isnan(r.pearson_ci_low) else
                                           f" [{pages.fmt(r.pearson_ci_low, 1)}, {pages.fmt(r.pearson_ci_high, 1)}]")
        for r in agreement.itertuples()])
    return format_table(shown[["method", "kind", "n", "pearson", "mae", "rmse"]],
                        {"n": count(label="Answers"), "pearson": text(label="Pearson (%) [95% CI]"), "mae": error(2),
                         "rmse": error(2)},
                        labels={"method": "Judge"}, caption=PROSE("agreement.caption"),
                        full_table=(notebook, "agreement"), audit=True)


# ---------------------------------------------------------------------------------------------------------------
# How much of the error is scale?

def show_calibration_table(errors: pd.DataFrame, *, notebook: str, data: str) -> Table:
    """MAE of each judge's scores in each reading (``calibration.error_table_per_judge``), one column per reading."""
    save_table(errors.assign(data=data), notebook, "calibration_errors")
    wide = errors.pivot_table(index="judge", columns="reading", values="mae", sort=False).reset_index()
    return format_table(wide, {c: error(3, label=c) for c in wide.columns[1:]}, labels={"judge": "Judge"},
                        caption=PROSE("calibration.caption"),
                        full_table=(notebook, "calibration_errors"), audit=True)


def _beating_words(beats_constant: Sequence[str], largest: pd.Series) -> str:
    """Which judges beat a constant answer by the rule, and the largest gain with its interval and reading."""
    return PROSE("calibration.beating", beating=trust_rules.beating_words(list(beats_constant)),
                 margin=f"{trust_rules.MAE_MARGIN}", gain=pages.fmt(largest["gain_over_constant"], 4),
                 low=pages.fmt(largest["gain_ci_low"], 4), high=pages.fmt(largest["gain_ci_high"], 4),
                 judge=largest["judge"], reading=largest["reading"])


def scale_finding(errors: pd.DataFrame) -> Markdown:
    """What calibration leaves of each judge's MAE against a constant answer's, and the spread of the raw MAEs."""
    by_reading = errors.pivot_table(index="judge", columns="reading", values="mae", sort=False)
    gains = trust_rules.calibrated_gains(errors)
    largest = gains.loc[gains["gain_over_constant"].idxmax()]
    return Markdown(PROSE("calibration.finding",
                          beating=_beating_words(trust_rules.judges_beating_constant(errors), largest),
                          low=pages.fmt(by_reading["raw"].min(), 3), high=pages.fmt(by_reading["raw"].max(), 3)))


def _panels(judged: JudgedPopulation, judges: Sequence[str]) -> list[list[str]]:
    """The LLM judges, then the proxy metrics: one panel each, when it has any."""
    return [p for p in ([j for j in judges if judged.kind(j) != PROXY],
                        [j for j in judges if judged.kind(j) == PROXY]) if p]


def _panel_title(judged: JudgedPopulation, panel: Sequence[str]) -> str:
    return "Proxy metrics" if judged.kind(panel[0]) == PROXY else "LLM judges"


def judge_styles(judges: Sequence[str]) -> dict[str, figures.SeriesStyle]:
    """Each judge's colour and marker in every figure of the chapter (one mapping, so a colour is one judge)."""
    return figures.series_styles(judges)


#: Points at which a judge's calibration map is drawn, evenly over its range of scores.
CURVE_POINTS = 101


def calibration_curves(judged: JudgedPopulation, judges: Sequence[str]) -> pd.DataFrame:
    """Each judge's isotonic calibration map fitted on all its answers, read at :data:`CURVE_POINTS` scores evenly
    over its range (columns judge, score, scaled: min-max scaled, calibrated): one monotone curve per judge. (Drawn
    from the out-of-fold calibrations, answer by answer, neighbouring scores came from different folds' maps and the
    line zig-zagged; the errors the chapter reports stay out of fold.)"""
    curves = []
    for judge in judges:
        rows = judged.scored_by(judge)
        low, high = float(rows[judge].min()), float(rows[judge].max())
        grid = np.linspace(low, high, CURVE_POINTS) if high > low else np.array([low])
        curves.append(pd.DataFrame({"judge": judge, "score": grid,
                                    "scaled": (grid - low) / (high - low) if high > low else np.zeros(1),
                                    "calibrated": calibration.calibration_map(rows[judge], rows["truth"], grid)}))
    return pd.concat(curves, ignore_index=True)


def calibration_figure(judged: JudgedPopulation, judges: Sequence[str]) -> Figure:
    """Each judge's calibration map (the human rating its min-max scaled score maps to), LLM judges and proxies
    apart, with the mean rating dotted."""
    import matplotlib.pyplot as plt

    curves = calibration_curves(judged, judges)
    panels = _panels(judged, judges)
    styles = judge_styles(judges)
    fig, axes = plt.subplots(1, len(panels), figsize=(figures.FIGURE_WIDTH_IN, 4.4), sharey=True, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        figures.check_series_count(len(panel))
        for judge in panel:
            part = curves[curves["judge"] == judge]
            ax.plot(part["scaled"], part["calibrated"], color=styles[judge].colour,
                    linestyle=styles[judge].linestyle, label=judge)
        ax.axhline(judged.frame["truth"].mean(), color="0.5", linestyle=":", linewidth=1)
        ax.set(xlabel="Judge score (min-max scaled)", ylim=(1, 5), title=_panel_title(judged, panel))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    axes[0][0].set_ylabel("Calibrated rating (1-5)")
    return fig


# ---------------------------------------------------------------------------------------------------------------
# How many human labels is a judge worth?

def coverage_text(table: pd.DataFrame, method: str) -> list[str]:
    """A coverage (%) with its Monte Carlo interval, and a mark where it falls short of nominal."""
    return [f"{pages.fmt(100 * row[f'coverage_{method}'], 1)} [{pages.fmt(100 * row[f'coverage_{method}_mc_low'], 1)}, "
            f"{pages.fmt(100 * row[f'coverage_{method}_mc_high'], 1)}]"
            + (" (short)" if row[f"coverage_{method}_against_nominal"] == "short of nominal" else "")
            for _, row in table.iterrows()]


def show_worth_table(worth: pd.DataFrame, headline_n: int, *, notebook: str, data: str) -> Table:
    """The labels each judge is worth (``ppi.worth_table`` rows with their ``estimand``) at the headline n and 500,
    beside what the ρ² rule prices its correlation at; every n and the intervals behind the worth go to results/
    (and to :func:`show_worth_intervals`)."""
    save_table(worth.assign(data=data), notebook, "labels_worth")
    return format_table(
        _at_shown_sizes(worth, headline_n)[["estimand", "judge", "n", "pearson", "labels_worth",
                                            "labels_worth_by_rho2"]],
        {"n": count(label="Labels n"), "pearson": correlation(1, label="Pearson (%)"),
         "labels_worth": number(0, label="Worth (labels)"), "labels_worth_by_rho2": number(0, label="ρ² rule")},
        labels={"estimand": "Estimand", "judge": "Judge"},
        caption=PROSE("worth.caption", headline_n=headline_n, large_n=LARGE_N),
        full_table=(notebook, "labels_worth"))


def show_worth_intervals(worth: pd.DataFrame, headline_n: int, *, notebook: str) -> Table:
    """The interval widths and coverages behind :func:`show_worth_table`'s worth, at the same n (a collapsed
    table)."""
    at = _at_shown_sizes(worth, headline_n)
    at = at.assign(coverage_human_text=coverage_text(at, "human_only"), coverage_ppi_text=coverage_text(at, "ppi"))
    return format_table(
        at[["estimand", "judge", "n", "width_human_only", "width_ppi", "coverage_human_text", "coverage_ppi_text",
            "degenerate_draws"]],
        {"n": count(label="n"), "width_human_only": number(3, label="Width,\nhuman only"),
         "width_ppi": number(3, label="Width,\nPPI++"),
         "coverage_human_text": text(label="Coverage, human\n(%) [MC 95%]"),
         "coverage_ppi_text": text(label="Coverage, PPI++\n(%) [MC 95%]"),
         "degenerate_draws": count(label="Draws\nwith s = 0")},
        labels={"estimand": "Estimand", "judge": "Judge"},
        caption=PROSE("worth_intervals.caption", headline_n=headline_n, large_n=LARGE_N),
        full_table=(notebook, "labels_worth"), audit=True)


def _at_shown_sizes(worth: pd.DataFrame, headline_n: int) -> pd.DataFrame:
    return worth[worth["n"].isin([headline_n, LARGE_N])]


def _mean_worth(worth: pd.DataFrame) -> pd.DataFrame:
    return worth[worth["estimand"] == "mean serendipity"]


def _shown_judges(worth: pd.DataFrame, judges: Sequence[str]) -> list[str]:
    """The judges of ``judges`` with a row for the mean (a sampled judge may have too few answers for any n)."""
    return [j for j in judges if j in set(_mean_worth(worth)["judge"])]


def worth_per_label(worth: pd.DataFrame) -> pd.DataFrame:
    """Per judge and n (the mean's rows): the human labels alone that one label plus the judge is worth
    (``labels_worth / n``), with its Monte Carlo 95% interval (``per_label_low``/``_high``): above 1 the judge saves
    labels, and an interval holding 1 is a saving the simulation cannot tell from noise."""
    mean_worth = _mean_worth(worth)
    return mean_worth.assign(per_label=mean_worth["labels_worth"] / mean_worth["n"],
                             per_label_low=mean_worth["labels_worth_mc_low"] / mean_worth["n"],
                             per_label_high=mean_worth["labels_worth_mc_high"] / mean_worth["n"])


def worth_figure(worth: pd.DataFrame, judged: JudgedPopulation, judges: Sequence[str]) -> Figure:
    """What one human label plus each judge is worth in labels alone, at each n (log axis): a point per judge with
    its Monte Carlo 95% interval, the judges side by side at each n, against what a judge of correlation ρ = 0.15 and
    0.5 is worth by the ρ² rule (grey, dotted, marked right of the last panel, away from the points) and human labels
    alone (dashed, at 1)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    per_label = worth_per_label(worth)
    panels = _panels(judged, _shown_judges(worth, judges))
    styles = judge_styles(judges)
    sizes = sorted(per_label["n"].unique())
    population_size = int(per_label["population"].max()) if "population" in per_label else None
    fig, axes = plt.subplots(1, len(panels), figsize=(figures.FIGURE_WIDTH_IN, 4.4), sharey=True, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        figures.check_series_count(len(panel))
        ax.axhline(1.0, color="0.2", linestyle="--", linewidth=2.2, zorder=3, label="human only")
        for rho in REFERENCE_CORRELATIONS:
            ratios = [ppi.labels_worth_by_correlation(int(n), rho, population_size) / n for n in sizes]
            ax.plot(sizes, ratios, color="0.45", linestyle=":", linewidth=1.4, zorder=2,
                    label="_nolegend_")  # named by its ρ right of the last panel and in the caption
            if ax is axes[0][-1]:  # marked once, right of the last panel, where no point is drawn
                ax.annotate(f"ρ = {rho:g}", (sizes[-1], ratios[-1]), xytext=(14, 0), textcoords="offset points",
                            ha="left", va="center", color="0.3", fontsize=figures.BASE_FONT_PT - 1,
                            annotation_clip=False)
        # The judges side by side at each n (a small step on the log axis), so their intervals do not hide each other.
        offsets = np.linspace(-1, 1, len(panel)) * 0.06 if len(panel) > 1 else [0.0]
        for judge, offset in zip(panel, offsets):
            part = per_label[per_label["judge"] == judge]
            ax.errorbar(part["n"] * 10 ** offset, part["per_label"],
                        yerr=[part["per_label"] - part["per_label_low"], part["per_label_high"] - part["per_label"]],
                        color=styles[judge].colour, marker=styles[judge].marker, markersize=5, linestyle="none",
                        capsize=2, elinewidth=1.2, label=judge)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_major_formatter(FixedFormatter([f"{n:,}" for n in sizes]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set(xlabel="Human labels n", title=_panel_title(judged, panel))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    axes[0][0].set_ylabel(worth_axis_label())
    return fig


def paper_best_judge_worth(notebook: str) -> pd.Series:
    """The strongest pooled correlation a paper prints for a serendipity judge (``papers_worth.strongest``) and the
    labels per 1,000 it would be worth by the ρ² rule, written to results/."""
    best = papers_worth.strongest(aspect="serendipity")
    best_worth = ppi.labels_worth_by_correlation(1000, best["pearson_pct"] / 100)
    save_table(pd.DataFrame([{"paper_judge": f"{best['judge']} ({best['prompt']})", "paper": best["paper"],
                              "table": best["table"], "dataset": best["dataset"], "pearson_pct": best["pearson_pct"],
                              "labels": 1000, "labels_worth_by_rho2": best_worth}]), notebook, "paper_best_judge_worth")
    return pd.concat([best, pd.Series({"labels_worth_by_rho2": best_worth})])


def show_paper_judges_worth(notebook: str) -> Table:
    """Every pooled LLM row of the papers' agreement tables priced in labels by the ρ² rule at the paper's n, with the
    correlation that n detects and the n the row's own correlation needs (saved as ``paper_judges_worth``)."""
    table = save_table(papers_worth.paper_judges_worth(), notebook, "paper_judges_worth")
    # One source cell (paper, table, dataset, aspect) wraps in its column, so the numbers a reader compares stay on
    # screen.
    shown = table.assign(source=table["paper"] + ", " + table["table"] + ": " + table["dataset"] + ", "
                         + table["aspect"])
    return format_table(
        shown[["source", "judge", "pearson_pct", "n", "labels_saved_pct", "labels_worth_at_n",
               "detectable_pearson_pct", "n_needed_to_detect"]],
        {"pearson_pct": number(2, label="Pearson %\n(paper)"), "n": count(label="n\n(paper)"),
         "labels_saved_pct": number(2, label="Labels\nsaved %\n(ρ²)"),
         "labels_worth_at_n": number(0, label="n labels\n+ judge\nworth"),
         # The one label long enough to be a sentence, stacked as narrow as the others (10 characters a line)
         "detectable_pearson_pct": number(1, label=stacked(PROSE("paper_judges.detectable"), 10)),
         "n_needed_to_detect": count(label="n its\nPearson\nneeds")},
        labels={"source": "Paper, table: dataset, aspect", "judge": "Judge"},
        caption=PROSE("paper_judges.caption"),
        full_table=(notebook, "paper_judges_worth"))


def paper_judges_worth_finding() -> Markdown:
    """The most any paper's pooled LLM row saves by the ρ² rule, and how many rows save under 1% of the labels."""
    table = papers_worth.paper_judges_worth()
    best = papers_worth.strongest(table)
    return Markdown(PROSE("paper_judges.finding", n_rows=len(table), saved=pages.fmt(best["labels_saved_pct"], 1),
                          paper=best["paper"], table=best["table"], judge=best["judge"], aspect=best["aspect"],
                          r=pages.fmt(best["pearson_pct"] / 100, 2), n=f"{int(best['n']):,}",
                          n_small=int((table["labels_saved_pct"] < SMALL_SAVING_PCT).sum()),
                          small=pages.fmt(SMALL_SAVING_PCT, 0)))


def coverage_finding(worth: pd.DataFrame, headline_n: int) -> str:
    """How often the coverage of either interval falls short of (or lies above) nominal, against what chance gives,
    and PPI++'s lowest coverage."""
    nominal_pct = pages.fmt(100 * worth["nominal"].iloc[0], 0)
    short = {method: worth[f"coverage_{suffix}_against_nominal"] == "short of nominal"
             for method, suffix in (("PPI++", "ppi"), ("human labels alone", "human_only"))}
    above = {method: worth[f"coverage_{suffix}_against_nominal"] == "above nominal"
             for method, suffix in (("PPI++", "ppi"), ("human labels alone", "human_only"))}
    lowest = worth.loc[worth["coverage_ppi"].idxmin()]
    by_chance = len(worth) * ppi.chance_short_of_nominal(int(worth["draws"].iloc[0]), float(worth["nominal"].iloc[0]))
    short_small = int((short["PPI++"] & (worth["n"] <= headline_n)).sum())
    # How many of PPI++'s short cells are at n ≤ headline_n, said only when any is short (the space joins it on)
    at_small = "" if not short["PPI++"].any() else " " + PROSE(
        "coverage.short.at_small", headline_n=headline_n,
        how_many="all" if short_small == short["PPI++"].sum() else short_small or "none")
    sentences = [PROSE("coverage.short", draws=int(worth["draws"].iloc[0]), nominal=nominal_pct,
                       ppi_short=short["PPI++"].sum() or "none", cells=len(worth), at_small=at_small,
                       human_short=short["human labels alone"].sum() or "none", by_chance=pages.fmt(by_chance, 1))]
    if any(a.any() for a in above.values()):
        sentences.append(PROSE("coverage.above", ppi_above=above["PPI++"].sum(),
                               human_above=above["human labels alone"].sum()))
    sentences.append(PROSE("coverage.lowest", coverage=pages.fmt(100 * lowest["coverage_ppi"], 1),
                           low=pages.fmt(100 * lowest["coverage_ppi_mc_low"], 1),
                           high=pages.fmt(100 * lowest["coverage_ppi_mc_high"], 1), judge=lowest["judge"],
                           estimand=lowest["estimand"], n=f"{lowest['n']:,}"))
    return " ".join(sentences)


def headline_worth(worth: pd.DataFrame, headline_n: int) -> pd.DataFrame:
    """The rows of the mean at the headline n, one per judge (index)."""
    mean_worth = _mean_worth(worth)
    return mean_worth[mean_worth["n"] == headline_n].set_index("judge")


def answer_by_judge(worth: pd.DataFrame, judged: JudgedPopulation, judges: Sequence[str], headline_n: int,
                    paper_best: pd.Series) -> Markdown:
    """One bullet per judge: what ``headline_n`` labels plus its scores are worth (with the Monte Carlo interval),
    and whether that saves any beyond the simulation's noise; then
    the paper's best judge by the ρ² rule (``paper_best_judge_worth``) and the coverage finding."""
    headline = headline_worth(worth, headline_n)
    sentences = []
    for judge in _shown_judges(worth, judges):
        if judge not in headline.index:  # a sampled reader's judge: PPI++ needs twice n scored answers
            sentences.append(PROSE("answer.too_few", judge=judge, n_answers=f"{judged.answers(judge):,}",
                                   headline_n=headline_n))
            continue
        row = headline.loc[judge]
        # A saving counts only beyond the simulation's noise and its tuning bias (trust_rules.saves_labels).
        saved = round(row["labels_worth"]) - headline_n if trust_rules.saves_labels(row, headline_n) else 0
        sentences.append(PROSE("answer.judge", judge=judge, headline_n=headline_n, worth=round(row["labels_worth"]),
                               low=round(row["labels_worth_mc_low"]), high=round(row["labels_worth_mc_high"]),
                               pearson=pages.fmt(100 * row["pearson"], 1),
                               saving=PROSE("answer.judge.no_saving") if saved <= 0 else PROSE(
                                   "answer.judge.saved", saved=saved, labels="labels" if saved > 1 else "label")))
    sentences.append(PROSE("answer.paper_best", judge=paper_best["judge"], prompt=paper_best["prompt"],
                           paper=paper_best["paper"], table=paper_best["table"], dataset=paper_best["dataset"],
                           r=pages.fmt(paper_best["pearson_pct"] / 100, 2),
                           worth=f"{paper_best['labels_worth_by_rho2']:,.0f}"))
    sentences.append(coverage_finding(worth, headline_n))
    return Markdown("\n".join(f"- {sentence}" for sentence in sentences))


# ---------------------------------------------------------------------------------------------------------------
# A comparison with and without the judge

def full_data_difference(compare: pd.DataFrame) -> float:
    """The share of serendipitous answers above the median predicted rating minus below it, on every answer."""
    used = compare.dropna(subset=["high_predicted"])
    return float(used.loc[used["high_predicted"] == 1, "serendipitous"].mean()
                 - used.loc[used["high_predicted"] == 0, "serendipitous"].mean())


def comparison_findings(difference: pd.DataFrame, compare: pd.DataFrame) -> dict[str, str]:
    """The full-data difference in words, and how far the missing finite-population correction would narrow the
    largest n's intervals."""
    full_value = full_data_difference(compare)
    largest = difference.loc[difference["n"].idxmax()] if len(difference) else None
    return {
        "full_difference": f"{pages.fmt(abs(100 * full_value), 1)} percentage points "
                           + ("higher" if full_value > 0 else "lower"),
        # Glued right after the page's sentence, hence the space before it
        "difference_correction": "" if largest is None else " " + PROSE(
            "comparison.correction", n=f"{largest['n']:,}", population=f"{largest['population']:,}",
            narrowing=pages.fmt(100 * (1 - np.sqrt(1 - largest["n"] / largest["population"])), 0)),
    }


def show_comparison_table(difference: pd.DataFrame, compare: pd.DataFrame, *, notebook: str, data: str) -> Table:
    """Interval widths and labels worth for the high-minus-low difference (``ppi.worth_table`` with a group)."""
    save_table(difference.assign(full_data_difference=full_data_difference(compare), data=data), notebook,
               "comparison_worth")
    difference_shown = difference.assign(coverage_ppi_text=coverage_text(difference, "ppi"))
    return format_table(
        difference_shown[["judge", "n", "width_human_only", "width_ppi", "coverage_ppi_text", "labels_worth"]],
        {"n": count(label="Labels n"), "width_human_only": number(3, label="Width, human only"),
         "width_ppi": number(3, label="Width, PPI++"),
         "coverage_ppi_text": text(label="Coverage, PPI++ (%) [MC 95%]"),
         "labels_worth": number(0, label="Worth (labels)")}, labels={"judge": "Judge"},
        caption=PROSE("comparison.caption"), full_table=(notebook, "comparison_worth"), audit=True)


# ---------------------------------------------------------------------------------------------------------------
# Judge audits

def show_reliability_table(reliability: pd.DataFrame, *, notebook: str, data: str) -> Table:
    """Krippendorff's α of each set of readings with its bootstrap interval."""
    save_table(reliability.assign(data=data), notebook, "reliability")
    shown = reliability.assign(alpha_text=[f"{pages.fmt(r.alpha, 2)} [{pages.fmt(r.alpha_ci_low, 2)}, "
                                           f"{pages.fmt(r.alpha_ci_high, 2)}]" for r in reliability.itertuples()])
    return format_table(shown[["readings", "answers_complete", "alpha_text"]],
                        {"answers_complete": count(label="Answers"), "alpha_text": text(label="α [95% CI]")},
                        labels={"readings": "Readings"}, caption=PROSE("reliability.caption"),
                        full_table=(notebook, "reliability"), audit=True)


def show_bias_table(bias: pd.DataFrame, *, notebook: str, data: str) -> Table:
    """Each judge's coefficient per property at equal human rating, with its interval (``audits.bias_table``)."""
    save_table(bias.assign(data=data), notebook, "bias")
    shown = bias[bias["term"] != "human rating"].assign(
        effect=lambda b: [f"{pages.fmt(r.coefficient, 3)} [{pages.fmt(r.ci_low, 3)}, {pages.fmt(r.ci_high, 3)}]"
                          for r in b.itertuples()])
    wide = shown.pivot_table(index="judge", columns="term", values="effect", aggfunc="first",
                             sort=False).reset_index()
    return format_table(wide, {c: text(label=c) for c in wide.columns[1:]}, labels={"judge": "Judge"},
                        caption=PROSE("bias.caption"), full_table=(notebook, "bias"), audit=True)


def _bias_effects(bias: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The property effects, and those whose interval excludes zero."""
    effects = bias[bias["term"] != "human rating"]
    return effects, effects[(effects["ci_low"] > 0) | (effects["ci_high"] < 0)]


def bias_finding(bias: pd.DataFrame, judged: JudgedPopulation) -> Markdown:
    """How many effects exclude zero, how many of LLM judges, and the largest of those."""
    effects, clear = _bias_effects(bias)
    clear_llm = clear[clear["judge"].map(judged.kind) != PROXY]
    counts = {"n_clear": len(clear), "n_effects": len(effects), "n_clear_llm": len(clear_llm)}
    if not len(clear_llm):
        return Markdown(PROSE("bias.finding", **counts))
    largest = clear_llm.loc[clear_llm["coefficient"].abs().idxmax()]
    return Markdown(PROSE("bias.finding.largest", **counts, judge=largest["judge"],
                          size=pages.fmt(abs(largest["coefficient"]), 2),
                          direction="higher" if largest["coefficient"] > 0 else "lower", term=largest["term"]))


# ---------------------------------------------------------------------------------------------------------------
# The findings of the verdict's details

def worth_finding(worth: pd.DataFrame, judged: JudgedPopulation | None, headline_n: int) -> str:
    """Which judge is worth the most labels at the headline n, named as the most useful only when it saves labels
    beyond the simulation's noise and its tuning bias (``trust_rules.saves_labels``); selected among the judges, with
    its kind, its worth, its interval and the ρ² rule's worth."""
    headline = headline_worth(worth, headline_n)
    best = headline.loc[headline["labels_worth"].idxmax()]
    # The judge is named with its kind when the population is known
    best_worth = {"judge": best.name if judged is None else f"{best.name}, {judged.kind(best.name)}",
                  "n_judges": len(headline), "worth": pages.fmt(best["labels_worth"], 1),
                  "low": pages.fmt(best["labels_worth_mc_low"], 1), "high": pages.fmt(best["labels_worth_mc_high"], 1),
                  "by_rho2": pages.fmt(best["labels_worth_by_rho2"], 1)}
    saving = headline[[trust_rules.saves_labels(row, headline_n) for _, row in headline.iterrows()]]
    if saving.empty:
        return PROSE("worth.finding.none", **best_worth)
    return PROSE("worth.finding", **best_worth, n_saving=len(saving))


def findings(worth: pd.DataFrame, errors: pd.DataFrame, reliability: pd.DataFrame, bias: pd.DataFrame,
             headline_n: int, judged: JudgedPopulation | None = None) -> dict[str, object]:
    """The glue values of the verdict's details: whether any judge saves labels beyond the simulation's noise
    (``worth_finding``), which judges beat a constant answer once calibrated (``judges_beating_constant``), the
    test-retest α, and how many bias effects exclude zero."""
    retest_row = reliability[reliability["readings"].str.endswith("(test-retest)")]
    effects, clear = _bias_effects(bias)
    gains = trust_rules.calibrated_gains(errors)
    return {
        "headline_n": headline_n,
        "worth_finding": worth_finding(worth, judged, headline_n),
        "calibration_finding": _beating_words(trust_rules.judges_beating_constant(errors),
                                              gains.loc[gains["gain_over_constant"].idxmax()]),
        # Glued right before the page's count of clear bias effects, hence the "; " after it
        "retest_finding": (PROSE("retest.finding", alpha=pages.fmt(float(retest_row["alpha"].iloc[0]), 2)) + "; "
                           if len(retest_row) else ""),
        "n_clear": len(clear), "n_effects": len(effects),
    }


# ---------------------------------------------------------------------------------------------------------------
# Every judge on one scale (the book's headline table and figure)

#: The judge table's file name under results/<chapter>/, and the figure drawn from it beside it (the landing page
#: shows the same file).
JUDGE_TABLE = "judge_table"
JUDGES_FIGURE = "judges.svg"
RANDOM, CONSTANT = "Random", "Constant (most frequent level)"
#: The columns of :func:`judge_summary`'s table, one kind of judge a row.
SUMMARY_COLUMNS = ("Judges", "Rows", "Pearson r (pooled)", "AUC", "MAE calibrated (a constant's)",
                   "Strongest (pooled r)")


def baseline_agreement(frame: pd.DataFrame, *, n_boot: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random and answering the most frequent level (chosen on the other users) as agreement rows with their
    ranking AUC, and their kinds."""
    random = ser.random_baseline_agreement(frame["truth"], seed=seed, ranking=True)
    constant = ser.constant_baseline_agreement(frame, n_boot=n_boot, seed=seed, ranking=True)
    rows = pd.concat([random, constant[constant["method"] == CONSTANT]], ignore_index=True)
    return rows, pd.DataFrame({"judge": [RANDOM, CONSTANT], "kind": ["Random", "constant"]})


def judge_table(agreement: pd.DataFrame, judged: JudgedPopulation, calibration_errors: pd.DataFrame,
                baselines: tuple[pd.DataFrame, pd.DataFrame], *, notebook: str, data: str) -> pd.DataFrame:
    """Every judge the book knows (``recjudge.trust.judge_table``): the papers' rows and this chapter's judges,
    Random and a constant, written to results/ as ``judge_table``."""
    from recjudge.trust import judge_table as jt

    rows, kinds = baselines
    book = jt.book_rows(pd.concat([agreement, rows], ignore_index=True),
                        pd.concat([judged.judges[["judge", "kind"]], kinds], ignore_index=True), calibration_errors,
                        data)
    return save_table(jt.judge_table(jt.paper_rows(), book), notebook, JUDGE_TABLE)


def judges_figure(table: pd.DataFrame, notebook: str) -> Markdown:
    """Draw every judge on one axis (``judge_table.draw_judges``) into results/<notebook>/judges.svg and return the
    figure's MyST, numbered, with its computed caption and alt text, as this chapter places it (Markdown: glue:md
    reads only a text/markdown output)."""
    from recjudge.compendium.results import results_path
    from recjudge.trust import judge_table as jt

    path = results_path(notebook, JUDGE_TABLE).parent / JUDGES_FIGURE
    fig = jt.draw_judges(table)
    figures.assert_legible(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(figures.svg_image(fig).svg, encoding="utf-8")
    return Markdown(jt.figure_markdown(table, f"../../results/{notebook}/{JUDGES_FIGURE}"))


def _table_row(cells: Sequence[object]) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def judge_summary(table: pd.DataFrame, reliability: Mapping[str, object], notebook: str) -> Markdown:
    """The judge table in one line per kind of judge (the full table is the CSV): how many rows, the range of Pearson
    r with the users (pooled readings) and of AUC, and the strongest row; then the ceiling Serendipity-2018's own
    answers set (``ground_truth.truth_reliability``, saved as ``truth_reliability``), where no second human read the
    same answers."""
    save_table(pd.DataFrame([reliability]), notebook, "truth_reliability")
    from recjudge.trust import judge_table as jt

    lines = [_table_row(SUMMARY_COLUMNS), "|---|--:|---|---|---|---|"]
    for group in jt.GROUPS:
        rows = table[table["group"] == group]
        if rows.empty:
            continue
        pooled = rows[rows["reading"].isin(jt.paper_judges.POOLED_READINGS) & rows["pearson_pct"].notna()]
        r = (pages.span(pooled["pearson_pct"].min() / 100, pooled["pearson_pct"].max() / 100)
             if len(pooled) else "undefined" if rows["pearson_pct"].isna().all() else "no pooled reading")
        auc = pages.span(rows["auc"].min(), rows["auc"].max()) if rows["auc"].notna().any() else "—"
        calibrated = rows.dropna(subset=["mae_calibrated", "mae_constant"])
        mae = (f"{pages.span(calibrated['mae_calibrated'].min(), calibrated['mae_calibrated'].max())} "
               f"({pages.span(calibrated['mae_constant'].min(), calibrated['mae_constant'].max())})"
               if len(calibrated) else "—")
        best = jt.highest(table, group)
        strongest = ("—" if best is None else
                     f"{best['judge']}, {best['aspect']} ({best['source']}; {best['dataset']})")
        lines.append(_table_row([group, len(rows), r, auc, mae, strongest]))
    lines += ["", PROSE("summary.after", n_statements=len(str(reliability["statements"]).split(",")),
                        statements=reliability["statements"], alpha=pages.fmt(float(reliability["alpha"]), 2),
                        n=f"{int(reliability['n']):,}", ceiling=pages.fmt(float(reliability["ceiling_r"]), 2),
                        path=f"../../results/{notebook}/{JUDGE_TABLE}.csv")]
    return Markdown("\n".join(lines))
