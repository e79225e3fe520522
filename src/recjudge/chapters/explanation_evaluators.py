"""The page of the chapter on LLMs as evaluators of recommendation explanations (Zhang et al. 2024): its opening box,
tables, figures and glued findings."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import Table, correlation, count, format_table, number, paper_beside_ours, text
from recjudge.data.lu2023 import ASPECTS, ExplanationStudy
from recjudge.explanations import evaluators as ex
from recjudge.llm.judge_spec import reader_labels
from recjudge.metaeval import ensembles
from recjudge.metaeval.agreement import pearson_interval
from recjudge.prompts import explanations as ex_prompts
from recjudge.prompts import template_text

LEVEL_FORMATS = {level: correlation(2, scale="percent", label=f"{level.capitalize()} level (%)")
                 for level in ex.LEVELS}
LEVEL_TEXTS = {level: text(label=f"{level.capitalize()} level (%)") for level in ex.LEVELS}
ANNOTATOR_ROWS = ["Annotator-1", "Annotator-2", "Average"]
REFERENCE_ROWS = ["BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"]
#: The page's sentences (``notebooks/prose/explanation_evaluators.md``).
PROSE = Prose("explanation_evaluators")


def set_up() -> None:
    """The book's figure style; correlations of constant groups warn, and the tables count them instead."""
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    figures.use_book_style()


def opening(study: ExplanationStudy, sample_rows: Sequence[int], own_judges: Sequence[dict], judges: Sequence[dict],
            random_seeds: Sequence[int], n_users: int, pairs_per_user: int) -> Markdown:
    """The box that opens the chapter: the data, the reference rows, the LLM judges (the chapter's own, then a
    reader's) and their sample."""
    ratings = study.user_ratings
    judge_labels = ", ".join([str(own["label"]) for own in own_judges] + reader_labels(judges))
    return pages.opening([
        ("Data", PROSE("opening.data", n_users=ratings["user_id"].nunique(), n_ratings=f"{len(ratings):,}")),
        ("Reference rows of Table 1", PROSE("opening.reference_rows", n_draws=len(random_seeds))),
        ("LLM judges", PROSE("opening.llm_judges", judges=judge_labels, n_texts=len(sample_rows), n_users=n_users,
                             pairs_per_user=pairs_per_user)),
    ], PROSE("opening.caveat"))


def show_study(notebook: str, study: ExplanationStudy) -> Table:
    """The study's size and its explanation systems with their mean user ratings (saved with an example each)."""
    ratings = study.user_ratings
    overview = pd.DataFrame({
        "quantity": ["users", "movies", "(user, movie) pairs", "rated explanations", "explanation systems",
                     *[f"blank {a} ratings" for a in ASPECTS]],
        "value": [ratings["user_id"].nunique(), ratings["item_id"].nunique(),
                  len(ratings[["user_id", "item_id"]].drop_duplicates()), len(ratings),
                  ratings["explanation_type"].nunique(), *[int(ratings[a].isna().sum()) for a in ASPECTS]],
    })
    save_table(overview, notebook, "data_overview")
    systems = (study.wide().groupby("explanation_type")
               .agg(texts=("row_id", "size"), example=("explanation_text", "first"),
                    **{f"mean_{a}": (f"user_{a}", "mean") for a in ASPECTS})
               .reset_index().sort_values("texts", ascending=False))
    save_table(systems, notebook, "explanation_systems")
    display(format_table(overview, {"value": count()}, caption="The study", audit=True))
    return format_table(systems.drop(columns=["example"]),
                        {"texts": count(), **{f"mean_{a}": number(2, label=f"Mean {a}") for a in ASPECTS}},
                        labels={"explanation_type": "Explanation system"},
                        caption=PROSE("systems.caption"),
                        full_table=(notebook, "explanation_systems"), audit=True)


def show_table1(notebook: str, table1_ours: pd.DataFrame) -> Table:
    """Table 1's reference rows, the Average column at each level, paper beside ours (every cell saved)."""
    save_table(table1_ours, notebook, "table1_reference_rows_all_methods")
    layout = ex.table1_layout(table1_ours)
    paper_layout = ex.table1_layout(ex.paper_table1().assign(value=lambda d: d["paper"] / 100))
    side_by_side = layout.merge(paper_layout, on="evaluator", suffixes=("", " (paper)"))
    side_by_side = side_by_side[["evaluator", *[c for a in [*ASPECTS, "average"] for c in (a, f"{a} (paper)")]]]
    save_table(side_by_side, notebook, "table1_reference_rows")
    ours_average = ex.average_over_aspects(table1_ours).pivot(index="evaluator", columns="level", values="value")
    paper_table = ex.paper_table1(with_average=True)
    paper_average = (paper_table[paper_table["aspect"] == "average"]
                     .pivot(index="evaluator", columns="level", values="paper"))
    reference_names = list(ours_average.index)
    return paper_beside_ours(
        ours_average.reset_index(), paper_average.loc[reference_names].reset_index(), keys="evaluator",
        metrics=LEVEL_FORMATS, difference=True, labels={"evaluator": "Evaluator"},
        caption=PROSE("table1.caption"), full_table=(notebook, "table1_reference_rows"))


def table1_agreement(notebook: str, comparison: pd.DataFrame) -> pd.DataFrame:
    """How close each reference row comes to the paper over its cells: count, mean and largest |difference|."""
    agreement = (comparison.assign(abs_difference=comparison["difference"].abs())
                 .groupby("evaluator", sort=False)["abs_difference"]
                 .agg(cells="count", mean_abs_difference="mean", max_abs_difference="max").reset_index())
    save_table(comparison, notebook, "table1_paper_vs_ours_cells")
    return save_table(agreement, notebook, "table1_agreement_by_row")


def show_table1_agreement(notebook: str, agreement: pd.DataFrame) -> Table:
    return format_table(agreement, {"cells": count(),
                                    "mean_abs_difference": number(2, label="Mean |difference| (points)"),
                                    "max_abs_difference": number(2, label="Largest |difference| (points)")},
                        labels={"evaluator": "Evaluator"},
                        caption=PROSE("agreement.caption"), full_table=(notebook, "table1_agreement_by_row"),
                        audit=True)


def draw_table1_cells(comparison: pd.DataFrame) -> None:
    """Every Table 1 cell of the reference rows, the paper's Pearson against ours, one panel per group of rows."""
    groups = {"Reference metrics and Random": ["Random", "BLEU-1", "BLEU-4", "ROUGE-1-F", "ROUGE-L-F"],
              "Annotators": ["Annotator-1", "Annotator-2", "Average"]}
    fig, axes = plt.subplots(1, 2, figsize=(figures.FIGURE_WIDTH_IN, 3.6), sharex=True, sharey=True)
    lims = [comparison[["paper", "ours"]].min().min() - 2, comparison[["paper", "ours"]].max().max() + 2]
    for ax, (title, names) in zip(axes, groups.items()):
        for colour, marker, name in zip(figures.colours(len(names)), figures.MARKERS, names):
            part = comparison[comparison["evaluator"] == name]
            ax.scatter(part["paper"], part["ours"], label=name, s=22, color=colour, marker=marker)
        ax.plot(lims, lims, color="grey", lw=0.8)
        ax.set(xlabel="Paper: Pearson (%)", ylabel="Ours: Pearson (%)", xlim=lims, ylim=lims, title=title)
        ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    plt.show()


def show_tokenisation(notebook: str, tokenisation: pd.DataFrame) -> Table:
    save_table(tokenisation, notebook, "bleu_rouge_tokenisation_variants")
    return format_table(tokenisation, {"mean_abs_difference": number(2, label="Mean |difference| (points)"),
                                       "max_abs_difference": number(2, label="Largest |difference| (points)"),
                                       "dataset_level_mean": number(2, label="Dataset level, ours (%)"),
                                       "paper_dataset_level_average": number(2, label="Dataset level, paper (%)")},
                        caption=PROSE("tokenisation.caption"),
                        full_table=(notebook, "bleu_rouge_tokenisation_variants"), audit=True)


def show_rank_correlations(notebook: str, table1_ours: pd.DataFrame) -> Table:
    """Spearman and Kendall of the reference rows, mean over the aspects (every cell saved)."""
    rank_table = (table1_ours[table1_ours["method"] != "pearson"]
                  .assign(value=lambda d: 100 * d["value"])
                  .pivot_table(index=["evaluator", "method"], columns=["aspect", "level"], values="value", sort=False))
    rank_table.columns = [f"{a}_{lvl}" for a, lvl in rank_table.columns]
    save_table(rank_table.reset_index(), notebook, "reference_rows_spearman_kendall")
    rank_average = pd.concat([ex.average_over_aspects(table1_ours, m).assign(method=m)
                              for m in ("spearman", "kendall")])
    rank_average = rank_average.pivot_table(index=["evaluator", "method"], columns="level", values="value",
                                            sort=False).reset_index()
    return format_table(rank_average[["evaluator", "method", *ex.LEVELS]], LEVEL_FORMATS,
                        labels={"evaluator": "Evaluator", "method": "Coefficient"},
                        caption=PROSE("rank_correlations.caption"),
                        full_table=(notebook, "reference_rows_spearman_kendall"), audit=True)


def null_conventions(notebook: str, truth: pd.DataFrame, study: ExplanationStudy) -> Markdown:
    """How far the annotators' cells move when blank user ratings are dropped instead of set to 3 (saved per cell)."""
    annotators = ex.annotator_scores(study)
    by_policy = pd.concat([
        ex.meta_evaluate(truth, annotators, nulls=policy, methods=("pearson",)).assign(nulls=name)
        for name, policy in (("paper (NA→3)", ex.PAPER_NULLS), ("drop NA", ex.DROP_NULLS))
    ])
    null_effect = (by_policy.assign(value=lambda d: 100 * d["value"])
                   .pivot_table(index=["evaluator", "aspect", "level"], columns="nulls", values="value", sort=False)
                   .reset_index())
    null_effect["difference"] = null_effect["drop NA"] - null_effect["paper (NA→3)"]
    save_table(null_effect, notebook, "annotators_null_conventions")
    return Markdown(PROSE("null_conventions", n_blank=int(truth[list(ASPECTS)].isna().sum().sum()),
                          n_ratings=f"{len(truth) * len(ASPECTS):,}",
                          largest_move=pages.fmt(null_effect["difference"].abs().max(), 3)))


def print_template(name: str) -> None:
    print(template_text(name))


def show_llm_sample(notebook: str, study: ExplanationStudy, sample_rows, single_rows, settings: Sequence[str],
                    llm_runs: pd.DataFrame) -> Table:
    """The LLM sample (users, pairs, texts, calls per judge) and the judges' runs (saved)."""
    by_row = study.user_ratings.set_index("row_id")
    sample_info = pd.DataFrame({
        "sample": ["multiple-aspect prompts", "single-aspect prompts"],
        "users": [by_row.loc[r, "user_id"].nunique() for r in (sample_rows, single_rows)],
        "pairs": [len(by_row.loc[r, ["user_id", "item_id"]].drop_duplicates()) for r in (sample_rows, single_rows)],
        "texts": [len(sample_rows), len(single_rows)],
        "calls per judge": [len(sample_rows) * len(settings), 4 * len(single_rows)],
    })
    save_table(sample_info, notebook, "llm_sample")
    save_table(llm_runs, notebook, "llm_runs")
    display(format_table(sample_info, caption="The LLM sample", full_table=(notebook, "llm_sample"), audit=True))
    return format_table(llm_runs[["evaluator", "n_texts", "n_prompts", "n_unparsable", "tokens_per_text"]],
                        {"n_texts": count(label="Texts"), "n_prompts": count(label="Prompts"),
                         "n_unparsable": count(label="Replies with an unreadable score"),
                         "tokens_per_text": number(0, label="Tokens per text")},
                        labels={"evaluator": "Evaluator"},
                        caption=PROSE("llm_runs.caption"),
                        full_table=(notebook, "llm_runs"), audit=True)


def show_readers_versus_reference(notebook: str, truth: pd.DataFrame, llm_scores: pd.DataFrame,
                                  reference_scores: pd.DataFrame, judges: Sequence[Mapping]) -> Table | Markdown:
    """Saves each evaluator of the reader's judges (``judges``: the chapter's parameter) against ROUGE-1-F on the
    same texts, per aspect (``ex.versus_reference``: the claim "certain LLMs evaluate as well as or better than BLEU
    and ROUGE" reads it; empty without a reader's judge) and shows each evaluator's mean over the aspects beside
    ROUGE-1-F's."""
    labels = reader_labels(judges)
    names = [name for name in llm_scores["evaluator"].unique() if ex_prompts.evaluator_judge(name) in labels]
    versus = ex.versus_reference(truth, llm_scores[llm_scores["evaluator"].isin(names)], reference_scores)
    save_table(versus, notebook, "readers_versus_reference")
    if versus.empty:
        return Markdown("")
    mean = versus.groupby("evaluator", sort=False)[["n", "pearson", "reference_pearson"]].agg(
        {"n": "min", "pearson": "mean", "reference_pearson": "mean"}).reset_index()
    return format_table(mean, {"n": count(label="Texts (fewest of an aspect)"),
                               "pearson": correlation(1, label="Pearson (%)"),
                               "reference_pearson": correlation(1, label=f"{ex.REFERENCE_METRIC} (%)")},
                        labels={"evaluator": "Evaluator"},
                        caption=PROSE("readers.caption", reference=ex.REFERENCE_METRIC),
                        full_table=(notebook, "readers_versus_reference"), audit=True)


def show_llm_rows(notebook: str, truth: pd.DataFrame, sample_scores: pd.DataFrame, llm_table: pd.DataFrame) -> Table:
    """Our LLM rows (and the annotators) on the sample, mean over the aspects, with the texts each evaluator scored;
    saved as well with the paper's convention of a missing score counted as 0."""
    scored = sample_scores.dropna(subset=["score"]).groupby("evaluator")["row_id"].nunique()
    interval = dataset_level_interval(llm_table)
    llm_layout = ex.table1_layout(llm_table)
    llm_layout.insert(1, "scored_texts", [int(scored.get(e, 0)) for e in llm_layout["evaluator"]])
    llm_layout = llm_layout.merge(interval, on="evaluator", how="left")
    save_table(llm_layout, notebook, "llm_rows_sample")
    save_table(ex.table1_layout(ex.meta_evaluate(truth, sample_scores, nulls=ex.PAPER_NULLS)), notebook,
               "llm_rows_sample_missing_as_0")
    llm_average = ex.average_over_aspects(llm_table).pivot(index="evaluator", columns="level", values="value")
    llm_average = llm_average.reindex(list(dict.fromkeys(llm_table["evaluator"]))).reset_index()
    llm_average = llm_average.assign(scored_texts=[int(scored.get(e, 0)) for e in llm_average["evaluator"]])
    llm_average = llm_average.merge(interval, on="evaluator", how="left")
    shown = levels_unless_too_few(llm_average, "scored_texts")
    shown["dataset_interval"] = ["" if pages.too_few(n) or pd.isna(low) else pages.span(low, high, 2)
                                 for low, high, n in zip(llm_average["average_dataset_low"],
                                                         llm_average["average_dataset_high"],
                                                         llm_average["scored_texts"])]
    return format_table(shown[["evaluator", "scored_texts", "dataset", "dataset_interval", "user", "pair"]],
                        {"scored_texts": count(label="Texts scored"), **LEVEL_TEXTS,
                         "dataset_interval": text(label="Dataset level, 95% interval (%)")},
                        labels={"evaluator": "Evaluator"},
                        caption=PROSE("llm_rows.caption", min_answers=pages.MIN_ANSWERS),
                        full_table=(notebook, "llm_rows_sample"))


def show_errors_beside_baselines(notebook: str, name: str, truth: pd.DataFrame, scores: pd.DataFrame,
                                 what: str) -> Table:
    """The error of every evaluator on the users' 1–5 scale beside a constant answer and Random
    (``ex.errors_beside_baselines``; saved per aspect as ``name``), shown as the mean over the aspects: a constant has
    no correlation, so the correlation tables above cannot hold it; its MAE, RMSE and accuracy can. ``what``: the
    texts scored, for the caption."""
    errors = save_table(ex.errors_beside_baselines(truth, scores), notebook, name)
    shown = ex.mean_errors_over_aspects(errors)
    return format_table(shown[["evaluator", "n", "mae", "rmse", "accuracy_pct"]], {
        "n": count(label="n (text × aspect)"), "mae": number(2, label="MAE"), "rmse": number(2, label="RMSE"),
        "accuracy_pct": number(1, label="Accuracy (%)")}, labels={"evaluator": "Evaluator"},
        caption=PROSE("errors.caption", what=what),
        full_table=(notebook, name), audit=True)


def dataset_level_interval(table: pd.DataFrame) -> pd.DataFrame:
    """Per evaluator, the 95% interval (Fisher z, in %) of its dataset-level Pearson averaged over the aspects, on the
    fewest texts any aspect's correlation used (``n_pairs``): the user and pair levels are means over groups, which a
    Fisher interval does not cover."""
    dataset = table[(table["method"] == "pearson") & (table["level"] == "dataset") & table["aspect"].isin(ASPECTS)]
    per_evaluator = dataset.groupby("evaluator", sort=False).agg(r=("value", "mean"), n_pairs=("n_rows", "min"))
    bounds = [pearson_interval(r, int(n)) for r, n in zip(per_evaluator["r"], per_evaluator["n_pairs"])]
    return pd.DataFrame({"evaluator": per_evaluator.index, "n_pairs": per_evaluator["n_pairs"].astype(int).to_numpy(),
                         "average_dataset_low": [100 * low for low, _ in bounds],
                         "average_dataset_high": [100 * high for _, high in bounds]})


def levels_unless_too_few(frame: pd.DataFrame, n_column: str) -> pd.DataFrame:
    """The level columns (Pearson in per cent, as ``ex.average_over_aspects`` gives it) as text, or "too few answers
    (n)" in a row whose ``n_column`` is below this book's minimum (``pages.MIN_ANSWERS``): a correlation on 3 texts
    is no number."""
    shown = frame.copy()
    for level in ex.LEVELS:
        shown[level] = [pages.too_few_text(n, "texts") if pages.too_few(n) else
                        "—" if pd.isna(value) else pages.fmt(value, 2)
                        for value, n in zip(frame[level], frame[n_column])]
    return shown


def show_paper_llm_rows(notebook: str) -> Table:
    paper_llm = ex.paper_table1()
    paper_llm = paper_llm[paper_llm["evaluator"].str.endswith(")")].assign(value=lambda d: d["paper"] / 100)
    save_table(ex.table1_layout(paper_llm), notebook, "paper_llm_rows")
    paper_llm_average = ex.paper_table1(with_average=True).query(
        "aspect == 'average' and evaluator.str.endswith(')')", engine="python")
    return format_table(paper_llm_average.pivot(index="evaluator", columns="level", values="paper")
                        .loc[list(dict.fromkeys(paper_llm_average["evaluator"]))][list(ex.LEVELS)].reset_index(),
                        LEVEL_FORMATS, labels={"evaluator": PROSE("paper_llm_rows.evaluator")},
                        caption=PROSE("paper_llm_rows.caption"),
                        full_table=(notebook, "paper_llm_rows"), audit=True)


def authors_prompt_statements(notebook: str) -> pd.DataFrame:
    """The statement each aspect line of the authors' multiple-aspect template asks, beside the questionnaire's."""
    names = {title: aspect for aspect, (title, _) in ex_prompts.AUTHORS_ASPECTS.items()}
    lines = [line.strip().split(": ", 1) for line in template_text("zhang_authors_multi").splitlines()
             if line.strip().split(":")[0] in names]
    return save_table(pd.DataFrame([
        {"aspect": names[title], "line": title, "statement_asked": asked,
         "questionnaire_statement": ex_prompts.ASPECT_STATEMENTS[names[title]],
         "asks_its_aspect": asked == ex_prompts.ASPECT_STATEMENTS[names[title]]} for title, asked in lines]),
        notebook, "authors_prompt_statements")


def has_slip(statements: pd.DataFrame) -> bool:
    """Whether some aspect line of the authors' template asks another aspect's statement."""
    return not statements[~statements["asks_its_aspect"]].empty


def local_dataset_range(llm_table: pd.DataFrame) -> str:
    """The local model's dataset-level correlations (mean over the aspects) as a range over its rows that rest on at
    least this book's minimum of texts (``n_rows``, the fewest of an aspect), the rows on fewer named too few: the
    range a table of "too few texts (3)" rows sits beside is no range of numbers."""
    local = llm_table[llm_table["evaluator"].str.startswith("SmolLM2")]
    average = ex.average_over_aspects(local)
    dataset = average[average["level"] == "dataset"].set_index("evaluator")["value"]
    if "n_rows" in local:
        pearson = local[(local["level"] == "dataset") & (local["method"] == "pearson")]
        texts = pearson.groupby("evaluator")["n_rows"].min()
        dataset = dataset[dataset.index.map(lambda name: not pages.too_few(texts.get(name)))]
        few = int(sum(pages.too_few(n) for n in texts))
    else:
        few = 0
    dataset = dataset.dropna()
    if dataset.empty:
        return PROSE("local_range.too_few", min_answers=pages.MIN_ANSWERS)
    if len(dataset) == 1:
        return PROSE("local_range.one", value=pages.fmt(dataset.iloc[0], 1)) + (
            " " + PROSE("local_range.others", others=pages.count(few, "other row")) if few else "")
    return PROSE("local_range", low=pages.fmt(dataset.min(), 1), high=pages.fmt(dataset.max(), 1)) + (
        " " + PROSE("local_range.rows_and_others", rows=pages.count(len(dataset), "row"),
                    others=pages.count(few, "other")) if few else "")


def slip_note(statements: pd.DataFrame) -> Markdown:
    """The paragraph on an aspect line of the authors' template that asks the wrong statement (or that none does)."""
    wrong = statements[~statements["asks_its_aspect"]]
    if wrong.empty:
        return Markdown(PROSE("slip.none"))
    row = wrong.iloc[0]
    borrowed = [a for a, s in ex_prompts.ASPECT_STATEMENTS.items() if s == row["statement_asked"]]
    line = {"line": row["line"], "asked": row["statement_asked"], "questionnaire": row["questionnaire_statement"]}
    # A line asking another aspect's statement names that aspect; one asking no questionnaire statement cannot
    sentences = [PROSE("slip.borrowed", **line, borrowed=borrowed[0], aspect=row["aspect"]) if borrowed
                 else PROSE("slip.unknown", **line)]
    if row["aspect"] == "transparency":
        sentences.append(PROSE("slip.transparency"))
    sentences.append(PROSE("slip.kept"))
    return Markdown(" ".join(sentences))


def show_authors_differences(notebook: str) -> Table:
    differences = save_table(pd.DataFrame(ex_prompts.AUTHORS_DIFFERENCES, columns=["aspect", "difference"]),
                             notebook, "authors_prompt_differences")
    return format_table(differences, labels={"aspect": "What", "difference": "The authors' code, and here"},
                        caption=PROSE("authors_differences.caption"),
                        full_table=(notebook, "authors_prompt_differences"), audit=True)


def authors_average(notebook: str, authors: ex.LLMEvaluation, authors_table: pd.DataFrame) -> pd.DataFrame:
    """The authors' prompts' rows, mean over the aspects at each level, with their run counts (runs and rows
    saved)."""
    runs = save_table(authors.runs, notebook, "authors_runs")
    save_table(ex.table1_layout(authors_table), notebook, "authors_rows_sample")
    average = ex.average_over_aspects(authors_table).pivot(index="evaluator", columns="level", values="value")
    average = average.loc[list(dict.fromkeys(authors_table["evaluator"]))].reset_index()
    read = authors.scores.dropna(subset=["score"]).groupby("evaluator")["row_id"].nunique()
    average = average.assign(n_read=[int(read.get(e, 0)) for e in average["evaluator"]])
    return average.merge(runs[["evaluator", "n_texts", "n_prompts", "n_unparsable"]], on="evaluator")


def show_authors_rows(notebook: str, average: pd.DataFrame) -> Table:
    return format_table(levels_unless_too_few(average, "n_read")
                        [["evaluator", "n_texts", "n_prompts", "n_unparsable", "n_read", *ex.LEVELS]],
                        {"n_texts": count(label="Texts"), "n_prompts": count(label="Prompts"),
                         "n_unparsable": count(label="Replies with an aspect unread"),
                         "n_read": count(label="Texts with a score read"), **LEVEL_TEXTS},
                        labels={"evaluator": "Evaluator"},
                        caption=PROSE("authors_rows.caption", min_answers=pages.MIN_ANSWERS),
                        full_table=(notebook, "authors_rows_sample"), audit=True)


def authors_reading_note(authors: ex.LLMEvaluation, average: pd.DataFrame, authors_judges: Sequence[dict],
                         authors_settings: Sequence[str], n_texts: int) -> Markdown:
    """What the authors' reading rule makes of the first judge's zero-shot replies, and what the user profile
    changes."""
    runs_by = authors.runs.set_index("evaluator")
    label = authors_judges[0]["label"] if authors_judges else None
    sentences = []
    if label is not None and "none" in authors_settings:
        zero_name = ex_prompts.evaluator_name(label, "multi", "none")
        zero = runs_by.loc[zero_name]
        by_name = authors.replies[authors.replies["evaluator"] == zero_name + ", read by name"]
        read = by_name.reindex(columns=list(ASPECTS)).notna().sum(axis=1)  # no aspect column when nothing parsed
        summaries = int(by_name["reply"].str.contains("summary", case=False, na=False).sum())
        some = read.between(1, 3)
        sentences.append(PROSE(
            "authors_reading.zero_shot", n_unread=int(zero["n_unparsable"]), n_replies=int(zero["n_prompts"]),
            judge=label, summaries=pages.count(summaries, "contains", "contain"), n_all=int((read == 4).sum()),
            n_some=int(some.sum()), n_none=int((read == 0).sum()),
            some_average=" " + PROSE("authors_reading.some_average", aspects=pages.fmt(read[some].mean(), 1))
            if some.any() else ""))
    if label is not None and {"none", "none+profile"} <= set(authors_settings):
        levels = average.set_index("evaluator")

        def pearson_words(value):
            return f"{pages.fmt(value, 1)}%" if pd.notna(value) else PROSE("authors_reading.undefined")

        plain = levels.loc[ex_prompts.evaluator_name(label, "multi", "none") + ", read by name"]
        profiled = levels.loc[ex_prompts.evaluator_name(label, "multi", "none+profile") + ", read by name"]
        sentences.append(PROSE("authors_reading.profile", plain=pearson_words(plain["dataset"]),
                               profiled=pearson_words(profiled["dataset"]), n_texts=n_texts))
    return Markdown(" ".join(sentences))


def ensemble_trend(ensemble_average: pd.DataFrame) -> str:
    """What the ensemble figure shows, per level: the mean Pearson (%) of the single evaluators and of the largest
    ensembles (``ensemble_average``: one row per ensemble with its ``n``, ``level`` and ``pearson``)."""
    parts = []
    for level, part in ensemble_average.groupby("level", sort=False):
        means = part.groupby("n")["pearson"].mean()
        parts.append(PROSE("ensembles.trend.level", single=pages.fmt(means.iloc[0], 1),
                           largest=pages.fmt(means.iloc[-1], 1), level=level))
    return PROSE("ensembles.trend", largest=int(ensemble_average["n"].max()), levels="; ".join(parts))


def draw_ensembles(notebook: str, ensemble_table: pd.DataFrame, members: Sequence[str], n_texts: int) -> None:
    """Figure 4's shape: every ensemble's Pearson (mean over aspects) against its size, one panel per level, glued
    with its caption (the table and its summary saved)."""
    save_table(ensemble_table, notebook, "ensembles_all_subsets")
    summary = ensembles.ensemble_summary(ensemble_table, by=("aspect", "level", "method"))
    summary[["mean", "min", "max", "sd"]] *= 100
    save_table(summary, notebook, "ensembles_summary")
    ensemble_average = (ensemble_table.groupby(["n", "members", "level"], sort=False)["value"].mean().mul(100)
                        .rename("pearson").reset_index())
    # Each size has one to three ensembles: the points themselves, not boxes drawn from them.
    fig, axes = plt.subplots(1, len(ex.LEVELS), figsize=(figures.FIGURE_WIDTH_IN, 3.0), sharey=True)
    spread = np.random.default_rng(0)
    for ax, level in zip(axes, ex.LEVELS):
        part = ensemble_average[ensemble_average["level"] == level]
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.scatter(part["n"] + spread.uniform(-0.08, 0.08, len(part)), part["pearson"], s=22,
                   color=figures.PALETTE[0], alpha=0.8)
        means = part.groupby("n")["pearson"].mean()
        ax.scatter(means.index, means.to_numpy(), marker="_", s=400, linewidths=2, color="black")
        ax.set(title=f"{level.capitalize()} level", xlabel="Evaluators in the ensemble",
               xticks=sorted(part["n"].unique()), xlim=(0.5, part["n"].max() + 0.5))
    axes[0].set_ylabel("Pearson (%)")
    fig.tight_layout()
    figures.glue_figure(
        "fig-explanation-ensembles", fig,
        PROSE("ensembles.caption", trend=ensemble_trend(ensemble_average), n_members=len(members),
              members=", ".join(members), n_texts=n_texts))


def show_cost(notebook: str, cost: pd.DataFrame) -> Table:
    """Cost of evaluating 1,000 texts at each model's list price (saved per text)."""
    save_table(cost, notebook, "cost_per_text")
    usd_columns = [c for c in cost.columns if c.startswith("usd_")]
    # Per 1,000 texts, so that a cent and a tenth of a cent read with the same two decimals.
    return format_table(cost[["evaluator", *usd_columns]].assign(**{c: cost[c] * 1000 for c in usd_columns}),
                        {c: number(2, label=c.removeprefix("usd_").replace("_", " ") + " ($)") for c in usd_columns},
                        labels={"evaluator": "Our prompt"},
                        caption=PROSE("cost.caption"),
                        full_table=(notebook, "cost_per_text"), audit=True)


def show_paper_cost(notebook: str) -> Table:
    paper_cost = pd.DataFrame({"evaluator": list(ex.PAPER_TABLE2_USD),
                               "usd_per_text (paper Table 2)": list(ex.PAPER_TABLE2_USD.values())})
    save_table(paper_cost, notebook, "paper_table2_cost")
    column = "usd_per_text (paper Table 2)"
    return format_table(paper_cost.assign(**{column: paper_cost[column] * 1000}),
                        {column: number(2, label="USD per 1,000 texts")},
                        labels={"evaluator": "Evaluator (paper)"},
                        caption=PROSE("paper_cost.caption"),
                        full_table=(notebook, "paper_table2_cost"), audit=True)


def detail_values(agreement: pd.DataFrame, tokenisation: pd.DataFrame) -> dict[str, str]:
    """The glued words of the "In more detail" box: how close the annotator rows come, the BLEU/ROUGE gaps, and the
    BLEU-4 variants' dataset-level range beside the paper's."""
    gaps = agreement.set_index("evaluator")
    bleu4_ours = tokenisation[tokenisation["metric"] == "BLEU-4"]
    return {
        "annotator_cells": f"{int(gaps.loc[ANNOTATOR_ROWS, 'cells'].sum())}",
        "annotator_gap": pages.fmt(gaps.loc[ANNOTATOR_ROWS, "max_abs_difference"].max(), 3),
        "reference_gaps": ", ".join(f"{name} {pages.fmt(gaps.loc[name, 'mean_abs_difference'], 2)}"
                                    for name in REFERENCE_ROWS),
        "bleu4_variants": f"{len(bleu4_ours)}",
        "bleu4_paper": pages.fmt(ex.PAPER_TABLE1_AVERAGE["BLEU-4"][0], 2),
        "bleu4_ours": pages.span(bleu4_ours["dataset_level_mean"].min(), bleu4_ours["dataset_level_mean"].max(), 2),
    }


def further_findings(comparison: pd.DataFrame, llm_runs: pd.DataFrame, llm_table: pd.DataFrame, n_texts: int,
                     slip: bool, cost: pd.DataFrame) -> Markdown:
    """The bullets of the "In more detail" box beyond Table 1's rows: the paper's twin ROUGE rows, what the LLM rows
    are, the authors' prompt slip, and GPT-4's price per text beside the paper's human annotation."""
    paper_rouge = ex.PAPER_TABLE1["ROUGE-1-F"] == ex.PAPER_TABLE1["ROUGE-L-F"]
    ours_rouge_gap = (comparison[comparison["evaluator"] == "ROUGE-1-F"].set_index(["aspect", "level"])["ours"]
                      - comparison[comparison["evaluator"] == "ROUGE-L-F"].set_index(["aspect", "level"])["ours"]).abs()
    unreadable = int(llm_runs["n_unparsable"].sum()) if len(llm_runs) else 0
    further = []
    if paper_rouge:
        further.append(PROSE("further.rouge_twins", ours_gap=pages.fmt(ours_rouge_gap.max(), 2)))
    if len(llm_runs):
        further.append(PROSE("further.llm_rows", n_texts=n_texts, n_unreadable=unreadable,
                             n_replies=int(llm_runs["n_prompts"].sum()), local_range=local_dataset_range(llm_table),
                             gpt4_average=pages.fmt(ex.PAPER_TABLE1_AVERAGE["GPT4 (M)"][0], 2)))
    if slip:
        further.append(PROSE("further.slip"))
    if len(cost) and "usd_gpt-4" in cost.columns:
        multi = cost[cost["template"] == "zhang_multi_zero_shot"]
        if len(multi):
            further.append(PROSE("further.gpt4_cost", gpt4=f"{multi['usd_gpt-4'].iloc[0]:.4f}",
                                 human=f"{ex.PAPER_TABLE2_USD['Human']:.3f}"))
    return Markdown("\n".join(f"- {finding}" for finding in further))
