"""The page of the chapter "Proxy metrics versus LLM judges": its opening box, tables with their captions, the
figure and the glued findings with the rules that choose their words; the sentences they go into are the chapter's
prose (``notebooks/prose/proxy_vs_llm.md``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from IPython.display import Markdown, display

from recjudge.compendium import claim_readers, figures, pages
from recjudge.compendium.claim_intervals import with_interval
from recjudge.compendium.claim_readers import WEAK_PEARSON_PCT
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import correlation, count, error, format_table, p_value, paper_beside_ours, text
from recjudge.llm.judge_spec import reader_labels
from recjudge.prompts.serendipity import METHOD_NAMES
from recjudge.serendipity import claims, proxies
from recjudge.serendipity import ground_truth as ser
from recjudge.serendipity.ground_truth import INTEGER

# Headers break over lines: the columns hold short numbers, so one-line headers would set the table's width.
AGREEMENT_FORMATS = {"n": count(), "pearson": text(label="Pearson (%)\n[95% CI]"), "mae": error(2),
                     "rmse": error(2), "p_pearson": p_value(label="p, Pearson\nvs ref."),
                     "p_mae": p_value(label="p, MAE\nvs ref.")}
TABLE2_METRICS = {"pearson_pct": correlation(1, scale="percent", label="Pearson (%)"), "mae": error(2, label="MAE"),
                  "rmse": error(2, label="RMSE")}
RECORDED = "gpt-3.5-turbo (recorded)"
#: The page's sentences (``notebooks/prose/proxy_vs_llm.md``).
PROSE = Prose("proxy_vs_llm")
#: The recorded judge's reading when its interval is not wholly below zero (``further_findings``).
NOT_BETTER = "not a better"


def interval(row: Mapping) -> str:
    """Pearson (%) with its 95% interval, for prose: "12.3% [4.5, 20.1]" (the interval left out when undefined)."""
    return with_interval(row["pearson_pct"], row["pearson_ci_low"], row["pearson_ci_high"], unit="%")


# ------------------------------------------------------------------------------------------------ opening and data

def opening(study: ser.Serendipity2018Study, local_prompts: Sequence[str], random_seeds: int,
            use_recorded_gpt35: bool, judges: Sequence[Mapping]) -> Markdown:
    """The box that opens the chapter: data, histories, proxies, judges, and the caveat on the tiny local model."""
    answers = study.answers
    data = [PROSE("opening.data", data_label=study.data_label, n_answers=f"{len(answers):,}",
                  n_users=f"{answers['user_id'].nunique():,}")]
    if not study.synthetic:  # only the real data have the Taobao survey beside them
        data.append(PROSE("opening.data.taobao"))
    llm_judges = [PROSE("opening.judges", prompts=", ".join(METHOD_NAMES[p] for p in local_prompts),
                        n_sample=f"{len(study.sample):,}")]
    if use_recorded_gpt35 and not study.synthetic:
        llm_judges.append(PROSE("opening.judges.recorded"))
    if judges:
        llm_judges.append(PROSE("opening.judges.readers", labels=", ".join(reader_labels(judges))))
    facts = [
        (PROSE("opening.data.label"), "; ".join(data)),
        (PROSE("opening.history.label"), study.source.label),
        (PROSE("opening.proxies.label"), PROSE("opening.proxies", random_seeds=f"{random_seeds:,}")),
        (PROSE("opening.judges.label"), "; ".join(llm_judges)),
    ]
    caveat = PROSE("opening.caveat") + " " + pages.capable_judge_advice(judges)
    if study.synthetic:
        caveat = PROSE("opening.caveat.synthetic") + " " + caveat
    return pages.opening(facts, caveat)


def show_ground_truth_definitions(notebook: str):
    definitions = save_table(ser.ground_truth_definitions_table(), notebook, "ground_truth_definitions")
    return format_table(definitions.drop(columns=["description"]),
                        caption=PROSE("ground_truth_definitions.caption"),
                        full_table=(notebook, "ground_truth_definitions"), audit=True)


def level_counts(study: ser.Serendipity2018Study) -> pd.DataFrame:
    """Answers per ground-truth Likert level (NaN: no ground truth), and how many of them the judged sample holds."""
    answers = study.answers
    levels = (answers["level"].value_counts(dropna=False).rename_axis("level").rename("answers").reset_index()
              .sort_values("level", na_position="last"))
    levels["in_sample"] = levels["level"].map(study.sample["level"].value_counts()).fillna(0).astype(int)
    return levels


def show_levels(study: ser.Serendipity2018Study, notebook: str):
    levels = level_counts(study)
    save_table(levels.assign(data=study.data_label), notebook, "ground_truth_levels")
    return format_table(levels.assign(level=levels["level"].map(lambda v: "no ground truth" if pd.isna(v)
                                                                else f"{v:.0f}")),
                        {"answers": count(), "in_sample": count(label="In the judged sample")},
                        caption=PROSE("levels.caption"), audit=True)


def history_lengths(study: ser.Serendipity2018Study) -> pd.Series:
    """Items in each answer's history, in the answers' order."""
    answers = study.answers
    n_hist = study.history.groupby(["user_id", "item_id"]).size()
    return pd.Series(answers.set_index(["user_id", "item_id"]).index.map(n_hist).fillna(0).astype(int),
                     name="history_length")


def show_history_lengths(study: ser.Serendipity2018Study, notebook: str):
    summary = (history_lengths(study).value_counts().sort_index()
               .rename_axis("history_length").rename("answers").reset_index())
    save_table(summary.assign(history=study.source.label), notebook, "history_lengths")
    return format_table(summary, {"history_length": count(label="Items in the history"), "answers": count()},
                        caption=PROSE("history_lengths.caption", history=study.source.label), audit=True)


def show_proxy_inputs(study: ser.Serendipity2018Study, study_proxies: proxies.StudyProxies, notebook: str):
    """The proxies' inputs with their coverage and fallbacks (displayed), and how often each component was imputed
    (returned as the table to show)."""
    answers, components, features = study.answers, study_proxies.components, study_proxies.features
    relevance, popularity = study_proxies.relevance, study_proxies.popularity
    hist_len = history_lengths(study)
    tagged = int(features.filter(like="tag:").sum(axis=1).reindex(answers["item_id"]).fillna(0).gt(0).sum())
    n_answers = f"{len(answers):,}"
    inputs = pd.DataFrame([
        {"input": "relevance", "used_by": "SOG, SNPR, PURS", "source": PROSE("proxy_inputs.relevance.source"),
         "coverage": PROSE("proxy_inputs.relevance.coverage", n_answers=n_answers,
                           predicted=f"{(relevance['relevance_source'] == 'predicted').sum():,}"),
         "fallback": PROSE("proxy_inputs.relevance.fallback")},
        {"input": "item features", "used_by": "all four",
         "source": PROSE("proxy_inputs.features.source",
                         movies_file=study.movies.attrs.get("movies_source", "movies.csv")),
         "coverage": PROSE("proxy_inputs.features.coverage", with_tags=f"{tagged:,}",
                           with_genres=f"{answers['item_id'].isin(features.index[features.sum(axis=1) > 0]).sum():,}"),
         "fallback": PROSE("proxy_inputs.features.fallback")},
        {"input": "popularity", "used_by": "SOG", "source": study_proxies.popularity_label,
         "coverage": PROSE("proxy_inputs.popularity.coverage", n_answers=n_answers,
                           counted=f"{answers['item_id'].isin(popularity.index).sum():,}"),
         "fallback": PROSE("proxy_inputs.popularity.fallback")},
        {"input": "user history", "used_by": "all four", "source": PROSE("proxy_inputs.history.source"),
         "coverage": PROSE("proxy_inputs.history.coverage", n_answers=n_answers,
                           with_history=f"{(hist_len > 0).sum():,}"),
         "fallback": PROSE("proxy_inputs.history.fallback")},
        {"input": "list (diversity)", "used_by": "SOG, DESR", "source": PROSE("proxy_inputs.list.source"),
         "coverage": PROSE("proxy_inputs.list.coverage", n_answers=n_answers,
                           with_list=f"{(components['n_list'] > 0).sum():,}"),
         "fallback": PROSE("proxy_inputs.list.fallback")},
    ])
    save_table(inputs.assign(data=study.data_label), notebook, "proxy_inputs")
    imputed = pd.DataFrame({
        "component": list(proxies.COMPONENTS),
        "imputed_answers": [int(components["imputed"].str.contains(rf"\b{c}\b").sum()) for c in proxies.COMPONENTS],
    })
    imputed["share"] = imputed["imputed_answers"] / len(components)
    save_table(imputed.assign(data=study.data_label), notebook, "proxy_imputation")
    display(format_table(inputs, caption=PROSE("proxy_inputs.caption"), audit=True))
    return format_table(imputed, {"imputed_answers": count(label="Answers imputed"),
                                  "share": correlation(label="Share (%)")},
                        caption=PROSE("imputation.caption"), audit=True)


# ---------------------------------------------------------------------------------------------------- the judges

def reader_panels(judges: Sequence[Mapping], local_prompts: Sequence[str], local_model: str,
                  local_scoring: str) -> dict[str, list[str]]:
    """Each reader's judge (by its label) with the names of its methods, one per prompt: a figure panel of its own."""
    panels: dict[str, list[str]] = {}
    for name, prompt, _ in ser.reader_rq1_judges(judges, list(local_prompts), local_model, local_scoring):
        panels.setdefault(name.removesuffix(METHOD_NAMES.get(prompt, prompt)).strip(), []).append(name)
    return panels


def judge_notes(judge_runs: Mapping, panels: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """A note per method (its integer reading included) saying which kind of judge gave it."""
    readers = {m for methods in panels.values() for m in methods}
    notes = {}
    for name, run in judge_runs.items():
        note = (PROSE("judge_notes.reader", provider=run.config.provider) if name in readers
                else PROSE("judge_notes.recorded") if name == RECORDED else PROSE("judge_notes.local"))
        notes[name] = note
        if run.config.scoring == "expected":
            notes[f"{name}{INTEGER}"] = note
    return notes


def judge_run_table(judge_runs: Mapping) -> pd.DataFrame:
    """One row per method read from a run (an expected-score run twice: expected and most likely score): its judge,
    scoring, prompts, unparsable replies (asked, and no score read), judgments left out (never asked: the book's
    judges at a variant's scale, ``RunReport.n_left_out``), replies from the store and calls to the model."""
    rows = []
    for name, run in judge_runs.items():
        readings = [(name, None)] + ([(f"{name}{INTEGER}", "modal_score")] if run.config.scoring == "expected" else [])
        left_out = int(run.report.n_left_out)  # one judgment per prompt here (runs=1), each a score of NaN
        for label, column in readings:
            scores = run.scores(column=column)
            rows.append({"method": label, "judge": run.config.label,
                         "scoring": "most likely score" if column == "modal_score" else run.config.scoring,
                         "prompts": run.report.n_prompts, "unparsable": int(scores.isna().sum()) - left_out,
                         "left_out": left_out, "from_store": run.report.n_from_store,
                         "provider_calls": run.report.n_provider_calls})
    return pd.DataFrame(rows)


def show_judge_runs(judge_runs: Mapping, study: ser.Serendipity2018Study, notebook: str):
    table = judge_run_table(judge_runs)
    save_table(table.assign(data=study.data_label), notebook, "judge_runs")
    formats = {"prompts": count(), "unparsable": count(), "left_out": count(label="Left out (not asked)"),
               "from_store": count(label="From the store"), "provider_calls": count(label="Calls to the model")}
    if not table["left_out"].any():  # the saved table always has the column; the page only where it counts
        table, formats = table.drop(columns="left_out"), {k: v for k, v in formats.items() if k != "left_out"}
    return format_table(table.drop(columns=["judge"]), formats,
                        caption=PROSE("judge_runs.caption.left_out" if "left_out" in table else "judge_runs.caption"),
                        audit=True)


# -------------------------------------------------------------------------------------------- the meta-evaluation

def show_agreement(agreement_all: pd.DataFrame, agreement_sample: pd.DataFrame, notes: Mapping[str, str],
                   study: ser.Serendipity2018Study, seed: int, notebook: str):
    """Saves both agreement tables; displays the one on all answers and returns the one on the sample."""
    reference_all = _reference(agreement_all)
    reference_sample = _reference(agreement_sample)
    history, data_label = study.source.label, study.data_label
    save_table(agreement_all.assign(note=agreement_all["method"].map(notes).fillna(""))
               .assign(rows="all answers with ground truth", history=history, data=data_label),
               notebook, "agreement_all_answers")
    save_table(agreement_sample.assign(rows=f"stratified sample of {len(study.sample)} (seed {seed})",
                                       history=history, data=data_label), notebook, "agreement_sample")
    # On the mirror the paper's Table 2 beside ours (show_table2) is the chapter's key table: these fold under it.
    display(format_table(ser.agreement_for_display(agreement_all), AGREEMENT_FORMATS,
                         caption=PROSE("agreement_all.caption", reference=reference_all),
                         full_table=(notebook, "agreement_all_answers"), audit=not study.synthetic))
    return format_table(ser.agreement_for_display(agreement_sample), AGREEMENT_FORMATS,
                        caption=PROSE("agreement_sample.caption", n_sample=f"{len(study.sample)}",
                                      reference=reference_sample), full_table=(notebook, "agreement_sample"),
                        audit=True)


def _reference(agreement: pd.DataFrame) -> str:
    """The reference method of an ``agreement_beside_random`` table (the Random row has none)."""
    return str(agreement.loc[agreement["reference"] != "", "reference"].iloc[0])


def show_eq5(eq5: pd.DataFrame, seed: int, notebook: str):
    eq5 = eq5.assign(method=eq5["method"].replace({"Random": f"Random (seed {seed}, one draw)"}))
    save_table(eq5, notebook, "eq5_pooled_vs_per_user")
    return format_table(eq5, {"n_rows": count(label="Answers"),
                              "pooled_pearson_pct": correlation(2, scale="percent", label="Pooled (%)"),
                              "per_user_pearson_pct": correlation(2, scale="percent", label="Mean over users (%)"),
                              "users_defined": count(label="Users averaged"),
                              "users_undefined": count(label="Users undefined")},
                        caption=PROSE("eq5.caption"), audit=True)


def table2_names() -> dict[str, str]:
    """Our SmolLM2-135M methods named as the paper's rows of the same prompts (its integer readings too)."""
    names = {f"SmolLM2-135M {METHOD_NAMES[p]}": METHOD_NAMES[p]
             for p in ("kang_llm4seren", "kang_serenprompt_1", "kang_serenprompt_2")}
    names.update({"SmolLM2-135M zero-shot": "SmolLM2-135M (zero-shot)",
                  "SmolLM2-135M few-shot (5)": "SmolLM2-135M (few-shot)"})
    names.update({f"{ours}{INTEGER}": f"{theirs}{INTEGER}" for ours, theirs in list(names.items())})
    return names


def show_table2(agreement_all: pd.DataFrame, agreement_sample: pd.DataFrame, local_methods: Sequence[str],
                notebook: str):
    """The paper's Table 2 (Serendipity-2018) beside ours: proxies, Random and recorded judgments on all answers, the
    local judges on the sample."""
    paper_table2 = ser.kang2025_table2()
    paper_ser = paper_table2[paper_table2["dataset"] == "Serendipity-2018"]
    shots = {"LLM zero-shot": "zero-shot", "LLM few-shot": "few-shot"}
    paper_ser = paper_ser.assign(method=[f"{m} ({shots[f]})" if f in shots else m
                                         for m, f in zip(paper_ser["method"], paper_ser["family"])])
    baselines = ["Random", *ser.CONSTANT_METHODS.values()]
    ours = pd.concat([agreement_all[agreement_all["method"].isin([*baselines, *proxies.PROXIES, RECORDED])],
                      agreement_sample[agreement_sample["method"].isin(local_methods)]])
    ours = ours.assign(method=ours["method"].replace(table2_names()))
    save_table(paper_ser, notebook, "paper_table2")
    save_table(ours[["method", "n", "pearson_pct", "mae", "rmse"]].merge(
        paper_ser.rename(columns={"pearson_pct": "paper_pearson_pct", "mae": "paper_mae", "rmse": "paper_rmse"}),
        on="method", how="outer"), notebook, "table2_vs_paper")
    return paper_beside_ours(ours, paper_ser, keys="method", metrics=TABLE2_METRICS, labels={"method": "Method"},
                             caption=PROSE("table2.caption"),
                             full_table=(notebook, "table2_vs_paper"))


def show_table2_against_constant(agreement_all: pd.DataFrame, notebook: str):
    """Every LLM row of the paper's Table 2 on Serendipity-2018 (its printed MAE and RMSE) beside a constant answer's
    on our answers — the paper prints no distribution of its ground truth, so the constant's numbers are ours —, and
    whether the constant errs less (saved as ``table2_llm_vs_constant``)."""
    paper = ser.kang2025_table2()
    llm = paper[(paper["dataset"] == "Serendipity-2018") & paper["family"].str.startswith("LLM")]
    by_method = agreement_all.set_index("method")
    table = llm[["family", "method", "mae", "rmse"]].reset_index(drop=True)
    for label in ser.CONSTANT_METHODS.values():
        key = "mode" if "most frequent" in label else "mean"
        table[f"constant_{key}_mae_ours"] = float(by_method.loc[label, "mae"])
        table[f"constant_{key}_rmse_ours"] = float(by_method.loc[label, "rmse"])
    table["n_ours"] = int(by_method.loc[next(iter(ser.CONSTANT_METHODS.values())), "n"])
    table["constant_beats_mae"] = table[["constant_mode_mae_ours", "constant_mean_mae_ours"]].min(axis=1) < table["mae"]
    save_table(table, notebook, "table2_llm_vs_constant")
    return format_table(
        table[["family", "method", "mae", "constant_mode_mae_ours", "constant_mean_mae_ours", "rmse",
               "constant_mode_rmse_ours", "constant_mean_rmse_ours"]],
        {"mae": error(3, label="MAE (paper)"),
         "constant_mode_mae_ours": error(3, label="MAE, most frequent level (ours)"),
         "constant_mean_mae_ours": error(3, label="MAE, mean (ours)"), "rmse": error(3, label="RMSE (paper)"),
         "constant_mode_rmse_ours": error(3, label="RMSE, most frequent level (ours)"),
         "constant_mean_rmse_ours": error(3, label="RMSE, mean (ours)")},
        labels={"family": "Family", "method": "Judge"},
        caption=PROSE("table2_constant.caption", n_answers=f"{int(table['n_ours'].iloc[0]):,}"),
        full_table=(notebook, "table2_llm_vs_constant"))


def method_families(full_methods: Sequence[str], local_expected: Sequence[str],
                    panels: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The figure's panels: proxies, the book's local judge, each reader's judge, and the judges of every answer;
    empty panels left out."""
    readers = {m for methods in panels.values() for m in methods}
    families = {"Proxy metrics": list(proxies.PROXIES),
                "SmolLM2-135M": [m for m in local_expected if m not in readers],
                **{label: [m for m in methods if m in local_expected] for label, methods in panels.items()},
                "Recorded and configured judges": [m for m in full_methods if m not in proxies.PROXIES]}
    return {name: methods for name, methods in families.items() if methods}


def draw_score_by_level(sample_scores: pd.DataFrame, families: Mapping[str, Sequence[str]],
                        study: ser.Serendipity2018Study) -> None:
    """Glues the figure of the mean predicted score per true level, one panel per family of methods."""
    long = sample_scores.melt(id_vars=["level"], value_vars=[m for ms in families.values() for m in ms],
                              var_name="method", value_name="predicted").dropna()
    long["family"] = long["method"].map({m: name for name, ms in families.items() for m in ms})
    fig = ser.plot_predicted_vs_true(long, list(families))
    figures.glue_figure("fig-score-by-level", fig,
                        PROSE("figure.caption", n_sample=f"{len(study.sample)}", data_label=study.data_label))


def ground_truth_sensitivity(study: ser.Serendipity2018Study, scores: pd.DataFrame, full_methods: Sequence[str],
                             local_expected: Sequence[str]) -> pd.DataFrame:
    """Pearson (%) under every ground-truth definition (``ser.sensitivity_table``): the methods of every answer on
    all answers, the local judges on the sample."""
    sample = study.sample.index
    sens_full = ser.sensitivity_table(study.answers, scores, list(full_methods)).assign(rows="all answers")
    sens_sample = ser.sensitivity_table(study.answers.loc[sample], scores.loc[sample], list(local_expected)).assign(
        rows=f"sample of {len(sample)}")
    return pd.concat([sens_full, sens_sample], ignore_index=True)


def show_sensitivity(sensitivity: pd.DataFrame, local_judges: Mapping[str, Sequence[str]],
                     study: ser.Serendipity2018Study, notebook: str) -> None:
    """Saves the ground-truth sensitivity and displays one wide table per set of rows, each collapsed."""
    save_table(sensitivity.assign(data=study.data_label), notebook, "ground_truth_sensitivity")
    for rows, part in sensitivity.groupby("rows", sort=False):
        wide = part.pivot_table(index="definition", columns="method", values="pearson_pct", sort=False).reset_index()
        wide.columns = [str(c).removeprefix("SmolLM2-135M ") for c in wide.columns]
        display(format_table(wide, {c: correlation(1, scale="percent", label=c) for c in wide.columns[1:]},
                             labels={"definition": "Ground truth"},
                             caption=PROSE("sensitivity.caption.sample", rows=rows,
                                           judges=pages.judges_in(part["method"], local_judges))
                             if "sample" in rows else PROSE("sensitivity.caption", rows=rows),
                             full_table=(notebook, "ground_truth_sensitivity"), audit=True))


def show_shape_effect(shaped: pd.DataFrame, constrained_answers: int, study: ser.Serendipity2018Study,
                      notebook: str):
    save_table(shaped.assign(data=study.data_label), notebook, "constrained_vs_free")
    left_out = {"left_out_free": count(label="Left out, free"),
                "left_out_constrained": count(label="Left out, constr.")}
    if not shaped[list(left_out)].to_numpy().any():  # the saved table always has them; the page where they count
        shaped, left_out = shaped.drop(columns=list(left_out)), {}
    return format_table(shaped.drop(columns="prompt"), {
        "replies": count(label="Answers"), "shape_violations": count(label="Out of shape"), **left_out,
        "parsed_free": count(label="Parsed, free"), "parsed_constrained": count(label="Parsed, constrained"),
        "pearson_free": correlation(1, scale="percent", label="Pearson % free"),
        "pearson_constrained": correlation(1, scale="percent", label="Pearson % constr."),
        "mae_free": error(2, label="MAE free"), "mae_constrained": error(2, label="MAE constr.")},
        labels={"method": "Prompt"},
        caption=PROSE("shape_effect.caption", n_answers=f"{constrained_answers}"),
        full_table=(notebook, "constrained_vs_free"), audit=True)


# ---------------------------------------------------------------------------------------------------------- Taobao

def show_taobao(taobao_table: pd.DataFrame, notebook: str):
    save_table(taobao_table.assign(data="Taobao Serendipity (mirror)"), notebook, "taobao_agreement")
    paper_taobao = ser.kang2025_table2().query("dataset == 'Taobao Serendipity'")
    return paper_beside_ours(taobao_table, paper_taobao[paper_taobao["method"] == "Random"], keys="method",
                             metrics=TABLE2_METRICS, labels={"method": "Method"}, order="ours",
                             caption=PROSE("taobao.caption"), audit=True)


#: The rows of the table of what the public Taobao file cannot support, in order: each row's cells are the passages
#: ``taobao_unsupported.<row>.<cell>`` of the prose file.
TAOBAO_UNSUPPORTED_ROWS = ("llm_judges", "proxies", "list", "hot_flag", "history_windows", "demographics")
#: Its columns (saved and shown as they are named here), by the cell each passage fills.
TAOBAO_UNSUPPORTED_COLUMNS = {"analysis": "analysis", "needs": "needs", "missing": "missing from the public file"}


def taobao_unsupported() -> pd.DataFrame:
    """The analyses the public Taobao file cannot support: what each needs and what the file lacks."""
    return pd.DataFrame([[PROSE(f"taobao_unsupported.{row}.{cell}") for cell in TAOBAO_UNSUPPORTED_COLUMNS]
                         for row in TAOBAO_UNSUPPORTED_ROWS], columns=list(TAOBAO_UNSUPPORTED_COLUMNS.values()))


def show_taobao_unsupported(notebook: str):
    unsupported = taobao_unsupported()
    save_table(unsupported, notebook, "taobao_unsupported")
    return format_table(unsupported, caption=PROSE("taobao_unsupported.caption"), audit=True,
                        full_table=(notebook, "taobao_unsupported"))


# ----------------------------------------------------------------------------------- weights and the paper's claims

def weight_summary(sensitivity_weights: pd.DataFrame) -> pd.DataFrame:
    """Per proxy: how many weight choices, the lowest and highest Pearson (%), this book's choice and its rank."""
    summary = sensitivity_weights.groupby("proxy", sort=False).agg(
        choices=("weights", "size"), lowest=("pearson_pct", "min"), highest=("pearson_pct", "max"))
    summary["default"] = sensitivity_weights[sensitivity_weights["default"]].set_index("proxy")["pearson_pct"]
    summary["default_rank"] = [int((sensitivity_weights.loc[sensitivity_weights["proxy"] == p, "pearson_pct"]
                                    > summary.loc[p, "default"]).sum()) + 1 for p in summary.index]
    return summary.reset_index()


def weight_finding(sensitivity_weights: pd.DataFrame, agreement_all: pd.DataFrame) -> str:
    """Under how many SOG weight vectors SOG would fall below the strongest other proxy, and so whether which proxy
    is strongest depends on SOG's weights."""
    others = agreement_all[agreement_all["method"].isin([m for m in proxies.PROXIES if m != "SOG"])]
    runner_up = others.loc[others["pearson_pct"].idxmax()]
    sog_choices = sensitivity_weights[sensitivity_weights["proxy"] == "SOG"]
    below = int((sog_choices["pearson_pct"] < runner_up["pearson_pct"]).sum())
    return PROSE("weights.finding.depends" if below else "weights.finding.does_not_depend", below=f"{below}",
                 choices=f"{len(sog_choices)}", runner_up=runner_up["method"],
                 runner_up_pearson=pages.fmt(runner_up["pearson_pct"], 1))


def show_weight_sensitivity(sensitivity_weights: pd.DataFrame, agreement_all: pd.DataFrame,
                            study: ser.Serendipity2018Study, notebook: str) -> Markdown:
    """Saves every weight choice's agreement, displays the summary per proxy and returns the finding."""
    sensitivity_weights = save_table(sensitivity_weights.assign(data=study.data_label), notebook,
                                     "proxy_weight_sensitivity")
    display(format_table(weight_summary(sensitivity_weights),
                         {"choices": count(label="Choices"),
                          "lowest": correlation(1, scale="percent", label="Lowest Pearson (%)"),
                          "highest": correlation(1, scale="percent", label="Highest"),
                          "default": correlation(1, scale="percent", label="This book's choice"),
                          "default_rank": count(label="Its rank")},
                         labels={"proxy": "Proxy"},
                         caption=PROSE("weights.caption"),
                         full_table=(notebook, "proxy_weight_sensitivity"), audit=True))
    return Markdown(weight_finding(sensitivity_weights, agreement_all))


def claims_finding(significance: pd.DataFrame, gains: pd.DataFrame) -> str:
    """The two claims of the paper tested on its own numbers: how many non-random correlations are not significant
    (so whether "all are significant" holds), and the four gains over SOG against "about 100%"."""
    not_significant = significance[~significance["significant"] & (significance["family"] != "Random")]
    critical = significance.drop_duplicates("dataset").set_index("dataset")["critical_pearson_pct"]
    low, high = claim_readers.ABOUT_100_PCT
    near_100 = gains[(gains["gain_over_sog_pct"] > low) & (gains["gain_over_sog_pct"] < high)]
    return PROSE("paper_claims.findings", n_not_significant=f"{len(not_significant)}",
                 n_correlations=f"{int((significance['family'] != 'Random').sum())}",
                 critical=", ".join(PROSE("paper_claims.critical", pearson=pages.fmt(v, 2), dataset=d)
                                    for d, v in critical.items()),
                 verdict="does not hold" if len(not_significant) else "holds",
                 claimed_gain=pages.fmt(claim_readers.CLAIMED_GAIN_PCT, 0),
                 gains=", ".join(PROSE("paper_claims.gain", judge=r.judge, dataset=r.dataset,
                                       gain=f"{'+' if r.gain_over_sog_pct >= 0 else '−'}"
                                            f"{pages.fmt(abs(r.gain_over_sog_pct), 1)}")
                                 for r in gains.itertuples()),
                 n_near=f"{len(near_100)}", n_gains=f"{len(gains)}", low=pages.fmt(low, 0), high=pages.fmt(high, 0))


def show_paper_claims(notebook: str) -> None:
    """The rows of the paper's Table 2 that are not significant by its own n, then the two claims' findings."""
    significance = save_table(claims.significance_check(ser.kang2025_table2()), notebook, "paper_claim_significance")
    gains = save_table(claims.zero_shot_gain_over_sog(ser.kang2025_table2()), notebook, "paper_claim_gain_over_sog")
    not_significant = significance[~significance["significant"] & (significance["family"] != "Random")]
    display(format_table(not_significant[["dataset", "family", "method", "pearson_pct", "n", "p_value"]],
                         {"pearson_pct": correlation(2, scale="percent", label="Pearson (%)"), "n": count(),
                          "p_value": p_value(3)},
                         caption=PROSE("paper_claims.caption"), full_table=(notebook, "paper_claim_significance"),
                         audit=True))
    display(Markdown(claims_finding(significance, gains)))


# ---------------------------------------------------------------------------------------------------- the findings

#: The passage saying how our proxies agree with the users beside the paper's, by (ours weak, the paper's weak).
WEAK_PASSAGES = {(True, True): "findings.weak.both", (True, False): "findings.weak.ours_only",
                 (False, True): "findings.weak.papers_only", (False, False): "findings.weak.neither"}


def findings(agreement_all: pd.DataFrame, reference_all: str, eq5: pd.DataFrame, random_seeds: int) -> dict:
    """The glued values of the detailed verdict: the strongest proxy against chance, the paper's answer and ours,
    and which reading of eq. 5 the paper's numbers are closer to."""
    proxy_methods = list(proxies.PROXIES)
    by_method = agreement_all.set_index("method")
    ref, rnd = by_method.loc[reference_all], by_method.loc["Random"]
    paper_all = ser.kang2025_table2().query("dataset == 'Serendipity-2018'")
    paper = paper_all.drop_duplicates("method").set_index("method")  # proxies and Random appear once
    ours_largest = by_method.loc[proxy_methods, "pearson_pct"].abs().max()
    paper_largest = paper.loc[proxy_methods, "pearson_pct"].abs().max()
    readings = eq5.set_index("method")
    closer = sum(abs(paper.loc[m, "pearson_pct"] - readings.loc[m, "per_user_pearson_pct"])
                 < abs(paper.loc[m, "pearson_pct"] - readings.loc[m, "pooled_pearson_pct"]) for m in proxy_methods)
    return {
        "n_all": f"{int(ref['n']):,}",
        "reference": reference_all,
        "reference_pearson": interval(ref),
        "reference_mae": pages.fmt(ref["mae"], 2),
        "random_pearson": pages.fmt(rnd["pearson_pct"], 1),
        "random_seeds": f"{random_seeds:,}",
        "random_range": f"{pages.fmt(rnd['pearson_ci_low'], 1)}% and {pages.fmt(rnd['pearson_ci_high'], 1)}%",
        "reference_vs_chance": PROSE("findings.above_chance" if ref["pearson_ci_low"] > rnd["pearson_ci_high"]
                                     else "findings.within_chance", reference=reference_all),
        "paper_gpt4_few": pages.fmt(paper_all.loc[(paper_all["method"] == "GPT-4")
                                                  & (paper_all["family"] == "LLM few-shot"), "pearson_pct"].item(), 2),
        "paper_sog": pages.fmt(paper.loc["SOG", "pearson_pct"], 2),
        "weak_words": PROSE(WEAK_PASSAGES[(ours_largest < WEAK_PEARSON_PCT, paper_largest < WEAK_PEARSON_PCT)]),
        "largest_proxy": pages.fmt(max(ours_largest, paper_largest), 1),
        "ours_order": " > ".join(by_method.loc[proxy_methods, "pearson_pct"].sort_values(ascending=False).index),
        "paper_order": " > ".join(paper.loc[proxy_methods, "pearson_pct"].sort_values(ascending=False).index),
        "eq5_closer": f"{closer}",
        "eq5_reading": PROSE("findings.eq5_reading.per_user" if closer > len(proxy_methods) / 2
                             else "findings.eq5_reading.pooled"),
    }


def further_findings(agreement_all: pd.DataFrame, reference_all: str, agreement_sample: pd.DataFrame,
                     local_methods: Sequence[str], taobao_table: pd.DataFrame | None = None,
                     shaped: pd.DataFrame | None = None) -> Markdown:
    """The findings that depend on which judges and data this run had, one bullet each."""
    by_method = agreement_all.set_index("method")
    ref = by_method.loc[reference_all]
    further = []
    if RECORDED in by_method.index:
        g = by_method.loc[RECORDED]
        further.append(PROSE(
            "further.recorded", pearson=interval(g), comparison="below" if g["pearson_pct"] < ref["pearson_pct"]
            else "above", reference=reference_all, p_value=f"{g['p_pearson_vs_ref']:.2g}",
            # its interval wholly below zero: worse than no judge; else not better than the proxy
            reading=PROSE("further.recorded.negative") if g["pearson_ci_high"] < 0
            else PROSE("further.recorded.not_better", comparison=NOT_BETTER)))
    local = agreement_sample[agreement_sample["method"].isin(local_methods)]
    by_judge = local.assign(judge=[judge_and_prompt(method)[0] for method in local["method"]])
    for judge, rows in by_judge.groupby("judge", sort=False):  # each judge's sentence names the judge of its rows
        best = rows.sort_values("pearson_pct", ascending=False).iloc[0]
        undefined = pd.isna(best["pearson_ci_low"]) or pd.isna(best["pearson_ci_high"])
        includes_zero = not undefined and best["pearson_ci_low"] <= 0 <= best["pearson_ci_high"]
        prompt = judge_and_prompt(best["method"])[1]
        subject = (PROSE("further.local_judge.best_prompt", prompt=prompt) if prompt
                   else PROSE("further.local_judge.best_prompt.unknown"))
        outcome = ("further.local_judge.undefined" if undefined else "further.local_judge.noise" if includes_zero
                   else "further.local_judge")
        further.append(PROSE(outcome, judge=judge, subject=subject, pearson=interval(best), n=f"{int(best['n'])}"))
    if taobao_table is not None:
        stand_in = taobao_table.set_index("method").loc[ser.CATEGORY_COMMONNESS]
        paper = ser.kang2025_table2()
        paper_taobao = paper[(paper["dataset"] == "Taobao Serendipity") & (paper["family"] == "Proxy Metrics")]
        best_paper = paper_taobao.sort_values("pearson_pct", ascending=False).iloc[0]
        further.append(PROSE(
            "further.taobao", pearson=interval(stand_in),
            comparison="above" if stand_in["pearson_pct"] > best_paper["pearson_pct"] else "below",
            best_proxy=best_paper["method"], best_pearson=f"{best_paper['pearson_pct']:.2f}"))
    if shaped is not None:
        by_prompt = shaped.set_index("method")
        left_out = int(by_prompt[["left_out_free", "left_out_constrained"]].to_numpy().sum()) \
            if "left_out_free" in by_prompt else 0
        further.append(PROSE(
            "further.shape", free=parse_shares(by_prompt, "free"), prompts=", ".join(by_prompt.index),
            constrained=parse_shares(by_prompt, "constrained", of=False),
            out_of_shape=pages.count(int(by_prompt["shape_violations"].sum()), "reply", "replies"),
            # a clause of its own, joined after "; ", only where replies were left out
            left_out="; " + PROSE("further.shape.left_out", replies=pages.count(left_out, "reply", "replies"))
            if left_out else "",
            pearsons=", ".join(pages.fmt(r["pearson_constrained"], 1) + "%" if pd.notna(r["pearson_constrained"])
                               else PROSE("further.shape.pearson.no_reply") if r["parsed_constrained"] == 0
                               else PROSE("further.shape.pearson.constant") for _, r in by_prompt.iterrows())))
    return Markdown("\n".join(f"- {finding}" for finding in further))


def parse_shares(by_prompt: pd.DataFrame, variant: str, *, of: bool = True) -> str:
    """"1, 3 of 3 answers": each prompt's parsed replies (``parsed_<variant>``) of the answers asked, which are the
    answers less those left out, never asked (``left_out_<variant>``): a reply never asked is not one that failed to
    parse. Where the prompts were asked as many answers, the count is said once (``of``: said at all)."""
    parsed = by_prompt[f"parsed_{variant}"].astype(int)
    left = by_prompt[f"left_out_{variant}"].astype(int) if f"left_out_{variant}" in by_prompt else 0 * parsed
    asked = by_prompt["replies"].astype(int) - left
    if not left.any() and asked.nunique() == 1:
        return ", ".join(map(str, parsed)) + (f" of {asked.iloc[0]} answers" if of else "")
    return ", ".join(f"{p} of {a}" for p, a in zip(parsed, asked)) + " answers asked"


def judge_and_prompt(method: str) -> tuple[str, str]:
    """The judge and the prompt a method's row names ("SmolLM2-135M few-shot (5), integer" -> "SmolLM2-135M",
    "few-shot (5), integer"; a reader's judge's rows start with its label): the chapter names its methods
    "<judge> <prompt's method name>", so a sentence about a row names the judge the row is of."""
    reading = INTEGER if method.endswith(INTEGER) else ""
    base = method.removesuffix(reading)
    for prompt in sorted(METHOD_NAMES.values(), key=len, reverse=True):
        if base.endswith(f" {prompt}"):
            return base.removesuffix(f" {prompt}"), f"{prompt}{reading}"
    return method, ""  # a method named otherwise: the judge is the whole name, the prompt unknown


def judge_run_origins(judge_runs: Mapping[str, Any]) -> str:
    """The judge runs counted by where their replies came from ("3 LLM judge runs (2 replayed from the store, 1
    asked live)"), so a page never calls a run asked of a reader's server "replayed"."""
    origins = Counter(run.report.origin for run in judge_runs.values())
    if len(origins) == 1:
        return f"{pages.count(len(judge_runs), 'LLM judge run')} {next(iter(origins))}"
    return (f"{pages.count(len(judge_runs), 'LLM judge run')} ("
            + ", ".join(f"{n:,} {origin}" for origin, n in sorted(origins.items(), key=lambda item: -item[1])) + ")")


def synthetic_verdict(n_answers: int, judge_runs: Mapping[str, Any], random_seeds: int) -> Markdown:
    """The verdict of the synthetic run: the pipeline ran, and its numbers say nothing about serendipity."""
    return pages.verdict([
        PROSE("verdict.pipeline", n_answers=f"{n_answers:,}", n_proxies=f"{len(proxies.PROXIES)}",
              random_seeds=f"{random_seeds:,}", judge_runs=judge_run_origins(judge_runs)),
        PROSE("verdict.meaning"),
    ])

