"""The page of the chapter "Ensembles of judges": its opening box, tables with their captions, the figures of the
ensemble sizes and the glued findings with the rules that choose their words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from IPython.display import Markdown

from recjudge.compendium import figures, pages
from recjudge.compendium.claim_intervals import fisher_pct
from recjudge.compendium.comparisons import READERS_AVERAGE
from recjudge.compendium.prose import Prose
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
#: The page's sentences (``notebooks/prose/llm_ensembles.md``).
PROSE = Prose("llm_ensembles")


def opening(study: ser.Serendipity2018Study, members: Sequence[str], judges: Sequence[Mapping],
            settings: Sequence[str], history_lengths: Sequence[int], aux_sample_size: int, n_splits: int,
            round_scores: bool) -> Markdown:
    """The box that opens the chapter: data, the ensemble members, the proxies, the grid, how an ensemble scores,
    and the caveat on the tiny local model (naming the other families and the reader's judges that joined)."""
    members = list(members)
    facts = [
        ("Data", f"{study.data_label}, {study.source.label}"),
        ("LLM judges (ensemble members)", PROSE("opening.members", members=", ".join(members),
                                                n_answers=len(study.sample))),
        ("Proxies (a separate ensemble)", PROSE("opening.proxies", proxies=", ".join(proxies.PROXIES))),
        ("Grid", PROSE("opening.grid", n_settings=len(settings) + len(history_lengths), n_answers=aux_sample_size,
                       n_splits=n_splits)),
        ("Ensemble score", PROSE("opening.score.rounded" if round_scores else "opening.score.not_rounded")),
    ]
    labels = reader_labels(judges)
    readers = [name for name in members if any(name.startswith(f"{label} ") for label in labels)]
    others = [name for name in members if not name.startswith("SmolLM2") and name != RECORDED
              and name not in readers]
    families = ("; " + PROSE("caveat.other_families", others=", ".join(others)) if others
                else ", " + PROSE("caveat.one_family"))
    caveat = PROSE("caveat", families=families)
    if readers:
        caveat += " " + PROSE("caveat.readers", readers=", ".join(readers))
    if study.synthetic:
        caveat = PROSE("caveat.synthetic") + " " + caveat
    return pages.opening(facts, caveat)


def show_baselines(study: ser.Serendipity2018Study, notebook: str, n_boot: int = 1000, seed: int = 0):
    """Random and a constant answer (the most frequent level and the mean, each chosen for a user on the other users'
    answers) on the sample every ensemble is scored on (``ser.trivial_baselines``; saved as ``baselines``, a table of
    its own so that the ensembles' rows are read as before)."""
    table = save_table(ser.trivial_baselines(study.sample, n_boot=n_boot, seed=seed), notebook, "baselines")
    return format_table(table[["method", "n", "pearson_pct", "mae", "rmse"]], {"n": count(), **METRICS},
                        labels={"method": "Baseline"},
                        caption=PROSE("baselines.caption", n_answers=len(study.sample),
                                      constant_pearson=CONSTANT_PEARSON_NOTE),
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
        caption=PROSE("sizes.caption", n_answers=n_rows)
                + "".join("; " + PROSE("sizes.caption.cut", family=f, largest=max(z), n_members=len(families[f]))
                          for f, z in family_sizes.items() if max(z) < len(families[f])),
        full_table=(notebook, "by_ensemble_size"))


def draw_size_figures(sizes: pd.DataFrame, n_rows: int, study: ser.Serendipity2018Study) -> None:
    """Glues, per family, the mean, best and worst Pearson, MAE and RMSE by ensemble size (or why it is not drawn:
    fewer than two sizes)."""
    for family, name in FAMILY_FIGURES.items():
        part = sizes[sizes["family"] == family]
        if part["n"].nunique() < 2:
            figures.glue_not_drawn(name, PROSE("size_figure.not_drawn", family=family))
            continue
        fig = figures.plot_size_table(part, ["pearson_pct", "mae", "rmse"],
                                      {"pearson_pct": "Pearson (%)", "mae": "MAE", "rmse": "RMSE"})
        figures.glue_figure(name, fig, PROSE("size_figure.caption", family=family, n_answers=n_rows,
                                             data=study.data_label))


def show_best_per_setting(grids: Mapping[str, tuple], n_rows: int, notebook: str):
    """Saves each reading's grid (``grid``, ``grid_integer``); returns the best cell of every setting (expected
    scores)."""
    for reading, (_, grid) in grids.items():
        save_table(grid, notebook, "grid" + ("_integer" if reading else ""))
    grid = grids[""][1]
    best_per_setting = grid.loc[grid.groupby("setting", sort=False)["pearson_pct"].idxmax().dropna()]
    return format_table(best_per_setting[["setting", "members", "n", "pearson_pct", "mae", "rmse"]],
                        {"n": count(), **METRICS}, labels={"members": "Best cell of the setting"},
                        caption=PROSE("best_per_setting.caption", n_cells=len(grid), n_answers=n_rows),
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
                        caption=PROSE("readers_average.caption", n_judges=len(members)),
                        full_table=(notebook, "readers_average"))


def save_table5(table5: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                notebook: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Saves our Table 5 rows of every reading and the held-out splits (each named by its reading); returns the rows
    and the held-out splits of the expected scores."""
    ours = save_table(pd.concat([rows for rows, _ in table5.values()], ignore_index=True), notebook, "table5_ours")
    held_all = save_table(pd.concat([held.assign(reading="most likely score token" if reading else "expected score")
                                     for reading, (_, held) in table5.items()], ignore_index=True),
                          notebook, "held_out_selection")
    return ours, held_all[held_all["reading"] == "expected score"]


def _printed_table5() -> pd.DataFrame:
    """The rows of Kang et al.'s Table 5 on Serendipity-2018, as printed."""
    tables = aux.kang2025_tables45()
    return tables[(tables["table"] == 5) & (tables["dataset"] == "Serendipity-2018")]


def paper_table5() -> pd.DataFrame:
    """The paper's Table 5 (Serendipity-2018), each row also under its integer reading's name (the paper's judges
    answer integers)."""
    paper = _printed_table5()[["method", "pearson_pct", "mae", "rmse"]]
    return pd.concat([paper, paper.assign(method=paper["method"] + ser.INTEGER)], ignore_index=True)


def show_table5_vs_paper(ours: pd.DataFrame, n_splits: int, notebook: str):
    paper = paper_table5()
    save_table(ours.merge(paper.rename(columns=lambda c: c if c == "method" else f"paper_{c}"), on="method",
                          how="left"), notebook, "table5_vs_paper")
    shown = pages.unless_too_few_rows(ours.drop(columns=["cell"]), list(METRICS), n_max_column="n_max",
                                      per=" per held-out half")
    return paper_beside_ours(shown, paper[paper["method"].isin(ours["method"])], keys="method",
                             metrics=METRICS, labels={"method": "Method"},
                             caption=PROSE("table5.caption", n_splits=n_splits, min_answers=pages.MIN_ANSWERS,
                                           integer=ser.INTEGER.strip(", ")),
                             full_table=(notebook, "table5_vs_paper"))


def show_table5_synthetic(ours: pd.DataFrame):
    return format_table(ours, {"n": count(), "n_max": count(), **METRICS},
                        labels={"n": "n (smallest half)", "n_max": "n (largest half)"},
                        caption=PROSE("table5_synthetic.caption"))


def _half_width(n: int | None) -> str:
    """"; each Pearson on 200 answers has a 95% interval of about ±14 points", by Fisher's z at r = 0; "" without
    n."""
    from recjudge.metaeval.dependent import correlation_interval

    if not n or n <= 3:
        return ""
    return "; " + PROSE("sizes_note", n_answers=f"{n:,}",
                        half_width=pages.fmt(100 * correlation_interval(0.0, n)[1], 0))


def held_out_finding(ours: pd.DataFrame, held: pd.DataFrame) -> Markdown:
    """The best cell chosen on half of the users and reported on the other half, against NA on the same halves, and
    whether the gain in sample is mostly selection; "too few answers" when a held-out half holds fewer than this
    book's minimum (the rule of ``pages.MIN_ANSWERS``: a correlation on 5 answers is no number)."""
    by_method = ours.set_index("method")
    row = by_method.loc[f"{BEST_CELL}, held out"]
    low, high = int(row["n"]), int(row.get("n_max", row["n"]))
    per_half = f"{low}" if low == high else f"{low}–{high}"
    if pages.too_few(low):
        return Markdown(PROSE("held_out.too_few", n_splits=len(held),
                              too_few=pages.too_few_text(low, detail=f"{per_half} per held-out half")))
    gain_in_sample = by_method.loc[BEST_CELL, "pearson_pct"] - by_method.loc[aux.NA, "pearson_pct"]
    gain_held_out = (held["heldout_pearson_pct"] - held["na_heldout_pearson_pct"]).mean()
    selection = PROSE("held_out.selection" if gain_held_out < gain_in_sample / 2 else "held_out.survives")
    return Markdown(PROSE(
        "held_out", per_half=per_half, mean=pages.fmt(held["heldout_pearson_pct"].mean(), 1), n_splits=len(held),
        lowest=pages.fmt(held["heldout_pearson_pct"].min(), 1), highest=pages.fmt(held["heldout_pearson_pct"].max(), 1),
        na_mean=pages.fmt(held["na_heldout_pearson_pct"].mean(), 1), gain_held_out=pages.fmt(gain_held_out, 1),
        gain_in_sample=pages.fmt(gain_in_sample, 1), selection=selection))


def grid_in_sample(best: pd.Series, n_grid_rows: int, n_grid_cells: int) -> str:
    """The best cell of the grid in sample, with Fisher's interval (which selection flatters); too few answers or an
    undefined Pearson are said so instead of a number."""
    cell = {"n_answers": f"{n_grid_rows:,}", "cell": best["cell"]}
    if pages.too_few(n_grid_rows):
        return PROSE("grid_in_sample.too_few", **cell, too_few=pages.too_few_text(n_grid_rows))
    if pd.isna(best["pearson_pct"]):
        return PROSE("grid_in_sample.undefined", **cell, undefined=pages.UNDEFINED)
    return PROSE("grid_in_sample", **cell, pearson=fisher_pct(best["pearson_pct"], n_grid_rows),
                 mae=pages.fmt(best["mae"], 2), n_cells=f"{n_grid_cells:,}")


def findings(sizes: pd.DataFrame, ours: pd.DataFrame, held: pd.DataFrame, n_members: int, n_grid_rows: int,
             n_grid_cells: int, n_answers: int | None = None) -> dict:
    """The glued values of the detailed verdict: the mean and the worst ensemble by size and whether the worst rises
    with every judge added (the steadiness rule), the best cell in sample with its interval, and held out
    (``held_out_finding``)."""
    llm_sizes = sizes[(sizes["family"] == "LLM judges") & (sizes["metric"] == "pearson_pct")].sort_values("n")
    first, last = llm_sizes.iloc[0], llm_sizes.iloc[-1]
    # The steadiness rule. Zhang et al. (section 5) observe for explanation judges that "the lower bound of the
    # evaluation accuracy also rises" with the number of judges averaged: here the rule reads the worst ensemble of
    # every size, and the lower bound rises only when it rises with every judge added (not the first size against
    # the last alone, whose one ensemble is its own worst).
    worst = llm_sizes["worst"].to_numpy(dtype=float)
    rises = len(worst) > 1 and bool((worst[1:] > worst[:-1]).all())
    between = llm_sizes.iloc[1:-1]
    n_all = (PROSE("n_all.every", n=f"{last['n']:.0f}") if last["n"] == n_members
             else PROSE("n_all.largest", n=f"{last['n']:.0f}", n_members=n_members))
    by_method = ours.set_index("method")
    best_in = by_method.loc[BEST_CELL]
    return {
        "mean_single": pages.percent(first["mean"]), "mean_all": pages.percent(last["mean"]), "n_all": n_all,
        "worst_single": pages.percent(first["worst"]), "worst_all": pages.percent(last["worst"]),
        "worst_between": (", " + PROSE("worst_between", lowest=pages.fmt(between["worst"].min(), 1),
                                       highest=pages.fmt(between["worst"].max(), 1),
                                       fewest=f"{between['n'].min():.0f}", most=f"{between['n'].max():.0f}") + ","
                          if len(between) else ""),
        "sizes_note": _half_width(n_answers),
        "steadier_finding": PROSE("steadiness.rises" if rises else "steadiness.does_not_rise"),
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
        PROSE("integer.held_out", pearson=pages.fmt(held["pearson_pct"], 1), mae=pages.fmt(held["mae"], 2)), low,
        detail=f"{low if low == high else f'{low}–{high}'} per held-out half")
    in_sample = pages.unless_too_few(
        f"{fisher_pct(best['pearson_pct'], int(best['n']))} (MAE {pages.fmt(best['mae'], 2)})", best["n"])
    return Markdown(PROSE("integer", cell=best["cell"], in_sample=in_sample, held_out=held_words))


def paper_finding(synthetic: bool) -> Markdown:
    """That the paper's best cell is a maximum over its grid with no held-out check (empty on synthetic data)."""
    if synthetic:
        return Markdown("")
    printed = _printed_table5().set_index("method")
    paper_best, paper_na = printed.loc[[BEST_CELL, aux.NA], "pearson_pct"]
    return Markdown(PROSE("paper_finding", paper_best=pages.fmt(paper_best, 2), paper_na=pages.fmt(paper_na, 2)))
