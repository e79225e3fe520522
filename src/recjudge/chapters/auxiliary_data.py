"""The page of the chapter on auxiliary data in the judge's prompt (Kang et al. 2025, RQ2) and of its synthetic run:
its opening box, tables, figures and glued findings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import figures, pages
from recjudge.compendium.claim_intervals import with_interval
from recjudge.compendium.prose import Prose
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
#: The setting whose judged block ``print_example`` shows.
EXAMPLE_SETTING = "Pop + Sim"
#: The Taobao model with curiosity and the Big-Five together, whose coefficients the chapter shows.
BOTH_MODEL = "curiosity + big_five"
#: The page's sentences (``notebooks/prose/auxiliary_data.md``).
PROSE = Prose("auxiliary_data")


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
    data = PROSE("opening.data", data=study.data_label, n_answers=f"{len(study.answers):,}",
                 n_users=f"{study.answers['user_id'].nunique():,}")
    if not study.synthetic:  # the Taobao survey is analysed in the default run only
        data += "; " + PROSE("opening.data.taobao")
    judge = PROSE("opening.judge")
    if judges:
        judge += "; " + PROSE("opening.judge.readers", judges=", ".join(reader_labels(judges)))
    facts = [
        ("Data", data),
        ("Judged answers", PROSE("opening.judged_answers", n_rows=len(rows), seed=seed, pool_size=aux_pool_size,
                                 n_sample=len(study.sample), n_settings=len(chosen),
                                 n_with_history=int((rows_hist > 0).sum()))),
        ("Judge", judge),
        ("History", study.source.label),
        ("Popularity and similarity population",
         PROSE("opening.population", status=movielens.status, n_users=f"{movielens.ratings['user_id'].nunique():,}")),
    ]
    caveat = PROSE("caveat", n_rows=len(rows))
    if study.synthetic:
        caveat = PROSE("caveat.synthetic") + " " + caveat
    return pages.opening(facts, caveat)


def show_sources(notebook: str, study) -> Table:
    """Each auxiliary datum, its wording and its source in this run."""
    sources = pd.DataFrame([
        {"setting": aux.NA, "datum": PROSE("sources.na.datum"), "source": study.source.label},
        {"setting": "Pop", "datum": PROSE("sources.pop.datum"), "source": PROSE("sources.pop.source")},
        {"setting": "Sim", "datum": PROSE("sources.sim.datum"), "source": PROSE("sources.sim.source")},
        {"setting": "Rating", "datum": PROSE("sources.rating.datum"), "source": PROSE("sources.rating.source")},
        {"setting": "S-prof.", "datum": PROSE("sources.short_profile.datum", days=aux.SHORT_TERM_DAYS),
         "source": PROSE("sources.short_profile.source")},
        {"setting": "L-prof.", "datum": PROSE("sources.long_profile.datum"),
         "source": PROSE("sources.long_profile.source")},
        {"setting": "k=N", "datum": PROSE("sources.history_length.datum"), "source": study.source.label},
    ])
    save_table(sources, notebook, "auxiliary_sources")
    return format_table(sources, caption=PROSE("sources.caption"),
                        full_table=(notebook, "auxiliary_sources"), audit=True)


def print_example(notebook: str, run: aux.RQ2Run, study, rows: pd.DataFrame) -> None:
    """The judged block of the answer with the longest history under "Pop + Sim", and the longest long-term profile
    (the run's reports saved)."""
    save_table(run.reports, notebook, "judge_runs")
    longest = rows.iloc[[int(np.argmax(history_counts(study, rows)))]]
    example = aux.setting_requests(aux.settings_by_name([EXAMPLE_SETTING])[0], longest, study.examples, run.aux,
                                   study.history, study.movies)[0]
    print(PROSE("example.block", setting=EXAMPLE_SETTING) + "\n")
    print(example.messages[-1]["content"])
    if "long_profile" in run.aux.columns:
        profiled = run.aux.loc[rows.index, "long_profile"]
        print("\n" + PROSE("example.long_profile") + "\n" + profiled[profiled.str.len().idxmax()])


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
                                PROSE("agreement.reader.caption", n_rows=n_rows, judge=label), audit=True))
    return agreement_shown(notebook, table, PROSE("agreement.caption", n_rows=n_rows))


def show_baselines(notebook: str, scores: pd.DataFrame, n_boot: int, seed: int) -> Table:
    """Random and a constant answer (the most frequent level and the mean, each chosen for a user on the other users'
    answers) on the same answers as the settings (``ser.trivial_baselines``; saved as ``baselines``, a table of its
    own so that the settings' rows are read by name as before)."""
    table = save_table(ser.trivial_baselines(scores, n_boot=n_boot, seed=seed), notebook, "baselines")
    view = ser.agreement_for_display(table)
    return format_table(view, {column: f for column, f in AGREEMENT_FORMATS.items() if column in view},
                        caption=PROSE("baselines.caption", n_answers=int(table["n"].max()),
                                      constant_note=CONSTANT_PEARSON_NOTE),
                        full_table=(notebook, "baselines"), audit=True)


def draw_settings(table: pd.DataFrame, readers_table: pd.DataFrame, settings: Sequence[str], study,
                  n_rows: int) -> None:
    """The auxiliary-data settings' agreement (Figures 2-3's shape), glued; a reader's judges' figures shown."""
    item_settings = [n for n in settings if not n.startswith("k=")]
    fig = aux.plot_agreement_by_setting(table, item_settings)
    figures.glue_figure("fig-aux-settings", fig,
                        PROSE("settings_figure.caption", n_rows=n_rows, data=study.data_label))
    for label, part in readers_table.groupby("judge", sort=False):  # the reader's judges: shown here, one each
        display(figures.svg_image(aux.plot_agreement_by_setting(part, item_settings,
                                                                title=f"{label} (the reader's judge)")))


def draw_history_length(notebook: str, table: pd.DataFrame, settings: Sequence[str]) -> None:
    """The history-length sweep (Figure 4's shape) beside NA, glued (its rows saved); a note when none was set."""
    lengths = [n for n in settings if n.startswith("k=")]
    if not lengths:
        figures.glue_not_drawn("fig-history-length", PROSE("length_figure.not_drawn"))
        return
    sweep = table.set_index("method").loc[lengths + ([aux.NA] if aux.NA in settings else [])].reset_index()
    sweep["k"] = [int(m[2:]) if m.startswith("k=") else 10 for m in sweep["method"]]
    save_table(sweep[["method", "k", "n", "pearson_pct", "pearson_ci_low", "pearson_ci_high", "mae", "rmse"]],
               notebook, "length_sweep")
    fig = aux.plot_agreement_by_setting(table, list(sweep["method"]))
    figures.glue_figure("fig-history-length", fig, PROSE("length_figure.caption"))


def paper_serendipity_rows() -> pd.DataFrame:
    """Kang et al.'s Tables 4-5 rows for Serendipity-2018, one per method."""
    return aux.kang2025_tables45().query("dataset == 'Serendipity-2018'").drop_duplicates("method")


def best_setting_kind(best_setting: str) -> str:
    """What the best setting is: a history length ``k=N`` is a quantity of interaction data, not a datum."""
    return PROSE("best_setting.history_length") if best_setting.startswith("k=") else PROSE("best_setting.datum")


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
        caption=PROSE("tables45.caption", n_settings=n_settings - 1, n_answers=int(best_aux["n"]),
                      best_setting=best_aux["best_setting"], best_kind=best_setting_kind(best_aux["best_setting"]),
                      n_splits=n_splits, min_answers=pages.MIN_ANSWERS, integer_mark=ser.INTEGER.strip(", ")),
        full_table=(notebook, "tables45_vs_paper"))


def show_taobao(notebook: str, survey: pd.DataFrame, coefs: pd.DataFrame, fit: pd.DataFrame) -> None:
    """The scales' consistency, the coefficients with both instruments, and the explained variance (collapsed;
    all saved, with the increments of explained variance)."""
    rel = save_table(pers.reliability(survey), notebook, "taobao_reliability")
    display(format_table(rel, {"value": number(2), "n": count()}, caption=PROSE("taobao.reliability.caption"),
                         full_table=(notebook, "taobao_reliability"), audit=True))
    save_table(coefs, notebook, "taobao_coefficients")
    save_table(fit, notebook, "taobao_fit")
    shown = coefs[coefs["model"] == BOTH_MODEL].assign(
        effect_ci=lambda f: [f"{e:.3f} [{lo:.3f}, {hi:.3f}]" for e, lo, hi in
                             zip(f["effect"], f["effect_ci_low"], f["effect_ci_high"])])
    display(format_table(shown[["kind", "term", "effect_ci", "p_value"]],
                         {"effect_ci": text(label="Effect per sd [95% CI]"), "p_value": p_value(label="p")},
                         caption=PROSE("taobao.coefficients.caption"), full_table=(notebook, "taobao_coefficients"),
                         audit=True))
    display(format_table(fit[["model", "kind", "n", "explained", "adj_r2", "test_p"]],
                         {"n": count(), "explained": number(3, label=PROSE("taobao.fit.explained_label")),
                          "adj_r2": number(3, label="Adjusted R²"), "test_p": p_value(label="p, model test")},
                         caption=PROSE("taobao.fit.caption"), full_table=(notebook, "taobao_fit"), audit=True))
    save_table(pers.incremental_variance(fit), notebook, "taobao_increments")


def show_not_supported(notebook: str) -> Table:
    unsupported = save_table(pd.DataFrame(aux.NOT_SUPPORTED, columns=["analysis", "reason"]), notebook,
                             "not_supported")
    return format_table(unsupported, caption=PROSE("not_supported.caption"),
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
        return [PROSE("finding.settings.too_few", too_few=pages.too_few_text(na["n"]))]
    others = by[by.index != aux.NA]
    top = others.sort_values("pearson_pct", ascending=False).iloc[0]
    sig = others[others["p_pearson_vs_ref"] < 0.05]
    scored = others.dropna(subset=["mae"])
    lower_mae = scored[scored["mae"] < na["mae"]]
    printed = paper_serendipity_rows().set_index("method")
    paper_gain = printed.loc["Auxiliary Data", "pearson_pct"] - printed.loc[aux.NA, "pearson_pct"]
    highest = PROSE("finding.settings", n_answers=int(na["n"]), na_pearson=_pearson_with_interval(na), top=top.name,
                    top_pearson=_pearson_with_interval(top))
    if len(sig):
        differing = PROSE("finding.settings.differing", n_differing=len(sig), n_settings=len(others),
                          differing=", ".join(sig.index))
    else:
        differing = PROSE("finding.settings.differing.none", n_differing=len(sig), n_settings=len(others))
    mae_counts = {"n_lower": len(lower_mae), "n_scored": len(scored), "na_mae": pages.fmt(na["mae"], 2)}
    if len(scored):
        mae = PROSE("finding.mae", **mae_counts, best=scored["mae"].idxmin(),
                    best_mae=pages.fmt(scored["mae"].min(), 2))
    else:
        mae = PROSE("finding.mae.none_scored", **mae_counts)
    gain = PROSE("finding.paper_gain", n_answers=int(na["n"]), gain=pages.fmt(paper_gain, 1))
    return [f"{highest} {differing}", f"{mae} {gain}"]


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
        return PROSE("finding.reader.undefined", judge=label)
    fewest = defined["n"].min()
    if pages.too_few(fewest):
        return PROSE("finding.reader.too_few", judge=label, too_few=pages.too_few_text(fewest))
    others = defined[defined.index != aux.NA]
    # defined is not empty, so NA or another setting (or both) has a Pearson
    values = {}
    if aux.NA in defined.index:
        na = defined.loc[aux.NA]
        values.update(na_pearson=_pearson_with_interval(na), n_answers=int(na["n"]))
    if len(others):
        top = others.sort_values("pearson_pct", ascending=False).iloc[0]
        values.update(top=top.name, top_pearson=_pearson_with_interval(top),
                      n_differing=int((others["p_pearson_vs_ref"] < 0.05).sum()), n_settings=len(others))
    if aux.NA not in defined.index:
        return PROSE("finding.reader.no_na", judge=label, **values)
    return PROSE("finding.reader" if len(others) else "finding.reader.na_only", judge=label, **values)


def integer_finding(table: pd.DataFrame, ours: pd.DataFrame, integer_scores: pd.DataFrame) -> str:
    """NA read as its most likely score token (the paper's judges' answers) beside its expected score, in MAE; empty
    when it rests on too few answers to read (or none)."""
    na_int = ours.set_index("method").loc[f"{aux.NA}{ser.INTEGER}"]
    if not na_int["n"] >= pages.MIN_ANSWERS:
        return ""
    levels = integer_scores[aux.NA].dropna().unique()
    printed = paper_serendipity_rows().set_index("method")
    maes = {"mae": pages.fmt(na_int["mae"], 2),
            "expected_mae": pages.fmt(table.set_index("method").loc[aux.NA, "mae"], 2),
            "paper_mae": pages.fmt(printed.loc[aux.NA, "mae"], 2)}
    if len(levels) == 1:  # one score for every answer: no correlation to report
        return PROSE("finding.integer.one_score", n_answers=int(na_int["n"]), score=f"{levels[0]:g}", **maes)
    return PROSE("finding.integer", pearson=pages.fmt(na_int["pearson_pct"], 1), **maes)


def taobao_finding(coefs: pd.DataFrame, fit: pd.DataFrame) -> str:
    """How much of the Taobao serendipity answer curiosity and the Big-Five explain, and which traits matter."""
    ols = fit[fit["kind"] == "OLS"].set_index("model")["explained"]
    ordl = fit[fit["kind"] == "ordinal logit"].set_index("model")["explained"]
    c = coefs[(coefs["model"] == BOTH_MODEL) & (coefs["kind"] == "ordinal logit")].set_index("term")
    found = PROSE(
        "finding.taobao",
        curiosity=pages.fmt(100 * ols["curiosity"], 1), curiosity_mcfadden=pages.fmt(100 * ordl["curiosity"], 1),
        big_five=pages.fmt(100 * ols["big_five"], 1), big_five_mcfadden=pages.fmt(100 * ordl["big_five"], 1),
        both=pages.fmt(100 * ols[BOTH_MODEL], 1), stretching=f"{c.loc['stretching', 'effect']:.2f}",
        stretching_low=f"{c.loc['stretching', 'effect_ci_low']:.2f}",
        stretching_high=f"{c.loc['stretching', 'effect_ci_high']:.2f}", embracing=f"{c.loc['embracing', 'effect']:.2f}",
        more="more" if ols["curiosity"] > ols["big_five"] else "no more",
        # each Big-Five trait with p < 0.05 and its odds ratio per sd
        traits=", ".join(f"{t.replace('_', ' ')} {c.loc[t, 'effect']:.2f}" for t in pers.BIG_FIVE
                         if c.loc[t, "p_value"] < 0.05))
    if max(ols["curiosity"], ols["big_five"]) < WEAK_SIGNAL_R2:
        return found + " " + PROSE("finding.taobao.weak", threshold=pages.fmt(100 * WEAK_SIGNAL_R2, 0))
    return found + " " + PROSE("finding.taobao.usable")


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
