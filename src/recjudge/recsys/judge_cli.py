"""``recjudge judge``: score any recommender's lists offline with an LLM judge.

    recjudge judge LISTS.csv --items ITEMS.csv --history HISTORY.csv --judge PROVIDER:MODEL
                   [--prompt NAME] [--k 20] [--out DIR] [--mode replay|live|auto] [--history-k 10] [--store DIR]

LISTS.csv: user_id, rank, item_id (one row per recommended item; extra columns such as recommender are kept as
groups).  ITEMS.csv: item_id, name, categories ("A|B").  HISTORY.csv: user_id, item_id, timestamp (each listed
user's earlier interactions; the last ``--history-k`` go into the prompt).  Writes to DIR (default
``judge_out``): ``item_scores.csv`` (per recommended item: score), ``per_user.csv`` and ``overall.csv``
(Precision_ser@k, NDCG_ser@k, Avg@k) and ``report.txt`` (calls, store hits, unparsable, tokens, cost, and the cost
at GPT-4o-mini list price).  Every reply is stored the moment it arrives (``recjudge.llm``), so an interrupted run
loses nothing already judged.  Bad input stops with an error naming the file, row and field.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


class InputError(ValueError):
    """Bad input file: the message names the file, the row (1-based data row, header excluded) and the field."""


def _read(path: str, columns: list[str], what: str, optional: tuple[str, ...] = ()) -> pd.DataFrame:
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{what} file {file} does not exist")
    frame = pd.read_csv(file, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{file}: missing column(s) {', '.join(missing)} (has: {', '.join(frame.columns)})")
    for column in (c for c in columns if c not in optional):
        empty = frame.index[frame[column].str.strip() == ""]
        if len(empty):
            raise InputError(f"{file}, row {empty[0] + 1}, field {column}: empty value")
    return frame


def _numeric(frame: pd.DataFrame, path: str, column: str, integer: bool = False) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = frame.index[values.isna()]
    if integer:
        bad = bad.union(frame.index[values.notna() & (values % 1 != 0)])
    if len(bad):
        row = bad[0]
        raise InputError(f"{path}, row {row + 1}, field {column}: {frame.at[row, column]!r} is not a "
                         f"{'whole ' if integer else ''}number")
    return values.astype("int64") if integer else values


def read_inputs(lists_path: str, items_path: str, history_path: str, k: int):
    """The three frames, validated; InputError naming file, row and field on bad input."""
    lists = _read(lists_path, ["user_id", "rank", "item_id"], "lists")
    items = _read(items_path, ["item_id", "name", "categories"], "items", optional=("categories",))
    history = _read(history_path, ["user_id", "item_id", "timestamp"], "history")
    lists["rank"] = _numeric(lists, lists_path, "rank", integer=True)
    low = lists.index[lists["rank"] < 1]
    if len(low):
        raise InputError(f"{lists_path}, row {low[0] + 1}, field rank: ranks start at 1, got {lists.at[low[0], 'rank']}")
    groups = [c for c in lists.columns if c not in ("user_id", "rank", "item_id", "score")]
    duplicated = lists.index[lists.duplicated([*groups, "user_id", "rank"], keep="first")]
    if len(duplicated):
        row = duplicated[0]
        raise InputError(f"{lists_path}, row {row + 1}, field rank: duplicate rank {lists.at[row, 'rank']} for user "
                         f"{lists.at[row, 'user_id']}")
    dup_items = items.index[items.duplicated(["item_id"])]
    if len(dup_items):
        raise InputError(f"{items_path}, row {dup_items[0] + 1}, field item_id: duplicate item "
                         f"{items.at[dup_items[0], 'item_id']}")
    known = set(items["item_id"])
    for frame, path in ((lists, lists_path), (history, history_path)):
        unknown = frame.index[~frame["item_id"].isin(known)]
        if len(unknown):
            row = unknown[0]
            raise InputError(f"{path}, row {row + 1}, field item_id: unknown item {frame.at[row, 'item_id']!r} "
                             f"(not in {items_path}; {len(unknown)} such row(s))")
    stamps = pd.to_numeric(history["timestamp"], errors="coerce")
    if stamps.isna().any():
        parsed = pd.to_datetime(history["timestamp"], errors="coerce", utc=True)
        bad = history.index[parsed.isna()]
        if len(bad):
            raise InputError(f"{history_path}, row {bad[0] + 1}, field timestamp: {history.at[bad[0], 'timestamp']!r} "
                             "is neither epoch seconds nor a date")
        history["timestamp"] = parsed
    else:
        history["timestamp"] = stamps
    without = sorted(set(lists["user_id"]) - set(history["user_id"]))
    if without:
        row = lists.index[lists["user_id"] == without[0]][0]
        raise InputError(f"{lists_path}, row {row + 1}, field user_id: user {without[0]!r} has no history in "
                         f"{history_path} ({len(without)} such user(s))")
    return lists, items, history, groups


def parse_judge(spec: str):
    from recjudge.llm import JudgeConfig

    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise InputError(f"--judge must be PROVIDER:MODEL (e.g. openai:gpt-4o-mini, local:smollm2-135m-instruct-q4_1), "
                         f"got {spec!r}")
    if provider not in ("openai", "anthropic", "local"):
        raise InputError(f"--judge: unknown provider {provider!r} (openai, anthropic, local)")
    return provider, model, JudgeConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lists", metavar="LISTS.csv", help="user_id, rank, item_id (+ grouping columns)")
    parser.add_argument("--items", required=True, metavar="ITEMS.csv", help="item_id, name, categories (A|B)")
    parser.add_argument("--history", required=True, metavar="HISTORY.csv", help="user_id, item_id, timestamp")
    parser.add_argument("--judge", required=True, metavar="PROVIDER:MODEL")
    parser.add_argument("--prompt", default="kang_basic", help="prompt template (default kang_basic)")
    parser.add_argument("--k", type=int, default=20, help="list length evaluated (default 20)")
    parser.add_argument("--out", default="judge_out", help="output folder (default judge_out)")
    parser.add_argument("--mode", choices=("replay", "live", "auto"), default=None,
                        help="store use (default env RECJUDGE_LLM_MODE, else auto)")
    parser.add_argument("--history-k", type=int, default=10, help="history items in the prompt (default 10)")
    parser.add_argument("--domain", default="movies", help="prompt wording: movies or ecommerce")
    parser.add_argument("--store", default=None, help="response store folder (default the project's data/llm)")


def run_command(args: argparse.Namespace) -> int:
    from recjudge.llm import MissingReplies

    from . import judging
    from .metrics import serendipity_per_user

    try:
        provider, model, JudgeConfig = parse_judge(args.judge)
        if args.k < 1:
            raise InputError(f"--k must be at least 1, got {args.k}")
        lists, items, history, groups = read_inputs(args.lists, args.items, args.history, args.k)
    except InputError as exc:
        print(f"recjudge judge: {exc}", file=sys.stderr)
        return 2
    local = provider == "local"
    config = JudgeConfig(provider=provider, model=model, prompt=args.prompt, temperature=0.0, seed=0,
                         scoring="expected" if local else "generate", max_tokens=1 if local else 16)
    top = lists[lists["rank"] <= args.k]
    try:
        scores, run = judging.judge_pairs(top, history, items, config, domain=args.domain, history_k=args.history_k,
                                          mode=args.mode, store=args.store, progress=True)
    except MissingReplies as exc:
        print(f"recjudge judge: {exc}", file=sys.stderr)
        return 3
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    item_scores = top.merge(scores[["user_id", "item_id", "score"]], on=["user_id", "item_id"], how="left")
    item_scores.to_csv(out / "item_scores.csv", index=False)
    per_user, overall = [], []
    for key, group in (top.groupby(groups, sort=True) if groups else [((), top)]):
        key = key if isinstance(key, tuple) else (key,)
        per = serendipity_per_user(group, scores, args.k).reset_index()
        for column, value in zip(groups, key):
            per.insert(0, column, value)
        per_user.append(per)
        overall.append({**dict(zip(groups, key)), "n_users": len(per),
                        **{f"{m}@{args.k}": per[m].mean() for m in ("precision_ser", "ndcg_ser", "avg_score")}})
    pd.concat(per_user).to_csv(out / "per_user.csv", index=False)
    pd.DataFrame(overall).to_csv(out / "overall.csv", index=False)
    report = run.report
    paper_cost = judging.paper_judge_cost(report.input_tokens + sum(scores["input_tokens"][scores["from_store"]]),
                                          len(scores))
    text = (f"{report}\nUnique judgments: {len(scores)}. At GPT-4o-mini list price these prompts would cost about "
            f"${paper_cost:.4f} (input tokens as counted by this judge's tokenizer, one output token each).\n")
    (out / "report.txt").write_text(text, encoding="utf-8")
    print(pd.DataFrame(overall).to_string(index=False))
    print(text)
    return 0
