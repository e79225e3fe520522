"""The page of the chapter "Prompt strategies for a serendipity judge" (and its synthetic run): its opening box,
tables, figure and glued findings, around the analysis of ``recjudge.serendipity.prompt_strategies``."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import count, error, format_table, number, text
from recjudge.metaeval import baselines
from recjudge.metaeval.papers_vs_baselines import tokutake_table1_vs_baselines
from recjudge.serendipity import prompt_strategies as ps

#: The label of the book's own judge in the panel, its tables and its figure.
LOCAL_JUDGE = "SmolLM2-135M"
#: The page's sentences (``notebooks/prose/prompt_strategies.md``).
PROSE = Prose("prompt_strategies")


def data_label(study: ps.PromptStrategyStudy) -> str:
    """What the answers are, for every table saved and every caption."""
    return "SYNTHETIC survey (not real users)" if study.synthetic else "Serendipity-2018 (mirror)"


def opening(study: ps.PromptStrategyStudy, panel: Sequence[tuple[str, object]],
            judges: Sequence[Mapping]) -> Markdown:
    """The box that opens the chapter: data, ground truth, history, judges and prompts, and the caveat (which says
    first that the data are synthetic when they are)."""
    answers, items = study.answers, study.items
    used_judges = PROSE("opening.judges", n_items=f"{len(items):,}")
    if judges:
        used_judges += "; " + PROSE("opening.judges.readers", judges=", ".join(n for n, _ in panel[1:]))
    facts = [
        ("Data", PROSE("opening.data", data=data_label(study), n_answers=f"{len(answers):,}",
                       n_users=f"{answers['user_id'].nunique():,}")),
        ("Ground truth g", PROSE("opening.ground_truth", definition=study.definition.label)),
        ("History", study.source.label),
        ("Judges", used_judges),
        ("Prompts", PROSE("opening.prompts")),
    ]
    caveat = PROSE("opening.caveat") + " " + pages.capable_judge_advice(judges)
    if study.synthetic:
        caveat = PROSE("opening.caveat.synthetic") + " " + caveat
    return pages.opening(facts, caveat)


def show_search_table(study: ps.PromptStrategyStudy, notebook: str):
    """The eight definitions of g closest to the paper's distribution, beside the paper's (on real data); the whole
    search is saved."""
    save_table(study.search.assign(data=data_label(study)), notebook, "ground_truth_search")
    shown = study.search.head(8)[["rank", "candidate", "n_1", "n_2", "n_3", "n_4", "n_5", "n_without_g", "distance"]]
    paper_row = pd.DataFrame([{"rank": None, "candidate": "paper (section 4.1)",
                               **{f"n_{k}": v for k, v in ps.PAPER_G_DISTRIBUTION.items()}, "n_without_g": 0,
                               "distance": 0}])
    return format_table(shown if study.synthetic else pd.concat([paper_row, shown], ignore_index=True),
                        {"rank": count(label="Rank"), **{f"n_{k}": count(label=f"g = {k}") for k in range(1, 6)},
                         "n_without_g": count(label="No g"), "distance": count(label="Distance")},
                        labels={"candidate": "Definition"},
                        caption=PROSE("search.caption"),
                        full_table=(notebook, "ground_truth_search"), audit=True)


def exact_words(n_exact: int) -> str:
    """How many candidates reproduce the paper's distribution exactly, as the start of a sentence."""
    if n_exact == 0:
        return "No candidate reproduces"
    return pages.count(n_exact, "candidate") + (" reproduces" if n_exact == 1 else " reproduce")


def ground_truth_note(study: ps.PromptStrategyStudy) -> Markdown:
    """What the search found: exact or not, the closest definition (g from here on) and the runner-up."""
    best, runner_up = study.search.iloc[0], study.search.iloc[1]
    return Markdown(PROSE(
        "search.note", how_many_reproduce=exact_words(int(study.search["exact"].sum())), closest=best["candidate"],
        distance=int(best["distance"]), share_changed=f"{int(best['distance']) / 2 / len(study.answers):.1%}",
        n_without_g=int(best["n_without_g"]), runner_up=runner_up["candidate"],
        runner_up_distance=int(runner_up["distance"])))


def print_cot_prompt(study: ps.PromptStrategyStudy) -> None:
    """Print the CoT prompt as sent for the first sampled answer, each turn wrapped to 88 characters."""
    items = study.items
    for message in ps.first_messages("cot", items["history"].iloc[0], items["item"].iloc[0],
                                     study.examples_block("cot")):
        print(f"[{message['role']}]")
        print("\n".join(textwrap.fill(line, 88, subsequent_indent="    ") if line else ""
                        for line in message["content"].split("\n")))


def show_examples(study: ps.PromptStrategyStudy, notebook: str):
    """The ten solved examples of the prompts (saved), an audit table."""
    examples = study.examples[["g", "relevance", "unexpectedness", "history", "item"]].copy()
    save_table(examples.assign(data=data_label(study)), notebook, "fewshot_examples")
    return format_table(examples.sort_values("g"), {"g": count(label="g"), "relevance": count(),
                                                    "unexpectedness": count()},
                        labels={"history": "History given", "item": "Recommended movie"},
                        caption=PROSE("examples.caption"),
                        full_table=(notebook, "fewshot_examples"), audit=True)


def show_judge_runs(runs: Mapping[tuple[str, str], ps.StrategyRun], study: ps.PromptStrategyStudy, notebook: str):
    """What the local judge's calls took when they were asked (displayed), and the runs of every judge and
    strategy: calls per item, unparsable replies, items left out (never asked), replies from the store and calls to
    the model (saved)."""
    items = study.items
    judge_runs = pd.DataFrame([{"judge": judge_name, "strategy": ps.STRATEGY_NAMES[strategy],
                                "calls_per_item": run.calls_per_item, "items": len(run.table),
                                "unparsable": run.n_unparsable, "left_out": run.n_left_out,
                                "from_store": sum(r.n_from_store for r in run.reports),
                                "provider_calls": sum(r.n_provider_calls for r in run.reports)}
                               for (judge_name, strategy), run in runs.items()])
    save_table(judge_runs.assign(data=data_label(study)), notebook, "judge_runs")
    local = [run for (name, _), run in runs.items() if name == LOCAL_JUDGE]
    display(Markdown(PROSE("runs.cost", n_items=len(items),
                           n_calls=sum(run.calls_per_item for run in local) * len(items),
                           minutes=f"{sum(run.model_seconds for run in local) / 60:.1f}")))
    formats = {"calls_per_item": count(label="Calls per item"), "items": count(), "unparsable": count(),
               "left_out": count(label="Left out (not asked)"), "from_store": count(label="From the store"),
               "provider_calls": count(label="Calls to the model")}
    if not judge_runs["left_out"].any():  # the saved table always has the column; the page only where it counts
        judge_runs, formats = judge_runs.drop(columns="left_out"), {k: v for k, v in formats.items() if k != "left_out"}
    return format_table(judge_runs, formats,
                        caption=PROSE("runs.caption", left_out="; " + PROSE("runs.caption.left_out")
                                      if "left_out" in judge_runs else ""),
                        full_table=(notebook, "judge_runs"), audit=True)


def with_g(run: ps.StrategyRun, items: pd.DataFrame) -> pd.DataFrame:
    """A run's replies and parsed scores beside the true level g of their answers."""
    return run.table.merge(items[["key", "g"]], on="key")


def show_ltm_chains(runs: Mapping[tuple[str, str], ps.StrategyRun], study: ps.PromptStrategyStudy,
                    notebook: str) -> None:
    """Save every reply; display the first three LtM chains as stored, when LtM ran."""
    replies = []
    for (judge_name, strategy), run in runs.items():
        table = with_g(run, study.items)
        table.insert(0, "strategy", ps.STRATEGY_NAMES[strategy])
        table.insert(0, "judge", judge_name)
        replies.append(table)
    replies = pd.concat(replies, ignore_index=True)
    save_table(replies.assign(data=data_label(study)), notebook, "replies")
    ltm = replies[replies["strategy"] == "LtM"].head(3)
    if len(ltm):
        display(Markdown(PROSE("ltm.intro")))
        display(format_table(ltm[["key", "g", "reply_1", "reply_2", "reply_3", "predicted"]],
                             {"g": count(), "predicted": number(1, label="Parsed score")},
                             labels={"reply_1": "Relevance reply", "reply_2": "Unexpectedness reply",
                                     "reply_3": "Serendipity reply"},
                             caption=PROSE("ltm.caption"),
                             full_table=(notebook, "replies"), audit=True))


def interval(value: float, low: float, high: float, n: int, decimals: int) -> str:
    """"0.95 [0.60, 1.30]", "0.60" without an interval (a baseline's), or "–" when no reply was scored."""
    if not n:
        return "–"
    if pd.isna(low) or pd.isna(high):
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]"


def sample_baselines(study: ps.PromptStrategyStudy) -> pd.DataFrame:
    """The constant answers and Random scored on the judged sample's g (three-class accuracy), each constant chosen
    for a user on every other user's answers of the survey (``recjudge.metaeval.baselines``), in the shape of the
    metrics table (``judge`` names the baseline; no interval: the constants are fixed, Random's row is its
    expectation)."""
    answers = study.answers.dropna(subset=["g"])
    sampled = set(study.items["key"].astype(str))
    keys = answers["user_id"].astype(str) + ":" + answers["item_id"].astype(str)
    table = baselines.baselines_out_of_fold(answers["g"], answers["user_id"], classes=baselines.three_class,
                                            scored=keys.isin(sampled), chosen_on="the other users' answers")
    constant = table["baseline"] != baselines.RANDOM
    return pd.DataFrame({"judge": table["baseline"], "strategy": "baseline",
                         "template": np.where(constant, "answers " + table["answer"] + ", chosen on "
                                              + table["chosen_on"], table["answer"]),
                         "n": table["n"], "n_unparsable": 0, "mae": table["mae"], "mae_ci_low": np.nan,
                         "mae_ci_high": np.nan, "accuracy_pct": table["accuracy_pct"],
                         "accuracy_pct_ci_low": np.nan, "accuracy_pct_ci_high": np.nan})


def show_metrics_table(metrics: pd.DataFrame, study: ps.PromptStrategyStudy, notebook: str):
    """MAE and accuracy of every judge and strategy with their 95% intervals (saved with the data and g), and below
    them a constant answer and Random on the same answers (saved as ``baselines``)."""
    save_table(metrics.assign(data=data_label(study), ground_truth=study.definition.label), notebook, "metrics")
    floor = save_table(sample_baselines(study), notebook, "baselines")
    metrics = pd.concat([metrics, floor], ignore_index=True)
    shown = metrics.assign(
        mae_ci=[interval(*row, 2) for row in metrics[["mae", "mae_ci_low", "mae_ci_high", "n"]]
                .itertuples(index=False)],
        acc_ci=[interval(*row, 1) for row in metrics[["accuracy_pct", "accuracy_pct_ci_low", "accuracy_pct_ci_high",
                                                      "n"]].itertuples(index=False)])
    return format_table(shown[["judge", "template", "n", "n_unparsable", "mae_ci", "acc_ci"]],
                        {"n": count(label="n scored"), "n_unparsable": count(label="Unparsable"),
                         "mae_ci": text(label="MAE\n[95% CI]"), "acc_ci": text(label="Accuracy (%)\n[95% CI]")},
                        labels={"template": "Template"},
                        caption=PROSE("metrics.caption", n_items=len(study.items)),
                        # on the mirror Table 1 beside ours (show_table1) is the key table: this one folds under it
                        full_table=(notebook, "metrics"), audit=not study.synthetic)


def table1_with_baseline_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Tokutake et al.'s LLM rows (``tokutake_table1_vs_baselines``) with the constant answers and Random below them
    as rows of their own: the baselines are scored once on the paper's g, so one row each, in the same two columns
    the judges' MAE and accuracy are read in."""
    first = table.iloc[0]
    baseline_rows = pd.DataFrame({
        "model": [f"Constant {first['constant_mode_answer']}", "Constant, the mean", "Random"],
        "strategy": "baseline",
        "mae": [first["constant_mode_mae"], first["constant_mean_mae"], first["random_mae"]],
        "accuracy_pct": [first["constant_mode_accuracy_pct"], first["constant_mean_accuracy_pct"],
                         first["random_accuracy_pct"]]})
    return pd.concat([table[["model", "strategy", "mae", "accuracy_pct"]], baseline_rows], ignore_index=True)


def show_table1_against_baselines(notebook: str):
    """Every LLM row of Tokutake et al.'s Table 1 with a constant answer and Random below, all on the paper's own
    printed g (saved, one row per LLM row with the baselines beside, as ``table1_vs_baselines``)."""
    table = save_table(tokutake_table1_vs_baselines(), notebook, "table1_vs_baselines")
    return format_table(
        table1_with_baseline_rows(table),
        {"mae": error(3, label="MAE"), "accuracy_pct": number(1, label="Accuracy (%)")},
        labels={"model": "Judge", "strategy": "Prompt"},
        caption=PROSE("table1_baselines.caption"),
        full_table=(notebook, "table1_vs_baselines"))


def show_table1_beside_paper(metrics: pd.DataFrame, panel: Sequence[tuple[str, object]], notebook: str):
    """Table 1 of Tokutake et al. beside ours: MAE and accuracy of the paper's two models, the local judge's and each
    reader's judge's (saved, with the paper's table)."""
    paper = ps.paper_table1()
    save_table(paper, notebook, "paper_table1")
    ours = metrics[metrics["judge"] == LOCAL_JUDGE].set_index("strategy")
    by_strategy = paper.set_index("strategy")
    beside = by_strategy[["template", "mae_gpt", "mae_llama"]].assign(
        mae_ours=ours["mae"], accuracy_gpt=by_strategy["accuracy_gpt"], accuracy_llama=by_strategy["accuracy_llama"],
        accuracy_ours=ours["accuracy_pct"], n_ours=ours["n"]).reset_index(drop=True)
    formats = {"mae_gpt": error(2, label="MAE GPT (paper)"), "mae_llama": error(2, label="MAE Llama (paper)"),
               "mae_ours": error(2, label=PROSE("table1_paper.mae_ours")),
               "accuracy_gpt": number(1, label="Acc. % GPT (paper)"),
               "accuracy_llama": number(1, label="Acc. % Llama (paper)"),
               "accuracy_ours": number(1, label=PROSE("table1_paper.accuracy_ours")),
               "n_ours": count(label="n (ours)")}
    for judge_name, _ in panel[1:]:
        other = metrics[metrics["judge"] == judge_name].set_index("strategy")
        beside[f"mae_{judge_name}"] = paper["strategy"].map(other["mae"]).to_numpy()
        beside[f"accuracy_{judge_name}"] = paper["strategy"].map(other["accuracy_pct"]).to_numpy()
        formats[f"mae_{judge_name}"] = error(2, label=f"MAE {judge_name} (ours)")
        formats[f"accuracy_{judge_name}"] = number(1, label=f"Acc. % {judge_name} (ours)")
    save_table(beside, notebook, "table1_vs_paper")
    return format_table(beside, formats, labels={"template": "Template"},
                        caption=PROSE("table1_paper.caption"),
                        full_table=(notebook, "table1_vs_paper"))


def show_constrained(shaped_runs: Mapping[str, ps.StrategyRun], metrics: pd.DataFrame,
                     study: ps.PromptStrategyStudy, notebook: str, *, n_boot: int, seed: int) -> pd.DataFrame | None:
    """The local judge with free and with constrained replies, strategy by strategy (displayed and saved, returned);
    None when no strategy was asked constrained."""
    if not shaped_runs:
        return None
    rows = []
    for strategy, shaped in shaped_runs.items():
        merged = with_g(shaped, study.items)
        rows.append({"judge": LOCAL_JUDGE, "strategy": strategy, "template": ps.STRATEGY_NAMES[strategy],
                     "replies": len(merged), "shape_violations": sum(r.n_shape_violations for r in shaped.reports),
                     **ps.strategy_metrics(merged["predicted"], merged["g"], n_boot=n_boot, seed=seed)})
    shaped_metrics = pd.DataFrame(rows)
    free = metrics[metrics["judge"] == LOCAL_JUDGE].set_index("strategy")
    beside = shaped_metrics[["strategy", "template", "replies", "shape_violations"]].assign(
        parsed_free=shaped_metrics["strategy"].map(free["n"]).to_numpy(), parsed_constrained=shaped_metrics["n"],
        mae_free=shaped_metrics["strategy"].map(free["mae"]).to_numpy(), mae_constrained=shaped_metrics["mae"],
        accuracy_free=shaped_metrics["strategy"].map(free["accuracy_pct"]).to_numpy(),
        accuracy_constrained=shaped_metrics["accuracy_pct"])
    save_table(beside.assign(data=data_label(study), ground_truth=study.definition.label), notebook,
               "constrained_vs_free")
    display(format_table(beside.drop(columns="strategy"),
                         {"replies": count(label="Answers"), "shape_violations": count(label="Out of shape"),
                          "parsed_free": count(label="Parsed, free"),
                          "parsed_constrained": count(label="Parsed, constrained"),
                          "mae_free": error(2, label="MAE free"), "mae_constrained": error(2, label="MAE constrained"),
                          "accuracy_free": number(1, label="Acc. % free"),
                          "accuracy_constrained": number(1, label="Acc. % constrained")},
                         labels={"template": "Template"},
                         caption=PROSE("constrained.caption"), full_table=(notebook, "constrained_vs_free"),
                         audit=True))
    return beside


def show_confusion_table(runs: Mapping[tuple[str, str], ps.StrategyRun], study: ps.PromptStrategyStudy,
                         notebook: str):
    """Every judge's confusion matrices (saved, long form); the local judge's shown per template, rows g."""
    confusions = []
    for (judge_name, strategy), run in runs.items():
        merged = with_g(run, study.items)
        long_form = ps.confusion(merged["predicted"], merged["g"]).stack().rename("answers").reset_index()
        confusions.append(long_form.assign(judge=judge_name, template=ps.STRATEGY_NAMES[strategy]))
    confusions = pd.concat(confusions, ignore_index=True)
    save_table(confusions.assign(data=data_label(study)), notebook, "confusion_matrices")
    local = confusions[confusions["judge"] == LOCAL_JUDGE]
    wide = local.pivot_table(index=["template", "true"], columns="predicted", values="answers",
                             sort=False).reset_index()
    wide.columns = [str(c) if c in ("template", "true") else f"pred {c}" for c in wide.columns]
    return format_table(wide, {c: count() for c in wide.columns if c.startswith("pred")},
                        labels={"template": "Template", "true": "g"},
                        caption=PROSE("confusion.caption"),
                        full_table=(notebook, "confusion_matrices"), audit=True)


def draw_strategy_scores(runs: Mapping[tuple[str, str], ps.StrategyRun], study: ps.PromptStrategyStudy,
                         strategies: Sequence[str], *, seed: int) -> None:
    """Glue the figure ``fig-strategy-scores``: the local judge's predicted score against g, one panel per strategy
    (dots jittered with ``seed``, the mean per level, the diagonal); an empty panel says why."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(6.4, 5.6), sharex=True, sharey=True)
    axes = np.atleast_1d(axes).ravel()
    for ax in axes[len(strategies):]:
        ax.set_visible(False)
    jitter = np.random.default_rng(seed)
    for ax, strategy in zip(axes, strategies):
        run = runs[(LOCAL_JUDGE, strategy)]
        merged = with_g(run, study.items).dropna(subset=["predicted", "g"])
        ax.plot([1, 5], [1, 5], ":", color="0.5", linewidth=1)
        if len(merged):
            ax.scatter(merged["g"] + jitter.uniform(-0.15, 0.15, len(merged)),
                       merged["predicted"] + jitter.uniform(-0.15, 0.15, len(merged)), s=14, alpha=0.7)
            means = merged.groupby("g")["predicted"].mean()
            ax.plot(means.index, means.to_numpy(), "-o", color="black", markersize=4, linewidth=1.2)
        else:
            # the passage's paragraphs are the lines of the panel's text
            ax.text(3, 3, "\n".join(PROSE("figure.empty", replies=pages.count(len(run.table), "reply", "replies"))
                                    .split("\n\n")),
                    ha="center", va="center", fontsize=figures.BASE_FONT_PT)
        ax.set_title(ps.STRATEGY_NAMES[strategy])
        ax.set_xlabel("true level g" if ax in axes[2:] else "")
        ax.set_xticks(range(1, 6))
        ax.set_yticks(range(1, 6))
    axes[0].set_ylabel("predicted score")
    axes[2].set_ylabel("predicted score")
    fig.tight_layout()
    figures.glue_figure("fig-strategy-scores", fig,
                        PROSE("figure.alt", n_items=len(study.items), data=data_label(study)))


def ground_truth_finding(study: ps.PromptStrategyStudy) -> str:
    """The verdict's sentence on g: exact or not, and the closest definition's counts beside the paper's."""
    best = study.search.iloc[0]
    if study.synthetic:
        return PROSE("finding.ground_truth.synthetic", closest=best["candidate"])
    n_exact = int(study.search["exact"].sum())
    ours_counts = ", ".join(f"{k}: {int(best['n_' + str(k)]):,}" for k in range(1, 6))
    paper_counts = ", ".join(f"{k}: {v:,}" for k, v in ps.PAPER_G_DISTRIBUTION.items())
    return PROSE("finding.ground_truth", n_exact="No" if n_exact == 0 else n_exact,
                 n_candidates=f"{len(study.search):,}", closest=best["candidate"], distance=int(best["distance"]),
                 ours_counts=ours_counts, paper_counts=paper_counts)


def strategies_finding(metrics: pd.DataFrame) -> str:
    """The verdict's sentence on the local judge: each strategy's MAE, accuracy and unparsable replies, the lowest
    MAE, and whether the intervals overlap (then the sample does not rank the strategies)."""
    local_metrics = metrics[metrics["judge"] == LOCAL_JUDGE].set_index("strategy")
    scored = local_metrics[local_metrics["n"] > 0]
    finding = "; ".join(
        PROSE("finding.strategies.strategy", strategy=ps.STRATEGY_NAMES[s], mae=pages.fmt(r["mae"], 2),
              low=pages.fmt(r["mae_ci_low"], 2), high=pages.fmt(r["mae_ci_high"], 2),
              accuracy=pages.fmt(r["accuracy_pct"], 1), unparsable=int(r["n_unparsable"])) if r["n"] > 0
        else PROSE("finding.strategies.strategy.unparsed", strategy=ps.STRATEGY_NAMES[s],
                   unparsable=int(r["n_unparsable"]))
        for s, r in local_metrics.iterrows())
    if len(scored):
        lowest = scored["mae"].idxmin()
        intervals = "overlap" if scored["mae_ci_low"].max() <= scored["mae_ci_high"].min() else "apart"
        finding += ". " + PROSE(f"finding.strategies.lowest.{intervals}", strategy=ps.STRATEGY_NAMES[lowest],
                                n_parsed=int(scored.loc[lowest, "n"]))
    return finding


def constrained_finding(beside_shaped: pd.DataFrame | None) -> str:
    """The verdict's sentence on constrained replies: parsed replies free and constrained, out of shape, MAE."""
    if beside_shaped is None:
        return PROSE("finding.constrained.not_run")
    shaped_by = beside_shaped.set_index("template")
    return PROSE("finding.constrained",
                 parsed="; ".join(PROSE("finding.constrained.parsed", template=t,
                                        parsed=int(r["parsed_constrained"]), replies=int(r["replies"]),
                                        free=int(r["parsed_free"])) for t, r in shaped_by.iterrows()),
                 out_of_shape=pages.count(int(shaped_by["shape_violations"].sum()), "reply", "replies"),
                 maes="; ".join(f"{t} {pages.fmt(r['mae_constrained'], 2)}" for t, r in shaped_by.iterrows()))


def findings(study: ps.PromptStrategyStudy, metrics: pd.DataFrame, beside_shaped: pd.DataFrame | None) -> dict:
    """The values glued into the chapter's prose, by name: text, and the findings written as Markdown."""
    paper = ps.paper_table1().set_index("strategy")
    return {
        "ground_truth_finding": Markdown(ground_truth_finding(study)),
        "n_judged": f"{len(study.items)}",
        "strategies_finding": Markdown(strategies_finding(metrics)),
        "paper_cot_gpt": f"{paper.loc['cot', 'mae_gpt']:.3f}",
        "paper_cot_llama": f"{paper.loc['cot', 'mae_llama']:.3f}",
        "constrained_finding": Markdown(constrained_finding(beside_shaped)),
    }
