"""``recjudge judge``: score any recommender's lists offline with an LLM judge.

    recjudge judge LISTS.csv --items ITEMS.csv --history HISTORY.csv --judge PROVIDER:MODEL
                   [--prompt NAME] [--domain movies|ecommerce] [--k 20] [--history-k 10] [--out DIR]
                   [--mode replay|live|auto] [--store DIR] [--allow-failures]

LISTS.csv: user_id, rank, item_id (one row per recommended item; extra columns such as recommender are kept as
groups).  ITEMS.csv: item_id, name, categories ("A|B").  HISTORY.csv: user_id, item_id, timestamp (each listed
user's earlier interactions; the last ``--history-k`` go into the prompt).  Writes to DIR (default
``judge_out``, git-ignored in the project; created only when the results are written): ``item_scores.csv`` (per
recommended item: its name, score and status judged / failed / unparsable; ``SCORE_MEANING`` says what a score is),
``per_user.csv`` and ``overall.csv`` (precision_ser@k, ndcg_ser@k, avg_score@k over the judged items, n_unjudged,
under the same names in both; ``list_length`` per user and ``n_short_lists`` overall count the lists shorter than k,
which are measured at k all the same: their missing ranks are no hits) and ``report.txt`` (calls, store hits,
unparsable, tokens, cost, the cost at GPT-4o-mini list price, and the lists shorter than k).  Every reply
is stored the moment it arrives (``recjudge.llm``), so an interrupted run loses nothing already judged.  Text cells
of the CSVs that a spreadsheet would run as a formula get a leading single quote.

Exit codes: 0 done; 2 bad input or option (nothing asked); 3 replay mode and replies missing from the store;
4 some judgments failed or were unparsable (the outputs are written, those items left out; ``--allow-failures``
exits 0); 5 the judge could not run or its results could not be written (cost limit, provider configuration,
store or output folder); 130 interrupted.  Errors are one ``recjudge judge: ...`` line naming the file, row and
field, or the option.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from recjudge.compendium.results import escape_formulas

EXIT_INPUT = 2
EXIT_MISSING = 3
EXIT_UNJUDGED = 4
EXIT_NOT_RUN = 5
EXIT_INTERRUPTED = 130

#: Largest rank (and --k) accepted: far beyond any list judged, and exact as a float and an int64.
MAX_RANK = 1_000_000
#: Columns the output files write; a grouping column of LISTS.csv may not take these names.
OUTPUT_COLUMNS = ("item_name", "score", "status", "n_users", "n_unjudged", "list_length", "n_short_lists")
METRICS = ("precision_ser", "ndcg_ser", "avg_score")
OUTPUT_FILES = ("item_scores.csv", "per_user.csv", "overall.csv", "report.txt")
NON_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


class InputError(ValueError):
    """Bad input file or option: the message names the file, the row (1-based data row, header excluded) and the
    field, or the option."""


# ------------------------------------------------------------------------------------------------ reading
def _check_csv_shape(file: Path, columns: list[str]) -> None:
    """UTF-8 text, a header, at least one data row, every row as many fields as the header, quotes balanced.
    Streams the file (the csv module, strict), so a million rows cost no memory here."""
    row = 0
    try:
        with file.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, strict=True)
            header = next((fields for fields in reader if fields), None)  # blank lines are skipped, as pandas does
            if header is None:
                raise InputError(f"{file}: the file is empty (expected a header line {','.join(columns)})")
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                raise InputError(f"{file}: column(s) {', '.join(repeated)} appear more than once in the header")
            for fields in reader:
                if not fields:
                    continue
                row += 1
                if len(fields) != len(header):
                    raise InputError(f"{file}, row {row} (line {reader.line_num}): {len(fields)} field(s), the "
                                     f"header has {len(header)}")
    except UnicodeDecodeError:
        raise InputError(f"{file}: {_not_utf8(file)}; save it as UTF-8") from None
    except csv.Error as exc:
        raise InputError(f"{file}, row {row + 1}: malformed CSV ({exc}; an unbalanced quote?)") from None
    except OSError as exc:
        raise InputError(f"{file}: cannot read it ({exc.strerror or exc})") from None
    if row == 0:
        raise InputError(f"{file}: no data rows (only a header)")


def _not_utf8(file: Path) -> str:
    """Where a file stops being UTF-8 (read again whole: only on this error path)."""
    data = file.read_bytes()
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return f"line {line}: not UTF-8 text (byte {data[exc.start:exc.start + 1]!r} at offset {exc.start})"
    return "not UTF-8 text"


def _read(path: str, columns: list[str], what: str, optional: tuple[str, ...] = ()) -> pd.DataFrame:
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{what} file {file} does not exist" + (" (it is a folder)" if file.is_dir() else ""))
    _check_csv_shape(file, columns)
    try:
        frame = pd.read_csv(file, dtype=str, na_filter=False, encoding="utf-8-sig", index_col=False)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        raise InputError(f"{file}: unreadable CSV ({exc})") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{file}: missing column(s) {', '.join(missing)} (has: {', '.join(frame.columns)})")
    for column in (c for c in columns if c not in optional):
        empty = frame.index[frame[column].str.strip() == ""]
        if len(empty):
            raise InputError(f"{file}, row {empty[0] + 1}, field {column}: empty value")
    return frame


def _fail_at(path: str, frame: pd.DataFrame, rows: pd.Index, column: str, problem: Callable[[pd.Series], str]) -> None:
    """InputError at the first of ``rows`` (when any), saying ``problem(that row)``."""
    if len(rows):
        row = rows[0]
        raise InputError(f"{path}, row {row + 1}, field {column}: {problem(frame.loc[row])}")


def _ranks(frame: pd.DataFrame, path: str) -> pd.Series:
    values = pd.to_numeric(frame["rank"], errors="coerce")
    not_whole = lambda row: f"{row['rank']!r} is not a whole number"  # noqa: E731
    _fail_at(path, frame, frame.index[values.isna()], "rank", not_whole)
    _fail_at(path, frame, frame.index[(values < 1) | (values > MAX_RANK)], "rank",
             lambda row: f"ranks run from 1 to {MAX_RANK:,}, got {row['rank']}")
    _fail_at(path, frame, frame.index[values % 1 != 0], "rank", not_whole)
    return values.astype("int64")


def _timestamps(frame: pd.DataFrame, path: str) -> pd.Series:
    """Epoch seconds when the first row is a number, else dates; NaN and infinities are refused."""
    text = frame["timestamp"]
    not_finite = lambda row: f"{row['timestamp']!r} is not a finite time"  # noqa: E731
    _fail_at(path, frame, frame.index[text.str.strip().str.lower().isin(NON_FINITE)], "timestamp", not_finite)
    numbers = pd.to_numeric(text, errors="coerce")
    if not pd.isna(numbers.iloc[0]):
        _fail_at(path, frame, frame.index[numbers.isna()], "timestamp",
                 lambda row: f"{row['timestamp']!r} is not epoch seconds (the column's first row is)")
        _fail_at(path, frame, frame.index[~np.isfinite(numbers)], "timestamp", not_finite)  # e.g. 1e999
        return numbers
    dates = pd.to_datetime(text, errors="coerce", utc=True, format="mixed")  # each row in its own format
    _fail_at(path, frame, frame.index[dates.isna()], "timestamp",
             lambda row: f"{row['timestamp']!r} is neither epoch seconds nor a date")
    return dates


def read_inputs(lists_path: str, items_path: str, history_path: str, k: int):
    """The three frames, validated, and the grouping columns; InputError naming file, row and field on bad input."""
    lists = _read(lists_path, ["user_id", "rank", "item_id"], "lists")
    items = _read(items_path, ["item_id", "name", "categories"], "items", optional=("categories",))
    history = _read(history_path, ["user_id", "item_id", "timestamp"], "history")
    groups = [c for c in lists.columns if c not in ("user_id", "rank", "item_id")]
    reserved = {*OUTPUT_COLUMNS, *METRICS, *(f"{m}@{k}" for m in METRICS)}
    clashing = [c for c in groups if c in reserved]
    if clashing:
        raise InputError(f"{lists_path}: column {clashing[0]!r} would be a grouping column, but the output files "
                         f"write a column of that name ({', '.join(sorted(reserved))}); rename it")
    lists["rank"] = _ranks(lists, lists_path)
    _fail_at(lists_path, lists, lists.index[lists.duplicated([*groups, "user_id", "rank"])], "rank",
             lambda row: f"duplicate rank {row['rank']} for user {row['user_id']}")
    _fail_at(lists_path, lists, lists.index[lists.duplicated([*groups, "user_id", "item_id"])], "item_id",
             lambda row: f"item {row['item_id']!r} appears twice in the list of user {row['user_id']}")
    _fail_at(items_path, items, items.index[items.duplicated(["item_id"])], "item_id",
             lambda row: f"duplicate item {row['item_id']}")
    known = set(items["item_id"])
    for frame, path in ((lists, lists_path), (history, history_path)):
        unknown = frame.index[~frame["item_id"].isin(known)]
        _fail_at(path, frame, unknown, "item_id",
                 lambda row: f"unknown item {row['item_id']!r} (not in {items_path}; {len(unknown)} such row(s))")
    history["timestamp"] = _timestamps(history, history_path)
    without = ~lists["user_id"].isin(set(history["user_id"]))
    _fail_at(lists_path, lists, lists.index[without], "user_id",
             lambda row: f"user {row['user_id']!r} has no history in {history_path} "
                         f"({lists.loc[without, 'user_id'].nunique()} such user(s))")
    return lists, items, history, groups


# ------------------------------------------------------------------------------------------------ options
def parse_judge(spec: str):
    from recjudge.llm import JudgeConfig

    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise InputError(f"--judge must be PROVIDER:MODEL (e.g. openai:gpt-4o-mini, local:smollm2-135m-instruct-q4_1), "
                         f"got {spec!r}")
    if provider not in ("openai", "anthropic", "local"):
        raise InputError(f"--judge: unknown provider {provider!r} (openai, anthropic, local)")
    return provider, model, JudgeConfig


def check_options(args: argparse.Namespace) -> None:
    """InputError naming the option whose value cannot work (before any file is read)."""
    from recjudge.prompts.serendipity import DOMAINS

    from .judging import judge_prompts

    if not 1 <= args.k <= MAX_RANK:
        raise InputError(f"--k must be between 1 and {MAX_RANK:,}, got {args.k}")
    if args.history_k < 1:
        raise InputError(f"--history-k must be at least 1 (the history items in each prompt), got {args.history_k}")
    prompts = judge_prompts()
    if args.prompt not in prompts:
        raise InputError(f"--prompt: {args.prompt!r} is not a prompt recjudge judge can fill; use one of "
                         f"{', '.join(prompts)}")
    if args.domain not in DOMAINS:
        raise InputError(f"--domain: unknown domain {args.domain!r}; use one of {', '.join(sorted(DOMAINS))}")


def check_environment(mode: str | None) -> str:
    """The store mode (--mode, else env RECJUDGE_LLM_MODE); InputError naming a setting the judge cannot read."""
    from recjudge.llm.ask_options import resolve_mode
    from recjudge.llm.estimate import cost_limit

    try:
        cost_limit()
        return resolve_mode(mode)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def prepare_out(path: str) -> Path:
    """The output folder, proven writable before anything is asked, but not created: a run that ends before its
    results leaves no empty folder behind (``write_outputs`` creates it).  The probe writes a temporary file in the
    folder, or in its nearest existing parent when the folder is not there yet, and removes it."""
    out = Path(path)
    existing = next((folder for folder in (out, *out.absolute().parents) if folder.exists()), None)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    if existing is None or not existing.is_dir():
        raise InputError(f"--out {out}: cannot write there ({existing} is not a folder)")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    taken = [name for name in OUTPUT_FILES if (out / name).is_dir()]
    if taken:
        raise InputError(f"--out {out}: {taken[0]} is a folder, so the file of that name cannot be written")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (f"Writes item_scores.csv, per_user.csv, overall.csv and report.txt to --out. In item_scores.csv, "
                     f"{SCORE_MEANING['generate']} (openai, anthropic judges); {SCORE_MEANING['expected']} (local "
                     "judges). Replies are stored in the response store (see --store), never in the book's data/llm.")
    parser.add_argument("lists", metavar="LISTS.csv", help="user_id, rank, item_id (+ grouping columns)")
    parser.add_argument("--items", required=True, metavar="ITEMS.csv", help="item_id, name, categories (A|B)")
    parser.add_argument("--history", required=True, metavar="HISTORY.csv", help="user_id, item_id, timestamp")
    parser.add_argument("--judge", required=True, metavar="PROVIDER:MODEL")
    parser.add_argument("--prompt", default="kang_basic", help="prompt template (default kang_basic)")
    parser.add_argument("--k", type=int, default=20,
                        help="list length evaluated (default 20); a shorter list is measured at k all the same (its "
                             "missing ranks are no hits), counted in list_length, n_short_lists and report.txt")
    parser.add_argument("--out", default="judge_out",
                        help="output folder, created when the results are written (default judge_out)")
    parser.add_argument("--mode", choices=("replay", "live", "auto"), default=None,
                        help="store use (default env RECJUDGE_LLM_MODE, else auto)")
    parser.add_argument("--history-k", type=int, default=10, help="history items in the prompt, >= 1 (default 10)")
    parser.add_argument("--domain", default="movies", help="prompt wording: movies or ecommerce")
    parser.add_argument("--store", default=None,
                        help="response store folder, read and written (default: the book's committed replies read, "
                             "new replies written to variants/store, git-ignored; env RECJUDGE_STORE)")
    parser.add_argument("--allow-failures", action="store_true",
                        help="exit 0 even when judgments failed or were unparsable (they are left out either way)")


# ------------------------------------------------------------------------------------------------ writing
def statuses(scores: pd.DataFrame) -> pd.Series:
    """judged / failed (no reply) / unparsable, per row of ``judging.judge_pairs``' frame."""
    return pd.Series(np.select([scores["score"].notna(), scores["error"].notna()], ["judged", "failed"],
                               "unparsable"), index=scores.index)


def metric_tables(top: pd.DataFrame, scores: pd.DataFrame, groups: list[str], k: int):
    """(per_user, overall) frames: the metrics of each group's users over the judged items."""
    from .metrics import serendipity_per_user

    per_user, overall = [], []
    for key, group in (top.groupby(groups, sort=True) if groups else [((), top)]):
        key = key if isinstance(key, tuple) else (key,)
        per = serendipity_per_user(group[["user_id", "rank", "item_id"]], scores, k)
        # One name per measure in every file: the cut-off is part of it.
        per = per.rename(columns={m: f"{m}@{k}" for m in METRICS})
        per["list_length"] = group.groupby("user_id").size().reindex(per.index)
        per = per.reset_index()
        for column, value in zip(groups, key):
            per.insert(0, column, value)
        per_user.append(per)
        overall.append({**dict(zip(groups, key)), "n_users": len(per),
                        **{f"{m}@{k}": per[f"{m}@{k}"].mean() for m in METRICS},
                        "n_unjudged": int(per["n_unjudged"].sum()),
                        "n_short_lists": int((per["list_length"] < k).sum())})
    return pd.concat(per_user, ignore_index=True), pd.DataFrame(overall)


def write_outputs(out: Path, item_scores: pd.DataFrame, per_user: pd.DataFrame, overall: pd.DataFrame,
                  report: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in (("item_scores.csv", item_scores), ("per_user.csv", per_user), ("overall.csv", overall)):
        # CRLF line ends (RFC 4180) make the csv writer quote a cell holding a bare CR, which would end the row
        escape_formulas(frame).to_csv(out / name, index=False, lineterminator="\r\n")
    (out / "report.txt").write_text(report, encoding="utf-8")


#: What the score column of item_scores.csv holds, by the judge's scoring mode (``JudgeConfig.scoring``).
SCORE_MEANING = {
    "generate": "score: the 1-5 rating parsed from the judge's reply text",
    "expected": "score: the judge's expected score, the mean of the ratings 1-5 weighted by the probabilities the "
                "model gives their tokens as its first reply token (not a whole number)",
}


def short_lists_message(per_user: pd.DataFrame, k: int) -> str:
    """'' when every list has k items, else how many are shorter and how they are measured."""
    short = per_user["list_length"] < k
    if not short.any():
        return ""
    return (f"{int(short.sum())} of {len(per_user)} lists have fewer than --k {k} items (shortest "
            f"{int(per_user['list_length'].min())}): their measures @{k} count the missing ranks as no hits "
            "(avg_score is over the items they have); list_length in per_user.csv, n_short_lists in overall.csv")


def unjudged_message(scores: pd.DataFrame, status: pd.Series) -> str:
    failed, unparsable = int((status == "failed").sum()), int((status == "unparsable").sum())
    parts = []
    if failed:
        reason = scores.loc[status == "failed", "error"].astype(str).value_counts().index[0]
        parts.append(f"{failed} failed (no reply; most often: {reason}; asked again on the next run)")
    if unparsable:
        parts.append(f"{unparsable} unparsable (no score in the reply)")
    return (f"{failed + unparsable} of {len(scores)} judgments missing: {' and '.join(parts)}. They are left out of "
            "the metrics (n_unjudged in overall.csv and per_user.csv, status in item_scores.csv)")


# ------------------------------------------------------------------------------------------------ command
def _error(message: object, code: int) -> int:
    print(f"recjudge judge: {message}", file=sys.stderr)
    return code


def run_command(args: argparse.Namespace) -> int:
    from recjudge.llm import CostLimitExceeded, MissingReplies
    from recjudge.llm.prefix_reuse import local_judge_config
    from recjudge.llm.providers.base import ProviderError
    from recjudge.llm.runner import JudgeInterrupted
    from recjudge.llm.store import StoreNotWritable

    from . import judging

    try:
        provider, model, JudgeConfig = parse_judge(args.judge)
        check_options(args)
        mode = check_environment(args.mode)
        out = prepare_out(args.out)
        lists, items, history, groups = read_inputs(args.lists, args.items, args.history, args.k)
        top = lists[lists["rank"] <= args.k]
        if top.empty:
            raise InputError(f"{args.lists}: no rank is within --k {args.k}, so there is nothing to judge")
    except InputError as exc:
        return _error(exc, EXIT_INPUT)
    del lists
    local = provider == "local"
    # A local judge reuses the prompts' shared prefix (recjudge.llm.prefix_reuse: its replies are never committed).
    config = local_judge_config(JudgeConfig(provider=provider, model=model, prompt=args.prompt, temperature=0.0,
                                            seed=0, scoring="expected" if local else "generate",
                                            max_tokens=1 if local else 16), reuse=True)
    try:
        scores, run = judging.judge_pairs(top, history, items, config, domain=args.domain, history_k=args.history_k,
                                          mode=mode, store=args.store, progress=True)
    except MissingReplies as exc:
        return _error(exc, EXIT_MISSING)
    except (CostLimitExceeded, ProviderError, StoreNotWritable) as exc:
        return _error(f"{exc} (nothing was written to {out})", EXIT_NOT_RUN)
    except JudgeInterrupted:
        return _error("interrupted; every reply received is in the store, run again to go on", EXIT_INTERRUPTED)
    status = statuses(scores)
    names = items.set_index("item_id")["name"]
    item_scores = top.merge(scores[["user_id", "item_id", "score"]].assign(status=status),
                            on=["user_id", "item_id"], how="left")
    item_scores.insert(item_scores.columns.get_loc("item_id") + 1, "item_name", item_scores["item_id"].map(names))
    per_user, overall = metric_tables(top, scores, groups, args.k)
    report = run.report
    paper_cost = judging.paper_judge_cost(report.input_tokens + sum(scores["input_tokens"][scores["from_store"]]),
                                          len(scores))
    text = (f"{report}\nUnique judgments: {len(scores)}. At GPT-4o-mini list price these prompts would cost about "
            f"${paper_cost:.4f} (input tokens as counted by this judge's tokenizer, one output token each).\n"
            f"In item_scores.csv, {SCORE_MEANING[config.scoring]}.\n")
    short = short_lists_message(per_user, args.k)
    if short:
        text += short + ".\n"
    unjudged = status != "judged"
    if unjudged.any():
        text += unjudged_message(scores, status) + ".\n"
    try:
        write_outputs(out, item_scores, per_user, overall, text)
    except OSError as exc:
        return _error(f"cannot write the results to {out} ({exc}); the replies are in the store, so a run with "
                      "another --out asks nothing again", EXIT_NOT_RUN)
    print(overall.to_string(index=False))
    print(text)
    if unjudged.any() and not args.allow_failures:
        return _error(f"{unjudged_message(scores, status)}; exit {EXIT_UNJUDGED} (--allow-failures: exit 0)",
                      EXIT_UNJUDGED)
    return 0
