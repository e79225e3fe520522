"""Hyper-parameter search with Optuna's TPE sampler (seeded), objective Recall_acc@10 on the validation chunk.

Tokutake et al. ran 100 trials per recommender per fold.  ``tune`` takes the trial budget as an argument; the
lists' configuration records the budget of each recommender, and the chapter tabulates it with the chosen values
(``tuned_values``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .metrics import recall_at_k
from .models import Recommender, in_order, make
from .split import Fold

#: name -> parameter -> ("int" | "float" | "log", low, high)
SEARCH_SPACE: dict[str, dict[str, tuple[str, float, float]]] = {
    "BPRMF": {"k": ("int", 16, 128), "learning_rate": ("log", 1e-3, 1e-1), "lambda_reg": ("log", 1e-4, 1e-1)},
    "SASRec": {"embedding_dim": ("int", 16, 64), "learning_rate": ("log", 1e-4, 1e-2), "dropout": ("float", 0.0, 0.5)},
    "KFN": {"k": ("int", 5, 200)},
    "KFN + popularity": {"k": ("int", 5, 200), "pop_weight": ("float", 0.0, 1.0)},
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
         ) -> tuple[dict[str, Any], float, Recommender]:
    """Best parameters (merged over ``base``), their validation Recall_acc@10 after ``n_trials`` TPE trials, and the
    model fitted with them (kept from its trial, so that lists need no second fit).  Optuna's TPE samples its first
    ten trials at random (``n_startup_trials``), so a budget of ten or fewer is a seeded random search."""
    import optuna

    base = dict(base or {})
    space = SEARCH_SPACE.get(name, {})
    users = sorted(fold.valid["user_id"].unique())
    best: dict[str, Any] = {}

    def fitted(params: dict[str, Any]) -> tuple[float, Recommender]:
        model = make(name, seed=seed, **params).fit(fold.train)
        return recall_at_k(model.recommend(users, 10), fold.valid, 10), model

    def objective(trial) -> float:
        recall, model = fitted({**base, **_suggest(trial, space)})
        if not best or recall > best["recall"]:
            best.update(recall=recall, model=model)
        return recall

    if not space or n_trials < 1:
        recall, model = fitted(base)
        return base, recall, model
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return {**base, **study.best_params}, float(study.best_value), best["model"]


def tuned_values(config: dict[str, Any], valid_recall: pd.Series, order: list[str]) -> pd.DataFrame:
    """One row per recommender (in ``order``, then any other) and fold: its TPE budget, the chosen values as text and
    the validation Recall_acc@10 of its committed lists (``valid_recall`` indexed by recommender and fold).
    ``config`` is the lists' configuration as ``lists.load_lists`` returns it."""
    rows = []
    for fold, by_name in config["params"].items():
        for name, params in by_name.items():
            rows.append({"recommender": name, "fold": int(fold), "trials": int(config["trials"][name]),
                         "parameters": ", ".join(f"{p}={v:.3g}" if isinstance(v, float) else f"{p}={v}"
                                                 for p, v in sorted(params.items())) or "–",
                         "valid_recall10": float(valid_recall.get((name, int(fold)), float("nan")))})
    table = pd.DataFrame(rows)
    rank = {name: i for i, name in enumerate(in_order(table["recommender"], order))}
    return table.sort_values(["recommender", "fold"], key=lambda c: c.map(rank) if c.name == "recommender" else c,
                             kind="stable").reset_index(drop=True)
