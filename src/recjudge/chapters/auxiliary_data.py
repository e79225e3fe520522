"""The page of the chapter on auxiliary data in the judge's prompt (Kang et al. 2025, RQ2) and of its synthetic run:
its opening box, tables, figures and glued findings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.claim_intervals import with_interval
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import (
    Table,
    correlation,
    count,
    error,
    format_table,
    number,
    p_value,
    paper_beside_ours,
    text,
)
from recjudge.llm.judge_spec import reader_labels
from recjudge.metaeval.baselines import CONSTANT_PEARSON_NOTE
from recjudge.serendipity import auxiliary_data as aux
from recjudge.serendipity import ground_truth as ser
from recjudge.serendipity import personality as pers

AGREEMENT_FORMATS = {"n": count(), "pearson": text(label="Pearson (%) [95% CI]"), "mae": error(2), "rmse": error(2),
                     "p_pearson": p_value(label="p, Pearson vs NA"), "p_mae": p_value(label="p, MAE vs NA")}
#: Below this share of explained variance (OLS R²) for both curiosity and the Big-Five, both are called weak signals.
WEAK_SIGNAL_R2 = 0.10


def set_up() -> None:
    figures.use_book_style()


def history_counts(study, rows: pd.DataFrame) -> pd.Index:
    """How many earlier history items each judged answer has (0 when none)."""
    n_hist = study.history.groupby(["user_id", "item_id"]).size()
    return rows.set_index(["user_id", "item_id"]).index.map(n_hist).fillna(0).astype(int)


def opening(study, rows: pd.DataFrame, chosen: Sequence[aux.Setting], movielens, judges: Sequence[dict],
            aux_pool_size: int, seed: int) -> Markdown:
    """The box that opens the chapter: the data, the judged answers, the judges, the history and the population of
    the popularity and similarity data; a synthetic run says so first."""
    rows_hist = history_counts(study, rows)
    facts = [
        ("Data", f"{study.data_label}: {len(study.answers):,} answers of {study.answers['user_id'].nunique():,} users"
                 + ("" if study.synthetic else "; Taobao Serendipity survey for the curiosity and personality "
                                              "analysis")),
        ("Judged answers", f"{len(rows)} answers, stratified by ground-truth level (seed {seed}) from a stratified "
                           f"pool of {aux_pool_size} of the RQ1 sample of {len(study.sample)}; the same answers under "
                           f"all {len(chosen)} settings; {int((rows_hist > 0).sum())} of them have an earlier history. "
                           "The sample is this small because the local model is slow (the time it took is in the "
                           "reproducibility page)"),
        ("Judge", "SmolLM2-135M-Instruct (local, 4-bit), Kang et al.'s 5-shot prompt, expected-score mode, "
                  "temperature 0, replayed from the response store"
                  + ("" if not judges else "; the reader's judges in the same role, on the same prompts (long-term "
                     "profiles written by the local model): " + ", ".join(reader_labels(judges)))),
        ("History", study.source.label),
        ("Popularity and similarity population", f"MovieLens latest-small ratings ({movielens.status}): "
                                                 f"{movielens.ratings['user_id'].nunique():,} users"),
    ]
    caveat = ("SmolLM2-135M is a real but tiny model and judges near noise level, and "
              f"{len(rows)} answers give wide intervals: the rows below show the pipeline and its controls, not what "
              "auxiliary data does for a capable judge.")
    if study.synthetic:
        caveat = "**Synthetic data.** The answers are generated, not given by users. " + caveat
    return pages.opening(facts, caveat)


def show_sources(notebook: str, study) -> Table:
    """Each auxiliary datum, its wording and its source in this run."""
    sources = pd.DataFrame([
        {"setting": aux.NA, "datum": "none (RQ1 5-shot prompt)", "source": study.source.label},
        {"setting": "Pop", "datum": "% of users who rated the movie",
         "source": "MovieLens latest-small ratings (training.csv, the study's own population, is absent)"},
        {"setting": "Sim", "datum": "smallest Jaccard distance between the rater sets of the movie and a history "
                                    "movie", "source": "user-item matrix of MovieLens latest-small ratings"},
        {"setting": "Rating", "datum": "the user's rating of each history movie",
         "source": "Serendipity-2018 answers"},
        {"setting": "S-prof.", "datum": f"movies rated in the {aux.SHORT_TERM_DAYS} days before: count, mean "
                                        "rating, top genres", "source": "Serendipity-2018 answers (timestamps)"},
        {"setting": "L-prof.", "datum": "an LLM-written summary of the whole earlier history with ratings",
         "source": "SmolLM2-135M through the judge engine (stored)"},
        {"setting": "k=N", "datum": "the last N interactions as history, no line", "source": study.source.label},
    ])
    save_table(sources, notebook, "auxiliary_sources")
    return format_table(sources, caption="Auxiliary data, its wording and its source in this run",
                        full_table=(notebook, "auxiliary_sources"), audit=True)


def print_example(notebook: str, run: aux.RQ2Run, study, rows: pd.DataFrame) -> None:
    """The judged block of the answer with the longest history under "Pop + Sim", and the longest long-term profile
    (the run's reports saved)."""
    save_table(run.reports, notebook, "judge_runs")
    longest = rows.iloc[[int(np.argmax(history_counts(study, rows)))]]
    example = aux.setting_requests(aux.settings_by_name(["Pop + Sim"])[0], longest, study.examples, run.aux,
                                   study.history, study.movies)[0]
    print("The judged block of one answer under 'Pop + Sim' (last user turn):\n")
    print(example.messages[-1]["content"])
    if "long_profile" in run.aux.columns:
        profiled = run.aux.loc[rows.index, "long_profile"]
        print("\nOne long-term profile written by SmolLM2-135M:\n" + profiled[profiled.str.len().idxmax()])


def agreement_shown(notebook: str, table: pd.DataFrame, caption: str, audit: bool = False) -> Table:
    """Agreement rows as the chapter shows them (no test columns when nothing could be tested)."""
    view = ser.agreement_for_display(table)
    return format_table(view, {column: f for column, f in AGREEMENT_FORMATS.items() if column in view},
                        caption=caption, full_table=(notebook, "agreement_by_setting"), audit=audit)


def show_agreement(notebook: str, table: pd.DataFrame, readers_table: pd.DataFrame, study, n_rows: int) -> Table:
    """Every setting's agreement with users: the reader's judges' tables first (collapsed), then the book's judge
    (all saved in one CSV)."""
    by_setting = table.assign(data=study.data_label, judge="SmolLM2-135M 5-shot")
    if len(readers_table):
        by_setting = pd.concat([by_setting, readers_table.assign(data=study.data_label)], ignore_index=True)
    save_table(by_setting, notebook, "agreement_by_setting")
    for label, part in readers_table.groupby("judge", sort=False):
        display(agreement_shown(notebook, part.drop(columns="judge"),
                                f"Every setting on the same {n_rows} answers ({label}, the reader's judge)",
                                audit=True))
    return agreement_shown(notebook, table, f"Every setting on the same {n_rows} answers (SmolLM2-135M)")


def show_baselines(notebook: str, scores: pd.DataFrame, n_boot: int, seed: int) -> Table:
    """Random and a constant answer (the most frequent level and the mean, each chosen for a user on the other users'
    answers) on the same answers as the settings (``ser.trivial_baselines``; saved as ``baselines``, a table of its
    own so that the settings' rows are read by name as before)."""
    table = save_table(ser.trivial_baselines(scores, n_boot=n_boot, seed=seed), notebook, "baselines")
    view = ser.agreement_for_display(table)
    return format_table(view, {column: f for column, f in AGREEMENT_FORMATS.items() if column in view},
                        caption=f"Beside the settings: Random (expected over seeds) and a constant answer on the same "
                                f"{int(table['n'].max())} answers; each constant is chosen for a user on the other "
                                f"users' answers; Pearson is {CONSTANT_PEARSON_NOTE} (–)",
                        full_table=(notebook, "baselines"), audit=True)


def draw_settings(table: pd.DataFrame, readers_table: pd.DataFrame, settings: Sequence[str], study,
                  n_rows: int) -> None:
    """The auxiliary-data settings' agreement (Figures 2-3's shape), glued; a reader's judges' figures shown."""
    item_settings = [n for n in settings if not n.startswith("k=")]
    fig = aux.plot_agreement_by_setting(table, item_settings)
    figures.glue_figure("fig-aux-settings", fig,
                        "A setting helps the judge where its Pearson is higher and its MAE and RMSE lower than "
                        "without auxiliary data, with intervals apart; overlapping intervals tell no difference. "
                        f"Pearson (%), MAE and RMSE with 95% bootstrap intervals per auxiliary-data setting, "
                        f"{n_rows} answers, SmolLM2-135M ({study.data_label}); the shape of Kang et al.'s Figures "
                        "2-3.")
    for label, part in readers_table.groupby("judge", sort=False):  # the reader's judges: shown here, one each
        display(figures.svg_image(aux.plot_agreement_by_setting(part, item_settings,
                                                                title=f"{label} (the reader's judge)")))


def draw_history_length(notebook: str, table: pd.DataFrame, settings: Sequence[str]) -> None:
    """The history-length sweep (Figure 4's shape) beside NA, glued (its rows saved); a note when none was set."""
    lengths = [n for n in settings if n.startswith("k=")]
    if not lengths:
        figures.glue_not_drawn("fig-history-length", "No history length was set (parameter `history_lengths`)")
        return
    sweep = table.set_index("method").loc[lengths + ([aux.NA] if aux.NA in settings else [])].reset_index()
    sweep["k"] = [int(m[2:]) if m.startswith("k=") else 10 for m in sweep["method"]]
    save_table(sweep[["method", "k", "n", "pearson_pct", "pearson_ci_low", "pearson_ci_high", "mae", "rmse"]],
               notebook, "length_sweep")
    fig = aux.plot_agreement_by_setting(table, list(sweep["method"]))
    figures.glue_figure("fig-history-length", fig,
                        "Follow each measure as k grows: a trend beyond the intervals says whether a longer history "
                        "helps the judge. History length sweep (Kang et al.'s Figure 4 shape): the last k earlier "
                        "answers as "
                        "history; NA is k = 10, which here means every earlier answer (at most 4).")


def paper_serendipity_rows() -> pd.DataFrame:
    """Kang et al.'s Tables 4-5 rows for Serendipity-2018, one per method."""
    return aux.kang2025_tables45().query("dataset == 'Serendipity-2018'").drop_duplicates("method")


def best_setting_kind(best_setting: str) -> str:
    """What the best setting is: a history length ``k=N`` is a quantity of interaction data, not a datum."""
    return ("a history length (Kang et al.'s quantity of interaction data)" if best_setting.startswith("k=")
            else "an auxiliary datum")


def show_tables45(notebook: str, ours: pd.DataFrame, held_out: pd.DataFrame, n_settings: int,
                  n_splits: int) -> Table:
    """Tables 4-5 (Serendipity-2018) beside ours, both readings of the judge (saved with the held-out splits)."""
    save_table(held_out, notebook, "held_out_selection")
    best_aux = ours.set_index("method").loc["Auxiliary Data"]
    paper_rows = paper_serendipity_rows()[["method", "pearson_pct", "mae", "rmse"]]
    paper_rows = pd.concat([paper_rows, paper_rows.assign(method=paper_rows["method"] + ser.INTEGER)],
                           ignore_index=True)
    save_table(ours.merge(paper_rows.rename(columns=lambda c: c if c == "method" else f"paper_{c}"), on="method",
                          how="left"), notebook, "tables45_vs_paper")
    metrics = ["pearson_pct", "mae", "rmse"]
    shown = pages.unless_too_few_rows(ours.drop(columns=["best_setting"]), metrics, n_max_column="n_max",
                                      per=" per held-out half")
    return paper_beside_ours(
        shown, paper_rows[paper_rows["method"].isin(ours["method"])], keys="method",
        metrics={"pearson_pct": correlation(1, scale="percent", label="Pearson (%)"),
                 "mae": error(2, label="MAE"), "rmse": error(2, label="RMSE")},
        labels={"method": "Method"},
        caption=f"Tables 4-5 (Serendipity-2018) beside ours; our 'Auxiliary Data' is the best of "
                f"{n_settings - 1} settings on these {int(best_aux['n'])} answers ({best_aux['best_setting']}: "
                f"{best_setting_kind(best_aux['best_setting'])}), chosen on the data it is reported on; the held-out "
                f"rows choose it on half of the users and report it on the other half (means over {n_splits} "
                f"halvings; too few where a half holds fewer than {pages.MIN_ANSWERS} answers, this book's minimum); "
                f"rows marked '{ser.INTEGER.strip(', ')}' read the judge as the paper's judges answer "
                "(the most likely score token), the others as its expected score",
        full_table=(notebook, "tables45_vs_paper"))


def show_taobao(notebook: str, survey: pd.DataFrame, coefs: pd.DataFrame, fit: pd.DataFrame) -> None:
    """The scales' consistency, the coefficients with both instruments, and the explained variance (collapsed;
    all saved, with the increments of explained variance)."""
    rel = save_table(pers.reliability(survey), notebook, "taobao_reliability")
    display(format_table(rel, {"value": number(2), "n": count()}, caption="Internal consistency of the scales "
                         "(Taobao survey, all users)", full_table=(notebook, "taobao_reliability"), audit=True))
    save_table(coefs, notebook, "taobao_coefficients")
    save_table(fit, notebook, "taobao_fit")
    shown = coefs[coefs["model"] == "curiosity + big_five"].assign(
        effect_ci=lambda f: [f"{e:.3f} [{lo:.3f}, {hi:.3f}]" for e, lo, hi in
                             zip(f["effect"], f["effect_ci_low"], f["effect_ci_high"])])
    display(format_table(shown[["kind", "term", "effect_ci", "p_value"]],
                         {"effect_ci": text(label="Effect per sd [95% CI]"), "p_value": p_value(label="p")},
                         caption="Curiosity and Big-Five together: odds ratio per sd (ordinal logit) and answer "
                                 "points per sd (OLS)", full_table=(notebook, "taobao_coefficients"), audit=True))
    display(format_table(fit[["model", "kind", "n", "explained", "adj_r2", "test_p"]],
                         {"n": count(), "explained": number(3, label="R² (OLS) / McFadden R² (ordinal)"),
                          "adj_r2": number(3, label="Adjusted R²"), "test_p": p_value(label="p, model test")},
                         caption="Explained variance of the serendipity answer", full_table=(notebook, "taobao_fit"),
                         audit=True))
    save_table(pers.incremental_variance(fit), notebook, "taobao_increments")


def show_not_supported(notebook: str) -> Table:
    unsupported = save_table(pd.DataFrame(aux.NOT_SUPPORTED, columns=["analysis", "reason"]), notebook,
                             "not_supported")
    return format_table(unsupported, caption="Parts of Kang et al.'s RQ2 and RQ3 the public data cannot support",
                        full_table=(notebook, "not_supported"), audit=True)


def setting_findings(table: pd.DataFrame) -> list[str]:
    """NA's agreement and the highest setting's, how many settings differ from NA (Williams, p < 0.05) and how many
    have a lower MAE, beside the paper's gain; none when NA was not judged (or answered nothing: a run that asks
    only a reader's judge), one sentence when it rests on too few answers to read."""
    by = table.set_index("method")
    if aux.NA not in by.index or not by.loc[aux.NA, "n"] > 0:
        return []
    na = by.loc[aux.NA]
    if pages.too_few(na["n"]):
        return [f"SmolLM2-135M's agreement in each setting rests on {pages.too_few_text(na['n'])}."]
    others = by[by.index != aux.NA]
    top = others.sort_values("pearson_pct", ascending=False).iloc[0]
    sig = others[others["p_pearson_vs_ref"] < 0.05]
    scored = others.dropna(subset=["mae"])
    lower_mae = scored[scored["mae"] < na["mae"]]
    printed = paper_serendipity_rows().set_index("method")
    paper_gain = printed.loc["Auxiliary Data", "pearson_pct"] - printed.loc[aux.NA, "pearson_pct"]
    best_mae = (f"; the best is {scored['mae'].idxmin()} with {pages.fmt(scored['mae'].min(), 2)}" if len(scored)
                else "")
    return [
        f"With SmolLM2-135M on {int(na['n'])} answers, NA reaches {_pearson_with_interval(na)}; the highest setting "
        f"is {top.name} with {_pearson_with_interval(top)}. {len(sig)} of {len(others)} settings differ from NA in "
        "Pearson at p < 0.05 (Williams), before any correction for the number of settings"
        + (f" ({', '.join(sig.index)})." if len(sig) else "."),
        f"{len(lower_mae)} of {len(scored)} settings have a lower MAE than NA ({pages.fmt(na['mae'], 2)}){best_mae}. "
        f"A tiny judge on {int(na['n'])} answers cannot confirm or refute the paper's gains "
        f"(+{pages.fmt(paper_gain, 1)} points of Pearson for its best setting).",
    ]


def _pearson_with_interval(row: pd.Series) -> str:
    """"76.2% [−100.0, 99.7]": a setting's Pearson with its 95% interval (left out when undefined)."""
    return with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")


def reader_finding(label: str, table: pd.DataFrame) -> str:
    """One sentence on a reader's judge across the settings (``table``: its ``readers_agreement`` rows): NA's
    Pearson with its interval and n, the highest other setting's, and how many settings differ from NA in Pearson at
    p < 0.05. A judge with no defined Pearson (a plan, where nothing is asked) is said to have none; one whose
    settings rest on too few answers (``pages.MIN_ANSWERS``) is said to."""
    by = table.set_index("method")
    defined = by.dropna(subset=["pearson_pct"])
    if defined.empty:
        return f"The reader's judge {label} has no defined Pearson in any setting in this run."
    fewest = defined["n"].min()
    if pages.too_few(fewest):
        return f"The reader's judge {label} has {pages.too_few_text(fewest)} in a setting to read its agreement."
    others = defined[defined.index != aux.NA]
    sentence = f"With the reader's judge {label}, "
    if aux.NA in defined.index:
        na = defined.loc[aux.NA]
        sentence += f"NA reaches {_pearson_with_interval(na)} on {int(na['n'])} answers"
        sentence += "; " if len(others) else "."
    if len(others):
        top = others.sort_values("pearson_pct", ascending=False).iloc[0]
        significant = int((others["p_pearson_vs_ref"] < 0.05).sum())
        sentence += (f"the highest setting is {top.name} with {_pearson_with_interval(top)}, and {significant} of "
                     f"{len(others)} settings differ from NA in Pearson at p < 0.05 (Williams, uncorrected).")
    return sentence[0].upper() + sentence[1:]


def integer_finding(table: pd.DataFrame, ours: pd.DataFrame, integer_scores: pd.DataFrame) -> str:
    """NA read as its most likely score token (the paper's judges' answers) beside its expected score, in MAE; empty
    when it rests on too few answers to read (or none)."""
    na_int = ours.set_index("method").loc[f"{aux.NA}{ser.INTEGER}"]
    if not na_int["n"] >= pages.MIN_ANSWERS:
        return ""
    levels = integer_scores[aux.NA].dropna().unique()
    printed = paper_serendipity_rows().set_index("method")
    return ("Read as the paper's judge answers, as its most likely score token, NA "
            + (f"gives every one of the {int(na_int['n'])} answers the score {levels[0]:g}, so it has no correlation,"
               if len(levels) == 1 else f"reaches {pages.fmt(na_int['pearson_pct'], 1)}%")
            + f" and its MAE is {pages.fmt(na_int['mae'], 2)}, against "
            f"{pages.fmt(table.set_index('method').loc[aux.NA, 'mae'], 2)} for the expected score: an expected score "
            "near the middle of the scale has small errors whatever it knows, so only the integer rows compare with "
            f"the paper's MAE ({pages.fmt(printed.loc[aux.NA, 'mae'], 2)} for NA).")


def taobao_finding(coefs: pd.DataFrame, fit: pd.DataFrame) -> str:
    """How much of the Taobao serendipity answer curiosity and the Big-Five explain, and which traits matter."""
    ols = fit[fit["kind"] == "OLS"].set_index("model")["explained"]
    ordl = fit[fit["kind"] == "ordinal logit"].set_index("model")["explained"]
    c = coefs.query("model == 'curiosity + big_five' and kind == 'ordinal logit'").set_index("term")
    return (
        f"Taobao: curiosity explains {pages.fmt(100 * ols['curiosity'], 1)}% of the variance of the serendipity "
        f"answer (OLS R²; McFadden {pages.fmt(100 * ordl['curiosity'], 1)}%), the Big-Five "
        f"{pages.fmt(100 * ols['big_five'], 1)}% ({pages.fmt(100 * ordl['big_five'], 1)}%), both together "
        f"{pages.fmt(100 * ols['curiosity + big_five'], 1)}%. With both in the model, one sd more Stretching "
        f"multiplies the odds of a higher answer by {c.loc['stretching', 'effect']:.2f} "
        f"[{c.loc['stretching', 'effect_ci_low']:.2f}, {c.loc['stretching', 'effect_ci_high']:.2f}] and Embracing "
        f"by {c.loc['embracing', 'effect']:.2f}. In these answers curiosity explains "
        + ("more" if ols["curiosity"] > ols["big_five"] else "no more")
        + " than the Big-Five (a question about the users, not Kang et al.'s about trait text in a judge's prompt), "
        "and the Big-Five are not empty: "
        + ", ".join(f"{t.replace('_', ' ')} {c.loc[t, 'effect']:.2f}" for t in pers.BIG_FIVE
                    if c.loc[t, 'p_value'] < 0.05)
        + " (odds ratios per sd, p < 0.05). "
        + (f"Both explain little (R² below {pages.fmt(100 * WEAK_SIGNAL_R2, 0)}% each): curiosity is a weak signal a "
           "judge could use, not a strong one."
           if max(ols["curiosity"], ols["big_five"]) < WEAK_SIGNAL_R2 else
           "At least one of them explains a tenth of the variance or more: a signal a judge could use."))


def findings(table: pd.DataFrame, readers_table: pd.DataFrame, integer_scores: pd.DataFrame | None,
             ours: pd.DataFrame | None, synthetic: bool, coefs: pd.DataFrame | None = None,
             fit: pd.DataFrame | None = None) -> Markdown:
    """The bullets of the "In more detail" box. ``ours`` (Tables 4-5) is None when "Beside the paper" did not run;
    ``coefs`` and ``fit`` (Taobao) are None when the survey was not analysed, and a synthetic run has none."""
    found = setting_findings(table)
    found += [reader_finding(label, part) for label, part in readers_table.groupby("judge", sort=False)]
    if integer_scores is not None and aux.NA in set(table["method"]) and ours is not None:
        found.append(integer_finding(table, ours, integer_scores))
    found = [finding for finding in found if finding]
    if fit is not None and not synthetic:
        found.append(taobao_finding(coefs, fit))
    return Markdown("\n".join(f"- {finding}" for finding in found))
