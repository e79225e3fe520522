"""The trivial baselines every judge is scored beside: a constant answer and Random (one home for both).

A reviewer's first question of a judge scored against users is whether it beats a judge that knows nothing about the
item. Two such judges:

- **a constant answer**: the most frequent level (:data:`MODE`) or the mean (:data:`MEAN`) of the truth, chosen on
  answers the judge is not scored on. :func:`baselines_out_of_fold` chooses it for each user on the *other* users'
  answers (leave one user out), so the constant never sees the answers it is scored on; Pearson is undefined for a
  constant (NaN, with :data:`CONSTANT_PEARSON_NOTE` as the reason), MAE, RMSE and accuracy are not.
- **Random**: independent uniform draws from the levels; its *expected* MAE, RMSE (root of the expected squared
  error) and accuracy are exact (:func:`random_expected`), so no seed decides its row.

:func:`from_counts` scores both from a printed distribution (level → count), the only form in which some papers give
their ground truth; there each answer is its own fold (leave one answer out).

Accuracy is agreement of classes: by default the level (rounded half up), or any other mapping, e.g.
:func:`three_class` (negative < 3, neutral = 3, positive > 3, Tokutake et al.'s three-class accuracy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from recjudge.metaeval.agreement import random_baseline_expectation

MODE, MEAN, RANDOM = "constant (most frequent level)", "constant (mean)", "Random"
#: Why a constant answer's Pearson is NaN in a baselines table.
CONSTANT_PEARSON_NOTE = "undefined for a constant answer (no variance)"
#: The columns of :func:`baselines_out_of_fold` and :func:`from_counts`.
COLUMNS = ["baseline", "answer", "chosen_on", "n", "mae", "rmse", "accuracy_pct", "pearson_pct", "pearson_note"]

Classes = Callable[[np.ndarray], np.ndarray]


def level(values) -> np.ndarray:
    """Each value's level, rounded half up (1.5 → 2), NaN kept: accuracy's default classes."""
    x = np.asarray(values, dtype=float)
    return np.floor(x + 0.5)


def three_class(values) -> np.ndarray:
    """negative (< 3) → 0, neutral (= 3) → 1, positive (> 3) → 2; NaN stays NaN (Tokutake et al.'s three classes)."""
    x = np.asarray(values, dtype=float)
    return np.where(np.isnan(x), np.nan, np.where(x < 3, 0.0, np.where(x > 3, 2.0, 1.0)))


def most_frequent_level(truth) -> float:
    """The most frequent value of ``truth`` (NaN left out; a tie goes to the lowest); ValueError when none."""
    t = np.asarray(truth, dtype=float)
    t = t[np.isfinite(t)]
    if t.size == 0:
        raise ValueError("no answer to choose a constant from")
    values, counts = np.unique(t, return_counts=True)
    return float(values[np.argmax(counts)])


def _finite(truth) -> np.ndarray:
    t = np.asarray(truth, dtype=float).ravel()
    return t[np.isfinite(t)]


def score_answers(answers, truth, classes: Classes = level) -> dict[str, float | int]:
    """MAE, RMSE and accuracy (%, ``classes`` equal) of ``answers`` against ``truth`` (pairs with a NaN left out)."""
    a, t = np.asarray(answers, dtype=float).ravel(), np.asarray(truth, dtype=float).ravel()
    if a.shape != t.shape:
        raise ValueError(f"answers and truth differ in length: {a.size} and {t.size}")
    keep = np.isfinite(a) & np.isfinite(t)
    a, t = a[keep], t[keep]
    if t.size == 0:
        return {"n": 0, "mae": np.nan, "rmse": np.nan, "accuracy_pct": np.nan}
    return {"n": int(t.size), "mae": float(np.mean(np.abs(a - t))), "rmse": float(np.sqrt(np.mean((a - t) ** 2))),
            "accuracy_pct": float(100 * np.mean(classes(a) == classes(t)))}


def random_expected(truth, classes: Classes = level, low: int = 1, high: int = 5) -> dict[str, float | int]:
    """Random's exact expectation on ``truth``: uniform draws from {low, ..., high} give Pearson 0, MAE
    (:func:`~recjudge.metaeval.agreement.random_baseline_expectation`), the root of the expected squared error, and
    accuracy = mean over answers of the chance that a draw falls in the answer's class."""
    t = _finite(truth)
    exact = random_baseline_expectation(t, low, high)
    draws = np.arange(low, high + 1, dtype=float)
    same = classes(draws)[None, :] == classes(t)[:, None]
    return {"n": int(t.size), "mae": exact["mae"], "rmse": exact["rmse_of_expected_mse"],
            "accuracy_pct": float(100 * same.mean()) if t.size else np.nan}


def constant_answers(truth, folds: Sequence[object] | None = None) -> pd.DataFrame:
    """Each answer's constant answers, chosen on the answers of every *other* fold (e.g. user: pass the answers' user
    ids; ``folds`` None: each answer is its own fold): columns :data:`MODE` (the most frequent level there, a tie to
    the lowest) and :data:`MEAN`, aligned with ``truth`` (NaN where the truth is NaN)."""
    full = np.asarray(truth, dtype=float).ravel()
    fold = np.arange(full.size) if folds is None else np.asarray(folds, dtype=object).ravel()
    if fold.shape != full.shape:
        raise ValueError(f"truth and folds differ in length: {full.size} and {fold.size}")
    keep = np.isfinite(full)
    t = full[keep]
    codes, uniques = pd.factorize(pd.Series(fold[keep]))
    if len(uniques) < 2:
        raise ValueError("a constant chosen on the other folds needs at least two folds (users) with an answer")
    # the mean of the other folds' answers, for every fold at once
    sums = np.bincount(codes, weights=t, minlength=len(uniques))
    counts = np.bincount(codes, minlength=len(uniques))
    mean = ((t.sum() - sums) / (t.size - counts))[codes]
    levels = np.unique(t)
    per_fold = np.stack([np.bincount(codes, weights=(t == v).astype(float), minlength=len(uniques))
                         for v in levels], axis=1)
    others = per_fold.sum(axis=0)[None, :] - per_fold
    mode = levels[np.argmax(others, axis=1)][codes]  # argmax: a tie goes to the lowest level
    out = pd.DataFrame({MODE: np.full(full.size, np.nan), MEAN: np.full(full.size, np.nan)})
    out.loc[keep, MODE], out.loc[keep, MEAN] = mode, mean
    return out


def baselines_out_of_fold(truth, folds: Sequence[object] | None = None, classes: Classes = level, low: int = 1,
                          high: int = 5, scored: Sequence[bool] | None = None,
                          chosen_on: str = "the other folds' answers") -> pd.DataFrame:
    """The constant answers (most frequent level, mean; :func:`constant_answers`: each chosen for a fold on every
    other fold's answers, so it never sees the answers it is scored on) and Random scored against ``truth``. Columns
    :data:`COLUMNS`; ``answer`` gives the constant(s) chosen (a range when they differ by fold). ``scored``: score
    only these answers (e.g. a judge's sample), each constant still chosen on every other fold's answers (the whole
    survey but the user's own); ``chosen_on`` names those answers in the table (e.g. "the other users' answers")."""
    t = np.asarray(truth, dtype=float).ravel()
    mask = np.ones(t.size, dtype=bool) if scored is None else np.asarray(scored, dtype=bool).ravel()
    if mask.shape != t.shape:
        raise ValueError(f"truth and scored differ in length: {t.size} and {mask.size}")
    mask &= np.isfinite(t)
    if not mask.any():
        raise ValueError("no answer with a truth to score the baselines on")
    constants = constant_answers(t, folds)
    rows = []
    for name in (MODE, MEAN):
        answers = constants[name].to_numpy()[mask]
        low_text, high_text = f"{answers.min():.3g}", f"{answers.max():.3g}"
        chosen = low_text if low_text == high_text else f"{low_text}–{high_text}"
        rows.append({"baseline": name, "answer": chosen, **score_answers(answers, t[mask], classes)})
    rows.append({"baseline": RANDOM, "answer": f"uniform on {low}–{high} (expected)",
                 **random_expected(t[mask], classes, low, high)})
    frame = pd.DataFrame(rows)
    frame["chosen_on"] = [chosen_on] * 2 + ["nothing (no choice)"]
    frame["pearson_pct"] = [np.nan, np.nan, 0.0]
    frame["pearson_note"] = [CONSTANT_PEARSON_NOTE] * 2 + ["expected 0 (independent of the truth)"]
    return frame[COLUMNS]


def from_counts(counts: dict[float, int] | pd.Series, classes: Classes = level, low: int = 1,
                high: int = 5) -> pd.DataFrame:
    """:func:`baselines_out_of_fold` on a printed distribution (level → number of answers), each answer its own
    fold."""
    series = pd.Series(counts, dtype=float)
    if (series < 0).any() or series.sum() == 0:
        raise ValueError(f"a distribution needs non-negative counts and at least one answer, got {dict(series)}")
    truth = np.repeat(series.index.to_numpy(dtype=float), series.to_numpy(dtype=int))
    frame = baselines_out_of_fold(truth, None, classes, low, high)
    frame.loc[frame["baseline"] != RANDOM, "chosen_on"] = "the other answers (leave one answer out)"
    return frame


__all__ = ["CONSTANT_PEARSON_NOTE", "COLUMNS", "MEAN", "MODE", "RANDOM", "baselines_out_of_fold", "constant_answers",
           "from_counts",
           "level", "most_frequent_level", "random_expected", "score_answers", "three_class"]
