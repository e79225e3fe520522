"""Judging recommendation lists with an LLM (Tokutake et al. 2025, section 5) and the Table-3 metrics.

Inputs are three tidy frames: lists (user_id, rank, item_id, plus any grouping columns such as recommender and
fold), items (item_id, name, categories as a tuple or "A|B" text) and histories (user_id, item_id, timestamp).  Each
recommended (user, item) is judged with the user's last ``history_k`` history items (Kang et al. use 10), oldest
first, through a serendipity prompt template (default ``kang_basic``; the template is a parameter).  A prompt is
asked once however many recommenders or folds recommend the pair with the same history: the response store keys on
the full prompt, and ``unique_requests`` de-duplicates before asking.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm import pricing
from recjudge.prompts import serendipity as seren_prompts

from .metrics import accuracy_per_user, serendipity_per_user

HISTORY_K = 10
DEFAULT_PROMPT = "kang_basic"
#: The paper's judge, for the cost estimate at list price
PAPER_JUDGE = ("openai", "gpt-4o-mini")
#: Tokutake et al. (2025), Table 3, as printed (package data).
TOKUTAKE2025_TABLE3 = Path(__file__).with_name("tokutake2025_table3.csv")
TABLE3_COLUMNS = ["dataset", "recommender", "p_acc", "n_acc", "p_ser", "n_ser", "avg_score"]


def paper_table3(dataset: str | None = None) -> pd.DataFrame:
    """The paper's Table 3 (dataset, recommender, p_acc, n_acc, p_ser, n_ser in percent, avg_score), numbers as
    printed; ``dataset`` ("ML-1M", "Goodreads", "Beauty") keeps one dataset's rows. ValueError naming the file, row
    and field on a missing column or a non-numeric value; KeyError for an unknown dataset."""
    table = pd.read_csv(TOKUTAKE2025_TABLE3, comment="#")
    missing = [c for c in TABLE3_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{TOKUTAKE2025_TABLE3}: missing column(s) {missing}")
    for column in TABLE3_COLUMNS[2:]:
        values = pd.to_numeric(table[column], errors="coerce")
        if values.isna().any():
            row = int(values.index[values.isna()][0])
            raise ValueError(f"{TOKUTAKE2025_TABLE3}, row {row + 1}, field {column}: {table.at[row, column]!r} is not a "
                             "number")
        table[column] = values.astype(float)
    if dataset is not None:
        if dataset not in set(table["dataset"]):
            raise KeyError(f"dataset {dataset!r} not in Table 3 (has {sorted(set(table['dataset']))})")
        table = table[table["dataset"] == dataset].reset_index(drop=True)
    return table[TABLE3_COLUMNS]


def movies_frame(items: pd.DataFrame) -> pd.DataFrame:
    """items (item_id, name or title, categories or genres) -> the item_id-indexed frame the prompt builders read."""
    title = items["title"] if "title" in items.columns else items["name"]
    genres = items["genres"] if "genres" in items.columns else items["categories"]
    genres = genres.map(lambda g: tuple(g) if isinstance(g, (tuple, list)) else
                        tuple(x for x in str(g).split("|") if x) if isinstance(g, str) else ())
    year = items["year"] if "year" in items.columns else pd.Series(np.nan, index=items.index)
    return pd.DataFrame({"title": title.astype(str).to_numpy(), "year": year.to_numpy(), "genres": genres.to_numpy()},
                        index=pd.Index(items["item_id"].to_numpy(), name="item_id"))


def last_k(history: pd.DataFrame, k: int = HISTORY_K) -> dict:
    """user_id -> the last k history item ids, oldest first (ties in time broken by item_id)."""
    ordered = history.sort_values(["user_id", "timestamp", "item_id"], kind="mergesort")
    return {user: group["item_id"].tolist()[-k:] for user, group in ordered.groupby("user_id", sort=False)}


def requests_for(pairs: pd.DataFrame, history: pd.DataFrame, items: pd.DataFrame, prompt: str = DEFAULT_PROMPT,
                 domain: str = "movies", history_k: int = HISTORY_K) -> list[JudgeRequest]:
    """One request per distinct (user_id, item_id) in ``pairs`` (key "user:item")."""
    movies = movies_frame(items)
    recent = last_k(history, history_k)
    requests = []
    for user, item in pairs[["user_id", "item_id"]].drop_duplicates().itertuples(index=False):
        messages = seren_prompts.build_messages(
            prompt, domain, seren_prompts.movie_history_text(recent.get(user, []), movies),
            seren_prompts.movie_item_text(item, movies))
        requests.append(JudgeRequest(key=seren_prompts.request_key(user, item), messages=messages,
                                     meta={"user_id": user, "item_id": item}))
    return requests


def judge_pairs(pairs: pd.DataFrame, history: pd.DataFrame, items: pd.DataFrame, config: JudgeConfig, *,
                domain: str = "movies", history_k: int = HISTORY_K, mode: str | None = None, store=None,
                progress: bool = False, provider=None):
    """Judge the distinct (user, item) pairs; returns (scores frame user_id, item_id, score, input_tokens,
    output_tokens, from_store) and the ``JudgeRun``."""
    requests = requests_for(pairs, history, items, config.prompt, domain, history_k)
    run = run_judge(config, requests, mode=mode, store=store, progress=progress, provider=provider)
    meta = pd.DataFrame([r.meta for r in requests], index=[r.key for r in requests])
    table = run.table.groupby("key", sort=False).agg(input_tokens=("input_tokens", "sum"),
                                                     output_tokens=("output_tokens", "sum"),
                                                     from_store=("from_store", "all"))
    scores = run.scores()
    frame = meta.assign(score=scores.reindex(meta.index).to_numpy()).join(table)
    return frame.reset_index(drop=True), run


def paper_judge_cost(input_tokens: float, output_tokens: float) -> float:
    """What these tokens would cost with the paper's GPT-4o-mini at list price (USD; tokenizers differ, so an
    estimate)."""
    return pricing.cost_usd(*PAPER_JUDGE, int(input_tokens), int(output_tokens))


def table3_metrics(lists: pd.DataFrame, targets: pd.DataFrame | None, scores: pd.DataFrame | None, k: int = 20,
                   by: Sequence[str] = ("recommender", "fold")) -> pd.DataFrame:
    """Per group of ``by``: n_users and the means over users of precision_acc, ndcg_acc (when ``targets`` is given;
    its columns must include ``by`` minus "recommender", user_id, item_id), precision_ser, ndcg_ser and avg_score
    (when ``scores`` is given, user_id, item_id, score, plus the other ``by`` columns it varies with)."""
    rows = []
    for key, group in lists.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n_users"] = int(group["user_id"].nunique())
        if targets is not None:
            sel = targets
            for column, value in row.items():
                if column in targets.columns and column != "n_users":
                    sel = sel[sel[column] == value]
            sel = sel[sel["user_id"].isin(group["user_id"])]
            acc = accuracy_per_user(group, sel, k)
            row.update(precision_acc=acc["precision"].mean(), ndcg_acc=acc["ndcg"].mean(),
                       recall10_acc=accuracy_per_user(group, sel, 10)["recall"].mean())
        if scores is not None:
            sel = scores
            for column, value in row.items():
                if column in scores.columns and column != "n_users":
                    sel = sel[sel[column] == value]
            ser = serendipity_per_user(group, sel, k)
            row.update(precision_ser=ser["precision_ser"].mean(), ndcg_ser=ser["ndcg_ser"].mean(),
                       avg_score=ser["avg_score"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def fold_means(per_fold: pd.DataFrame, metrics: Sequence[str], by: str = "recommender") -> pd.DataFrame:
    """Mean and standard deviation over folds (ddof=1) of each metric, and the users per fold as "a/b/c"."""
    out = per_fold.groupby(by)[list(metrics)].agg(["mean", "std"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    out["n_users"] = per_fold.groupby(by)["n_users"].apply(lambda s: "/".join(str(int(v)) for v in s))
    return out.reset_index()
