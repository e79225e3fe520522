"""The page of the chapter "Would this book recognise a capable judge?": the planted judges' operating
characteristics, read from their committed tables (``recjudge.planted.characteristics``; the chapter never
simulates), per claim the chance of a favourable verdict when the paper's effect is real (power) and when it is not
(false verdicts), with their intervals, the figure, the planted effects, and the findings the rules below word."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown

from recjudge.compendium import claim_evidence, figures, pages
from recjudge.compendium.prose import Prose
from recjudge.compendium.results import committed_results_dir, save_table
from recjudge.compendium.tables import Table, count, format_table, text
from recjudge.planted import characteristics as oc
from recjudge.planted.effects import NULL, PAPER
from recjudge.planted.simulation import PROFILES, SIMULATIONS

#: The favourable verdict: its share of seeds is the power (paper planted) and the false-verdict rate (null).
FAVOURABLE = claim_evidence.REPRODUCED
#: This book's own rules (no paper states one): a profile decides a claim when the paper's effect gets the favourable
#: verdict in at least this share of seeds (the 80% power of the book's sample-size needs) ...
ENOUGH_POWER = 0.8
#: ... and the rule errs for a claim when a planted null gets it more often than this (the share a test at α = 0.05
#: allows), beyond the seeds' noise: the lower end of the share's 95% interval above it.
FALSE_LIMIT = 0.05
#: A share's 95% interval over the seeds: Wilson's (``statsmodels.stats.proportion.proportion_confint``).
INTERVAL_METHOD = "wilson"
#: Each claim's short name in the figure and tables, in the order of ``simulation.SIMULATIONS``.
SHORT_NAMES = {simulated.claim: simulated.short for simulated in SIMULATIONS}
#: The page's sentences (``notebooks/prose/planted_judges.md``).
PROSE = Prose("planted_judges")


def read_csv(path) -> pd.DataFrame:
    """A committed table, its text read as written ("null" is a planted value, not a missing one)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def load_tables(folder: Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """The committed verdict of every seed, the shares, the planted effects and the digests of their inputs (the
    committed book's, in a variant too: a reader's judge does not change them), from ``folder`` if given."""
    folder = folder or committed_results_dir() / oc.CHAPTER
    names = [f"{oc.VERDICTS_TABLE}.csv", f"{oc.TABLE}.csv", f"{oc.EFFECTS_TABLE}.csv", oc.INPUTS_FILE]
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: {', '.join(missing)} missing: run scripts/planted_characteristics.py")
    return (read_csv(folder / names[0]), read_csv(folder / names[1]), read_csv(folder / names[2]),
            json.loads((folder / oc.INPUTS_FILE).read_text(encoding="utf-8")))


def share_interval(successes: int, seeds: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, seeds, alpha=0.05, method=INTERVAL_METHOD)
    return float(low), float(high)


def rates(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Per claim and profile: n, the seeds, and the share of seeds with the favourable verdict when the paper's
    effect is planted (``power``) and when none is (``false``), each with its 95% interval; the claims in the
    simulations' order, the profiles smallest first."""
    rows = []
    for (claim, profile), part in per_seed.groupby(["claim", "profile"], sort=False):
        row = {"claim": claim, "short": SHORT_NAMES.get(claim, claim), "profile": profile,
               "n": int(part["n"].iloc[0])}
        for planted, name in ((PAPER, "power"), (NULL, "false")):
            mine = part[part["planted"] == planted]
            hits = int((mine["verdict"] == FAVOURABLE).sum())
            low, high = share_interval(hits, len(mine))
            row.update({f"{name}_seeds": len(mine), name: hits / len(mine), f"{name}_low": low,
                        f"{name}_high": high})
        rows.append(row)
    order = {claim: i for i, claim in enumerate(SHORT_NAMES)}
    at = {profile: i for i, profile in enumerate(PROFILES)}
    table = pd.DataFrame(rows)
    return table.assign(_c=table["claim"].map(order), _p=table["profile"].map(at)).sort_values(
        ["_c", "_p"]).drop(columns=["_c", "_p"]).reset_index(drop=True)


def _share(value: float, low: float, high: float) -> str:
    return f"{pages.fmt(100 * value, 0)}% [{pages.fmt(100 * low, 0)}, {pages.fmt(100 * high, 0)}]"


def show_rates(table: pd.DataFrame, notebook: str) -> Table:
    """The power and false-verdict shares per claim and profile, with their intervals (saved)."""
    save_table(table, notebook, "power_and_false_verdicts")
    view = table.assign(power_text=[_share(*v) for v in zip(table["power"], table["power_low"], table["power_high"])],
                        false_text=[_share(*v) for v in zip(table["false"], table["false_low"], table["false_high"])])
    return format_table(view[["short", "profile", "n", "power_seeds", "power_text", "false_text"]],
                        {"n": count(label="n"), "power_seeds": count(label="Seeds"),
                         "power_text": text(label="Paper's effect planted [95% interval]"),
                         "false_text": text(label="No effect planted [95% interval]")},
                        labels={"short": "Claim", "profile": "Profile"},
                        caption=PROSE("rates.caption", favourable=FAVOURABLE),
                        full_table=(notebook, "power_and_false_verdicts"))


def figure(table: pd.DataFrame):
    """One panel per profile: per claim, the share of seeds with the favourable verdict when the paper's effect is
    planted (filled circles) and when none is (open squares), with their 95% intervals."""
    import matplotlib.pyplot as plt

    claims = list(dict.fromkeys(table["short"]))
    rows = np.arange(len(claims))[::-1]
    fig, axes = plt.subplots(1, len(PROFILES), figsize=(figures.FIGURE_WIDTH_IN, 0.42 * len(claims) + 1.9),
                             sharey=True)
    for ax, profile in zip(axes, PROFILES):
        part = table[table["profile"] == profile].set_index("short").reindex(claims)
        for name, label, colour, marker, filled, shift in (
                ("power", "paper's effect planted", figures.PALETTE[0], "o", True, 0.14),
                ("false", "no effect planted", figures.PALETTE[1], "s", False, -0.14)):
            ax.errorbar(part[name], rows + shift,
                        # Wilson's ends at 0 or 1 seeds can lie a rounding error beyond the share
                        xerr=np.clip([part[name] - part[f"{name}_low"], part[f"{name}_high"] - part[name]], 0, None),
                        fmt=marker, color=colour, mfc=colour if filled else "white", capsize=2, label=label)
        ax.axvline(ENOUGH_POWER, color="0.5", linestyle=":", linewidth=1)
        ax.set_xlim(-0.04, 1.04)
        ax.set_xticks([0, 0.5, 1])
        ax.set_xlabel(f"share of seeds, {profile}")
        ax.set_yticks(rows)
        ax.set_yticklabels(claims)
    axes[0].set_ylabel("claim")
    axes[1].legend(loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def decided_at(table: pd.DataFrame, profile: str) -> list[str]:
    """The claims a plan at ``profile`` decides: power of at least ``ENOUGH_POWER``."""
    part = table[table["profile"] == profile]
    return part.loc[part["power"] >= ENOUGH_POWER, "short"].tolist()


def erring(table: pd.DataFrame) -> pd.DataFrame:
    """The cells (claim, profile) where a planted null gets the favourable verdict more often than ``FALSE_LIMIT``
    beyond the seeds' noise (the interval's lower end above it)."""
    return table[table["false_low"] > FALSE_LIMIT]


def listed(names: Sequence[str], none: str = "none") -> str:
    """"a, b and c"; ``none`` for an empty list."""
    names = list(names)
    if not names:
        return none
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def findings(table: pd.DataFrame, per_seed: pd.DataFrame) -> dict[str, object]:
    """The chapter's glued numbers and the words its rules choose."""
    paper = table[table["profile"] == "paper"]
    short = paper[paper["power"] < ENOUGH_POWER]
    worst = table.loc[table["false"].idxmax()]
    wrong = erring(table)
    seeds = per_seed.groupby(["claim", "planted", "profile"])["seed"].nunique()
    return {
        "n_claims": table["claim"].nunique(),
        "favourable": FAVOURABLE,
        "enough_power": f"{pages.fmt(100 * ENOUGH_POWER, 0)}%",
        "false_limit": f"{pages.fmt(100 * FALSE_LIMIT, 0)}%",
        "largest_false": _share(worst["false"], worst["false_low"], worst["false_high"]),
        "largest_false_where": f"{worst['short']}, {worst['profile']} profile",
        "erring": "no claim at any profile" if wrong.empty else listed(
            [f"{row.short} ({row.profile})" for row in wrong.itertuples()]),
        "seeds_range": pages.span(seeds.min(), seeds.max(), 0) if seeds.min() != seeds.max() else f"{seeds.min()}",
        "decided_paper": listed(decided_at(table, "paper")),
        "decided_default": listed(decided_at(table, "default")),
        "decided_check": listed(decided_at(table, "check")),
        "too_few": too_few_sentence([PROSE("undecided.claim", claim=row.short, power=pages.percent(100 * row.power, 0),
                                           verdict=most_often(per_seed, row.claim)) for row in short.itertuples()]),
    }


def most_often(per_seed: pd.DataFrame, claim: str) -> str:
    """The verdict the rule gives ``claim`` most often at the paper profile with the paper's effect planted."""
    mine = per_seed[(per_seed["claim"] == claim) & (per_seed["profile"] == "paper") & (per_seed["planted"] == PAPER)]
    return str(mine["verdict"].value_counts().idxmax())


def too_few_sentence(claims: Sequence[str]) -> str:
    """The claims a judge with the paper's effect does not bring to ``FAVOURABLE`` in ``ENOUGH_POWER`` of seeds at the
    paper profile, which already judges every answer the data hold: neither a better judge nor a larger plan decides
    them with these datasets."""
    if not claims:
        return PROSE("undecided.none")
    return PROSE("undecided", n_claims=pages.count(len(claims), "claim"), are="are" if len(claims) > 1 else "is",
                 claims=listed(claims))


def freshness(stale: Sequence[str], unchecked: Sequence[str]) -> Markdown:
    """Whether the committed tables were computed from this build's inputs: nothing when they were, else the inputs
    that differ (``stale``) or that this build cannot compare (``unchecked``: datasets it does not hold), and the
    command that computes the tables again."""
    lines = []
    if stale:
        lines.append(PROSE("freshness.stale", inputs=listed(stale)))
    if unchecked:
        lines.append(PROSE("freshness.unchecked",
                           datasets=listed([name.removeprefix("dataset ") for name in unchecked])))
    return Markdown("\n\n".join(lines))
