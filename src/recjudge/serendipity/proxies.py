"""Serendipity proxy metrics as scoring functions: SOG, SNPR, PURS, DESR and a Random baseline.

Kang et al. (2025, section 2.3) compare four proxies from the serendipity literature with user-study answers. Each
proxy scores one (user, target item) pair; the raw scores of all scored pairs are then mapped to the 1–5 Likert
scale by eq. 6 (min–max over all outputs, times 4, plus 1, rounded; ``to_likert``).

The proxies were designed inside trained recommenders. Here they are evaluated *as metrics*: every learned part is
replaced by the observable quantity the original paper feeds it, as stated per function below. They all read one
frame of **components** (``proxy_components``), each in [0, 1]:

============================ ======================================================================================
component                    definition and inputs
============================ ======================================================================================
relevance                    MovieLens ``predictedRating`` (the rating MovieLens predicted just before the user rated
                             the movie), min–max scaled from the 0.5–5 star scale. Fallback when it is missing (20 of
                             2,150 answers): the mean predicted rating of the user's other answers, else the mean of
                             all answers (``relevance_from_predicted``).
history_dissimilarity        mean cosine distance between the target's feature vector and those of the history items
                             (SOG's profile dissimilarity, DESR's historical dissimilarity).
diversity                    mean cosine distance between the target and the other items of the user's list (the
                             other movies of the user's survey set).
unexpectedness_item          1 − the largest cosine similarity to a history item (SNPR item-level dissimilarity).
unexpectedness_category      share of the target's genres absent from every history item (SNPR category level).
purs_unexpectedness          size-weighted mean cosine distance from the target to the centroids of the user's interest
                             clusters (Mean Shift over the history feature vectors, bandwidth ``PURS_BANDWIDTH``).
long_term_alignment          cosine similarity to the mean history vector (DESR long-term preference).
short_term_alignment         cosine similarity to the mean of the last ``SHORT_TERM`` history items (DESR short-term).
unpopularity                 1 − log(1 + n_ratings) / log(1 + max n_ratings) over the popularity table
                             (``unpopularity``).
============================ ======================================================================================

Item features are one-hot genres plus the tags applied to the item (``item_feature_matrix``); popularity is the
number of distinct users who rated the item in the rating data available (``item_popularity``). The user history is
whatever the caller passes (``recjudge.serendipity.ground_truth.last_k_history``), labelled by the caller.

Fallback when a component cannot be computed for a pair (no history, a single-item survey set, an item without
genres): the median of that component over all scored pairs, recorded in the column ``imputed``. The proxy is thus
neutral in that component instead of extreme.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: MovieLens star scale, used to put predicted ratings on [0, 1].
RATING_SCALE = (0.5, 5.0)
#: SNPR's weight of relevance (Kang et al. 2025 use lambda = 0.7).
SNPR_LAMBDA = 0.7
#: SOG's fixed component weights. Kotkov et al. (2020) weight relevance, diversity, profile dissimilarity and
#: unpopularity with fixed coefficients; Kang et al. do not report theirs, so all four count equally here.
SOG_WEIGHTS: Mapping[str, float] = {
    "relevance": 0.25,
    "diversity": 0.25,
    "history_dissimilarity": 0.25,
    "unpopularity": 0.25,
}
#: PURS's personal unexpectedness factor is learned from the session; without a trained model it is the constant 1.
PURS_FACTOR = 1.0
#: Mean Shift bandwidth on unit-length feature vectors (Euclidean 1.0 = cosine similarity 0.5).
PURS_BANDWIDTH = 1.0
#: Number of most recent history items forming DESR's short-term preference.
SHORT_TERM = 3

COMPONENTS = (
    "relevance",
    "history_dissimilarity",
    "diversity",
    "unexpectedness_item",
    "unexpectedness_category",
    "purs_unexpectedness",
    "long_term_alignment",
    "short_term_alignment",
    "unpopularity",
)
PROXIES = ("SOG", "PURS", "DESR", "SNPR")


# ------------------------------------------------------------------------------------------------------------ inputs

def relevance_from_predicted(
    answers: pd.DataFrame,
    column: str = "predicted_rating",
    scale: tuple[float, float] = RATING_SCALE,
) -> pd.DataFrame:
    """Relevance in [0, 1] from a predicted-rating column, with the fallbacks of the module docstring.

    Returns a frame aligned with ``answers``: ``relevance`` and ``relevance_source`` ("predicted", "user_mean",
    "global_mean")."""
    if column not in answers.columns:
        raise KeyError(f"answers frame has no {column!r} column (needed for relevance)")
    predicted = answers[column].astype(float)
    user_mean = predicted.groupby(answers["user_id"]).transform("mean")
    source = pd.Series(np.where(predicted.notna(), "predicted", np.where(user_mean.notna(), "user_mean",
                                                                         "global_mean")), index=answers.index)
    filled = predicted.fillna(user_mean).fillna(predicted.mean())
    low, high = scale
    return pd.DataFrame({"relevance": ((filled - low) / (high - low)).clip(0, 1), "relevance_source": source})


def item_feature_matrix(
    items: pd.DataFrame,
    tags: pd.DataFrame | None = None,
    min_tag_items: int = 2,
) -> pd.DataFrame:
    """Binary item features: one column ``genre:<g>`` per genre and ``tag:<t>`` per tag.

    items: item_id and genres (tuple of genre names; "(no genres listed)" is ignored).
    tags:  optional item_id and tag (user-applied tags, lower-cased and stripped here); only tags on at least
           ``min_tag_items`` distinct items are kept, because a tag on one item can never make two items similar and
           only dilutes the cosine. Items of ``tags`` absent from ``items`` are added.
    Returns a float frame indexed by item_id; an item with no feature is a row of zeros.
    """
    genre_rows = items[["item_id", "genres"]].explode("genres").dropna()
    genre_rows = genre_rows[genre_rows["genres"] != "(no genres listed)"]
    pairs = [pd.DataFrame({"item_id": genre_rows["item_id"], "feature": "genre:" + genre_rows["genres"].astype(str)})]
    if tags is not None and not tags.empty:
        tag_rows = tags[["item_id", "tag"]].dropna().copy()
        tag_rows["tag"] = tag_rows["tag"].astype(str).str.strip().str.lower()
        tag_rows = tag_rows[tag_rows["tag"] != ""].drop_duplicates()
        spread = tag_rows.groupby("tag")["item_id"].nunique()
        tag_rows = tag_rows[tag_rows["tag"].isin(spread[spread >= min_tag_items].index)]
        pairs.append(pd.DataFrame({"item_id": tag_rows["item_id"], "feature": "tag:" + tag_rows["tag"]}))
    long = pd.concat(pairs, ignore_index=True).drop_duplicates()
    matrix = pd.crosstab(long["item_id"], long["feature"]).clip(upper=1).astype(float)
    all_items = pd.Index(items["item_id"]).union(matrix.index)
    return matrix.reindex(all_items, fill_value=0.0).rename_axis("item_id")


def item_popularity(ratings: pd.DataFrame) -> pd.Series:
    """Number of distinct users who rated each item (index item_id)."""
    return ratings.groupby("item_id")["user_id"].nunique().rename("n_users")


def unpopularity(popularity: pd.Series, item_ids: Iterable) -> pd.Series:
    """1 − log(1 + n) / log(1 + max n) for the given items; items missing from ``popularity`` count as n = 0
    (maximally unpopular). Log scale because rating counts are heavy-tailed."""
    counts = pd.Series(popularity).reindex(pd.Index(list(item_ids))).fillna(0).astype(float)
    top = float(pd.Series(popularity).max()) if len(popularity) else 0.0
    if top <= 0:
        return pd.Series(1.0, index=counts.index, name="unpopularity")
    return (1.0 - np.log1p(counts) / np.log1p(top)).rename("unpopularity")


# -------------------------------------------------------------------------------------------------------- components

def _unit_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norms = np.linalg.norm(matrix, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    return matrix / safe[:, None], norms > 0


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return float("nan")
    return float(a @ b / (na * nb))


def mean_shift_labels(points: np.ndarray, bandwidth: float = PURS_BANDWIDTH, max_iter: int = 300) -> np.ndarray:
    """Cluster labels of flat-kernel Mean Shift seeded at every point, as ``sklearn.cluster.MeanShift`` computes it
    (same seeds, stopping rule, merging of modes within ``bandwidth`` in order of decreasing support, and
    nearest-mode labelling), vectorised over the seeds.

    Written out because scikit-learn's per-fit overhead (a neighbour index and a joblib loop per seed) costs about
    a second for the ten points of one history, i.e. most of an hour for one pass over a survey; the partition is
    tested against scikit-learn's in ``tests/test_proxies.py``."""
    x = np.asarray(points, dtype=float)
    n = len(x)
    if n <= 1:
        return np.zeros(n, dtype=int)
    means = x.copy()
    support = np.zeros(n, dtype=int)
    active = np.ones(n, dtype=bool)
    stop = 1e-3 * bandwidth
    for _ in range(max_iter):
        if not active.any():
            break
        within = np.linalg.norm(means[active, None, :] - x[None, :, :], axis=-1) <= bandwidth
        counts = within.sum(axis=1)
        moved = (within @ x) / np.maximum(counts, 1)[:, None]
        shift = np.linalg.norm(moved - means[active], axis=1)
        rows = np.flatnonzero(active)
        means[rows] = np.where(counts[:, None] > 0, moved, means[rows])
        support[rows] = counts
        active[rows[(shift <= stop) | (counts == 0)]] = False
    modes: dict[tuple, int] = {}
    for mean, count in zip(map(tuple, means), support):
        if count > 0:
            modes[mean] = count
    ordered = sorted(modes.items(), key=lambda item: (item[1], item[0]), reverse=True)
    centres = np.array([centre for centre, _ in ordered])
    keep = np.ones(len(centres), dtype=bool)
    for i in range(len(centres)):
        if keep[i]:
            close = np.linalg.norm(centres - centres[i], axis=1) <= bandwidth
            keep[close] = False
            keep[i] = True
    centres = centres[keep]
    return np.argmin(np.linalg.norm(x[:, None, :] - centres[None, :, :], axis=-1), axis=1)


def purs_cluster_distance(target: np.ndarray, history: np.ndarray, bandwidth: float = PURS_BANDWIDTH) -> float:
    """Size-weighted mean cosine distance from a unit ``target`` vector to the centroids of the interest clusters
    that Mean Shift finds among the unit ``history`` vectors (rows). NaN for an empty history."""
    if len(history) == 0:
        return float("nan")
    labels = mean_shift_labels(history, bandwidth)
    distance, total = 0.0, 0
    for label in np.unique(labels):
        members = history[labels == label]
        similarity = _cosine(target, members.mean(axis=0))
        distance += len(members) * (1.0 - similarity)
        total += len(members)
    return distance / total


def proxy_components(
    targets: pd.DataFrame,
    history: pd.DataFrame,
    features: pd.DataFrame,
    item_unpopularity: pd.Series,
    lists: pd.DataFrame | None = None,
    *,
    impute: bool = True,
) -> pd.DataFrame:
    """The components of the module docstring for every target pair.

    targets:           user_id, item_id, relevance (in [0, 1]); one row per scored pair.
    history:           long frame user_id, item_id, position, history_item_id (oldest first), as built by
                       ``recjudge.serendipity.ground_truth.last_k_history``.
    features:          item feature matrix (``item_feature_matrix``) indexed by item_id.
    item_unpopularity: unpopularity in [0, 1] indexed by item_id (missing items count as 1).
    lists:             user_id, item_id of the list each target was shown in (e.g. the user's survey set); the
                       target itself is excluded from its own list. None: diversity is not available.
    impute:            replace components that cannot be computed by their median over all targets.

    Returns targets' user_id, item_id plus one column per component, n_history, n_list and ``imputed`` (the
    comma-separated components that were imputed for the row, "" if none).
    """
    for column in ("user_id", "item_id", "relevance"):
        if column not in targets.columns:
            raise KeyError(f"targets frame lacks column {column!r}")
    feature_names = list(features.columns)
    genre_mask = np.array([name.startswith("genre:") for name in feature_names])
    matrix = features.to_numpy(dtype=float)
    unit, has_features = _unit_rows(matrix)
    position = {item: row for row, item in enumerate(features.index)}

    def vector(item) -> np.ndarray | None:
        row = position.get(item)
        return None if row is None or not has_features[row] else unit[row]

    def raw(item) -> np.ndarray | None:
        row = position.get(item)
        return None if row is None else matrix[row]

    ordered = history.sort_values(["user_id", "item_id", "position"]) if len(history) else history
    history_of = {key: group["history_item_id"].tolist() for key, group in ordered.groupby(["user_id", "item_id"])}
    list_of: dict = {}
    if lists is not None:
        list_of = {user: group["item_id"].tolist() for user, group in lists.groupby("user_id")}

    records = []
    for user, item, relevance in targets[["user_id", "item_id", "relevance"]].itertuples(index=False):
        target = vector(item)
        history_items = history_of.get((user, item), [])
        history_vectors = [v for v in (vector(h) for h in history_items) if v is not None]
        list_items = [other for other in list_of.get(user, []) if other != item]
        list_vectors = [v for v in (vector(o) for o in list_items) if v is not None]
        row = {
            "user_id": user, "item_id": item, "relevance": float(relevance),
            "n_history": len(history_items), "n_list": len(list_items),
        }
        nan = float("nan")
        if target is not None and history_vectors:
            stack = np.vstack(history_vectors)
            similarities = stack @ target
            row["history_dissimilarity"] = float(np.mean(1.0 - similarities))
            row["unexpectedness_item"] = float(1.0 - similarities.max())
            row["purs_unexpectedness"] = purs_cluster_distance(target, stack)
            row["long_term_alignment"] = _cosine(target, stack.mean(axis=0))
            row["short_term_alignment"] = _cosine(target, stack[-SHORT_TERM:].mean(axis=0))
        else:
            for name in ("history_dissimilarity", "unexpectedness_item", "purs_unexpectedness",
                         "long_term_alignment", "short_term_alignment"):
                row[name] = nan
        target_raw = raw(item)
        target_genres = target_raw[genre_mask] > 0 if target_raw is not None else np.zeros(genre_mask.sum(), bool)
        history_raw = [r for r in (raw(h) for h in history_items) if r is not None]
        if target_genres.any() and history_raw:
            seen = np.vstack(history_raw)[:, genre_mask].max(axis=0) > 0
            row["unexpectedness_category"] = float((target_genres & ~seen).sum() / target_genres.sum())
        else:
            row["unexpectedness_category"] = nan
        if target is not None and list_vectors:
            row["diversity"] = float(np.mean(1.0 - np.vstack(list_vectors) @ target))
        else:
            row["diversity"] = nan
        records.append(row)

    frame = pd.DataFrame.from_records(records, index=targets.index)
    frame["unpopularity"] = (
        pd.Series(item_unpopularity, dtype=float).reindex(frame["item_id"]).fillna(1.0).to_numpy()
        if len(frame) else pd.Series(dtype=float)
    )
    missing = frame[list(COMPONENTS)].isna()
    frame["imputed"] = missing.apply(lambda r: ",".join(c for c in COMPONENTS if r[c]), axis=1) if len(frame) else ""
    if impute:
        frame[list(COMPONENTS)] = frame[list(COMPONENTS)].fillna(frame[list(COMPONENTS)].median())
    return frame[["user_id", "item_id", *COMPONENTS, "n_history", "n_list", "imputed"]]


# ------------------------------------------------------------------------------------------------------- the proxies

def sog(components: pd.DataFrame, weights: Mapping[str, float] = SOG_WEIGHTS) -> pd.Series:
    """SOG (Kotkov et al. 2020): S_uiB = Σ α_φ φ(u, i, B) over relevance, diversity (to the list B), history
    (profile) dissimilarity and unpopularity, with fixed weights ``weights``.

    Needs: relevance (predicted rating), item features (for diversity and dissimilarity), the list B, the user
    history, item popularity."""
    unknown = set(weights) - set(COMPONENTS)
    if unknown:
        raise KeyError(f"SOG weights name unknown components {sorted(unknown)}")
    return sum(float(w) * components[name] for name, w in weights.items()).rename("SOG")


def snpr(components: pd.DataFrame, lam: float = SNPR_LAMBDA) -> pd.Series:
    """SNPR (Zhang et al. 2021): λ·R(i, u) + (1 − λ)·U(i, u), λ = 0.7 by default.

    R is relevance (predicted rating). U is the multi-level dissimilarity of the item to the user's history: the
    mean of the item level (1 − largest similarity to a history item) and the category level (share of the item's
    genres the history never touched); SNPR's POI/category levels become item/genre levels for movies.
    Needs: relevance, item features (genres, tags), the user history."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"SNPR lambda must lie in [0, 1], got {lam}")
    unexpected = (components["unexpectedness_item"] + components["unexpectedness_category"]) / 2.0
    return (lam * components["relevance"] + (1.0 - lam) * unexpected).rename("SNPR")


def purs_activation(unexpectedness: pd.Series | np.ndarray) -> pd.Series | np.ndarray:
    """PURS's unimodal f(x) = x·exp(−x): more unexpectedness helps up to x = 1, then less."""
    return unexpectedness * np.exp(-unexpectedness)


def purs(components: pd.DataFrame, factor: float = PURS_FACTOR) -> pd.Series:
    """PURS (Li et al. 2020b): Utility = r_ui + f(unexp_ui)·unexp_factor_ui.

    r_ui is relevance (predicted rating); unexp_ui is the distance to the user's interest clusters
    (``purs_unexpectedness``); the learned personal factor becomes the constant ``factor``.
    Needs: relevance, item features (as embeddings), the user history."""
    return (components["relevance"] + purs_activation(components["purs_unexpectedness"]) * factor).rename("PURS")


def desr(components: pd.DataFrame) -> pd.Series:
    """DESR (Li et al. 2020a): AD = acc·dif / (acc + dif), 0 when acc + dif = 0.

    acc is the mean of long-term (whole history) and short-term (last ``SHORT_TERM`` items) preference
    alignment of the item's features; dif is the mean of diversity (to the list) and history dissimilarity.
    Needs: item features, the user history (with order), the list."""
    acc = (components["long_term_alignment"] + components["short_term_alignment"]) / 2.0
    dif = (components["diversity"] + components["history_dissimilarity"]) / 2.0
    total = acc + dif
    return (acc * dif / total.where(total > 0)).fillna(0.0).rename("DESR")


def random_likert(n: int, seed: int = 0) -> np.ndarray:
    """The Random baseline: independent uniform draws from {1, ..., 5}."""
    return np.random.default_rng(seed).integers(1, 6, size=n).astype(float)


def to_likert(raw: pd.Series | np.ndarray) -> pd.Series:
    """Kang et al. eq. 6: round((x − min) / (max − min) × 4 + 1), min and max over all given outputs
    (``recjudge.metaeval.agreement.rescale_to_likert``; NaN stays NaN, halves round to even like Python's ``round``)."""
    from recjudge.metaeval.agreement import rescale_to_likert

    return rescale_to_likert(pd.Series(raw, dtype=float))


def proxy_scores(components: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Raw scores of every proxy and their eq. 6 Likert mapping: columns ``<proxy>_raw`` and ``<proxy>`` for
    SOG, PURS, DESR, SNPR, plus ``Random`` (already on 1–5)."""
    raw = {"SOG": sog(components), "PURS": purs(components), "DESR": desr(components), "SNPR": snpr(components)}
    out = pd.DataFrame({"user_id": components["user_id"], "item_id": components["item_id"]})
    for name, values in raw.items():
        out[f"{name}_raw"] = values
        out[name] = to_likert(values)
    out["Random"] = random_likert(len(components), seed)
    return out


@dataclass(frozen=True)
class StudyProxies:
    """The four proxies on every answer of a Serendipity-2018 study (``study_proxies``), with their inputs.

    scores:           ``proxy_scores`` of the answers, in the answers' order.
    components:       ``proxy_components`` of the answers.
    features:         the item feature matrix (genres and tags) of the answers' and histories' movies.
    popularity:       users who rated each movie, in the source named by ``popularity_label``.
    relevance:        ``relevance_from_predicted`` of the answers.
    """

    scores: pd.DataFrame
    components: pd.DataFrame
    features: pd.DataFrame
    popularity: pd.Series
    popularity_label: str
    relevance: pd.DataFrame


def study_proxies(study, seed: int = 0) -> StudyProxies:
    """SOG, SNPR, PURS and DESR for every answer of ``study`` (a ``Serendipity2018Study`` or ``Serendipity2018Data``
    with a ``source`` of "mirror" or "synthetic" data): genres from the study's movies plus MovieLens latest-small
    tags; popularity from Serendipity-2018's training.csv when present, else MovieLens latest-small's ratings; each
    answer's list is the user's other surveyed movies."""
    from recjudge import data

    answers = study.answers
    try:
        training = data.load_serendipity_training("synthetic" if study.synthetic else None)
    except data.MissingDataError:
        training = None
    movielens = data.load_movielens("latest-small")
    judged_items = set(answers["item_id"]) | set(study.history["history_item_id"])
    movie_rows = study.movies.reset_index()
    movie_rows = movie_rows[movie_rows["item_id"].isin(judged_items)]
    tags = movielens.tags[movielens.tags["item_id"].isin(judged_items)] if movielens.tags is not None else None
    features = item_feature_matrix(movie_rows, tags)
    if training is not None:
        popularity, label = item_popularity(training), "Serendipity-2018 training.csv: users who rated"
    else:
        popularity = item_popularity(movielens.ratings)
        label = f"MovieLens latest-small ({movielens.status}): users who rated"
    relevance = relevance_from_predicted(answers)
    targets = answers[["user_id", "item_id"]].assign(relevance=relevance["relevance"])
    components = proxy_components(targets, study.history, features, unpopularity(popularity, features.index),
                                  lists=answers[["user_id", "item_id"]])
    return StudyProxies(proxy_scores(components, seed=seed), components, features, popularity, label, relevance)


def _agreement_row(raw: pd.Series, truth: pd.Series) -> dict[str, float]:
    from recjudge.metaeval.agreement import agreement

    found = agreement(to_likert(raw).to_numpy(dtype=float), truth.to_numpy(dtype=float))
    return {"pearson_pct": 100 * found["pearson_r"], "mae": found["mae"], "rmse": found["rmse"]}


def sog_weight_grid(step: float = 0.25) -> list[dict[str, float]]:
    """Every SOG weight vector on the simplex grid of ``step`` (weights ≥ 0 summing to 1; 35 vectors at 0.25)."""
    units = round(1 / step)
    if not np.isclose(units * step, 1.0):
        raise ValueError(f"step must divide 1, got {step}")
    names = list(SOG_WEIGHTS)
    grid = []
    for a in range(units + 1):
        for b in range(units + 1 - a):
            for c in range(units + 1 - a - b):
                grid.append(dict(zip(names, (a * step, b * step, c * step, (units - a - b - c) * step))))
    return grid


def weight_sensitivity(components: pd.DataFrame, truth: pd.Series, step: float = 0.25,
                       lambdas: Iterable[float] = tuple(np.round(np.linspace(0, 1, 11), 2))) -> pd.DataFrame:
    """How the two proxies with unreported weights agree with ``truth`` under other choices of them: SOG under
    every weight vector of ``sog_weight_grid(step)`` and SNPR under every λ of ``lambdas``. One row per choice:
    proxy, the choice (``weights`` text), whether it is this book's default, Pearson (%), MAE and RMSE (eq. 6)."""
    rows = []
    for weights in sog_weight_grid(step):
        text = ", ".join(f"{name} {value:g}" for name, value in weights.items())
        default = all(np.isclose(weights[name], SOG_WEIGHTS[name]) for name in SOG_WEIGHTS)
        rows.append({"proxy": "SOG", "weights": text, "default": default,
                     **_agreement_row(sog(components, weights), truth)})
    for lam in lambdas:
        rows.append({"proxy": "SNPR", "weights": f"λ {lam:g}", "default": bool(np.isclose(lam, SNPR_LAMBDA)),
                     **_agreement_row(snpr(components, float(lam)), truth)})
    return pd.DataFrame(rows)
