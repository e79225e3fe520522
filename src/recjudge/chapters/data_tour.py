"""The page of the chapter "A tour of the data": the opening box, each dataset's status line, tables and figures, the
sizes table and the verdict on which data the book can use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display

from recjudge import data
from recjudge.compendium import cell_selection, figures, pages, runplan
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import Table, count, format_table, number, percent
from recjudge.paths import project_root

#: The statuses of a dataset whose files were found (``data.availability``).
FOUND = ("complete", "partial", "sample")
#: The page's sentences (``notebooks/prose/data_tour.md``), and the datasets' names for prose (``title.<dataset>``,
#: where the registry's title is long) and the parts of MovieLens 1M (``split.<part>``).
PROSE = Prose("data_tour")
#: Names for the sizes table's narrow first column.
BRIEF = {"movielens-latest-small": "ml-latest-small", "movielens-100k": "ML-100K", "movielens-1m": "ML-1M",
         "serendipity-2018": "Serendipity-2018", "movielens-latest-2018-movies": "ml-latest 2018",
         "taobao-serendipity": "Taobao", "llm-explanation-eval-lu2023": "Lu et al. 2023",
         "amazon-beauty-5core-s3rec": "Amazon Beauty"}
TAOBAO_ASPECTS = ["relevance", "novelty", "pur_diversity", "rec_diversity", "unexpectedness", "serendipity",
                  "timeliness", "user_satisfaction", "purchase_intention"]
ASPECT_NAMES = {"pur_diversity": "diversity (vs purchases)", "rec_diversity": "diversity (vs list)",
                "user_satisfaction": "satisfaction", "purchase_intention": "purchase intention"}
STATISTICS = {"mean": "mean", "std": "standard deviation", "min": "minimum", "25%": "25th percentile",
              "50%": "median", "75%": "75th percentile", "max": "maximum"}
FIVE_LEVELS = [1.0, 2.0, 3.0, 4.0, 5.0]
PALETTE = figures.PALETTE


def title(name: str) -> str:
    """The name of dataset ``name`` for prose: the prose file's, else the registry's title."""
    return PROSE(f"title.{name}") if f"title.{name}" in PROSE.passages() else data.REGISTRY[name].title


def split_name(split: str) -> str:
    """The name of a part (split) of MovieLens 1M for its table and legend: the prose file's, else the split's own."""
    return PROSE(f"split.{split}") if f"split.{split}" in PROSE.passages() else split


def names(rows: pd.DataFrame) -> str:
    """The titles of the datasets indexing ``rows``, for prose ("none" when there are none)."""
    return ", ".join(title(name) for name in rows.index) or "none"


def reads_by_chapter(selected: Sequence[str], notebook: str) -> dict[str, list[str]]:
    """What each other run of the run plan reads among ``selected``: the datasets it declares (runplan.yaml) and, for
    the default variant, those its cells are tagged as needing (``needs:NAME``)."""
    reads = {}
    for run in runplan.load_runplan():
        if run.name == notebook:
            continue
        needed = set(run.datasets)
        if run.variant is None:
            source = runplan.read_source_notebook(project_root() / run.notebook)
            needed |= {name for cell in source.cells for name in cell_selection.needed_datasets(cell)}
        reads[run.name] = [name for name in selected if name in needed]
    return reads


def opening(status: pd.DataFrame) -> Markdown:
    """The opening box: how many datasets were found, complete or partial, and which are committed."""
    found = status[status["status"].isin(FOUND)]
    partial = status[status["status"] == "partial"]
    absent = status[~status["status"].isin(FOUND)]
    mirror = sorted(set(status.loc[status["origin"] == "mirror"].index))
    mirrored = (PROSE("opening.found.mirror", n_mirror=f"{len(mirror)}") if mirror
                else PROSE("opening.found.no_mirror"))
    facts = [
        ("Found in this build", PROSE("opening.found", n_found=f"{len(found)}", n_datasets=f"{len(status)}",
                                      n_complete=f"{(status['status'] == 'complete').sum()}",
                                      n_partial=f"{len(partial)}",
                                      n_sample=f"{(status['status'] == 'sample').sum()}") + "; " + mirrored),
        ("Partial copies", "; ".join(f"{title(name)} (missing {row['missing']})"
                                     for name, row in partial.iterrows()) or "none"),
        ("Not found", PROSE("opening.not_found", datasets=names(absent)) if len(absent) else names(absent)),
        ("Committed with the book", PROSE("opening.committed", datasets=names(status[status["redistributable"]]))),
    ]
    caveat = PROSE("opening.caveat") if len(partial) else None
    return pages.opening(facts, caveat)


def show_availability(status: pd.DataFrame, notebook: str) -> Table:
    availability = save_table(status.reset_index()[["dataset", "status", "origin", "redistributable", "missing",
                                                     "note"]], notebook, "availability")
    return format_table(availability.drop(columns="note").assign(redistributable=availability["redistributable"].map(
                            {True: "yes", False: "no"})),
                        labels={"dataset": "Dataset", "origin": "Found in", "missing": "Missing files"},
                        caption=PROSE("availability.caption"), full_table=(notebook, "availability"))


def not_available(status: pd.DataFrame, name: str, figure: str) -> None:
    """Say why the section of ``name`` is empty (not selected, or not found) and glue its ``figure`` as not drawn."""
    if name not in status.index:
        display(Markdown(PROSE("section.not_selected", dataset=name)))
    else:
        display(Markdown(PROSE("section.not_available", dataset=name, status=status.loc[name, "status"],
                               note=status.loc[name, "note"])))
    figures.glue_not_drawn(figure, PROSE("figure.not_drawn", dataset=name))


def _usable(status: pd.DataFrame, name: str, figure: str) -> bool:
    if name in status.index and status.loc[name, "status"] in FOUND:
        return True
    not_available(status, name, figure)
    return False


def thousands(ax, axis: str = "y") -> None:
    """Tick labels with thousands separators."""
    formatter = plt.FuncFormatter(lambda value, _: f"{value:,.0f}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(formatter)


def bars(ax, labels, values, colour=PALETTE[0], *, percent_of=None) -> None:
    """One bar per level, each labelled with its share of ``percent_of`` (default: the sum)."""
    positions = np.arange(len(labels))
    ax.bar(positions, values, color=colour, width=0.7)
    total = percent_of if percent_of is not None else float(np.sum(values))
    for x, value in zip(positions, values):
        ax.annotate(f"{100 * value / total:.0f}%", (x, value), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=9)
    ax.set_xticks(positions, labels)
    ax.margins(y=0.12)
    ax.grid(axis="x", alpha=0)
    thousands(ax)


def _observed(distribution: pd.DataFrame) -> pd.DataFrame:
    """The levels of a ``value_distribution`` to draw: every scale level, and NA only when it occurs."""
    return distribution[(distribution["value"] != "NA") | (distribution["count"] > 0)]


def most_common_rating(distribution: pd.DataFrame) -> str:
    """The opening of a rating figure's caption: the most common level of a ``value_distribution`` and its share."""
    top = distribution.loc[distribution["count"].idxmax()]
    share = pages.fmt(100 * top["share"], 0)
    return PROSE("figure.most_common_rating", stars=str(top["value"]).removesuffix(".0"), share=share)


def modal_answers(shares: pd.DataFrame) -> str:
    """The opening of a Likert figure's caption: the most common answer of each row of ``shares`` (rows the
    statements, columns the answer levels), statements with the same answer named together."""
    modes = shares.rename(columns={"NA": "don't remember"}).astype(float).idxmax(axis=1).map(
        lambda level: str(level).removesuffix(".0"))
    groups = [f"{level} for {', '.join(map(str, rows.index))}" for level, rows in modes.groupby(modes, sort=True)]
    return PROSE("figure.most_common_answer", answers="; ".join(groups))


def show_movielens_latest_small(small: data.MovieLens, ratings: pd.DataFrame, notebook: str) -> None:
    """The status line of ml-latest-small, its rating distribution saved, and its figure."""
    display(Markdown(f"**Status: {small.status}.** {small.note}."))
    save_table(ratings, notebook, "movielens_latest_small_ratings")
    shown = _observed(ratings)
    fig, ax = plt.subplots(figsize=(7, 3))
    bars(ax, shown["value"], shown["count"], percent_of=ratings["count"].sum())
    ax.set(xlabel="Stars", ylabel="Ratings")
    figures.glue_figure("fig-ml-small-ratings", fig,
                        PROSE("ml_small.figure", most_common=most_common_rating(ratings),
                              n_ratings=f"{len(small.ratings):,}", status=small.status))


def movielens_100k(status: pd.DataFrame, notebook: str) -> list[dict]:
    """The MovieLens 100K section (status line, rating distribution, figure); the size rows of its tables."""
    if not _usable(status, "movielens-100k", "fig-ml100k-ratings"):
        return []
    ml100k = data.load_movielens("100k")
    display(Markdown(f"**Status: {ml100k.status}.** {ml100k.note}."))
    sizes = [data.size_row("movielens-100k", "ratings", ml100k.ratings, status=ml100k.status),
             data.size_row("movielens-100k", "users", ml100k.users, item_column=None, status=ml100k.status)]
    ratings = save_table(data.value_distribution(ml100k.ratings, ["rating"], levels=FIVE_LEVELS), notebook,
                         "movielens_100k_ratings")
    shown = _observed(ratings)
    fig, ax = plt.subplots(figsize=(7, 2.8))
    bars(ax, [v.removesuffix(".0") for v in shown["value"]], shown["count"], PALETTE[2],
         percent_of=ratings["count"].sum())
    ax.set(xlabel="Stars", ylabel="Ratings")
    figures.glue_figure("fig-ml100k-ratings", fig,
                        PROSE("ml100k.figure", most_common=most_common_rating(ratings),
                              n_ratings=f"{len(ml100k.ratings):,}", status=ml100k.status))
    return sizes


def movielens_1m(status: pd.DataFrame, notebook: str) -> list[dict]:
    """The MovieLens 1M section: status line, ratings by split (table and figure); the size rows of its tables."""
    if not _usable(status, "movielens-1m", "fig-ml1m-splits"):
        return []
    ml1m = data.load_movielens("1m")
    display(Markdown(f"**Status: {ml1m.status}.** {ml1m.note}"))
    sizes = [data.size_row("movielens-1m", "ratings", ml1m.ratings, status=ml1m.status,
                           note=PROSE("sizes.note.ml1m_ratings"))]
    if ml1m.pairs is not None:
        sizes.append(data.size_row("movielens-1m", "pairs", ml1m.pairs, status=ml1m.status,
                                   note=PROSE("sizes.note.ml1m_pairs")))
    sizes.append(data.size_row("movielens-1m", "users", ml1m.users, item_column=None, status=ml1m.status))
    groups = ml1m.ratings["split"] if "split" in ml1m.ratings else pd.Series("all", index=ml1m.ratings.index)
    counts = ml1m.ratings.groupby([groups.rename("split"), "rating"]).size().rename("ratings").reset_index()
    by_split = save_table(counts.pivot(index="split", columns="rating", values="ratings").fillna(0).astype(int)
                          .reset_index(), notebook, "movielens_1m_ratings_by_split")
    shown = by_split.assign(split=by_split["split"].map(split_name))
    shown.columns = [c if c == "split" else f"{float(c):g} star" + ("s" if float(c) != 1 else "")
                     for c in shown.columns]
    display(format_table(shown, labels={"split": "Part of the data"},
                         caption=PROSE("ml1m.table.caption", status=ml1m.status),
                         full_table=(notebook, "movielens_1m_ratings_by_split"), audit=True))
    fig, ax = plt.subplots(figsize=(7, 3))
    levels = sorted(counts["rating"].unique())
    splits = list(by_split["split"])
    width = 0.8 / len(splits)
    for i, split in enumerate(splits):
        part = counts[counts["split"] == split].set_index("rating")["ratings"].reindex(levels, fill_value=0)
        ax.bar(np.arange(len(levels)) + (i - (len(splits) - 1) / 2) * width, part.to_numpy(), width,
               color=PALETTE[i], label=split_name(split))
    ax.set_xticks(np.arange(len(levels)), [f"{v:g}" for v in levels])
    ax.set(xlabel="Stars", ylabel="Ratings")
    ax.grid(axis="x", alpha=0)
    thousands(ax)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=len(splits), frameon=False)
    figures.glue_figure("fig-ml1m-splits", fig, PROSE("ml1m.figure", status=ml1m.status))
    return sizes


def serendipity_flags(answers: pd.DataFrame) -> pd.DataFrame:
    """The dataset's serendipity flags (columns named ``*_ser_*``): answers flagged and their share."""
    flag_columns = [c for c in answers.columns if "_ser_" in c]
    return (answers[flag_columns].agg(["sum", "mean"]).T.rename(columns={"sum": "positives", "mean": "share"})
            .reset_index(names="flag"))


def show_serendipity(status: pd.DataFrame, answers: pd.DataFrame, likert: pd.DataFrame, notebook: str) -> None:
    """The Serendipity-2018 section: status line, the flags table and the heat map of the answers."""
    copy = status.loc["serendipity-2018", "status"]
    display(Markdown(f"**Status: {copy}** (missing: {status.loc['serendipity-2018', 'missing']})."))
    save_table(likert, notebook, "serendipity_likert")
    flags = save_table(serendipity_flags(answers), notebook, "serendipity_flags")
    display(format_table(flags, {"positives": count(label="Answers flagged"),
                                 "share": percent(1, label="Share of answers (%)")},
                         labels={"flag": "Serendipity flag"},
                         caption=PROSE("serendipity.flags.caption", n_answers=f"{len(answers):,}"),
                         full_table=(notebook, "serendipity_flags")))
    shares = likert.pivot(index="column", columns="value", values="share")[["1.0", "2.0", "3.0", "4.0", "5.0", "NA"]]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.heatmap(100 * shares, annot=True, fmt=".0f", cmap="Blues", cbar=False, ax=ax, annot_kws={"size": 9.5},
                linewidths=0.5, linecolor="white")
    ax.set_xticklabels(["1", "2", "3", "4", "5", "don't remember"], rotation=0)
    ax.set_yticklabels(ax.get_yticklabels(), rotation=0)
    ax.set(xlabel=PROSE("serendipity.figure.xlabel"), ylabel="Statement")
    figures.glue_figure("fig-serendipity-answers", fig,
                        PROSE("serendipity.figure", most_common=modal_answers(shares), status=copy,
                              n_answers=f"{len(answers):,}"))


def gpt35_scores(status: pd.DataFrame, notebook: str) -> list[dict]:
    """The recorded gpt-3.5-turbo scores (a bar chart); the size row of their table."""
    if not _usable(status, "serendipity-2018", "fig-gpt35-scores"):
        return []
    try:
        gpt35 = data.load_gpt35_serendipity()
    except data.MissingDataError as error:
        figures.glue_not_drawn("fig-gpt35-scores", PROSE("gpt35.not_drawn", error=f"{error}"))
        return []
    sizes = [data.size_row("serendipity-2018", "gpt-3.5 scores", gpt35,
                           status=status.loc["serendipity-2018", "status"])]
    scores = save_table(gpt35["gpt35_score"].value_counts().sort_index().rename_axis("gpt35_score")
                        .reset_index(name="count"), notebook, "gpt35_scores")
    fig, ax = plt.subplots(figsize=(7, 2.8))
    ax.bar(scores["gpt35_score"], scores["count"], width=0.2, color=PALETTE[4])
    ax.set(xlabel=PROSE("gpt35.figure.xlabel"), ylabel="Answers")
    ax.grid(axis="x", alpha=0)
    figures.glue_figure("fig-gpt35-scores", fig,
                        PROSE("gpt35.figure", n_values=f"{scores['gpt35_score'].nunique()}",
                              most_often=f"{scores.loc[scores['count'].idxmax(), 'gpt35_score']:g}",
                              n_answers=f"{len(gpt35):,}"))
    return sizes


def movielens_2018_movies(status: pd.DataFrame, notebook: str) -> list[dict]:
    """Movies per genre of the 2018 movie list (a bar chart); the size row of the list."""
    if not _usable(status, "movielens-latest-2018-movies", "fig-genres"):
        return []
    movies = data.load_movielens_2018_movies()
    sizes = [data.size_row("movielens-latest-2018-movies", "movies", movies, user_column=None,
                           status=status.loc["movielens-latest-2018-movies", "status"])]
    genres = save_table(movies.explode("genres")["genres"].dropna().value_counts().rename_axis("genre")
                        .reset_index(name="movies"), notebook, "movielens_2018_genres")
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.barh(genres["genre"][::-1], genres["movies"][::-1], color=PALETTE[3])
    ax.set(xlabel="Movies", ylabel="Genre")
    ax.grid(axis="y", alpha=0)
    thousands(ax, "x")
    figures.glue_figure("fig-genres", fig,
                        PROSE("genres.figure", first=genres["genre"].iloc[0], second=genres["genre"].iloc[1],
                              n_movies=f"{len(movies):,}"))
    return sizes


def taobao_survey(status: pd.DataFrame, notebook: str) -> list[dict]:
    """The Taobao survey: clicks and purchases (an audit table) and the heat map of its answers; its size row."""
    if not _usable(status, "taobao-serendipity", "fig-taobao-answers"):
        return []
    taobao = data.load_taobao_survey()
    sizes = [data.size_row("taobao-serendipity", "survey", taobao, status=status.loc["taobao-serendipity", "status"])]
    likert = save_table(data.value_distribution(taobao, TAOBAO_ASPECTS, levels=FIVE_LEVELS), notebook,
                        "taobao_likert")
    behaviour = save_table(taobao[["clicked", "purchased"]].agg(["sum", "mean"]).T
                           .rename(columns={"sum": "users", "mean": "share"}).reset_index(names="behaviour"),
                           notebook, "taobao_behaviour")
    display(format_table(behaviour, {"users": count(label="Users"), "share": percent(1, label="Share of users (%)")},
                         labels={"behaviour": "Logged behaviour"},
                         caption=PROSE("taobao.table.caption"),
                         full_table=(notebook, "taobao_behaviour"), audit=True))
    shares = likert.pivot(index="column", columns="value", values="share").loc[TAOBAO_ASPECTS,
                                                                               ["1.0", "2.0", "3.0", "4.0", "5.0"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.heatmap(100 * shares, annot=True, fmt=".0f", cmap="Greens", cbar=False, ax=ax, annot_kws={"size": 9.5},
                linewidths=0.5, linecolor="white")
    ax.set_xticklabels(["1", "2", "3", "4", "5"], rotation=0)
    ax.set_yticklabels([ASPECT_NAMES.get(a, a) for a in TAOBAO_ASPECTS], rotation=0)
    ax.set(xlabel="Answer (1 to 5)", ylabel="Statement")
    figures.glue_figure("fig-taobao-answers", fig,
                        PROSE("taobao.figure", most_common=modal_answers(shares.rename(index=ASPECT_NAMES)),
                              n_users=f"{len(taobao):,}"))
    return sizes


def lu2023_ratings(status: pd.DataFrame, notebook: str) -> list[dict]:
    """The users' ratings of the Lu et al. explanations by aspect (grouped bars); the size row of the ratings."""
    if not _usable(status, "llm-explanation-eval-lu2023", "fig-lu2023-ratings"):
        return []
    from recjudge.data.lu2023 import ASPECTS, load_explanation_study

    study = load_explanation_study()
    sizes = [data.size_row("llm-explanation-eval-lu2023", "user ratings", study.user_ratings,
                           status=status.loc["llm-explanation-eval-lu2023", "status"])]
    user_likert = save_table(data.value_distribution(study.user_ratings, list(ASPECTS), levels=FIVE_LEVELS),
                             notebook, "lu2023_user_ratings")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    levels = ["1.0", "2.0", "3.0", "4.0", "5.0"]
    width = 0.8 / len(ASPECTS)
    for i, aspect in enumerate(ASPECTS):
        part = user_likert[user_likert["column"] == aspect].set_index("value")["share"].reindex(levels)
        ax.bar(np.arange(len(levels)) + (i - (len(ASPECTS) - 1) / 2) * width, 100 * part.to_numpy(), width,
               color=PALETTE[i], label=aspect)
    ax.set_xticks(np.arange(len(levels)), ["1", "2", "3", "4", "5"])
    ax.set(xlabel="Rating", ylabel="Explanations (%)")
    ax.grid(axis="x", alpha=0)
    ax.legend(title="Aspect", loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=len(ASPECTS), frameon=False)
    figures.glue_figure("fig-lu2023-ratings", fig,
                        PROSE("lu2023.figure",
                              most_common=modal_answers(user_likert.pivot(index="column", columns="value",
                                                                          values="share")[levels]),
                              n_explanations=f"{len(study.user_ratings):,}"))
    return sizes


def amazon_beauty(status: pd.DataFrame, notebook: str) -> list[dict]:
    """Sequence lengths of Amazon Beauty (an audit table and a histogram); the size row of the interactions."""
    if not _usable(status, "amazon-beauty-5core-s3rec", "fig-beauty-lengths"):
        return []
    beauty = data.load_amazon_beauty_sequences()
    sizes = [data.size_row("amazon-beauty-5core-s3rec", "interactions", beauty,
                           status=status.loc["amazon-beauty-5core-s3rec", "status"])]
    lengths = beauty.groupby("user_id").size()
    summary = save_table(lengths.describe().rename_axis("statistic").reset_index(name="sequence length"), notebook,
                         "amazon_beauty_lengths")
    spread = summary[summary["statistic"] != "count"]  # the count of users goes into the caption
    display(format_table(spread.assign(statistic=spread["statistic"].map(STATISTICS)),
                         {"sequence length": number(1, label="Items in the sequence")},
                         labels={"statistic": "Statistic"},
                         caption=PROSE("beauty.table.caption", n_users=f"{lengths.size:,}"),
                         full_table=(notebook, "amazon_beauty_lengths"), audit=True))
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist(lengths, bins=50, color=PALETTE[1], log=True)
    ax.set(xlabel="Items in the user's sequence", ylabel="Users (log scale)")
    figures.glue_figure("fig-beauty-lengths", fig,
                        PROSE("beauty.figure", shortest=f"{lengths.min()}", median=f"{lengths.median():g}",
                              longest=f"{lengths.max():,}"))
    return sizes


def show_size_table(sizes: Sequence[Mapping], notebook: str) -> Table:
    """The sizes of every table read (``data.size_row`` rows), saved; the notes of its rows go into the caption."""
    size_table = save_table(pd.DataFrame(sizes), notebook, "sizes")
    shown = size_table.assign(dataset=size_table["dataset"].map(lambda n: BRIEF.get(n, n)))
    notes = "; ".join(f"{row.dataset} {row.table}: {row.note}" for row in shown.itertuples() if row.note)
    return format_table(shown.drop(columns="note"),
                        {"rows": count(), "users": count(), "items": count(),
                         "density": percent(2, label="Density (%)")},
                        labels={"dataset": "Dataset", "table": "Table", "status": "Copy"},
                        caption=PROSE("sizes.caption.notes", notes=notes) if notes else PROSE("sizes.caption"),
                        full_table=(notebook, "sizes"), audit=True)


def _rows_read(sizes: Iterable[Mapping], dataset: str, table: str) -> int | None:
    """The rows of ``table`` of ``dataset`` among the size rows, None when it was not read."""
    return next((row["rows"] for row in sizes if row["dataset"] == dataset and row["table"] == table), None)


def findings(status: pd.DataFrame, reads: Mapping[str, Sequence[str]], sizes: Iterable[Mapping]) -> list[str]:
    """The verdict's bullets: what is usable in full, in part (and what that costs), not found, by chapter."""
    def brief(name):
        copy = status.loc[name, "status"]
        return title(name) + ("" if copy in ("complete", "sample") else f" ({copy})")

    complete = status[status["status"].isin(("complete", "sample"))]
    partial = status[status["status"] == "partial"]
    absent = status[~status["status"].isin(FOUND)]
    found = [PROSE("findings.full", n_complete=f"{len(complete)}", n_datasets=f"{len(status)}",
                   datasets=names(complete))]
    ml1m_ratings = _rows_read(list(sizes), "movielens-1m", "ratings")
    for name, row in partial.iterrows():
        consequence = ""
        if name == "movielens-1m" and ml1m_ratings is not None:
            consequence = " " + PROSE("findings.partial.ml1m", n_ratings=f"{ml1m_ratings:,}")
        elif name == "serendipity-2018":
            consequence = " " + PROSE("findings.partial.serendipity")
        found.append(PROSE("findings.partial", dataset=title(name), missing=row["missing"]) + consequence)
    if len(absent):
        found.append(PROSE("findings.absent", datasets=names(absent)))
    by_chapter = []
    for chapter, used in reads.items():
        if not used:
            continue
        missing_here = [name for name in used if name in absent.index]
        state = ("all found" if not missing_here else
                 f"{len(missing_here)} of {len(used)} not found")
        by_chapter.append(PROSE("findings.by_chapter.reads", chapter=chapter,
                                datasets=", ".join(brief(name) for name in used), state=state))
    found.append(PROSE("findings.by_chapter", chapters="; ".join(by_chapter)))
    committed = status[status["redistributable"]]
    found.append(PROSE("findings.always", datasets=names(committed)))
    return found


def glue_verdict(status: pd.DataFrame, reads: Mapping[str, Sequence[str]], sizes: Iterable[Mapping]) -> None:
    from myst_nb import glue

    glue("verdict", pages.verdict(findings(status, reads, sizes), PROSE("verdict.question")), display=False)
