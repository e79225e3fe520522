"""The page of the chapter "Re-evaluating recommenders with an LLM judge": its opening box, tables, figure and glued
findings, around the analysis of ``recjudge.recsys``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import claim_readers, figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import count, format_table, mean_sd, number, p_value, paper_beside_ours, percent, text
from recjudge.data import movielens_name
from recjudge.llm import JudgeConfig
from recjudge.llm.judge_spec import chapter_judge, reader_labels, role_of
from recjudge.recsys import judging, split, tuning
from recjudge.recsys import lists as recsys_lists
from recjudge.recsys.models import RECOMMENDERS
from recjudge.serendipity import claims as serendipity_claims

#: The recommenders of the paper's Table 3 (the others are this chapter's reference points and variant).
PAPER_SIX = ["BPRMF", "SASRec", "KFN", "UAUM", "DESR", "PURS"]
FOLD_COLUMNS = ["fold", "train_positives", "train_users", "train_items", "valid_users", "test_users",
                "test_unseen_users", "test_targets", "test_unseen_user", "test_unseen_item"]
FOLD_LABELS = {"fold": "Fold", "train_positives": "Train positives", "train_users": "Train users",
               "train_items": "Train items", "valid_users": "Valid users", "test_users": "Test users",
               "test_unseen_users": "Test users dropped", "test_targets": "Test targets",
               "test_unseen_user": "Test: unseen user", "test_unseen_item": "Test: unseen item"}
SERENDIPITY_FORMATS = {"p_ser": number(2, label="P_ser@20 (%)"), "n_ser": number(2, label="N_ser@20 (%)"),
                       "avg_score": number(3, label="Avg. score@20")}
#: Table 3's serendipity with the Avg. score's standard error over the judged lists (ours only: the paper has none).
SERENDIPITY_SE_FORMATS = {**SERENDIPITY_FORMATS, "avg_score_se": number(3, label="SE"),
                          "n_lists": count(label="Lists")}
ACCURACY_FORMATS = {"p_acc": number(2, label="P_acc@20 (%)"), "n_acc": number(2, label="N_acc@20 (%)")}
TUNED_FORMATS = {"trials": count(label="TPE trials"), "valid_recall10": number(3, label="Valid R_acc@10")}
TUNED_LABELS = {"recommender": "Recommender", "fold": "Fold", "parameters": "Chosen values"}
#: The run of the cost table whose judgments this chapter made, and the run over every test user: row labels of the
#: saved cost table that ``recjudge.compendium.at_a_glance`` reads by name, so they stay here, not in the prose file.
JUDGED_RUN = "this chapter (judged users)"
ALL_RUN = "all test users, every recommender"
#: The page's sentences (``notebooks/prose/recommender_reevaluation.md``).
PROSE = Prose("recommender_reevaluation")


def order() -> list[str]:
    """The recommenders in Table 3's order, then the reference points and the labelled variant."""
    return list(RECOMMENDERS)


def judged_per_fold(judged: Mapping[int, Sequence]) -> str:
    """The judged users per fold for the opening box: "1 user per fold", or "1–2 users per fold"."""
    sizes = sorted({len(users) for users in judged.values()})
    return (pages.count(sizes[0], "user") if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]} users") + " per fold"


def users_note(judged: Mapping[int, Sequence]) -> str:
    """The judged users of each fold for captions: "1 / 1 / 1 judged users in the three folds"."""
    return PROSE("judged_users", sizes=judged_sizes(judged))


def judged_sizes(judged: Mapping[int, Sequence]) -> str:
    return " / ".join(str(len(users)) for users in judged.values())


def too_few_judged(judged: Mapping[int, Sequence]) -> str | None:
    """"too few judged users (1 / 1 / 1 per fold)" when the judged users of all folds are fewer than this book's
    minimum, else None: the rule of ``pages.MIN_ANSWERS`` for the judge's numbers of this chapter."""
    total = sum(len(users) for users in judged.values())
    return pages.too_few_text(total, "judged users", f"{judged_sizes(judged)} per fold") if pages.too_few(total) \
        else None


def unless_too_few_judged(frame: pd.DataFrame, judged: Mapping[int, Sequence], columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` as a table shows it: each of ``columns`` "too few judged users (...)" when they are
    (:func:`too_few_judged`); the saved tables keep every number."""
    few = too_few_judged(judged)
    if few is None:
        return frame
    return frame.assign(**{column: few for column in columns if column in frame})


def opening(ml, dataset: str, folds, config: dict, judged: Mapping[int, Sequence], *, k: int, prompt: str,
            judges: Sequence[Mapping], judged_users_per_fold: int) -> Markdown:
    """The box that opens the chapter: data, split, recommenders, judge and sample, and the caveat."""
    n_positive = len(split.positives(ml.ratings))
    test_users = [f.n_test_users for f in folds]
    tuned_names = [name for name in order() if config["trials"][name] > 0]
    judge = PROSE("opening.judge", prompt=prompt)
    if judges:
        judge += "; " + PROSE("opening.judge.readers", judges=", ".join(reader_labels(judges)))
    return pages.opening([
        ("Data", PROSE("opening.data", variant=ml.variant,
                       source="embedded sample" if dataset == "latest-small" else "mirror",
                       n_ratings=f"{len(ml.ratings):,}", n_positives=f"{n_positive:,}",
                       n_users=f"{ml.ratings['user_id'].nunique():,}")),
        ("Split", PROSE("opening.split", test_users=" / ".join(map(str, test_users)))),
        ("Recommenders", PROSE("opening.recommenders", dataset=dataset,
                               tuned=", ".join(PROSE("opening.recommenders.tuned", recommender=name,
                                                     trials=config["trials"][name]) for name in tuned_names))),
        ("Judge", judge),
        ("Sample", PROSE("opening.sample", k=k, users=pages.count(judged_users_per_fold, "test user"),
                         judged="; ".join(f"fold {f}: user {', '.join(map(str, us))}" for f, us in judged.items()))),
    ], caveat=PROSE("opening.caveat", per_fold=judged_per_fold(judged)))


def show_fold_table(folds, dataset: str, notebook: str):
    """The fold sizes on the chapter's dataset (saved as ``folds_<dataset>``), an audit table."""
    fold_table = save_table(split.fold_sizes(folds).assign(dataset=dataset), notebook, f"folds_{dataset}")
    return format_table(fold_table[FOLD_COLUMNS], labels=FOLD_LABELS,
                        caption=PROSE("folds.caption", dataset=dataset),
                        full_table=(notebook, f"folds_{dataset}"), audit=True)


def show_accuracy_table(per_fold: pd.DataFrame, accuracy: pd.DataFrame, dataset: str, notebook: str):
    """Accuracy over all test users, mean ± SD of the folds (saved per fold and as means)."""
    save_table(per_fold.assign(dataset=dataset), notebook, f"accuracy_per_fold_{dataset}")
    save_table(accuracy.assign(dataset=dataset), notebook, f"accuracy_{dataset}")
    shown = pd.DataFrame({"recommender": accuracy["recommender"], "n_users": accuracy["n_users"],
                          "P_acc@20 (%)": mean_sd(accuracy, "precision_acc"),
                          "N_acc@20 (%)": mean_sd(accuracy, "ndcg_acc"),
                          "R_acc@10 (%)": mean_sd(accuracy, "recall10_acc")})
    return format_table(shown, {c: text() for c in shown.columns[2:]},
                        labels={"recommender": "Recommender", "n_users": "Test users per fold"},
                        caption=PROSE("accuracy.caption", dataset=dataset),
                        full_table=(notebook, f"accuracy_per_fold_{dataset}"))


def wins_losses(vs_random: pd.DataFrame, metric: str) -> list[str]:
    """"wins / losses" of each recommender against Random on ``metric`` (recall10 or precision20)."""
    return [f"{w} / {lo}" for w, lo in vs_random[[f"{metric}_wins", f"{metric}_losses"]].itertuples(index=False)]


def show_vs_random_table(vs_random: pd.DataFrame, dataset: str, notebook: str):
    """Each recommender minus Random per test user, with wins and losses and the Wilcoxon p-values."""
    save_table(vs_random.assign(dataset=dataset), notebook, f"vs_random_{dataset}")
    shown = vs_random.assign(recall10_wl=wins_losses(vs_random, "recall10"),
                             precision20_wl=wins_losses(vs_random, "precision20"))
    return format_table(shown[["recommender", "n_users", "recall10_diff", "recall10_wl", "recall10_p",
                               "precision20_diff", "precision20_wl", "precision20_p"]],
                        {"n_users": count(label="Users"), "recall10_diff": percent(1, label="Δ R_acc@10 (points)"),
                         "recall10_wl": text(label="Better / worse"), "recall10_p": p_value(label="p"),
                         "precision20_diff": percent(1, label="Δ P_acc@20 (points)"),
                         "precision20_wl": text(label="Better / worse (P)"), "precision20_p": p_value(label="p (P)")},
                        labels={"recommender": "Recommender"},
                        caption=PROSE("vs_random.caption"), full_table=(notebook, f"vs_random_{dataset}"),
                        audit=True)


def show_tuned_values(lists: pd.DataFrame, folds, config: dict, dataset: str, notebook: str, *, k: int,
                      caption: str = "Tuned values per fold"):
    """The tuned values per fold of the recommenders that were tuned, with the validation Recall_acc@10 of their
    committed lists (saved as ``tuned_values_<dataset>``, the untuned recommenders' defaults included)."""
    valid_lists = lists[lists["part"] == "valid"]
    valid_recall = judging.table3_metrics(valid_lists, split.targets(folds, "valid"), None,
                                          k=k).set_index(["recommender", "fold"])["recall10_acc"]
    tuned = save_table(tuning.tuned_values(config, valid_recall, order()).assign(dataset=dataset), notebook,
                       f"tuned_values_{dataset}")
    return format_table(tuned[tuned["trials"] > 0].drop(columns="dataset").reset_index(drop=True), TUNED_FORMATS,
                        labels=TUNED_LABELS,
                        caption=PROSE("tuned.caption", caption=caption),
                        full_table=(notebook, f"tuned_values_{dataset}"), audit=True)


def show_retraining(folds, config: dict, test_lists: pd.DataFrame, *, retrain: bool, tune: int, k: int):
    """With ``retrain`` or ``tune``, retrain (after tuning) every recommender and show how many items of each list
    come back; otherwise say how to."""
    if not (retrain or tune):
        return Markdown(PROSE("retraining.how"))
    if tune:
        budget = {name: tune if config["trials"][name] > 0 else 0 for name in order()}
        new_lists, _ = recsys_lists.tune_and_produce(folds, budget, k=k)
    else:
        new_lists = pd.concat([recsys_lists.produce_lists([f], config["params"][str(f.fold)], k=k) for f in folds],
                              ignore_index=True)
    shared = recsys_lists.overlap(new_lists[new_lists["part"] == "test"], test_lists, k=k)
    shared = shared.pivot(index="recommender", columns="fold", values="overlap").reset_index()
    shared.columns = [str(c) if c == "recommender" else f"fold_{c}" for c in shared.columns]
    return format_table(shared, {c: number(2) for c in shared.columns[1:]}, labels={"recommender": "Recommender"},
                        caption=PROSE("retraining.caption",
                                      parameters="after re-tuning" if tune else "committed parameters"))


def ask_reader_judges(judges: Sequence[Mapping], judge_config: JudgeConfig, folds, test_lists: pd.DataFrame,
                      judged: Mapping[int, Sequence], items: pd.DataFrame, *, mode: str | None) -> dict:
    """The reader's judges (the ``judges`` parameter), each in the local judge's role on the same pairs: label ->
    scored pairs (``judging.judge_folds``)."""
    scored = {}
    for judge in judges:
        label, config, batch = chapter_judge(judge, **role_of(judge_config))
        scored[label] = judging.judge_folds(folds, test_lists, judged, items, config, mode=mode, batch=batch)[0]
    return scored


def save_judgments(scored: pd.DataFrame, ser_per_fold: pd.DataFrame, judged_lists: pd.DataFrame,
                   targets: pd.DataFrame, dataset: str, notebook: str, *, k: int) -> None:
    """Save the judged pairs and the serendipity metrics per fold, read as expected scores and as the paper's judge
    answers (its most likely score token, ``integer_score``: "serendipitous" is then an integer of 4 or more)."""
    save_table(scored[["fold", "user_id", "item_id", "score", "integer_score", "input_tokens", "output_tokens"]],
               notebook, f"judged_items_{dataset}")
    save_table(ser_per_fold.assign(dataset=dataset), notebook, f"serendipity_per_fold_{dataset}")
    integer = judging.table3_metrics(judged_lists, targets, scored.assign(score=scored["integer_score"]), k=k)
    save_table(integer.assign(dataset=dataset), notebook, f"serendipity_per_fold_integer_{dataset}")


def judging_note(scored: pd.DataFrame, judged: Mapping[int, Sequence]) -> Markdown:
    """The local judge's judgments: their number, tokens and unparsable replies (how long asking them took is a
    process note of the reproducibility page, not a finding)."""
    in_tokens, out_tokens = int(scored["input_tokens"].sum()), int(scored["output_tokens"].sum())
    return Markdown(PROSE("judging_note", n_judgments=len(scored),
                          per_fold=", ".join(f"fold {f}: {int((scored.fold == f).sum())}" for f in judged),
                          input_tokens=f"{in_tokens:,}", output_tokens=f"{out_tokens:,}",
                          unparsable=int(scored["score"].isna().sum())))


def ours_beside_paper(table3: pd.DataFrame) -> pd.DataFrame:
    """Table 3 in the paper's units: accuracy and serendipity in percent, Avg. score as is."""
    return pd.DataFrame({"recommender": table3["recommender"], "users_per_fold": table3["n_users"],
                         **{short: (100 if short != "avg_score" else 1) * table3[f"{long}_mean"]
                            for short, long in (("p_acc", "precision_acc"), ("n_acc", "ndcg_acc"),
                                                ("p_ser", "precision_ser"), ("n_ser", "ndcg_ser"),
                                                ("avg_score", "avg_score"))}})


def show_table3(table3: pd.DataFrame, table3_integer: pd.DataFrame, paper: pd.DataFrame,
                judged: Mapping[int, Sequence], dataset: str, notebook: str, *, local_model: str, prompt: str):
    """Table 3 beside the paper's ML-1M rows: serendipity read as expected scores and as integers (displayed), and
    accuracy on the same users (returned); each saved."""
    save_table(table3.assign(dataset=dataset, judge=local_model, prompt=prompt), notebook, f"table3_{dataset}")
    save_table(paper, notebook, "paper_table3_ml1m")
    save_table(table3_integer.assign(dataset=dataset, judge=local_model, prompt=prompt, scoring="most likely score"),
               notebook, f"table3_integer_{dataset}")
    ours = unless_too_few_judged(ours_beside_paper(table3), judged, ["p_ser", "n_ser", "avg_score", "p_acc", "n_acc"])
    note = users_note(judged)
    paper_ser = paper[["recommender", "p_ser", "n_ser", "avg_score"]]
    # The expected score is the reading that tells the recommenders apart: it is shown; the integer reading (the
    # tiny judge's most likely score is nearly always the same level) is kept folded beneath it.
    expected = judging.serendipity_view(table3)
    display(paper_beside_ours(
        unless_too_few_judged(expected, judged, [c for c in expected.columns if c != "recommender"]), paper_ser,
        "recommender", SERENDIPITY_SE_FORMATS,
        labels={"recommender": "Recommender"}, names=("paper ML-1M", "ours"),
        caption=PROSE("table3.serendipity.caption", dataset=dataset, judged_users=note),
        full_table=(notebook, f"table3_{dataset}")))
    integer = judging.serendipity_view(table3_integer)
    display(paper_beside_ours(
        unless_too_few_judged(integer, judged, [c for c in integer.columns if c != "recommender"]), paper_ser,
        "recommender", SERENDIPITY_SE_FORMATS,
        labels={"recommender": "Recommender"}, names=("paper ML-1M", "ours"),
        caption=PROSE("table3.integer.caption", dataset=dataset, judged_users=note),
        full_table=(notebook, f"table3_integer_{dataset}"), audit=True))
    return paper_beside_ours(
        ours[["recommender", "p_acc", "n_acc"]], paper[["recommender", "p_acc", "n_acc"]], "recommender",
        ACCURACY_FORMATS, labels={"recommender": "Recommender"}, names=("paper ML-1M", "ours"),
        caption=PROSE("table3.accuracy.caption", dataset=dataset, judged_users=note),
        full_table=(notebook, f"table3_{dataset}"), audit=True)


def show_reader_tables(reader_scored: Mapping[str, pd.DataFrame], table3: pd.DataFrame,
                       table3_integer: pd.DataFrame, judged_lists: pd.DataFrame, targets: pd.DataFrame,
                       judged: Mapping[int, Sequence], dataset: str, notebook: str, *, k: int, local_model: str,
                       prompt: str) -> dict:
    """The reader's judges: their rows join both Table 3 files, and one table per judge beside the local judge.
    Returns (label, "" or "_integer") -> that judge's Table 3."""
    reader_tables = {}
    for suffix, own, extra in (("", table3, {}), ("_integer", table3_integer, {"scoring": "most likely score"})):
        if not reader_scored:
            break
        rows = {label: judging.table3_of_judge(judged_lists, targets, scores, k=k, order=order(),
                                               integer=bool(suffix)) for label, scores in reader_scored.items()}
        reader_tables.update({(label, suffix): table for label, table in rows.items()})
        save_table(pd.concat([own.assign(dataset=dataset, judge=local_model, prompt=prompt, **extra)]
                             + [table.assign(dataset=dataset, judge=label, prompt=prompt, **extra)
                                for label, table in rows.items()], ignore_index=True), notebook,
                   f"table3{suffix}_{dataset}")
    for label in reader_scored:
        beside = pd.concat([judging.serendipity_view(table).assign(judge=name, reading=reading)
                            for name, table, reading in (("SmolLM2-135M", table3, "expected score"),
                                                         (label, reader_tables[(label, "")], "expected score"),
                                                         (label, reader_tables[(label, "_integer")],
                                                          "most likely score"))],
                           ignore_index=True)
        display(format_table(beside[["judge", "reading", "recommender", "p_ser", "n_ser", "avg_score"]],
                             SERENDIPITY_FORMATS,
                             labels={"judge": "Judge", "reading": "Reading", "recommender": "Recommender"},
                             caption=PROSE("reader_table.caption", judge=label, dataset=dataset,
                                           judged_users=users_note(judged)),
                             full_table=(notebook, f"table3_{dataset}"), audit=True))
    return reader_tables


def draw_accuracy_vs_judge(accuracy: pd.DataFrame, ser_per_fold: pd.DataFrame, table3: pd.DataFrame,
                           paper: pd.DataFrame, reader_tables: Mapping, judged: Mapping[int, Sequence],
                           dataset: str) -> None:
    """Glue the figure ``fig-accuracy-vs-judge``: accuracy (left) and the judge's Avg. score@20 on the scale's full
    range (right), the recommenders down the page in their order of accuracy, so that no label covers another."""
    import matplotlib.pyplot as plt

    readers = list(dict.fromkeys(label for label, _ in reader_tables))
    ranked = accuracy.sort_values("ndcg_acc_mean")["recommender"].tolist()
    rows = np.arange(len(ranked))
    fig, (left, right) = plt.subplots(1, 2, figsize=(figures.FIGURE_WIDTH_IN, 4.6), sharey=True)
    acc = accuracy.set_index("recommender").loc[ranked]
    left.errorbar(100 * acc["ndcg_acc_mean"], rows, xerr=100 * acc["ndcg_acc_std"], fmt="o",
                  color=figures.colours(1)[0], capsize=2)
    left.set(xlabel=PROSE("figure.accuracy_axis"), xlim=(0, None), yticks=rows,
             yticklabels=ranked, ylabel="Recommender")
    colours = figures.colours(3 + len(readers))
    per_fold_scores = ser_per_fold.set_index("recommender")
    for row, name in zip(rows, ranked):
        right.scatter(per_fold_scores.loc[[name], "avg_score"], np.full(len(per_fold_scores.loc[[name]]), row), s=12,
                      color=colours[0], alpha=0.45, label="SmolLM2-135M, one fold" if row == 0 else None)
    ours = table3.set_index("recommender").loc[ranked]
    # A mean over a few dozen lists, drawn with its standard error over them.
    right.errorbar(ours["avg_score_mean"], rows, xerr=ours["avg_score_se"] if "avg_score_se" in ours else None,
                   fmt="o", markersize=6, color=colours[0], capsize=2, label="SmolLM2-135M, mean ± SE")
    paper_scores = paper.set_index("recommender")["avg_score"].reindex(ranked)
    right.scatter(paper_scores, rows, s=40, marker="D", facecolors="none", edgecolors=colours[1],
                  label="paper, ML-1M (GPT-4o-mini)")
    for colour, label in zip(colours[3:], readers):
        theirs = reader_tables[(label, "")].set_index("recommender").loc[ranked]
        right.errorbar(theirs["avg_score_mean"], rows,
                       xerr=theirs["avg_score_se"] if "avg_score_se" in theirs else None, fmt="s", markersize=5,
                       color=colour, capsize=2, label=f"{label}, mean ± SE")
    absent = [name for name in ranked if pd.isna(paper_scores[name])]
    right.set(xlabel="Avg. score@20 (1–5)", xlim=(1, 5))
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    fig.tight_layout()
    figures.glue_figure("fig-accuracy-vs-judge", fig, PROSE(
        "figure.alt", dataset=dataset, judged_users=users_note(judged),
        paper_lacks="; " + PROSE("figure.alt.paper_lacks", recommenders=", ".join(absent)) if absent else "",
        paper_low=pages.fmt(paper["avg_score"].min(), 2), paper_high=pages.fmt(paper["avg_score"].max(), 2)))


def distinct_pairs(test_lists: pd.DataFrame, folds, recommenders: Sequence[str] | None = None) -> int:
    """The judgments a run over every test user needs: the distinct (user, item) pairs of each fold's lists (of
    ``recommenders`` when given), summed over the folds."""
    if recommenders is not None:
        test_lists = test_lists[test_lists["recommender"].isin(recommenders)]
    return sum(len(test_lists[test_lists["fold"] == f.fold][["user_id", "item_id"]].drop_duplicates()) for f in folds)


def judging_cost(scored: pd.DataFrame, test_lists: pd.DataFrame, folds, judged: Mapping[int, Sequence],
                 dataset: str, notebook: str) -> pd.DataFrame:
    """Judgments, tokens and their cost at GPT-4o-mini's list price: this chapter's, and a run over every test user
    (every recommender, and the paper's six) at this chapter's mean tokens per judgment; saved."""
    n_judgments = len(scored)
    in_tokens, out_tokens = int(scored["input_tokens"].sum()), int(scored["output_tokens"].sum())
    mean_in, mean_out = in_tokens / n_judgments, out_tokens / n_judgments
    all_pairs, six_pairs = distinct_pairs(test_lists, folds), distinct_pairs(test_lists, folds, PAPER_SIX)
    test_users = sum(f.n_test_users for f in folds)
    rows = [{"run": JUDGED_RUN, "users": sum(len(u) for u in judged.values()), "judgments": n_judgments,
             "input_tokens": in_tokens, "output_tokens": out_tokens,
             "gpt4o_mini_usd": judging.paper_judge_cost(in_tokens, out_tokens)}]
    rows += [{"run": run, "users": test_users, "judgments": pairs, "input_tokens": round(mean_in * pairs),
              "output_tokens": round(mean_out * pairs), "gpt4o_mini_usd": judging.paper_judge_cost(mean_in * pairs,
                                                                                                   mean_out * pairs)}
             # the paper's six's row label is in the prose file: no other module reads that row by name
             for run, pairs in ((ALL_RUN, all_pairs), (PROSE("cost.run.six"), six_pairs))]
    return save_table(pd.DataFrame(rows).assign(dataset=dataset), notebook, f"judge_cost_{dataset}")


def show_cost_table(cost: pd.DataFrame, dataset: str, notebook: str):
    return format_table(cost.drop(columns="dataset"),
                        {"users": count(label="Test users"), "judgments": count(label="Judgments"),
                         "input_tokens": count(label="Input tokens"), "output_tokens": count(label="Output tokens"),
                         "gpt4o_mini_usd": number(2, label="GPT-4o-mini (USD, list price)")},
                        labels={"run": "Run"},
                        caption=PROSE("cost.caption", dataset=dataset),
                        full_table=(notebook, f"judge_cost_{dataset}"), audit=True)


def show_ml1m_folds(ml1m, ml1m_folds, notebook: str):
    """ML-1M's positives against the paper's Table 2, the share of test users kept, and its fold sizes."""
    positives = split.positives(ml1m.ratings)
    table = save_table(split.fold_sizes(ml1m_folds).assign(dataset="1m"), notebook, "folds_1m")
    # whether ours equal the paper's Table 2 count, 575,281, which the passage prints beside them
    display(Markdown(PROSE("ml1m.positives", n_positives=f"{len(positives):,}",
                           n_users=f"{positives['user_id'].nunique():,}", n_items=f"{positives['item_id'].nunique():,}",
                           same="equal" if len(positives) == 575281 else "different")))
    kept = table.set_index("fold")
    before = kept["test_users"] + kept["test_unseen_users"]
    share = kept["test_users"] / before
    display(Markdown(PROSE(
        "ml1m.unseen",
        kept=", ".join(PROSE("ml1m.unseen.fold", kept=f"{int(kept.loc[f, 'test_users']):,}",
                             before=f"{int(before[f]):,}", fold=f) for f in kept.index),
        unseen_user=f"{int(kept['test_unseen_user'].sum()):,}", unseen_item=f"{int(kept['test_unseen_item'].sum()):,}",
        low=pages.fmt(100 * share.min(), 0), high=pages.fmt(100 * share.max(), 0))))
    return format_table(table[FOLD_COLUMNS], labels=FOLD_LABELS, caption=PROSE("ml1m.folds.caption"),
                        full_table=(notebook, "folds_1m"), audit=True)


def ml1m_orders(accuracy_1m: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """How the paper's six are ordered on ML-1M here and in the paper, by P_acc@20 and by N_acc@20 (metric p_acc,
    n_acc; Kendall's tau)."""
    ours = pd.DataFrame({"recommender": accuracy_1m["recommender"], "p_acc": 100 * accuracy_1m["precision_acc_mean"],
                         "n_acc": 100 * accuracy_1m["ndcg_acc_mean"]})
    return pd.DataFrame([{"metric": metric, **judging.order_against_paper(ours, paper, metric)}
                         for metric in ("p_acc", "n_acc")])


def show_ml1m_accuracy(per_fold_1m: pd.DataFrame, accuracy_1m: pd.DataFrame, vs_random_1m: pd.DataFrame,
                       paper: pd.DataFrame, ml1m_folds, notebook: str):
    """Table 3's accuracy half on ML-1M beside the paper's; saves the tables and the orders against the paper's."""
    save_table(per_fold_1m.assign(dataset="1m"), notebook, "accuracy_per_fold_1m")
    save_table(accuracy_1m.assign(dataset="1m"), notebook, "accuracy_1m")
    save_table(vs_random_1m.assign(dataset="1m"), notebook, "vs_random_1m")
    orders = ml1m_orders(accuracy_1m, paper)
    save_table(orders.assign(paper_order=orders["paper_order"].str.join(" > "),
                             our_order=orders["our_order"].str.join(" > ")), notebook, "order_vs_paper_1m")
    ours = pd.DataFrame({"recommender": accuracy_1m["recommender"], "p_acc": 100 * accuracy_1m["precision_acc_mean"],
                         "n_acc": 100 * accuracy_1m["ndcg_acc_mean"]})
    test_users = [f.n_test_users for f in ml1m_folds]
    return paper_beside_ours(
        ours, paper[["recommender", "p_acc", "n_acc"]], "recommender", ACCURACY_FORMATS,
        labels={"recommender": "Recommender"}, names=("paper", "ours"),
        caption=PROSE("ml1m.accuracy.caption", test_users=" / ".join(map(str, test_users))),
        full_table=(notebook, "accuracy_per_fold_1m"))


def ml1m_finding(accuracy_1m: pd.DataFrame, vs_random_1m: pd.DataFrame, ml1m_folds, paper: pd.DataFrame) -> str:
    """The verdict's sentence on ML-1M: the accuracy finding and the order of the paper's six by NDCG_acc@20."""
    order_1m = ml1m_orders(accuracy_1m, paper).set_index("metric").loc["n_acc"]
    return (judging.accuracy_finding(accuracy_1m, vs_random_1m, [f.n_test_users for f in ml1m_folds], "1m") + " "
            + PROSE("ml1m.order", paper_order=" > ".join(order_1m["paper_order"]),
                    our_order=" > ".join(order_1m["our_order"]), tau=pages.fmt(order_1m["tau"], 2),
                    p=pages.fmt(order_1m["p"], 2), n=order_1m["n"]))


def ml1m_cost_note(scored: pd.DataFrame, test_lists_1m: pd.DataFrame, ml1m_folds) -> Markdown:
    """What judging the paper's six on every ML-1M test user would cost (the ML-1M finding itself is the verdict
    box's, said once)."""
    pairs = distinct_pairs(test_lists_1m, ml1m_folds, PAPER_SIX)
    n_judgments = len(scored)
    mean_in = int(scored["input_tokens"].sum()) / n_judgments
    mean_out = int(scored["output_tokens"].sum()) / n_judgments
    cost = judging.paper_judge_cost(mean_in * pairs, mean_out * pairs)
    return Markdown(PROSE("ml1m.cost", judgments=f"{pairs:,}", cost=f"{cost:.2f}"))


def avg_score_claim(notebook: str) -> Markdown:
    """The paper's claim that its Avg. Scores in 2.1–2.4 align with the mean of g, checked on its printed numbers."""
    g = serendipity_claims.g_distribution_summary()
    alignment = save_table(serendipity_claims.avg_score_alignment(judging.paper_table3()), notebook,
                           "paper_claim_avg_score_vs_g")
    low, high = claim_readers.TOKUTAKE_AVG_SCORE_RANGE
    inside = alignment[(alignment["avg_score"] >= low) & (alignment["avg_score"] <= high)]
    # the means agree when every printed Avg. Score and the mean of g lie in the range
    agree = len(inside) == len(alignment) and low <= g["mean"] <= high
    return Markdown(PROSE(
        "claim.avg_score", mean=pages.fmt(g["mean"], 3), n=f"{g['n']:,}", sd=pages.fmt(g["sd"], 2),
        n_inside=len(inside), n_scores=len(alignment), low=pages.fmt(low, 1), high=pages.fmt(high, 1),
        lowest=pages.fmt(alignment["avg_score"].min(), 3), highest=pages.fmt(alignment["avg_score"].max(), 3),
        means_agree=": " + PROSE("claim.avg_score.agree") if agree else "", constant_answer=pages.fmt(g["mean"], 2)))


def avg_integer_words(avg_integer: pd.Series) -> str:
    """Avg. score@20 read as integers: "is 2.00 for every recommender" when every recommender has the same, else its
    range."""
    if avg_integer.min() == avg_integer.max():
        return PROSE("finding.serendipity.integer.same", score=pages.fmt(avg_integer.min(), 2))
    return PROSE("finding.serendipity.integer.range", low=pages.fmt(avg_integer.min(), 2),
                 high=pages.fmt(avg_integer.max(), 2))


def findings(table3: pd.DataFrame, table3_integer: pd.DataFrame, paper: pd.DataFrame, cost: pd.DataFrame,
             accuracy: pd.DataFrame, vs_random: pd.DataFrame, judged: Mapping[int, Sequence], folds, dataset: str,
             *, ml1m_finding: str | None) -> dict:
    """The values glued into the chapter's prose, by name: text, and the two findings written as Markdown."""
    by_run = cost.set_index("run")
    judged_run = by_run.loc[JUDGED_RUN]
    test_users = [f.n_test_users for f in folds]
    return {
        "question_data": f"{movielens_name(dataset)} and ML-1M" if ml1m_finding and dataset != "1m"
        else movielens_name(dataset),
        "dataset_name": movielens_name(dataset),
        "judged_users": sum(len(u) for u in judged.values()),
        "serendipity_finding": serendipity_finding(table3, table3_integer, paper, judged),
        "judged_per_fold": judged_sizes(judged),
        "n_judgments": int(judged_run["judgments"]),
        "judged_cost": f"{judging.paper_judge_cost(judged_run['input_tokens'], judged_run['output_tokens']):.4f}",
        "test_users": sum(test_users), "all_pairs": f"{int(by_run.loc[ALL_RUN, 'judgments']):,}",
        "all_cost": f"{by_run.loc[ALL_RUN, 'gpt4o_mini_usd']:.2f}",
        "accuracy_finding": Markdown(judging.accuracy_finding(accuracy, vs_random, test_users, dataset)),
    }


def serendipity_finding(table3: pd.DataFrame, table3_integer: pd.DataFrame, paper: pd.DataFrame,
                        judged: Mapping[int, Sequence]) -> Markdown:
    """The tiny judge's serendipity numbers against the paper's ML-1M rows, or, on fewer judged users than this
    book's minimum, that they are too few (one rule for every number of the book)."""
    users = sum(len(u) for u in judged.values())
    title = PROSE("finding.serendipity.title", judged_users=pages.count(users, "judged user"))
    caveat = PROSE("finding.serendipity.caveat")
    paper_low, paper_high = pages.fmt(paper["avg_score"].min(), 2), pages.fmt(paper["avg_score"].max(), 2)
    few = too_few_judged(judged)
    if few is not None:
        body = PROSE("finding.serendipity.too_few", too_few=few, paper_low=paper_low, paper_high=paper_high)
    else:
        avg = table3.set_index("recommender")["avg_score_mean"]
        body = PROSE("finding.serendipity", low=pages.fmt(avg.min(), 2), lowest=avg.idxmin(),
                     high=pages.fmt(avg.max(), 2), highest=avg.idxmax(), paper_low=paper_low, paper_high=paper_high,
                     n_any=int((table3["precision_ser_mean"] > 0).sum()), n_recommenders=len(table3),
                     integer_scores=avg_integer_words(table3_integer.set_index("recommender")["avg_score_mean"]),
                     n_any_integer=int((table3_integer["precision_ser_mean"] > 0).sum()),
                     judged_per_fold=judged_sizes(judged))
    return Markdown(f"{title} {body} {caveat}")
