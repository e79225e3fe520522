"""The page of the chapter "Normalised surprise and the limits to surprise" (Lima and Peres): its opening box, its
tables beside the paper's, its figures and the glued findings with the rules that choose their words."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import count, format_table, number, paper_beside_ours, percent
from recjudge.data import MissingDataError, availability, load_movielens, movielens_name
from recjudge.surprise import item_models, one_plus_random, time_frames
from recjudge.surprise import limits as surprise
from recjudge.surprise.paper_tables import (
    MAGNITUDE_CLOSE,
    PAPER_MIN_INTERVALS,
    coefficients_of_variation,
    lima_peres_table2,
    lima_peres_table2_long,
)
from recjudge.surprise.recommenders import PAPER_K_NEIGHBOURS

DATA_NAMES = {"latest-small": "MovieLens ml-latest-small", "100k": "MovieLens 100K", "1m": "MovieLens 1M"}
DISTANCE_NAMES = item_models.DISTANCE_LABELS
MEANS = ["MSI_mean", "kNN_mean", "LSI_mean"]
#: A greedy maximum at most 2% below the exact one counts as close.
GREEDY_CLOSE = 0.02
TABLE1_FORMATS = {"exact": number(3, label="Exact limit"), "greedy": number(3, label="Greedy limit"),
                  "ratio": number(3, label="Greedy ÷ exact"),
                  "share_exact": percent(0, label="Greedy exact (% of instances)"),
                  "worst_ratio": number(3, label="Worst ratio")}
MODEL_DISTANCE = {"model": "Model", "distance": "Distance"}
#: The page's sentences (``notebooks/prose/normalised_surprise.md``).
PROSE = Prose("normalised_surprise")


@dataclass
class Run:
    """The chapter's parameters and the data and intervals its Experiment 2 runs on, with the facts the page
    states about them."""

    notebook: str
    dataset: str
    movielens: object = field(repr=False)
    all_intervals: list = field(repr=False)
    intervals: list = field(repr=False)
    seed: int = 0
    exp1_seeds: int = 200
    gap_sizes: tuple = (6, 9, 12, 15)
    gap_instances: int = 15
    frame_size: int = time_frames.PAPER_FRAME_SIZE
    n_sampled: int = one_plus_random.PAPER_N_SAMPLED
    top_n: int = one_plus_random.PAPER_TOP_N
    k_neighbours: int = PAPER_K_NEIGHBOURS
    min_common_users: int = time_frames.PAPER_MIN_COMMON_USERS
    max_users_per_interval: int | None = None
    models: tuple = item_models.MODEL_NAMES

    @cached_property
    def data_copy(self) -> str:
        # What the tables record is whether the data are complete, not where they were found: the committed sample
        # of ml-latest-small holds every file of the release (checked by sha256), so it counts as complete.
        copy = availability([f"movielens-{self.dataset}"]).iloc[0]
        return "complete" if copy["status"] == "sample" and not copy["missing"] else self.movielens.status

    @cached_property
    def eligibility(self) -> pd.DataFrame:
        framed = time_frames.assign_time_frames(self.movielens.ratings, self.frame_size)
        return time_frames.frame_eligibility(framed, min_common_users=self.min_common_users)

    @property
    def n_users(self) -> int:
        """User lists per model × distance pair and recommender."""
        cap = self.max_users_per_interval or 10**9
        return sum(min(len(interval.sample_users), cap) for interval in self.intervals)

    @property
    def max_sample_users(self) -> int:
        return int(self.eligibility["n_sample_users"].max())

    @property
    def paper_lists(self) -> int:
        return time_frames.PAPER_MIN_COMMON_USERS ** 2  # at least 30 intervals of at least 30 users

    @property
    def n_pairs(self) -> int:
        return len(item_models.model_distance_pairs(self.models))


def opening(run: Run) -> Markdown:
    """The box that opens the chapter: data, item models, sample, exact against greedy, and the caveat."""
    ratings = run.movielens.ratings
    if run.dataset == "latest-small":
        data_status = PROSE("opening.data.embedded")
    elif run.data_copy == "partial":
        data_status = PROSE("opening.data.partial")
    else:
        data_status = run.data_copy
    users_each = ("every sampled user" if run.max_users_per_interval is None
                  else f"at most {run.max_users_per_interval} users")
    facts = [
        ("Data", PROSE("opening.data", dataset=DATA_NAMES.get(run.dataset, run.dataset), status=data_status,
                       ratings=f"{len(ratings):,}", users=f"{ratings['user_id'].nunique():,}",
                       movies=f"{ratings['item_id'].nunique():,}")),
        ("Item models and distances", PROSE("opening.item_models")),
        ("Sample", PROSE("opening.sample", intervals=len(run.intervals), eligible=len(run.all_intervals),
                         frame_size=f"{run.frame_size:,}", users_each=users_each, n_users=run.n_users,
                         paper_lists=f"{run.paper_lists:,}", min_common_users=run.min_common_users,
                         paper_min_common_users=time_frames.PAPER_MIN_COMMON_USERS,
                         max_sample_users=run.max_sample_users)),
        ("Exact and greedy", PROSE("opening.exact_and_greedy", instances=run.exp1_seeds,
                                   gap_instances=run.gap_instances, smallest=min(run.gap_sizes),
                                   largest=max(run.gap_sizes))),
    ]
    return pages.opening(facts, PROSE("opening.caveat", n_users=run.n_users))


# ----------------------------------------------------------------------------------------------------------------
# Experiment 1: greedy against exact limits


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1 with its ratios greedy ÷ exact."""
    paper = surprise.TABLE1_PAPER.copy()
    paper["paper_max_ratio"] = paper["s_pmax_greedy"] / paper["s_pmax"]
    paper["paper_min_ratio"] = paper["s_pmin_greedy"] / paper["s_pmin"]
    return paper


def summarise_table1(exp1: pd.DataFrame) -> pd.DataFrame:
    """Per distance: the medians of the exact and greedy limits over the instances, how often greedy is exact,
    and the median and worst ratios greedy ÷ exact."""
    return (
        exp1.groupby("distance", sort=False)
        .agg(instances=("seed", "size"), s_pmax=("s_pmax", "median"), s_pmax_greedy=("s_pmax_greedy", "median"),
             s_pmin=("s_pmin", "median"), s_pmin_greedy=("s_pmin_greedy", "median"),
             share_max_greedy_exact=("max_exact", "mean"), share_min_greedy_exact=("min_exact", "mean"),
             median_max_ratio=("max_ratio", "median"), min_max_ratio=("max_ratio", "min"),
             median_min_ratio=("min_ratio", "median"), max_min_ratio=("min_ratio", "max"))
        .reset_index()
    )


def _table1_side(summary: pd.DataFrame, paper: pd.DataFrame, kind: str, worst: str):
    """One limit of Table 1 beside the paper: exact, greedy and their ratio, with ours' share of exact greedy."""
    limit = f"s_p{kind}"
    ours = summary.assign(distance=summary["distance"].map(DISTANCE_NAMES)).rename(columns={
        limit: "exact", f"{limit}_greedy": "greedy", f"median_{kind}_ratio": "ratio",
        f"share_{kind}_greedy_exact": "share_exact", worst: "worst_ratio"})
    paper = paper.assign(distance=paper["distance"].map(DISTANCE_NAMES)).rename(columns={
        limit: "exact", f"{limit}_greedy": "greedy", f"paper_{kind}_ratio": "ratio"})
    return ours, paper


def show_table1(exp1: pd.DataFrame, run: Run) -> None:
    """Table 1 for the maximum and the minimum, the paper's instance beside our medians; saves the full table."""
    summary = summarise_table1(exp1)
    paper = paper_table1()
    table1 = summary.merge(
        paper.rename(columns={c: f"paper_{c}" for c in ["s_pmax", "s_pmax_greedy", "s_pmin", "s_pmin_greedy"]}),
        on="distance")
    save_table(table1, run.notebook, "table1_exact_vs_greedy")
    for kind, worst, name in (("max", "min_max_ratio", "maximum"), ("min", "max_min_ratio", "minimum")):
        ours, paper_side = _table1_side(summary, paper, kind, worst)
        display(paper_beside_ours(
            ours, paper_side, keys="distance", metrics=TABLE1_FORMATS, labels={"distance": "Distance"},
            caption=PROSE("table1.caption", limit=name, instances=run.exp1_seeds),
            full_table=(run.notebook, "table1_exact_vs_greedy"),
            audit=kind == "min"))  # the greedy minimum is always exact (below): its table is for the record


def draw_greedy_ratio(exp1: pd.DataFrame, run: Run) -> None:
    """Figure fig-greedy-ratio: each instance's greedy ÷ exact maximum per distance, the paper's beside them."""
    ranked = exp1.assign(distance=exp1["distance"].map(DISTANCE_NAMES))
    names = list(dict.fromkeys(ranked["distance"]))
    rng = np.random.default_rng(run.seed)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for x, name in enumerate(names):
        ratios = ranked.loc[ranked["distance"] == name, "max_ratio"].to_numpy()
        ax.scatter(x + rng.uniform(-0.28, 0.28, len(ratios)), ratios, s=12, alpha=0.35, color=figures.PALETTE[0],
                   linewidths=0, label="our random instances" if x == 0 else None)
    paper = paper_table1()
    paper_ratio = paper.assign(distance=paper["distance"].map(DISTANCE_NAMES)).set_index("distance")
    ax.scatter(range(len(names)), paper_ratio.loc[names, "paper_max_ratio"], marker="D", s=45,
               color=figures.PALETTE[1], zorder=5, label="the paper's instance")
    ax.set_xticks(range(len(names)), names)
    ax.set(xlabel="Distance", ylabel="Greedy ÷ exact maximum")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, frameon=False)  # below: never over a point
    worst = exp1["max_ratio"].min()
    figures.glue_figure("fig-greedy-ratio", fig,
                        PROSE("fig-greedy-ratio.caption", instances=run.exp1_seeds, worst=pages.fmt(worst, 3)))


def greedy_exact_shares(exp1: pd.DataFrame) -> pd.Series:
    """Per distance (by its name), the share of instances whose greedy maximum is exact."""
    return exp1.groupby("distance", sort=False)["max_exact"].mean().rename(index=DISTANCE_NAMES)


def greedy_table1_note(exp1: pd.DataFrame) -> Markdown:
    """What Table 1 says: the greedy minimum is always exact (and why), how often the maximum is, and where the
    paper's instance sits among ours."""
    min_exact = int(exp1["min_exact"].sum())
    max_share = greedy_exact_shares(exp1)
    paper_euclid = float(paper_table1().set_index("distance").loc["euclidean", "paper_max_ratio"])
    euclid = exp1.loc[exp1["distance"] == "euclidean", "max_ratio"]
    return Markdown(PROSE(
        "table1.note", min_exact=f"{min_exact:,}", pairs=f"{len(exp1):,}",
        lowest=pages.fmt(100 * max_share.min(), 0), lowest_distance=max_share.idxmin(),
        highest=pages.fmt(100 * max_share.max(), 0), highest_distance=max_share.idxmax(),
        paper_ratio=pages.fmt(paper_euclid, 3), percentile=pages.fmt(100 * (euclid < paper_euclid).mean(), 0)))


# ----------------------------------------------------------------------------------------------------------------
# Exact against greedy as the problem grows


def greedy_maxima(gap_summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of the greedy maximum, distances in the paper's order and by their names."""
    order = {name: i for i, name in enumerate(surprise.TABLE1_DISTANCES)}
    return (gap_summary[gap_summary["kind"] == "max"]
            .sort_values(["distance", "n_unknown"], key=lambda s: s.map(order) if s.name == "distance" else s,
                         kind="stable")
            .assign(distance=lambda t: t["distance"].map(DISTANCE_NAMES)))


def greedy_gap_finding(maxima: pd.DataFrame) -> str:
    """What the greedy-gap figure shows (``greedy_maxima`` rows): how the share of exact greedy maxima changes from
    the smallest to the largest problem, and the largest mean shortfall of any distance and size."""
    smallest, largest = maxima["n_unknown"].min(), maxima["n_unknown"].max()
    at = maxima.groupby("n_unknown")["share_exact"]
    low, high = at.min(), at.max()

    def share_range(n: int) -> str:
        if low[n] == high[n]:
            return f"{pages.fmt(100 * low[n], 0)}%"
        return f"{pages.fmt(100 * low[n], 0)}–{pages.fmt(100 * high[n], 0)}%"

    worst = maxima.loc[maxima["mean_relative_gap"].idxmax()]
    return PROSE("fig-greedy-gap.finding", smallest_share=share_range(smallest), smallest=smallest,
                 largest_share=share_range(largest), largest=largest,
                 shortfall=pages.fmt(100 * worst["mean_relative_gap"], 2), distance=worst["distance"],
                 size=worst["n_unknown"])


def draw_greedy_gap(gap_summary: pd.DataFrame, run: Run) -> None:
    """Figure fig-greedy-gap: how often the greedy maximum is exact and its mean shortfall, per size; saves the
    summary."""
    save_table(gap_summary, run.notebook, "greedy_gap")
    maxima = greedy_maxima(gap_summary)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7, 3.2), sharex=True)
    for i, (name, part) in enumerate(maxima.groupby("distance", sort=False)):
        style = dict(color=figures.PALETTE[i], marker=figures.MARKERS[i], label=name)
        left.plot(part["n_unknown"], 100 * part["share_exact"], **style)
        right.plot(part["n_unknown"], 100 * part["mean_relative_gap"], **style)
    left.set(xlabel="Unknown items", ylabel="Greedy maximum exact (%)", ylim=(0, 105))
    right.set(xlabel="Unknown items", ylabel="Greedy maximum, mean shortfall (%)")
    left.set_xticks(list(run.gap_sizes))
    fig.legend(*right.get_legend_handles_labels(), title="Distance", loc="upper center",
               bbox_to_anchor=(0.5, 0.02), ncols=4, frameon=False)
    fig.tight_layout()
    figures.glue_figure("fig-greedy-gap", fig, PROSE("fig-greedy-gap.caption", finding=greedy_gap_finding(maxima),
                                                     instances=run.gap_instances))


def show_largest_gap(gap_summary: pd.DataFrame, run: Run) -> Markdown:
    """The greedy maximum at the largest size (a collapsed table) and what the sizes say."""
    maxima = greedy_maxima(gap_summary)
    largest = maxima[maxima["n_unknown"] == maxima["n_unknown"].max()]
    display(format_table(
        largest[["distance", "share_exact", "mean_relative_gap", "max_relative_gap"]],
        {"share_exact": percent(0, label="Greedy exact (% of instances)"),
         "mean_relative_gap": percent(2, label="Mean shortfall (%)"),
         "max_relative_gap": percent(2, label="Worst shortfall (%)")},
        labels={"distance": "Distance"},
        caption=PROSE("largest_gap.caption", size=int(largest["n_unknown"].iloc[0]), instances=run.gap_instances),
        full_table=(run.notebook, "greedy_gap"), audit=True))
    minima = gap_summary[gap_summary["kind"] == "min"]
    return Markdown(PROSE("largest_gap.note", every="every" if minima["share_exact"].eq(1).all() else "not every",
                          shortfall=pages.fmt(100 * maxima["max_relative_gap"].max(), 1)))


# ----------------------------------------------------------------------------------------------------------------
# Experiment 2: the time-frame process


def show_experiment2_scope(run: Run) -> None:
    """How many frames are eligible at either threshold, what the 13-term rule would keep, and the settings of
    Experiment 2 (a collapsed table); saves both tables."""
    eligibility, movielens = run.eligibility, run.movielens
    threshold_counts = pd.DataFrame({
        "min_common_users": [time_frames.PAPER_MIN_COMMON_USERS, run.min_common_users],
        "eligible_frames": [int((eligibility["n_sample_users"] >= time_frames.PAPER_MIN_COMMON_USERS).sum()),
                            int(eligibility["eligible"].sum())],
    })
    threshold_counts.insert(0, "dataset", run.dataset)
    threshold_counts["frames"] = len(eligibility)
    threshold_counts["max_sample_users"] = run.max_sample_users
    save_table(threshold_counts, run.notebook, "eligible_frames")
    last_frames = [str(interval.last_frame) for interval in run.intervals]
    run_scope = pd.DataFrame([{
        "dataset": run.dataset, "status": run.data_copy, "frame_size": run.frame_size,
        "min_common_users": run.min_common_users, "eligible_intervals": len(run.all_intervals),
        "intervals_used": len(run.intervals), "last_frames": ",".join(last_frames),
        "max_users_per_interval": run.max_users_per_interval, "user_lists_per_cell": run.n_users,
        "n_sampled": run.n_sampled, "top_n": run.top_n, "k_neighbours": run.k_neighbours, "seed": run.seed,
    }])
    save_table(run_scope, run.notebook, "experiment2_scope")
    long_texts = item_models.build_content_model(movielens.items, movielens.tags, min_terms=13).n_items
    display(Markdown(PROSE(
        "experiment2.eligible", frames=len(eligibility), eligible_paper=threshold_counts["eligible_frames"].iloc[0],
        paper_min_common_users=time_frames.PAPER_MIN_COMMON_USERS,
        eligible_here=threshold_counts["eligible_frames"].iloc[1], min_common_users=run.min_common_users,
        long_texts=f"{long_texts:,}", movies=f"{movielens.items['item_id'].nunique():,}")))
    settings_shown = pd.DataFrame([
        ("Frames of ratings", f"{len(eligibility)} of {run.frame_size:,} ratings"),
        (PROSE("experiment2.setting.common_users"), f"at least {run.min_common_users} (paper: "
                                                    f"{time_frames.PAPER_MIN_COMMON_USERS})"),
        ("Intervals used", f"{len(run.intervals)} of {len(run.all_intervals)} eligible, ending at frames "
                           + ", ".join(last_frames)),
        ("Users per interval", "all sampled" if run.max_users_per_interval is None
         else f"at most {run.max_users_per_interval}"),
        (PROSE("experiment2.setting.user_lists"), f"{run.n_users} (paper: {run.paper_lists:,} or more)"),
        ("Unknown items sampled per user", f"{run.n_sampled:,} per user and interval"),
        ("List length, neighbours of item-kNN", f"{run.top_n}, k = {run.k_neighbours}"),
    ], columns=["setting", "value"])
    display(format_table(settings_shown, caption="Experiment 2 as run here",
                         full_table=(run.notebook, "experiment2_scope"), audit=True))


def show_item_models(models: dict, run: Run) -> None:
    """The item models built for the run (a collapsed table); saves it."""
    model_rows = pd.DataFrame([{"model": name, "items": model.n_items, "description": model.note}
                               for name, model in models.items()])
    save_table(model_rows, run.notebook, "item_models")
    display(format_table(model_rows, {"items": count(label="Items")},
                         labels={"model": "Model", "description": "What it is"},
                         caption=PROSE("item_models.caption"), full_table=(run.notebook, "item_models"),
                         audit=True))


def save_lists(results: pd.DataFrame, supplementary: pd.DataFrame, run: Run) -> None:
    """Every user list of Algorithm 1 and of the supplementary run, as published tables."""
    save_table(results, run.notebook, "experiment2_lists")
    save_table(supplementary, run.notebook, "supplementary_lists")


def show_table2(table2_long: pd.DataFrame, run: Run) -> pd.DataFrame:
    """Table 2 (the means), the paper's beside ours; saves the paper's, ours long and wide, and the comparison.
    Returns ours in the paper's layout."""
    paper = lima_peres_table2()
    save_table(paper, run.notebook, "table2_paper")
    save_table(table2_long, run.notebook, "table2_long")
    table2 = one_plus_random.table2_wide(table2_long)
    comparison = table2.merge(paper[["model", "distance", *MEANS]], on=["model", "distance"], how="left",
                              suffixes=("", "_paper"))
    save_table(comparison, run.notebook, "table2_vs_paper")
    display(paper_beside_ours(
        table2[["model", "distance", *MEANS]], paper[["model", "distance", *MEANS]], keys=["model", "distance"],
        metrics={m: number(3, label=m.split("_")[0]) for m in MEANS}, difference=True, labels=MODEL_DISTANCE,
        caption=PROSE("table2.caption"),
        full_table=(run.notebook, "table2_vs_paper")))
    return table2


def draw_table2(table2_long: pd.DataFrame) -> None:
    """Figure fig-normalised-surprise: our means (``summarise_table2`` rows) and the paper's per model and distance,
    joined by a line, each with ± one standard error of the mean over its interval series: ours its SD over its
    intervals, the paper's its printed SD over the fewest intervals it states (``PAPER_MIN_INTERVALS``, so the
    paper's bars are the widest its series allows)."""
    ours = table2_long.pivot_table(index=["model", "distance"], columns="recommender", sort=False, dropna=False,
                                   values=["mean", "sd", "n_intervals"])
    printed = lima_peres_table2().set_index(["model", "distance"])
    # The paper's cells only: a build with more item models or distances draws those in its tables, not here.
    measured = pd.MultiIndex.from_frame(table2_long[["model", "distance"]].drop_duplicates())
    ours = ours[ours.index.isin(printed.index) & ours.index.isin(measured)]
    cells = [f"{model} · {distance}" for model, distance in ours.index]
    paper = printed.loc[list(ours.index)]
    fig, ax = plt.subplots(figsize=(7, 5.2))
    y = np.arange(len(cells))[::-1]
    for i, recommender in enumerate(("MSI", "kNN", "LSI")):
        ours_x = ours[("mean", recommender)].to_numpy()
        ours_se = (ours[("sd", recommender)] / np.sqrt(ours[("n_intervals", recommender)])).to_numpy()
        paper_x = paper[f"{recommender}_mean"].to_numpy()
        paper_se = paper[f"{recommender}_sd"].to_numpy() / np.sqrt(PAPER_MIN_INTERVALS)
        colour, marker, row = figures.PALETTE[i], figures.MARKERS[i], y + (1 - i) * 0.22
        ax.hlines(row, np.minimum(ours_x, paper_x), np.maximum(ours_x, paper_x), color=colour, linewidth=1,
                  alpha=0.6)
        ax.errorbar(ours_x, row, xerr=ours_se, color=colour, marker=marker, markersize=6, linestyle="none",
                    capsize=2, elinewidth=1, zorder=3, label=f"{recommender}, ours")
        ax.errorbar(paper_x, row, xerr=paper_se, color=colour, marker=marker, markersize=6, linestyle="none",
                    markerfacecolor="white", capsize=2, elinewidth=1, zorder=3, label=f"{recommender}, paper")
    ax.set_yticks(y, cells)
    ax.set(xlabel=PROSE("fig-normalised-surprise.x_label"), ylabel="Item model · distance", xlim=(-0.02, 1.02))
    ax.grid(axis="y", alpha=0)
    ax.legend(ncols=3, loc="upper center", bbox_to_anchor=(0.45, -0.13), frameon=False)
    fig.tight_layout()
    intervals = table2_long["n_intervals"]
    figures.glue_figure("fig-normalised-surprise", fig, PROSE(
        "fig-normalised-surprise.caption", intervals=pages.span(intervals.min(), intervals.max(), 0),
        paper_intervals=PAPER_MIN_INTERVALS))


def show_clipping(table2_long: pd.DataFrame, results: pd.DataFrame, run: Run) -> None:
    """How many lists needed clipping to [0, 1] or had equal limits, and in which cells (a collapsed table)."""
    clipping = table2_long.pivot_table(index=["model", "distance"], columns="recommender", values="clipped_share",
                                       sort=False).reset_index()
    clipped_lists = int(results["clipped"].sum())
    undefined_lists = int(table2_long["n_undefined"].sum())
    clipped = {"clipped": clipped_lists, "lists": f"{len(results):,}",
               "share": pages.fmt(100 * clipped_lists / len(results), 1)}
    said = (PROSE("clipping.undefined", **clipped, undefined=undefined_lists) if undefined_lists
            else PROSE("clipping.none_undefined", **clipped))
    display(Markdown(said + (" " + PROSE("clipping.cells") if clipped_lists else "")))
    shown = clipping[clipping[["MSI", "kNN", "LSI"]].gt(0).any(axis=1)]
    if len(shown):
        display(format_table(shown[["model", "distance", "MSI", "kNN", "LSI"]],
                             {r: percent(0, label=f"{r} (% of lists)") for r in ("MSI", "kNN", "LSI")},
                             labels=MODEL_DISTANCE, caption="Share of lists clipped",
                             full_table=(run.notebook, "table2_long"), audit=True))


def _ends(supplementary: pd.DataFrame) -> dict:
    """The supplementary run's MSI lists that score 1 and LSI lists that score 0, of those defined."""
    msi_scores = supplementary.query("recommender == 'MSI'")["normalised"]
    lsi_scores = supplementary.query("recommender == 'LSI'")["normalised"]
    return {"msi_one": int(np.isclose(msi_scores.dropna(), 1.0).sum()), "msi_lists": int(msi_scores.notna().sum()),
            "lsi_zero": int(np.isclose(lsi_scores.dropna(), 0.0).sum()), "lsi_lists": int(lsi_scores.notna().sum()),
            "undefined": int(msi_scores.isna().sum() + lsi_scores.isna().sum())}


def show_supplementary(supplementary: pd.DataFrame, table2: pd.DataFrame, run: Run) -> None:
    """The supplementary run: how many MSI lists score 1 and LSI lists 0, and kNN's means beside Algorithm 1's
    (a collapsed table); saves its Table 2."""
    supplementary_table = one_plus_random.table2_wide(one_plus_random.summarise_table2(supplementary))
    save_table(supplementary_table, run.notebook, "supplementary_no_sampling_greedy")
    ends = _ends(supplementary)
    display(Markdown(PROSE("supplementary.ends", **ends, n_pairs=run.n_pairs)))
    knn = table2[["model", "distance", "kNN_mean"]].merge(
        supplementary_table[["model", "distance", "kNN_mean"]], on=["model", "distance"], suffixes=("", "_all"))
    display(format_table(knn, {"kNN_mean": number(3, label=f"{run.n_sampled:,} sampled items"),
                               "kNN_mean_all": number(3, label="All unknown items")},
                         labels=MODEL_DISTANCE,
                         caption=PROSE("supplementary.caption"),
                         full_table=(run.notebook, "supplementary_no_sampling_greedy"), audit=True))


def show_ordering(ordering: pd.DataFrame, table2: pd.DataFrame, run: Run) -> None:
    """Whether MSI ≥ kNN ≥ LSI holds on the means, and the share of paired lists respecting each inequality per
    cell; saves the check."""
    save_table(ordering, run.notebook, "ordering_check")
    exceptions = ordering[~ordering["holds_on_means"]]
    holding = {"holding": int(ordering["holds_on_means"].sum()), "comparisons": len(ordering),
               "cells": len(ordering) // 2}
    display(Markdown(PROSE("ordering.no_exception", **holding) if exceptions.empty else
                     PROSE("ordering.exceptions", **holding, exceptions=pages.count(len(exceptions), "exception"),
                           within_noise=int(exceptions["within_noise"].sum()))))
    per_list = table2[["model", "distance"]].merge(
        ordering.pivot_table(index=["model", "distance"], columns="inequality", values="share_of_lists_holding")
        .reset_index(), on=["model", "distance"])
    display(format_table(per_list, {"MSI >= kNN": percent(0, label=PROSE("ordering.column.msi_knn")),
                                    "kNN >= LSI": percent(0, label=PROSE("ordering.column.knn_lsi"))},
                         labels=MODEL_DISTANCE,
                         caption=PROSE("ordering.caption", lists=int(ordering["lists"].max())),
                         full_table=(run.notebook, "ordering_check"), audit=True))


def show_datasets(run: Run) -> None:
    """Frames eligible under the paper's threshold and this run's in every MovieLens release of the build (a
    collapsed table, saved), or which releases are missing."""
    other_rows, absent = [], []
    for variant in ("latest-small", "100k", "1m"):
        try:
            data = run.movielens if variant == run.dataset else load_movielens(variant)
        except MissingDataError:
            absent.append(DATA_NAMES[variant])
            continue
        status = run.data_copy if variant == run.dataset else data.status
        table = time_frames.frame_eligibility(time_frames.assign_time_frames(data.ratings, run.frame_size),
                                              min_common_users=run.min_common_users)
        other_rows.append({
            "dataset": variant, "status": status, "ratings": len(data.ratings),
            "users": data.ratings["user_id"].nunique(), "items": data.ratings["item_id"].nunique(),
            "frames": len(table), "max_sample_users": int(table["n_sample_users"].max()),
            "eligible_paper_threshold": int((table["n_sample_users"] >= time_frames.PAPER_MIN_COMMON_USERS).sum()),
            f"eligible_at_{run.min_common_users}": int(table["eligible"].sum()),
        })
    if absent:  # the table compares all three releases; without them it is neither shown nor rewritten
        display(Markdown(PROSE("datasets.absent", releases=", ".join(absent))))
        return
    datasets_table = save_table(pd.DataFrame(other_rows), run.notebook, "datasets_time_frames")
    display(format_table(
        datasets_table.assign(dataset=datasets_table["dataset"].map(DATA_NAMES)),
        {"max_sample_users": count(label=PROSE("datasets.column.max_sample_users")),
         "eligible_paper_threshold": count(label=f"Eligible at {time_frames.PAPER_MIN_COMMON_USERS}"),
         f"eligible_at_{run.min_common_users}": count(label=f"Eligible at {run.min_common_users}")},
        labels={"dataset": "Dataset", "status": "Copy"},
        caption=PROSE("datasets.caption", frame_size=f"{run.frame_size:,}"),
        full_table=(run.notebook, "datasets_time_frames"), audit=True))


def show_coefficients_of_variation(table2_long: pd.DataFrame, run: Run) -> Markdown:
    """The paper's four coefficients of variation, printed, recomputed from its Table 2 and from ours (saved), and
    what they say."""
    cvs = coefficients_of_variation(lima_peres_table2_long()).merge(
        coefficients_of_variation(table2_long)[["varies", "fixed", "cells", "cv_pct"]],
        on=["varies", "fixed"], suffixes=("_paper_table", "_ours"))
    save_table(cvs, run.notebook, "paper_claim_coefficients_of_variation")
    display(format_table(cvs[["varies", "fixed", "printed_cv_pct", "cv_pct_paper_table", "cv_pct_ours",
                              "cells_ours"]],
                         {"printed_cv_pct": number(1, label="Printed (%)"),
                          "cv_pct_paper_table": number(1, label=PROSE("cv.column.paper_table")),
                          "cv_pct_ours": number(1, label="From ours (%)"), "cells_ours": count(label="Our cells")},
                         labels={"varies": "Over", "fixed": "With"},
                         caption=PROSE("cv.caption"),
                         full_table=(run.notebook, "paper_claim_coefficients_of_variation"), audit=True))
    return Markdown(cv_finding(cvs))


def cv_finding(cvs: pd.DataFrame) -> str:
    """Whether the printed coefficients follow from the paper's Table 2, and whether ours show the choice of
    representation and distance to matter (every one at least 5%)."""
    consistent = bool((cvs["cv_pct_paper_table"].round(1) == cvs["printed_cv_pct"]).all())
    return PROSE("cv.finding",
                 consistency=PROSE("cv.finding.consistent" if consistent else "cv.finding.inconsistent"),
                 lowest=pages.fmt(cvs["cv_pct_ours"].min(), 1), highest=pages.fmt(cvs["cv_pct_ours"].max(), 1),
                 paper_lowest=pages.fmt(cvs["printed_cv_pct"].min(), 1),
                 paper_highest=pages.fmt(cvs["printed_cv_pct"].max(), 1),
                 conclusion=PROSE("cv.finding.choice_matters" if cvs["cv_pct_ours"].min() >= 5
                                  else "cv.finding.choice_matters_little"))


# ----------------------------------------------------------------------------------------------------------------
# The findings glued into the verdict's details


def order_findings(table2: pd.DataFrame, ordering: pd.DataFrame) -> dict:
    """The order and the magnitudes against the paper's Table 2: in how many cells MSI ≥ kNN ≥ LSI holds on the
    means (ours and the paper's), the least share of lists holding each inequality, the typical and largest gaps,
    and whether our lists sit further from the ends of the scale (MSI below and LSI above the paper's in most
    cells)."""
    ours_means = table2.set_index(["model", "distance"])[MEANS]
    paper_all = lima_peres_table2().set_index(["model", "distance"])[MEANS].loc[ours_means.index]

    def both_hold(t):
        return (t["MSI_mean"] >= t["kNN_mean"]) & (t["kNN_mean"] >= t["LSI_mean"])

    delta = ours_means - paper_all
    typical = delta.abs().median()
    msi_below = int((delta["MSI_mean"] < 0).sum())
    lsi_above = int((delta["LSI_mean"] > 0).sum())
    largest_gap = delta["kNN_mean"].abs().idxmax()
    further_from_ends = msi_below > len(delta) / 2 and lsi_above > len(delta) / 2
    share_holding = ordering.groupby("inequality")["share_of_lists_holding"].min()
    return {
        "order_cells_ours": int(both_hold(ours_means).sum()), "order_cells_paper": int(both_hold(paper_all).sum()),
        "n_cells": len(ours_means), "n_cells_paper": len(paper_all),
        "msi_knn_share": pages.fmt(100 * share_holding["MSI >= kNN"], 0),
        "knn_lsi_share": pages.fmt(100 * share_holding["kNN >= LSI"], 0),
        "magnitude_close": pages.fmt(MAGNITUDE_CLOSE, 2),
        "typical_msi": pages.fmt(typical["MSI_mean"], 2), "typical_knn": pages.fmt(typical["kNN_mean"], 2),
        "typical_lsi": pages.fmt(typical["LSI_mean"], 2),
        "largest_knn_gap": pages.fmt(delta["kNN_mean"].abs().max(), 2), "largest_knn_cell": " · ".join(largest_gap),
        "msi_below": msi_below, "lsi_above": lsi_above,
        # The sentence's end: the glued text follows "in {lsi_above}" directly
        "ends_finding": PROSE("verdict.ends_further") if further_from_ends else ".",
    }


def greedy_findings(exp1: pd.DataFrame, gap_summary: pd.DataFrame, run: Run) -> dict:
    """How close the greedy limits are to the exact ones: close when the greedy maximum falls at most
    :data:`GREEDY_CLOSE` short at every size and the greedy minimum is exact in every instance."""
    min_exact = int(exp1["min_exact"].sum())
    max_share = greedy_exact_shares(exp1)
    shortfall = greedy_maxima(gap_summary)["max_relative_gap"].max()
    return {
        "greedy_exact_low": pages.fmt(100 * max_share.min(), 0),
        "greedy_exact_high": pages.fmt(100 * max_share.max(), 0),
        "greedy_shortfall": pages.fmt(100 * shortfall, 1), "largest_gap_size": max(run.gap_sizes),
        "greedy_finding": PROSE("verdict.greedy.close" if shortfall <= GREEDY_CLOSE and min_exact == len(exp1)
                                else "verdict.greedy.short"),
        "greedy_min_finding": (PROSE("verdict.greedy_min.every") if min_exact == len(exp1) else
                               PROSE("verdict.greedy_min.some", exact=f"{min_exact:,}", instances=f"{len(exp1):,}")),
    }


def dataset_difference(dataset: str) -> str:
    """The verdict's first reason why our numbers may differ, from the run's ``DATASET``: another dataset than the
    paper's MovieLens-1M, or its own (the mirror's copy may be partial: the opening box says)."""
    if dataset == "1m":
        return PROSE("verdict.dataset.paper")
    return PROSE("verdict.dataset.other", dataset=movielens_name(dataset))


def findings(table2: pd.DataFrame, ordering: pd.DataFrame, results: pd.DataFrame, supplementary: pd.DataFrame,
             exp1: pd.DataFrame, gap_summary: pd.DataFrame, run: Run) -> dict:
    """Every value the verdict's details glue (``{glue:text}``), by name."""
    ends = _ends(supplementary)
    return {
        **order_findings(table2, ordering),
        "dataset_difference": dataset_difference(run.dataset),
        "min_common_users": run.min_common_users, "paper_min_common_users": time_frames.PAPER_MIN_COMMON_USERS,
        "n_users": run.n_users, "paper_lists": f"{run.paper_lists:,}", "n_sampled": f"{run.n_sampled:,}",
        "sampled_share": pages.fmt(100 * (results["n_candidates"] / results["n_unknown"]).median(), 0),
        "msi_one": ends["msi_one"], "msi_lists": ends["msi_lists"],
        "lsi_zero": ends["lsi_zero"], "lsi_lists": ends["lsi_lists"], "n_pairs": run.n_pairs,
        **greedy_findings(exp1, gap_summary, run),
        "clipped_lists": int(results["clipped"].sum()), "n_lists": f"{len(results):,}",
    }

