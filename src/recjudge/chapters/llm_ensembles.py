"""The page of the chapter "Ensembles of judges": its opening box, tables with their captions, the figures of the
ensemble sizes and the glued findings with the rules that choose their words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from IPython.display import Markdown

from recjudge.compendium import figures, pages
from recjudge.compendium.claim_intervals import fisher_pct
from recjudge.compendium.comparisons import READERS_AVERAGE
from recjudge.compendium.results import save_table
from recjudge.compendium.tables import Table, correlation, count, error, format_table, paper_beside_ours, text
from recjudge.llm.judge_spec import reader_labels
from recjudge.metaeval.baselines import CONSTANT_PEARSON_NOTE
from recjudge.serendipity import auxiliary_data as aux
from recjudge.serendipity import ground_truth as ser
from recjudge.serendipity import proxies

METRICS = {"pearson_pct": correlation(1, scale="percent", label="Pearson (%)"), "mae": error(2, label="MAE"),
           "rmse": error(2, label="RMSE")}
RECORDED = "gpt-3.5-turbo (recorded)"
BEST_CELL = "Multi-LLM & Auxiliary Data"
#: The figure of each family of ensembles.
FAMILY_FIGURES = {"LLM judges": "fig-ensemble-size-llm", "Proxies": "fig-ensemble-size-proxies"}
#: The steadiness rule's vocabulary. Zhang et al. (section 5) observe for explanation judges that "the lower bound of
#: the evaluation accuracy also rises" with the number of judges averaged: here the rule reads the worst ensemble of
#: every size, and the lower bound rises only when it rises with every judge added (not the first size against the
#: last alone, whose one ensemble is its own worst).
LOWER_BOUND_RISES = ("the worst ensemble rises with every judge added, as Zhang et al. observe for explanation judges "
                     "(section 5: \"the lower bound of the evaluation accuracy also rises\")")
LOWER_BOUND_DOES_NOT = ("the worst ensemble does not rise with every judge added: Zhang et al.'s observation for "
                        "explanation judges (section 5: \"the lower bound of the evaluation accuracy also rises\") is "
                        "not seen here")


def opening(study: ser.Serendipity2018Study, members: Sequence[str], judges: Sequence[Mapping],
            settings: Sequence[str], history_lengths: Sequence[int], aux_sample_size: int, n_splits: int,
            round_scores: bool) -> Markdown:
    """The box that opens the chapter: data, the ensemble members, the proxies, the grid, how an ensemble scores,
    and the caveat on the tiny local model (naming the other families and the reader's judges that joined)."""
    members = list(members)
    facts = [
        ("Data", f"{study.data_label}, {study.source.label}"),
        ("LLM judges (ensemble members)", ", ".join(members) + f"; on the RQ1 stratified sample of "
                                                               f"{len(study.sample)} answers, replayed from the "
                                                               "response store"),
        ("Proxies (a separate ensemble)", ", ".join(proxies.PROXIES) + " on the same answers (as in the proxy "
                                                                       "chapter)"),
        ("Grid", f"{len(settings) + len(history_lengths)} auxiliary-data settings of the 5-shot judge x every subset "
                 f"of the other LLM judges, on the {aux_sample_size} answers of the auxiliary-data chapter; best cell "
                 f"also chosen on half of the users and reported on the other half ({n_splits} random splits)"),
        ("Ensemble score", "mean of the members' scores, " + ("rounded to a Likert level" if round_scores
                                                             else "not rounded")),
    ]
    labels = reader_labels(judges)
    readers = [name for name in members if any(name.startswith(f"{label} ") for label in labels)]
    others = [name for name in members if not name.startswith("SmolLM2") and name != RECORDED
              and name not in readers]
    caveat = ("Most members are SmolLM2-135M, a tiny model near noise level, under different prompts"
              + (f"; the other model families ({', '.join(others)}) are small local models too" if others else
                 ", so the ensembles average one weak model's prompt variants")
              + ": the figures show the method, not what an ensemble of capable judges does.")
    if readers:
        caveat += f" The reader's judges join the pool: {', '.join(readers)}."
    if study.synthetic:
        caveat = "**Synthetic data.** The answers are generated, not given by users. " + caveat
    return pages.opening(facts, caveat)


def show_baselines(study: ser.Serendipity2018Study, notebook: str, n_boot: int = 1000, seed: int = 0):
    """Random and a constant answer (the most frequent level and the mean, each chosen for a user on the other users'
    answers) on the sample every ensemble is scored on (``ser.trivial_baselines``; saved as ``baselines``, a table of
    its own so that the ensembles' rows are read as before)."""
    table = save_table(ser.trivial_baselines(study.sample, n_boot=n_boot, seed=seed), notebook, "baselines")
    return format_table(table[["method", "n", "pearson_pct", "mae", "rmse"]], {"n": count(), **METRICS},
                        labels={"method": "Baseline"},
                        caption=f"Beside the ensembles: Random (expected over seeds) and a constant answer on the same "
                                f"{len(study.sample)} answers; each constant is chosen for a user on the other users' "
                                f"answers; Pearson is {CONSTANT_PEARSON_NOTE}",
                        full_table=(notebook, "baselines"), audit=True)


def show_size_table(accuracy: pd.DataFrame, sizes: pd.DataFrame, families: Mapping[str, Sequence],
                    family_sizes: Mapping[str, Sequence[int]], n_rows: int, notebook: str):
    """Saves every ensemble and the summary by size; returns the table of Pearson (%) by size (MAE and RMSE in the
    full table), saying which families were enumerated only up to a size."""
    save_table(accuracy, notebook, "every_ensemble")
    save_table(sizes, notebook, "by_ensemble_size")
    shown = sizes[sizes["metric"] == "pearson_pct"]
    return format_table(
        shown[["family", "n", "n_ensembles", "mean", "best", "worst", "best_members"]],
        {"n": count(label="Size"), "n_ensembles": count(label="Ensembles"),
         "mean": correlation(1, scale="percent", label="Mean Pearson (%)"),
         "best": correlation(1, scale="percent", label="Best"),
         "worst": correlation(1, scale="percent", label="Worst"),
         "best_members": text(label="Best ensemble")},
        caption=f"Pearson (%) by ensemble size on {n_rows} answers (MAE and RMSE in the full table)"
                + "".join(f"; {f}: ensembles of up to {max(z)} of {len(families[f])} members (the pool is too "
                          "large for every subset)" for f, z in family_sizes.items() if max(z) < len(families[f])),
        full_table=(notebook, "by_ensemble_size"))


def draw_size_figures(sizes: pd.DataFrame, n_rows: int, study: ser.Serendipity2018Study) -> None:
    """Glues, per family, the mean, best and worst Pearson, MAE and RMSE by ensemble size (or why it is not drawn:
    fewer than two sizes)."""
    for family, name in FAMILY_FIGURES.items():
        part = sizes[sizes["family"] == family]
        if part["n"].nunique() < 2:
            figures.glue_not_drawn(name, f"{family}: fewer than two ensemble sizes in this run")
            continue
        fig = figures.plot_size_table(part, ["pearson_pct", "mae", "rmse"],
                                      {"pearson_pct": "Pearson (%)", "mae": "MAE", "rmse": "RMSE"})
        figures.glue_figure(name, fig,
                            "Read each panel left to right: a mean that rises (Pearson) or falls (MAE, RMSE) with the "
                            "size is what averaging more judges buys, and the best-worst band how much the choice of "
                            f"members matters. {family}: mean, best and worst Pearson (%), MAE and RMSE per ensemble "
                            "size, "
                            f"{n_rows} answers ({study.data_label}); the shape of Kang et al.'s Figures 5-6.")


def show_best_per_setting(grids: Mapping[str, tuple], n_rows: int, notebook: str):
    """Saves each reading's grid (``grid``, ``grid_integer``); returns the best cell of every setting (expected
    scores)."""
    for reading, (_, grid) in grids.items():
        save_table(grid, notebook, "grid" + ("_integer" if reading else ""))
    grid = grids[""][1]
    best_per_setting = grid.loc[grid.groupby("setting", sort=False)["pearson_pct"].idxmax().dropna()]
    return format_table(best_per_setting[["setting", "members", "n", "pearson_pct", "mae", "rmse"]],
                        {"n": count(), **METRICS}, labels={"members": "Best cell of the setting"},
                        caption=f"Best cell per auxiliary-data setting ({len(grid)} cells in all, {n_rows} answers; "
                                "chosen and reported on the same answers; expected scores)",
                        full_table=(notebook, "grid"), audit=True)


def show_readers_average(average: pd.DataFrame, notebook: str) -> Table | Markdown:
    """Saves the average of the reader's judges against each of them (``ser.readers_average``; empty with fewer than
    two) and shows it, each judge's Pearson beside the average's with the average's lead and its 95% interval on the
    same answers (``metaeval.dependent.contrast_interval``, their measured correlation); the claim of RQ3 reads it."""
    from recjudge.metaeval.dependent import contrast_interval

    save_table(average, notebook, "readers_average")
    if average.empty:
        return Markdown("")
    mean = average[average["method"] == READERS_AVERAGE].iloc[0]
    members = average[average["method"] != READERS_AVERAGE]
    leads = [contrast_interval(mean["pearson_pct"] / 100, row["pearson_pct"] / 100, int(row["n_with_versus"]),
                               r_ab=row["r_with_versus"]) for _, row in members.iterrows()]
    view = members[["judge", "n", "pearson_pct"]].assign(
        average=float(mean["pearson_pct"]), lead=[100 * lead[0] for lead in leads],
        interval=[f"[{pages.fmt(100 * lead[1], 1)}, {pages.fmt(100 * lead[2], 1)}]" for lead in leads])
    return format_table(view, {"n": count(), "pearson_pct": correlation(1, scale="percent", label="Pearson (%)"),
                               "average": correlation(1, scale="percent", label="Their mean (%)"),
                               "lead": correlation(1, scale="percent", label="Lead of the mean (points)"),
                               "interval": text(label="95% interval")},
                        labels={"judge": "Your judge"},
                        caption=f"The mean of your {len(members)} judges (5-shot, expected scores) against each of "
                                "them on the same answers; the lead's interval reads the two correlations and their "
                                "measured correlation with each other", full_table=(notebook, "readers_average"))


def save_table5(table5: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                notebook: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Saves our Table 5 rows of every reading and the held-out splits (each named by its reading); returns the rows
    and the held-out splits of the expected scores."""
    ours = save_table(pd.concat([rows for rows, _ in table5.values()], ignore_index=True), notebook, "table5_ours")
    held_all = save_table(pd.concat([held.assign(reading="most likely score token" if reading else "expected score")
                                     for reading, (_, held) in table5.items()], ignore_index=True),
                          notebook, "held_out_selection")
    return ours, held_all[held_all["reading"] == "expected score"]


def paper_table5() -> pd.DataFrame:
    """The paper's Table 5 (Serendipity-2018), each row also under its integer reading's name (the paper's judges
    answer integers)."""
    paper = aux.kang2025_tables45().query("table == 5 and dataset == 'Serendipity-2018'")
    paper = paper[["method", "pearson_pct", "mae", "rmse"]]
    return pd.concat([paper, paper.assign(method=paper["method"] + ser.INTEGER)], ignore_index=True)


def show_table5_vs_paper(ours: pd.DataFrame, n_splits: int, notebook: str):
    paper = paper_table5()
    save_table(ours.merge(paper.rename(columns=lambda c: c if c == "method" else f"paper_{c}"), on="method",
                          how="left"), notebook, "table5_vs_paper")
    shown = pages.unless_too_few_rows(ours.drop(columns=["cell"]), list(METRICS), n_max_column="n_max",
                                      per=" per held-out half")
    return paper_beside_ours(shown, paper[paper["method"].isin(ours["method"])], keys="method",
                             metrics=METRICS, labels={"method": "Method"},
                             caption="Table 5 (Serendipity-2018) of Kang et al. beside ours (held-out rows: means "
                                     f"over {n_splits} random halves of the users, too few where a half holds fewer "
                                     f"than {pages.MIN_ANSWERS} answers, this book's minimum; rows marked "
                                     f"'{ser.INTEGER.strip(', ')}' read every judge as the paper's judges answer, its "
                                     "most likely score token, the others as its expected score)",
                             full_table=(notebook, "table5_vs_paper"))


def show_table5_synthetic(ours: pd.DataFrame):
    return format_table(ours, {"n": count(), "n_max": count(), **METRICS},
                        labels={"n": "n (smallest half)", "n_max": "n (largest half)"},
                        caption="Table 5 rows on the synthetic survey (held-out rows: answers of one held-out half)")


def _half_width(n: int | None) -> str:
    """"; each Pearson on 200 answers has a 95% interval of about ±14 points", by Fisher's z at r = 0; "" without
    n."""
    from recjudge.metaeval.dependent import correlation_interval

    if not n or n <= 3:
        return ""
    return (f"; each Pearson on {n:,} answers has a 95% interval of about "
            f"±{pages.fmt(100 * correlation_interval(0.0, n)[1], 0)} points")


def held_out_finding(ours: pd.DataFrame, held: pd.DataFrame) -> Markdown:
    """The best cell chosen on half of the users and reported on the other half, against NA on the same halves, and
    whether the gain in sample is mostly selection; "too few answers" when a held-out half holds fewer than this
    book's minimum (the rule of ``pages.MIN_ANSWERS``: a correlation on 5 answers is no number)."""
    by_method = ours.set_index("method")
    row = by_method.loc[f"{BEST_CELL}, held out"]
    low, high = int(row["n"]), int(row.get("n_max", row["n"]))
    per_half = f"{low}" if low == high else f"{low}–{high}"
    if pages.too_few(low):
        return Markdown(f"Chosen on half of the users and reported on the other half ({len(held)} splits), the best "
                        f"cell has {pages.too_few_text(low, detail=f'{per_half} per held-out half')}: no held-out "
                        "number, and so no reading of how much of the in-sample gain is selection.")
    gain_in_sample = by_method.loc[BEST_CELL, "pearson_pct"] - by_method.loc[aux.NA, "pearson_pct"]
    gain_held_out = (held["heldout_pearson_pct"] - held["na_heldout_pearson_pct"]).mean()
    selection = ("most of the in-sample gain is selection" if gain_held_out < gain_in_sample / 2
                 else "most of the in-sample gain survives on unseen users")
    return Markdown(
        f"Chosen on half of the users and reported on the other half ({per_half} answers a half), the best cell "
        f"reaches {pages.fmt(held['heldout_pearson_pct'].mean(), 1)}% on average over {len(held)} splits (from "
        f"{pages.fmt(held['heldout_pearson_pct'].min(), 1)}% to {pages.fmt(held['heldout_pearson_pct'].max(), 1)}%), "
        f"against {pages.fmt(held['na_heldout_pearson_pct'].mean(), 1)}% for NA on the same halves: a gain over NA "
        f"of {pages.fmt(gain_held_out, 1)} points held out against {pages.fmt(gain_in_sample, 1)} in sample, so "
        f"{selection}.")


def grid_in_sample(best: pd.Series, n_grid_rows: int, n_grid_cells: int) -> str:
    """The best cell of the grid in sample, with Fisher's interval (which selection flatters); too few answers or an
    undefined Pearson are said so instead of a number."""
    head = f"The best cell on the {n_grid_rows:,} answers is {best['cell']}"
    if pages.too_few(n_grid_rows):
        return f"{head}, on {pages.too_few_text(n_grid_rows)} to read its agreement."
    if pd.isna(best["pearson_pct"]):
        return f"{head}; its Pearson is {pages.UNDEFINED} (the scores do not vary, or none was read)."
    return (f"{head} with {fisher_pct(best['pearson_pct'], n_grid_rows)} (MAE {pages.fmt(best['mae'], 2)}; "
            f"Fisher's interval, which a maximum chosen among {n_grid_cells:,} cells on the answers it is reported "
            "on flatters).")


def findings(sizes: pd.DataFrame, ours: pd.DataFrame, held: pd.DataFrame, n_members: int, n_grid_rows: int,
             n_grid_cells: int, n_answers: int | None = None) -> dict:
    """The glued values of the detailed verdict: the mean and the worst ensemble by size and whether the worst rises
    with every judge added (the steadiness rule), the best cell in sample with its interval, and held out
    (``held_out_finding``)."""
    llm_sizes = sizes[(sizes["family"] == "LLM judges") & (sizes["metric"] == "pearson_pct")].sort_values("n")
    first, last = llm_sizes.iloc[0], llm_sizes.iloc[-1]
    worst = llm_sizes["worst"].to_numpy(dtype=float)
    rises = len(worst) > 1 and bool((worst[1:] > worst[:-1]).all())
    between = llm_sizes.iloc[1:-1]
    n_all = (f"all {last['n']:.0f}" if last["n"] == n_members
             else f"{last['n']:.0f} of {n_members}, the largest enumerated")
    by_method = ours.set_index("method")
    best_in = by_method.loc[BEST_CELL]
    return {
        "mean_single": pages.percent(first["mean"]), "mean_all": pages.percent(last["mean"]), "n_all": n_all,
        "worst_single": pages.percent(first["worst"]), "worst_all": pages.percent(last["worst"]),
        "worst_between": (f", through {pages.fmt(between['worst'].min(), 1)}% to "
                          f"{pages.fmt(between['worst'].max(), 1)}% for {between['n'].min():.0f} to "
                          f"{between['n'].max():.0f} judges," if len(between) else ""),
        "sizes_note": _half_width(n_answers),
        "steadier_finding": LOWER_BOUND_RISES if rises else LOWER_BOUND_DOES_NOT,
        "grid_in_sample": grid_in_sample(best_in, n_grid_rows, n_grid_cells),
        "held_out_finding": held_out_finding(ours, held),
    }


def integer_finding(ours: pd.DataFrame) -> Markdown:
    """The best cell read as integers, in sample and held out (empty when the run has no integer reading, or no
    answer to read it on: a run that asks only a reader's judge)."""
    by_method = ours.set_index("method")
    if f"{BEST_CELL}{ser.INTEGER}" not in by_method.index:
        return Markdown("")
    best, held = by_method.loc[f"{BEST_CELL}{ser.INTEGER}"], by_method.loc[f"{BEST_CELL}{ser.INTEGER}, held out"]
    if not best["n"] > 0:
        return Markdown("")
    low, high = int(held["n"]), int(held.get("n_max", held["n"]))
    held_words = pages.unless_too_few(
        f"{pages.fmt(held['pearson_pct'], 1)}% held out (MAE {pages.fmt(held['mae'], 2)})", low,
        detail=f"{low if low == high else f'{low}–{high}'} per held-out half")
    in_sample = pages.unless_too_few(
        f"{fisher_pct(best['pearson_pct'], int(best['n']))} (MAE {pages.fmt(best['mae'], 2)})", best["n"])
    return Markdown(f"Read as integers, as the paper's judges answer, the best cell is {best['cell']} with "
                    f"{in_sample} in sample; held out: {held_words}.")


def paper_finding(synthetic: bool) -> Markdown:
    """That the paper's best cell is a maximum over its grid with no held-out check (empty on synthetic data)."""
    if synthetic:
        return Markdown("")
    printed = aux.kang2025_tables45().query("table == 5 and dataset == 'Serendipity-2018'").set_index("method")
    paper_best, paper_na = printed.loc[[BEST_CELL, aux.NA], "pearson_pct"]
    return Markdown(f"The paper's best cell ({pages.fmt(paper_best, 2)}% with Qwen2.5-14B, Qwen2.5-72B and GPT-4) is "
                    "a maximum over its grid reported without a held-out check; whether its gain over NA "
                    f"({pages.fmt(paper_na, 2)}%) survives one is open.")
