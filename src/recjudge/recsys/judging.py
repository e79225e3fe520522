"""Judging recommendation lists with an LLM (Tokutake et al. 2025, section 5) and the Table-3 metrics.

Inputs are three tidy frames: lists (user_id, rank, item_id, plus any grouping columns such as recommender and
fold), items (item_id, name, categories as a tuple or "A|B" text) and histories (user_id, item_id, timestamp).  Each
recommended (user, item) is judged with the user's last ``history_k`` history items (Kang et al. use 10), oldest
first, through a serendipity prompt template (default ``kang_basic``; the template is a parameter).  A prompt is
asked once however many recommenders or folds recommend the pair with the same history: the response store keys on
the full prompt, and ``requests_for`` de-duplicates before asking.  A judgment that fails or whose reply is
unparsable is a NaN score, left out of the metrics (``recjudge.recsys.metrics``).  Large jobs are judged in chunks
of ``CHUNK_PROMPTS`` prompts, so memory does not grow with the number of pairs (see ``judge_pairs``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from recjudge import papers
from recjudge.llm import (
    JudgeConfig,
    JudgeRequest,
    JudgeRun,
    MissingReplies,
    RunReport,
    estimate_job,
    open_store,
    pricing,
    run_judge,
)
from recjudge.llm.ask_options import resolve_mode
from recjudge.llm.estimate import check_cost, paid
from recjudge.prompts import list_templates, template_fields
from recjudge.prompts import serendipity as seren_prompts

from .metrics import accuracy_per_user, serendipity_per_user
from .models import in_order

HISTORY_K = 10
DEFAULT_PROMPT = "kang_basic"
#: Prompts built and judged at a time by ``judge_pairs``: a job of a million pairs holds one chunk's prompts (a few
#: kB each, twice over in the runner) in memory, not all of them.
CHUNK_PROMPTS = 20_000
#: The paper's judge, for the cost estimate at list price
PAPER_JUDGE = ("openai", "gpt-4o-mini")
#: Tokutake et al. (2025), Table 3, as printed (``recjudge.papers``).
TOKUTAKE2025_TABLE3 = papers.path("tokutake2025framework_table3")
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
            raise ValueError(f"{TOKUTAKE2025_TABLE3}, row {row + 1}, field {column}: {table.at[row, column]!r} "
                             "is not a "
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
    """user_id -> the last k history item ids, oldest first (ties in time broken by item_id); k >= 1."""
    if k < 1:
        raise ValueError(f"history_k must be at least 1, got {k}")  # [-0:] would keep the whole history
    ordered = history.sort_values(["user_id", "timestamp", "item_id"], kind="mergesort")
    return {user: group["item_id"].tolist()[-k:] for user, group in ordered.groupby("user_id", sort=False)}


def judge_prompts() -> list[str]:
    """The templates that judge one (history, item) pair with only the domain wording: what ``requests_for``
    can fill (few-shot templates need solved examples, which it does not take)."""
    fillable = set(seren_prompts.DOMAINS["movies"]) | {"history", "item"}
    return [name for name in list_templates() if {"history", "item"} <= template_fields(name) <= fillable]


class _PromptBuilder:
    """Requests of (user, item) pairs.  Each user's history text and each item's text is made once (they are the
    same in every prompt they enter), and message texts that repeat across prompts (the system turn) are held
    once, so many pairs per user are built quickly and compactly."""

    def __init__(self, history: pd.DataFrame, items: pd.DataFrame, prompt: str, domain: str, history_k: int):
        self.movies = movies_frame(items)
        self.recent = last_k(history, history_k)
        self.prompt, self.domain = prompt, domain
        self.history_texts: dict = {}
        self.item_texts: dict = {}
        self.shared: dict[str, str] = {}

    def request(self, user, item) -> JudgeRequest:
        history = self.history_texts.get(user)
        if history is None:
            history = self.history_texts[user] = seren_prompts.movie_history_text(self.recent.get(user, []),
                                                                                  self.movies)
        item_text = self.item_texts.get(item)
        if item_text is None:
            item_text = self.item_texts[item] = seren_prompts.movie_item_text(item, self.movies)
        messages = seren_prompts.build_messages(self.prompt, self.domain, history, item_text)
        for message in messages[:-1]:  # the last turn names the item: never shared
            message["content"] = self.shared.setdefault(message["content"], message["content"])
        return JudgeRequest(key=seren_prompts.request_key(user, item), messages=messages,
                            meta={"user_id": user, "item_id": item})

    def requests(self, pairs: pd.DataFrame) -> list[JudgeRequest]:
        return [self.request(user, item) for user, item in pairs[["user_id", "item_id"]].itertuples(index=False)]


def requests_for(pairs: pd.DataFrame, history: pd.DataFrame, items: pd.DataFrame, prompt: str = DEFAULT_PROMPT,
                 domain: str = "movies", history_k: int = HISTORY_K) -> list[JudgeRequest]:
    """One request per distinct (user_id, item_id) in ``pairs`` (key ``request_key(user, item)``)."""
    builder = _PromptBuilder(history, items, prompt, domain, history_k)
    return builder.requests(pairs[["user_id", "item_id"]].drop_duplicates())


def judge_pairs(pairs: pd.DataFrame, history: pd.DataFrame, items: pd.DataFrame, config: JudgeConfig, *,
                domain: str = "movies", history_k: int = HISTORY_K, mode: str | None = None, store=None,
                progress: bool = False, provider=None, chunk_prompts: int = CHUNK_PROMPTS, batch: bool | None = None):
    """Judge the distinct (user, item) pairs; returns (scores frame user_id, item_id, score, input_tokens,
    output_tokens, from_store, error, and for an expected-score judge integer_score, its most likely score token:
    what Tokutake et al.'s generating judge would answer) and the ``JudgeRun``.  ``error`` says why a judgment
    failed (no reply);
    it is None for a reply, so a NaN score with no error is an unparsable reply.

    Jobs of more than ``chunk_prompts`` pairs are built and judged that many prompts at a time (one ``run_judge``
    each, the returned run combining them), so memory holds one chunk's prompts, not all.  The whole job is priced
    before any chunk is asked (the cost limit applies to the job), replay mode lists every missing reply, and
    once a chunk stops the job (e.g. the provider refused every request) the later chunks are not asked.  ``batch``:
    ``run_judge``'s batch option (True: the provider's batch API; None: env ``RECJUDGE_LLM_BATCH`` decides)."""
    distinct = pairs[["user_id", "item_id"]].drop_duplicates()
    builder = _PromptBuilder(history, items, config.prompt, domain, history_k)
    starts = range(0, max(len(distinct), 1), chunk_prompts)
    chunks = [distinct.iloc[start:start + chunk_prompts] for start in starts]
    confirm_cost = len(chunks) > 1 and _check_job_cost(config, builder, chunks, store, mode, progress)
    frames, runs, missing = [], [], []
    for chunk in chunks:
        requests = builder.requests(chunk)
        if runs and runs[-1].report.failed_by_kind.get("not_asked"):
            frames.append(_not_asked(requests, runs[-1]))
            continue
        try:
            run = run_judge(config, requests, mode=mode, store=store, progress=progress, provider=provider,
                            confirm_cost=confirm_cost, batch=batch)
        except MissingReplies as exc:
            missing.extend(exc.missing)
            continue
        frames.append(_scores_frame(requests, run))
        runs.append(run)
    if missing:
        raise MissingReplies(missing, label=config.label, store_root=open_store(store).root)
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return frame, runs[0] if len(runs) == 1 else _combined_run(runs)


def _scores_frame(requests: list[JudgeRequest], run: JudgeRun) -> pd.DataFrame:
    meta = pd.DataFrame([r.meta for r in requests], index=[r.key for r in requests])
    table = run.table.groupby("key", sort=False).agg(input_tokens=("input_tokens", "sum"),
                                                     output_tokens=("output_tokens", "sum"),
                                                     from_store=("from_store", "all"), error=("error", "first"))
    scores = run.scores()
    frame = meta.assign(score=scores.reindex(meta.index).to_numpy()).join(table)
    frame["error"] = frame["error"].where(frame["score"].isna(), None)  # a run that parsed outweighs one that failed
    if "modal_score" in run.table.columns:  # an expected-score judge read as the paper's integer as well
        frame["integer_score"] = run.scores(column="modal_score").reindex(frame.index).to_numpy()
    return frame.reset_index(drop=True)


def _not_asked(requests: list[JudgeRequest], stopped: JudgeRun) -> pd.DataFrame:
    """The frame of a chunk left unasked because the chunk before stopped the job."""
    reason = stopped.failures["error"].iloc[0] if len(stopped.failures) else "the job stopped"
    frame = pd.DataFrame([r.meta for r in requests])
    return frame.assign(score=np.nan, input_tokens=pd.array([pd.NA] * len(frame), dtype="Int64"),
                        output_tokens=pd.array([pd.NA] * len(frame), dtype="Int64"), from_store=False,
                        error=f"not asked: an earlier part of the job stopped ({reason})")


def _check_job_cost(config: JudgeConfig, builder: _PromptBuilder, chunks: list[pd.DataFrame], store,
                    mode: str | None, progress: bool) -> bool:
    """Price the whole job before any chunk is asked (``run_judge`` alone would price one chunk at a time);
    raises ``CostLimitExceeded`` above the limit.  Returns whether the chunks may skip their own check."""
    if resolve_mode(mode) in ("replay", "plan"):  # nothing will be asked, so nothing is paid
        return False
    estimates = [estimate_job(config, builder.requests(chunk), store) for chunk in chunks]
    total = dataclasses.replace(
        estimates[0], **{name: sum(getattr(e, name) for e in estimates)
                         for name in ("n_prompts", "n_replies", "n_missing", "input_tokens", "output_tokens",
                                      "cost_usd", "list_cost_usd", "batch_cost_usd", "seconds")})
    check_cost(total, confirm_cost=False, progress=progress, costs_money=paid(config))
    return True


def _combined_run(runs: list[JudgeRun]) -> JudgeRun:
    """One ``JudgeRun`` for the chunks of a job: tables stacked, counts and costs added up."""
    reports = [run.report for run in runs]
    merged = {}
    for item in dataclasses.fields(RunReport):
        values = [getattr(report, item.name) for report in reports]
        if isinstance(values[0], str) or item.name == "n_runs":  # the same in every chunk
            merged[item.name] = values[0]
        elif isinstance(values[0], (int, float)):
            merged[item.name] = sum(values)
        elif isinstance(values[0], list):
            merged[item.name] = list(dict.fromkeys(v for value in values for v in value))
        elif item.name == "failed_by_kind":
            merged[item.name] = dict(sorted(sum((Counter(value) for value in values), Counter()).items()))
        else:  # the concurrency gate and batch ids: the last chunk's
            merged[item.name] = values[-1]
    table = pd.concat([run.table for run in runs], ignore_index=True)
    return JudgeRun(config=runs[0].config, table=table, report=RunReport(**merged), score_columns=runs[0].score_columns)


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


def judge_folds(folds, test_lists: pd.DataFrame, judged: dict, items: pd.DataFrame, config: JudgeConfig, *,
                mode: str | None = None, batch: bool | None = None) -> tuple[pd.DataFrame, list[JudgeRun]]:
    """``judge_pairs`` on the test lists of the ``judged`` users (fold -> user ids) of every fold of ``folds``
    (``recsys.split.folds``: each pair judged once per fold, with that fold's training history): the scores with
    a ``fold`` column, and each fold's run."""
    scored, runs = [], []
    for fold in folds:
        sub = test_lists[(test_lists["fold"] == fold.fold) & test_lists["user_id"].isin(judged[fold.fold])]
        scores, run = judge_pairs(sub, fold.train, items, config, mode=mode, batch=batch)
        scored.append(scores.assign(fold=fold.fold))
        runs.append(run)
    return pd.concat(scored, ignore_index=True), runs


def first_test_users(folds, test_lists: pd.DataFrame, n: int) -> dict[int, list]:
    """The users a chapter judges: fold -> the first ``n`` users by id that have a list in ``test_lists`` in that
    fold of ``folds`` (an empty list for a fold without any)."""
    return {f.fold: sorted(test_lists.loc[test_lists["fold"] == f.fold, "user_id"].unique())[:n] for f in folds}


def lists_of_users(test_lists: pd.DataFrame, judged: dict) -> pd.DataFrame:
    """The rows of ``test_lists`` of the ``judged`` users (fold -> user ids, ``first_test_users``)."""
    return test_lists.merge(pd.DataFrame([(f, u) for f, us in judged.items() for u in us],
                                         columns=["fold", "user_id"]))


#: The columns of Table 3 (accuracy and serendipity at k), as ``table3_metrics`` names them.
TABLE3_METRICS = ("precision_acc", "ndcg_acc", "precision_ser", "ndcg_ser", "avg_score")
#: The serendipity metrics whose standard error over the judged lists Table 3 carries.
SERENDIPITY_METRICS = ("precision_ser", "ndcg_ser", "avg_score")


def list_standard_errors(lists: pd.DataFrame, scores: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per recommender: the judged lists pooled over folds (``n_lists``, those with a judged item) and the standard
    error of the mean over them (``scipy.stats.sem``) of each serendipity metric (``<metric>_se``). A mean over a
    few dozen lists is read with its standard error."""
    from scipy import stats

    per_list = []
    for (recommender, fold), group in lists.groupby(["recommender", "fold"], sort=True):
        sel = scores[scores["fold"] == fold] if "fold" in scores.columns else scores
        per_list.append(serendipity_per_user(group, sel, k).assign(recommender=recommender))
    pooled = pd.concat(per_list, ignore_index=True)
    grouped = pooled.groupby("recommender")
    out = grouped["avg_score"].count().rename("n_lists").to_frame()
    for metric in SERENDIPITY_METRICS:
        out[f"{metric}_se"] = grouped[metric].agg(lambda v: float(stats.sem(v, nan_policy="omit"))
                                                  if v.notna().sum() > 1 else float("nan"))
    return out.reset_index()


def table3_of_judge(judged_lists: pd.DataFrame, targets: pd.DataFrame, scored: pd.DataFrame, *, k: int,
                    order: Sequence[str], integer: bool = False) -> pd.DataFrame:
    """Table 3 (fold means and sds of ``TABLE3_METRICS``, one row per recommender in ``order``) from one judge's
    ``scored`` pairs (``judge_folds``), with the serendipity metrics' standard errors over the judged lists
    (:func:`list_standard_errors`); ``integer``: its most likely score token (``integer_score``) as the score, as
    the paper's generating judge answers."""
    scores = scored.assign(score=scored["integer_score"]) if integer else scored
    per_fold = table3_metrics(judged_lists, targets, scores, k=k)
    table = fold_means(per_fold, list(TABLE3_METRICS)).merge(list_standard_errors(judged_lists, scores, k),
                                                               on="recommender", how="left")
    return table.set_index("recommender").loc[list(order)].reset_index()


def serendipity_view(table3: pd.DataFrame) -> pd.DataFrame:
    """Table 3's serendipity columns as the chapter shows them: P_ser and N_ser in percent, Avg. score as is, and
    the Avg. score's standard error over the judged lists (``avg_score_se``, with ``n_lists``) where known."""
    view = pd.DataFrame({"recommender": table3["recommender"], "p_ser": 100 * table3["precision_ser_mean"],
                         "n_ser": 100 * table3["ndcg_ser_mean"], "avg_score": table3["avg_score_mean"]})
    if "avg_score_se" in table3.columns:
        view = view.assign(avg_score_se=table3["avg_score_se"].to_numpy(), n_lists=table3["n_lists"].to_numpy())
    return view


def fold_means(per_fold: pd.DataFrame, metrics: Sequence[str], by: str = "recommender") -> pd.DataFrame:
    """Mean and standard deviation over folds (ddof=1) of each metric, and the users per fold as "a/b/c"."""
    out = per_fold.groupby(by)[list(metrics)].agg(["mean", "std"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    out["n_users"] = per_fold.groupby(by)["n_users"].apply(lambda s: "/".join(str(int(v)) for v in s))
    return out.reset_index()


def accuracy_by_recommender(test_lists: pd.DataFrame, targets: pd.DataFrame, order: Sequence[str], k: int = 20
                            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 3's accuracy half over every test user: per recommender and fold (n_users, precision_acc, ndcg_acc,
    recall10_acc), and their means and SDs over folds with the recommenders in ``order`` (any other after)."""
    per_fold = table3_metrics(test_lists, targets, None, k=k)
    means = fold_means(per_fold, ["precision_acc", "ndcg_acc", "recall10_acc"])
    return per_fold, means.set_index("recommender").loc[in_order(means["recommender"], order)].reset_index()


def order_against_paper(ours: pd.DataFrame, paper: pd.DataFrame, metric: str) -> dict:
    """How our order of the recommenders the paper also has agrees with the paper's on ``metric`` (a column of both
    frames, which have a recommender column): Kendall's tau-b (``scipy.stats.kendalltau``) with its p-value, the
    number of recommenders, and both orders, best first."""
    from scipy import stats

    both = paper[["recommender", metric]].merge(ours[["recommender", metric]], on="recommender",
                                                 suffixes=("_paper", "_ours"))
    if len(both) < 2:
        raise ValueError(f"fewer than two recommenders in common: {both['recommender'].tolist()}")
    tau = stats.kendalltau(both[f"{metric}_paper"], both[f"{metric}_ours"])
    return {"tau": float(tau.statistic), "p": float(tau.pvalue), "n": len(both),
            "paper_order": both.sort_values(f"{metric}_paper", ascending=False)["recommender"].tolist(),
            "our_order": both.sort_values(f"{metric}_ours", ascending=False)["recommender"].tolist()}


def versus_random(test_lists: pd.DataFrame, targets: pd.DataFrame, k: int = 20, reference: str = "Random",
                  order: Sequence[str] = ()) -> pd.DataFrame:
    """Every recommender against ``reference`` per test user, folds pooled: the mean difference, wins and losses
    and a two-sided Wilcoxon signed-rank p-value (``scipy.stats.wilcoxon``, zero differences dropped; NaN when
    every difference is zero) of Recall_acc@10 and Precision_acc@k, one row per recommender in ``order`` (then
    any other).  ``test_lists`` has recommender, fold, user_id, rank, item_id; ``targets`` has fold, user_id,
    item_id."""
    from scipy import stats

    per_user = []
    for (name, fold), group in test_lists.groupby(["recommender", "fold"]):
        truth = targets[targets["fold"] == fold]
        precision = accuracy_per_user(group, truth, k)[["precision"]]
        recall = accuracy_per_user(group, truth, 10)[["recall"]]
        per_user.append(precision.join(recall).reset_index().assign(recommender=name, fold=fold))
    per_user = pd.concat(per_user, ignore_index=True)
    if reference not in set(per_user["recommender"]):
        raise ValueError(f"no lists of the reference recommender {reference!r}")
    base = per_user[per_user["recommender"] == reference].set_index(["fold", "user_id"])
    rows = []
    for name in in_order(test_lists["recommender"], order):
        if name == reference:
            continue
        mine = per_user[per_user["recommender"] == name].set_index(["fold", "user_id"])
        row = {"recommender": name, "n_users": len(mine)}
        for metric, label in (("recall", "recall10"), ("precision", f"precision{k}")):
            diff = (mine[metric] - base[metric].reindex(mine.index).fillna(0.0)).to_numpy()
            row[f"{label}_diff"] = float(diff.mean())
            row[f"{label}_wins"] = int((diff > 0).sum())
            row[f"{label}_losses"] = int((diff < 0).sum())
            row[f"{label}_p"] = float(stats.wilcoxon(diff).pvalue) if np.any(diff != 0) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def accuracy_finding(accuracy: pd.DataFrame, vs_random: pd.DataFrame, test_users: Sequence[int],
                     dataset: str) -> str:
    """The verdict's sentence on accuracy: the best recommender by NDCG_acc@20, how many beat Random on
    Recall_acc@10 (and with p < 0.05), and whether the fold-to-fold spread exceeds the gap between the best and the
    worst non-random recommender. ``accuracy`` is ``fold_means`` of ndcg_acc (with recommender); ``vs_random`` has
    recommender, recall10_diff and recall10_p."""
    best = accuracy.loc[accuracy["ndcg_acc_mean"].idxmax()]
    beats = vs_random[vs_random["recall10_diff"] > 0]
    significant = vs_random.loc[vs_random["recall10_p"] < 0.05, "recommender"].tolist()
    non_random = accuracy[accuracy["recommender"] != "Random"]
    spread = float(non_random["ndcg_acc_std"].median())
    gap = float(non_random["ndcg_acc_mean"].max() - non_random["ndcg_acc_mean"].min())
    sentence = (f"Accuracy on ml-{dataset} ({' / '.join(map(str, test_users))} test users per fold): "
                f"{best['recommender']} has the highest NDCG_acc@20 ({100 * best['ndcg_acc_mean']:.2f}%); "
                f"{len(beats)} of {len(vs_random)} recommenders have a higher mean Recall_acc@10 than Random, "
                f"{len(significant)} of them with p < 0.05 ({', '.join(significant) or 'none'}).")
    if spread > gap:
        sentence += (f" With this few test users the fold-to-fold SD of NDCG_acc@20 (median {100 * spread:.2f} "
                     f"points) exceeds the gap between the best and the worst non-random recommender "
                     f"({100 * gap:.2f} points).")
    else:
        sentence += (f" The gap between the best and the worst non-random recommender ({100 * gap:.2f} points of "
                     f"NDCG_acc@20) exceeds the median fold-to-fold SD ({100 * spread:.2f} points).")
    return sentence
