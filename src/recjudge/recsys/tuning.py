"""Hyper-parameter search with Optuna's TPE sampler (seeded), objective Recall_acc@10 on the validation chunk.

Tokutake et al. ran 100 trials per recommender per fold.  ``tune`` takes the trial budget as an argument; the
chapter states the budget it used and commits the chosen values as a results table (``tuned_values``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .metrics import recall_at_k
from .models import make
from .split import Fold

#: name -> parameter -> ("int" | "float" | "log", low, high)
SEARCH_SPACE: dict[str, dict[str, tuple[str, float, float]]] = {
    "BPRMF": {"k": ("int", 16, 128), "learning_rate": ("log", 1e-3, 1e-1), "lambda_reg": ("log", 1e-4, 1e-1)},
    "SASRec": {"embedding_dim": ("int", 16, 64), "learning_rate": ("log", 1e-4, 1e-2), "dropout": ("float", 0.0, 0.5)},
    "KFN": {"k": ("int", 5, 200), "pop_weight": ("float", 0.0, 1.0)},
    "ItemKNN": {"k": ("int", 5, 400)},
    "UAUM": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "beta": ("float", 0.0, 1.0)},
    "DESR": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "gamma": ("float", 0.0, 1.0)},
    "PURS": {"dim": ("int", 16, 64), "lr": ("log", 1e-3, 3e-2), "alpha": ("float", 0.0, 2.0)},
    "Popularity": {},
    "Random": {},
}


def _suggest(trial, space: dict[str, tuple[str, float, float]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, (kind, low, high) in space.items():
        if kind == "int":
            values[name] = trial.suggest_int(name, int(low), int(high))
        elif kind == "log":
            values[name] = trial.suggest_float(name, low, high, log=True)
        elif kind == "float":
            values[name] = trial.suggest_float(name, low, high)
        else:
            raise ValueError(f"unknown search kind {kind!r} for {name}")
    return values


def tune(name: str, fold: Fold, n_trials: int, seed: int = 0, base: dict[str, Any] | None = None
         ) -> tuple[dict[str, Any], float]:
    """Best parameters (merged over ``base``) and their validation Recall_acc@10 after ``n_trials`` TPE trials."""
    import optuna

    base = dict(base or {})
    space = SEARCH_SPACE.get(name, {})
    users = sorted(fold.valid["user_id"].unique())

    def objective(trial) -> float:
        params = {**base, **_suggest(trial, space)}
        lists = make(name, seed=seed, **params).fit(fold.train).recommend(users, 10)
        return recall_at_k(lists, fold.valid, 10)

    if not space or n_trials < 1:
        params = base
        lists = make(name, seed=seed, **params).fit(fold.train).recommend(users, 10)
        return params, recall_at_k(lists, fold.valid, 10)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return {**base, **study.best_params}, float(study.best_value)


def tuned_values(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Long table recommender, fold, trials, parameter, value, valid_recall10 (one row per parameter)."""
    out = []
    for row in rows:
        for parameter, value in sorted(row["params"].items()):
            out.append({"recommender": row["recommender"], "fold": row["fold"], "trials": row["trials"],
                        "parameter": parameter, "value": value, "valid_recall10": row["valid_recall10"]})
    return pd.DataFrame(out)
