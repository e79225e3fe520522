"""Prompts for LLM evaluators of recommendation explanations (Zhang et al. 2024) and reading their replies.

Templates (``src/recjudge/prompts/templates``), all *reconstructions* of the outline the paper prints (Figure 2:
Instruction, Aspect, Output, Example, Data — its sentences used verbatim, the aspect statements of section 2.2.2,
an answer-format line of ours), English instruction, Chinese data:

==========================  =====================================================================================
``zhang_multi_zero_shot``   the four aspects at once, no example
``zhang_multi_one_shot``    + one example rated by *another user* (non-personalised one-shot)
``zhang_multi_personalised``+ one example rated by *the same user*: same explanation system, another movie
``zhang_single_*``          the same three settings asking for one aspect per prompt (four prompts per text)
==========================  =====================================================================================

Examples (section 2.3.2): for an explanation E = g(u, i), the personalised example is the same user's rating of
E' = g(u, i0) for a randomly chosen other movie i0 of that user; the non-personalised example is the rating of
E' = g(u0, i0) for a randomly chosen (u0, i0) of another user, here with the same explanation system g (the paper's
formula keeps g; its text says only "randomly selected (u0, i0) pair"). Only examples whose four ratings are all
present are used. A text with no eligible personalised example (its user saw that system for one movie only) gets
no request in that setting and is reported.

Request keys: ``"<row_id>"`` for multiple-aspect prompts, ``"<row_id>:<aspect>"`` for single-aspect ones;
``meta`` holds row_id, aspect (single), setting and the example's row_id.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recjudge.data.lu2023 import ASPECTS, ExplanationStudy
from recjudge.llm import JudgeRequest, parse_aspect_scores, parse_likert
from recjudge.prompts import render

__all__ = [
    "ASPECT_MODES",
    "ASPECT_STATEMENTS",
    "SETTINGS",
    "ExplanationPrompts",
    "build_requests",
    "choose_examples",
    "evaluator_name",
    "first_pairs",
    "parser_for",
    "sample_pairs",
    "scores_from_run",
    "template_name",
]

SETTINGS = ("zero_shot", "one_shot", "personalised")
ASPECT_MODES = ("multi", "single")
#: The questionnaire statements of the four aspects (Zhang et al. section 2.2.2).
ASPECT_STATEMENTS = {
    "persuasiveness": "This explanation is convincing to me.",
    "transparency": "Based on this explanation, I understand why this movie is recommended.",
    "accuracy": "This explanation is consistent with my interests.",
    "satisfaction": "I am satisfied with this explanation.",
}
_SETTING_LABELS = {"zero_shot": "zero-shot", "one_shot": "one-shot", "personalised": "personalised one-shot"}


def template_name(aspect_mode: str, setting: str) -> str:
    """``zhang_<multi|single>_<zero_shot|one_shot|personalised>``."""
    if aspect_mode not in ASPECT_MODES:
        raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    return f"zhang_{aspect_mode}_{setting}"


def evaluator_name(model_label: str, aspect_mode: str, setting: str) -> str:
    """Row name in result tables, e.g. ``smollm2-135m (M, zero-shot)`` — (S)/(M) as in the paper's Table 1."""
    return f"{model_label} ({'M' if aspect_mode == 'multi' else 'S'}, {_SETTING_LABELS[setting]})"


# --------------------------------------------------------------------------------------------------------------------
# Sample and examples
# --------------------------------------------------------------------------------------------------------------------
def sample_pairs(study: ExplanationStudy, n_users: int, pairs_per_user: int, seed: int = 0) -> np.ndarray:
    """row_ids of a reproducible sample made of whole (user, movie) pairs, so every level of the meta-evaluation is
    defined on it: ``n_users`` users drawn at random, ``pairs_per_user`` of each one's movies drawn at random, all
    explanations of those pairs. Sorted by row_id."""
    ratings = study.user_ratings
    rng = np.random.default_rng(seed)
    users = np.sort(ratings["user_id"].unique())
    if n_users > len(users):
        raise ValueError(f"n_users={n_users} but the study has {len(users)} users")
    chosen_users = rng.choice(users, size=n_users, replace=False)
    rows: list[np.ndarray] = []
    for user in chosen_users:
        mine = ratings[ratings["user_id"] == user]
        movies = np.sort(mine["item_id"].unique())
        take = rng.choice(movies, size=min(pairs_per_user, len(movies)), replace=False)
        rows.append(mine.loc[mine["item_id"].isin(take), "row_id"].to_numpy())
    return np.sort(np.concatenate(rows))


def choose_examples(study: ExplanationStudy, row_ids: Sequence[int], setting: str, seed: int = 0) -> pd.Series:
    """The example row_id for each target row (index: target row_id; NaN-free, rows without an eligible example
    are absent). ``setting`` "one_shot": same explanation system, another user; "personalised": same user, same
    system, another movie. Candidates need all four user ratings. Seeded (numpy PCG64)."""
    if setting not in ("one_shot", "personalised"):
        raise ValueError(f"examples exist for 'one_shot' and 'personalised', not {setting!r}")
    ratings = study.user_ratings
    complete = ratings.dropna(subset=list(ASPECTS))
    by_type = {kind: group for kind, group in complete.groupby("explanation_type")}
    indexed = ratings.set_index("row_id")
    rng = np.random.default_rng(seed)
    chosen: dict[int, int] = {}
    for row_id in row_ids:
        target = indexed.loc[int(row_id)]
        pool = by_type.get(target["explanation_type"])
        if pool is None:
            continue
        if setting == "personalised":
            pool = pool[(pool["user_id"] == target["user_id"]) & (pool["item_id"] != target["item_id"])]
        else:
            pool = pool[pool["user_id"] != target["user_id"]]
        if len(pool):
            chosen[int(row_id)] = int(pool["row_id"].to_numpy()[rng.integers(len(pool))])
    return pd.Series(chosen, name="example_row_id", dtype="int64").rename_axis("row_id")


# --------------------------------------------------------------------------------------------------------------------
# Requests and parsing
# --------------------------------------------------------------------------------------------------------------------
@dataclass
class ExplanationPrompts:
    """Requests of one (aspect mode, setting) plus what could not be asked.

    requests:   the JudgeRequests (keys as in the module docstring).
    template:   the template name (use it as ``JudgeConfig.prompt``).
    skipped:    target row_ids with no eligible example (personalised / one-shot only).
    """

    aspect_mode: str
    setting: str
    template: str
    requests: list[JudgeRequest]
    skipped: list[int]


def _title(aspect: str) -> str:
    return aspect.capitalize()


def build_requests(
    study: ExplanationStudy,
    row_ids: Sequence[int],
    aspect_mode: str = "multi",
    setting: str = "zero_shot",
    *,
    seed: int = 0,
    aspects: Sequence[str] = ASPECTS,
) -> ExplanationPrompts:
    """Render the prompts of ``row_ids`` for one aspect mode and setting (examples chosen with ``seed``)."""
    name = template_name(aspect_mode, setting)
    explanations = study.explanations.set_index("row_id")
    ratings = study.user_ratings.set_index("row_id")
    examples = choose_examples(study, row_ids, setting, seed) if setting != "zero_shot" else None
    requests: list[JudgeRequest] = []
    skipped: list[int] = []
    for row_id in (int(r) for r in row_ids):
        target = explanations.loc[row_id]
        fields = {"movie": target["movie_title"], "explanation": target["explanation_text"]}
        meta = {"row_id": row_id, "setting": setting, "aspect_mode": aspect_mode}
        example_fields: dict[str, object] = {}
        if examples is not None:
            if row_id not in examples.index:
                skipped.append(row_id)
                continue
            example_id = int(examples.loc[row_id])
            meta["example_row_id"] = example_id
            example = explanations.loc[example_id]
            example_fields = {"example_movie": example["movie_title"],
                              "example_explanation": example["explanation_text"]}
            example_ratings = {a: int(ratings.loc[example_id, a]) for a in ASPECTS}
        if aspect_mode == "multi":
            if examples is not None:
                example_fields.update({f"example_{a}": example_ratings[a] for a in ASPECTS})
            requests.append(JudgeRequest(key=str(row_id), messages=render(name, **fields, **example_fields),
                                         meta=meta))
            continue
        for aspect in aspects:
            single = {"aspect_title": _title(aspect), "aspect_statement": ASPECT_STATEMENTS[aspect]}
            if examples is not None:
                single["example_score"] = example_ratings[aspect]
            requests.append(JudgeRequest(key=f"{row_id}:{aspect}",
                                         messages=render(name, **fields, **example_fields, **single),
                                         meta={**meta, "aspect": aspect}))
    return ExplanationPrompts(aspect_mode, setting, name, requests, skipped)


def parser_for(aspect_mode: str):
    """The reply parser: four named integer scores (multi) or one score (single), 1–5, NaN when unreadable."""
    if aspect_mode == "multi":
        return functools.partial(parse_aspect_scores, aspects=list(ASPECTS), low=1, high=5)
    if aspect_mode == "single":
        return functools.partial(parse_likert, low=1, high=5)
    raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")


def scores_from_run(run, prompts: ExplanationPrompts, evaluator: str,
                    fill_unparsable: float | None = None) -> pd.DataFrame:
    """Long scores (row_id, evaluator, aspect, score) from a ``JudgeRun`` of ``prompts.requests``; a score is the
    mean over the run's samples. ``fill_unparsable`` is passed to ``JudgeRun.scores`` (None keeps NaN; 0.0 is the
    paper's "parse failure -> 0")."""
    means = run.scores(fill_unparsable=fill_unparsable)
    by_key = {request.key: request.meta for request in prompts.requests}
    rows = []
    if prompts.aspect_mode == "multi":
        for key, values in means.iterrows():
            for aspect in ASPECTS:
                rows.append((by_key[key]["row_id"], evaluator, aspect, float(values[aspect])))
    else:
        for key, value in means.items():
            rows.append((by_key[key]["row_id"], evaluator, by_key[key]["aspect"], float(value)))
    return pd.DataFrame(rows, columns=["row_id", "evaluator", "aspect", "score"])


def first_pairs(study: ExplanationStudy, row_ids: Sequence[int], n_pairs: int) -> np.ndarray:
    """The row_ids of the first ``n_pairs`` (user, movie) pairs among ``row_ids`` (pairs ordered by their first
    row_id): a nested, smaller sample for the costlier single-aspect prompts."""
    ratings = study.user_ratings.set_index("row_id").loc[np.sort(np.asarray(row_ids, dtype=int))]
    pairs = list(dict.fromkeys(zip(ratings["user_id"], ratings["item_id"])))[:n_pairs]
    keep = [pair in set(pairs) for pair in zip(ratings["user_id"], ratings["item_id"])]
    return ratings.index.to_numpy()[np.asarray(keep, dtype=bool)]
