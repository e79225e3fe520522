"""The papers' error tables beside a constant answer and Random, from the distributions the papers print.

Tokutake et al. print the distribution of their ground truth g over its five levels (section 4.1: 321 / 1,022 / 586 /
208 / 13 answers of Serendipity-2018) and, in Table 1, the MAE and three-class accuracy of four prompts with two LLMs.
:func:`tokutake_baselines` scores the constant answers and Random on that distribution (each constant chosen leaving
the answer it is scored on out; with 2,150 answers that never changes the most frequent level), and
:func:`tokutake_table1_vs_baselines` sets them beside every LLM row of Table 1. No paper computes these rows.
"""

from __future__ import annotations

import pandas as pd

from recjudge import papers
from recjudge.metaeval.baselines import MEAN, MODE, RANDOM, from_counts, three_class

#: Tokutake et al.'s Table 1 names its two judges by column suffix.
TOKUTAKE_MODELS = {"gpt": "GPT-4o-mini", "llama": "Llama-3.1-70B (4-bit)"}
TOKUTAKE_STRATEGIES = {"base": "Base", "ls": "LS", "cot": "CoT", "ltm": "LtM"}


def tokutake_g_counts() -> pd.Series:
    """The printed distribution of g: level → answers."""
    g = papers.table("tokutake2025framework_g_distribution")
    return pd.Series(g["answers"].to_numpy(), index=g["level"].astype(float), name="answers")


def tokutake_baselines() -> pd.DataFrame:
    """The constant answers and Random on the printed distribution of g, with Tokutake et al.'s three-class
    accuracy (columns of :func:`recjudge.metaeval.baselines.from_counts`)."""
    return from_counts(tokutake_g_counts(), classes=three_class)


def tokutake_table1_vs_baselines() -> pd.DataFrame:
    """Every LLM row of Tokutake et al.'s Table 1 (model × prompt: printed MAE and three-class accuracy) beside the
    constant answers and Random on the printed g, and whether the most frequent level beats the row on each metric
    (``constant_beats_mae``: lower MAE; ``constant_beats_accuracy``: higher accuracy)."""
    table1 = papers.table("tokutake2025framework_table1")
    base = tokutake_baselines().set_index("baseline")
    rows = []
    for _, printed in table1.iterrows():
        for suffix, model in TOKUTAKE_MODELS.items():
            row = {"model": model, "strategy": TOKUTAKE_STRATEGIES[printed["strategy"]],
                   "mae": float(printed[f"mae_{suffix}"]), "accuracy_pct": float(printed[f"accuracy_{suffix}"])}
            for name, prefix in ((MODE, "constant_mode"), (MEAN, "constant_mean"), (RANDOM, "random")):
                row[f"{prefix}_mae"] = float(base.loc[name, "mae"])
                row[f"{prefix}_accuracy_pct"] = float(base.loc[name, "accuracy_pct"])
            row["constant_mode_answer"] = base.loc[MODE, "answer"]
            row["constant_beats_mae"] = row["constant_mode_mae"] < row["mae"]
            row["constant_beats_accuracy"] = row["constant_mode_accuracy_pct"] > row["accuracy_pct"]
            rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["TOKUTAKE_MODELS", "tokutake_baselines", "tokutake_g_counts", "tokutake_table1_vs_baselines"]
