"""Top-k metrics of Tokutake et al. (2025, section 5.1) on tidy recommendation lists.

A list frame has one row per (user_id, rank, item_id), rank 1 = top.  Binary relevance per recommended item:

- accuracy (``_acc``): the item is a positive of the user in the evaluated chunk;
- serendipity (``_ser``): the judge's score of (user, item) is >= ``SERENDIPITY_THRESHOLD`` (4), over *all*
  recommended items, whether or not the user interacted with them (the framework judges counterfactual items).

Per user: Precision@k = hits in the top k / k.  Recall@k = hits / |relevant| (used as the tuning
objective, Recall_acc@10).  NDCG@k = DCG / IDCG with DCG = sum_r rel_r / log2(r + 1).
For accuracy the ideal list puts min(|relevant|, k) hits on top.  For serendipity the relevant set is not known
beyond the judged list (nothing else is judged), so the ideal is a list of k serendipitous items: NDCG_ser@k is a
rank-discounted Precision_ser@k.  Avg. score@k is the mean judge score over the top k.  An item without a judgment
(failed or unparsable: NaN score) is left out of all three, never scored as a miss: the k ranks shrink by one for
it.  A list shorter than k counts its missing ranks as misses.  Means are over users.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SERENDIPITY_THRESHOLD = 4.0


def _top(lists: pd.DataFrame, k: int) -> pd.DataFrame:
    missing = [c for c in ("user_id", "rank", "item_id") if c not in lists.columns]
    if missing:
        raise ValueError(f"lists: missing column(s) {missing}")
    return lists.loc[lists["rank"] <= k]


def _discount(ranks) -> np.ndarray:
    return 1.0 / np.log2(np.asarray(ranks, dtype=float) + 1.0)


def ideal_dcg(n_relevant, k: int) -> np.ndarray:
    """IDCG@k for n relevant items (vectorised): sum of 1/log2(r+1) for r = 1..min(n, k)."""
    table = np.concatenate([[0.0], np.cumsum(_discount(np.arange(1, k + 1)))])
    return table[np.minimum(np.asarray(n_relevant, dtype=int), k)]


def accuracy_per_user(lists: pd.DataFrame, relevant: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per user with at least one relevant item: precision, recall, ndcg at k (users without a list score 0)."""
    top = _top(lists, k)
    truth = relevant[["user_id", "item_id"]].drop_duplicates().assign(hit=1.0)
    hits = top.merge(truth, on=["user_id", "item_id"], how="left").fillna({"hit": 0.0})
    hits["gain"] = hits["hit"] * _discount(hits["rank"])
    per = hits.groupby("user_id").agg(hits=("hit", "sum"), dcg=("gain", "sum"))
    n_rel = truth.groupby("user_id").size().rename("n_relevant")
    out = n_rel.to_frame().join(per, how="left").fillna(0.0)
    out["precision"] = out["hits"] / k
    out["recall"] = out["hits"] / out["n_relevant"]
    out["ndcg"] = out["dcg"] / ideal_dcg(out["n_relevant"].to_numpy(), k)
    return out[["n_relevant", "precision", "recall", "ndcg"]]


def serendipity_per_user(lists: pd.DataFrame, scores: pd.DataFrame, k: int,
                         threshold: float = SERENDIPITY_THRESHOLD) -> pd.DataFrame:
    """Per user with a list: precision_ser, ndcg_ser, avg_score at k over the judged items, and n_unjudged.

    ``scores``: user_id, item_id, score.  A NaN score (a failed judgment or an unparsable reply) is no judgment:
    the item is left out, never counted as "not serendipitous", and n_unjudged counts it.  Precision_ser is hits
    over the k ranks less the unjudged ones, NDCG_ser divides by the ideal DCG less the discounts of the unjudged
    ranks (a list of k judged serendipitous items scores 1), avg_score is the mean of the judged scores.  A user
    with no judged item gets NaN.  A recommended pair without a row in ``scores`` is an error."""
    top = _top(lists, k).drop(columns=["score"], errors="ignore")  # a list's own ranking scores are not judgments
    merged = top.merge(scores[["user_id", "item_id", "score"]].drop_duplicates(["user_id", "item_id"]),
                       on=["user_id", "item_id"], how="left", indicator=True)
    unscored = merged[merged["_merge"] == "left_only"]
    if len(unscored):
        first = unscored.iloc[0]
        raise ValueError(f"{len(unscored)} recommended (user, item) pair(s) have no judge score, e.g. user "
                         f"{first['user_id']} item {first['item_id']}")
    discount = _discount(merged["rank"])
    unjudged = merged["score"].isna().to_numpy()
    merged["ser"] = (merged["score"] >= threshold).astype(float)
    merged["gain"] = merged["ser"] * discount
    merged["unjudged"] = unjudged.astype(int)
    merged["unjudged_discount"] = unjudged * discount
    per = merged.groupby("user_id").agg(hits=("ser", "sum"), dcg=("gain", "sum"), avg_score=("score", "mean"),
                                        n_unjudged=("unjudged", "sum"), n_items=("unjudged", "size"),
                                        lost=("unjudged_discount", "sum"))
    judged = per["n_unjudged"] < per["n_items"]
    per["precision_ser"] = (per["hits"] / (k - per["n_unjudged"])).where(judged)
    per["ndcg_ser"] = (per["dcg"] / (ideal_dcg(np.full(len(per), k), k) - per["lost"])).where(judged)
    return per[["precision_ser", "ndcg_ser", "avg_score", "n_unjudged"]]


def recall_at_k(lists: pd.DataFrame, relevant: pd.DataFrame, k: int = 10) -> float:
    """Mean Recall@k over users with relevant items (the tuning objective)."""
    return float(accuracy_per_user(lists, relevant, k)["recall"].mean())
