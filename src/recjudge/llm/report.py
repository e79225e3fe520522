"""A judge run's result: the tidy table (one row per prompt and sample, scores parsed from the stored replies at read
time) and the report of what the run did (``RunReport``: replies from the store and asked, failures by kind,
unparsable and out-of-shape replies, tokens and cost): steps 3 and 4 of a judge run, ``assemble_scores`` and
``report_run``, from what steps 1 and 2 collected in the job.

NumPy and pandas are imported where the table is built, after the asking: importing the engine and sending the first
request need neither."""

from __future__ import annotations

import functools
import json
import math
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from . import pricing, shapes
from .ask_options import LEFT_OUT, PLAN
from .config import JudgeConfig
from .parsing import expected_score, modal_score
from .plan import PLANNED
from .store import model_slug

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .job import JudgeJob

Parser = Callable[[str], "float | Mapping[str, float]"]

#: Environment variable: the JSON-lines file each run with failed judgments appends one line to (``log_failures``),
#: so that a driver of many notebooks (``recjudge run``) tells a chapter whose judgments failed from one that is done.
FAILURE_LOG_ENV = "RECJUDGE_FAILURE_LOG"
#: Failure kinds that no asking again within the run could have avoided and that are reported elsewhere: a batch
#: still running at the provider (the command names the pending batches) and a key absent from recorded judgments.
NOT_LOGGED_KINDS = frozenset({"batch_pending", "not_recorded"})
#: Environment variable: the JSON-lines file every judge job appends its summary line to (``log_job``: asked, from
#: the store, failed, unparsable, out of shape, left out), so that ``recjudge run`` ends with a summary per judge.
JOB_LOG_ENV = "RECJUDGE_JOB_LOG"
#: Environment variable: the JSON-lines file each judge job appends the stored replies its reader read to
#: (``log_readings``: judge, scoring, reader and the store keys), so that a change of the reading rules is counted
#: over exactly the replies each chapter reads (``recjudge.chapters.reply_readings``).
READING_LOG_ENV = "RECJUDGE_READING_LOG"


@dataclass
class RunReport:
    """What a run did.  ``tokens``/``cost_usd`` are what this run spent (new provider calls only); ``job_*`` are
    the whole job's totals over all replies (what asking everything live would cost)."""

    config_label: str
    mode: str
    store: str
    n_prompts: int
    n_runs: int
    n_replies: int
    n_from_store: int
    n_asked: int
    n_provider_calls: int
    n_retries: int
    n_failed: int
    n_unparsable: int
    n_no_logprobs: int
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float
    job_tokens: int
    job_cost_usd: float
    seconds: float
    notes: list[str] = field(default_factory=list)
    #: failed judgments by kind (see the module docstring)
    failed_by_kind: dict[str, int] = field(default_factory=dict)
    #: replies normalised to be storable (``repairs`` in the entry) and replies cut to the stored-text limit
    n_repaired: int = 0
    n_truncated: int = 0
    #: replies another process asked while this one waited (prompt claimed by it)
    n_from_other_process: int = 0
    #: replies whose server-reported model id did not match the name asked
    n_model_mismatch: int = 0
    #: unusable lines met in this model's shards, as "shard:line: reason"
    skipped_store_lines: list[str] = field(default_factory=list)
    #: throttled provider replies (HTTP 429 or Retry-After), each retried
    n_throttled: int = 0
    #: the concurrency gate, when something was asked: "adaptive" or "fixed", its cap, final and peak limit
    concurrency: dict[str, Any] = field(default_factory=dict)
    #: batch mode: ids of the batches submitted, resumed (found in the ledger) and still pending, and the result
    #: lines that could not be read ("batch <id>, <file> line <n>: <why>")
    batches: dict[str, list[str]] = field(default_factory=dict)
    #: constrained runs (``JudgeConfig.output_shape``): replies that do not conform to the shape (a server that
    #: ignored the constraint, a reply cut by max_tokens), counted apart from ``n_unparsable``
    n_shape_violations: int = 0
    #: plan mode (``recjudge.llm.plan``): judgments missing from the store, planned and not asked (not failures)
    n_planned: int = 0
    #: judgments missing from the store of a judge not among those asked (env RECJUDGE_LLM_ASK_ONLY; not failures)
    n_left_out: int = 0

    @property
    def n_skipped_store_lines(self) -> int:
        return len(self.skipped_store_lines)

    @property
    def origin(self) -> str:
        """Where this run's replies came from, for a page that says so: "asked live" (at least one reply asked of
        the provider), "planned, not asked" (plan mode, none asked), "replayed from the store" (every reply there),
        else "not answered" (every judgment failed or was left out)."""
        if self.n_asked:
            return "asked live"
        if self.n_planned:
            return "planned, not asked"
        if self.n_from_store:
            return "replayed from the store"
        return "not answered"

    def __str__(self) -> str:
        cost = "unknown" if math.isnan(self.cost_usd) else f"${self.cost_usd:.4f}"
        job_cost = "unknown" if math.isnan(self.job_cost_usd) else f"${self.job_cost_usd:.4f}"
        text = (
            f"{self.config_label} ({self.mode} mode): {self.n_prompts} prompts x {self.n_runs} run(s) -> "
            f"{self.n_replies} replies, {self.n_from_store} from the store, {self.n_asked} asked with "
            f"{self.n_provider_calls} provider call(s) ({self.n_retries} retries); {self.n_failed} failed, "
            f"{self.n_unparsable} unparsable"
        )
        if self.n_planned:
            text += f", {self.n_planned} planned, not asked"
        if self.n_left_out:
            text += f", {self.n_left_out} left out, not asked"
        if self.failed_by_kind:
            text += " (failed: " + ", ".join(f"{n} {kind}" for kind, n in sorted(self.failed_by_kind.items())) + ")"
        for count, what in ((self.n_repaired, "repaired to be storable"), (self.n_truncated, "truncated when stored"),
                            (self.n_from_other_process, "asked by another process"),
                            (self.n_model_mismatch, "from a model id other than the one asked"),
                            (self.n_shape_violations, "out of the output shape"),
                            (self.n_skipped_store_lines, "unusable store line(s) skipped")):
            if count:
                text += f", {count} {what}"
        if self.n_no_logprobs:
            text += f", {self.n_no_logprobs} without log-probabilities"
        if self.n_throttled:
            text += f", {self.n_throttled} throttled (429)"
        text += (
            f". This run: {self.tokens} tokens ({self.input_tokens} in, {self.output_tokens} out), cost {cost}; "
            f"whole job: {self.job_tokens} tokens, {job_cost}. {self.seconds:.1f} s."
        )
        if self.notes:
            text += " " + " ".join(self.notes)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "n_skipped_store_lines": self.n_skipped_store_lines}


@dataclass
class JudgeRun:
    """A run's result.

    table: one row per (request key, run): key, run, score (or one column per aspect for a dict parser), reply,
    parsed_ok, input_tokens, output_tokens, from_store, plus error (why a judgment failed, else None), store_key,
    and in "expected" scoring mode text_score (the score read from the reply text, for comparison) and modal_score
    (the most probable score token: the integer the papers' judges would generate).
    """

    config: JudgeConfig
    table: pd.DataFrame
    report: RunReport
    score_columns: list[str]

    @property
    def failures(self) -> pd.DataFrame:
        """Rows whose judgment failed (no reply): key, run, error."""
        return self.table.loc[self.table["error"].notna(), ["key", "run", "error"]].reset_index(drop=True)

    def scores(self, fill_unparsable: float | None = None, column: str | None = None) -> pd.Series | pd.DataFrame:
        """Mean score over runs per request key (in request order), over the runs whose reply parsed.

        column: another per-reply score column to average instead of the scores, e.g. "modal_score" (the integer
        reading of an expected-score run).

        fill_unparsable: None (default) leaves unparsable replies out (NaN when no run parsed).  A number, e.g.
        0.0 for the "null -> 0" convention of some papers, replaces the score of each *unparsable reply* before
        averaging.  Failed judgments (no reply at all) stay NaN either way.
        """
        import pandas as pd

        columns = self.score_columns if column is None else [column]
        if column is not None and column not in self.table.columns:
            raise KeyError(f"this run's table has no column {column!r} (modal_score needs scoring='expected')")
        frame = self.table[["key", *columns]].copy()
        if fill_unparsable is not None:
            has_reply = self.table["error"].isna()
            for name in columns:
                frame.loc[has_reply & frame[name].isna(), name] = float(fill_unparsable)
        order = pd.unique(self.table["key"])
        means = frame.groupby("key", sort=False)[columns].mean().reindex(order)
        means.index.name = "key"
        if len(columns) == 1 and (column is not None or columns == ["score"]):
            return means[columns[0]]
        return means


def _score_range(parser: Callable[..., Any]) -> tuple[float, float]:
    if isinstance(parser, functools.partial):
        keywords = parser.keywords or {}
        return keywords.get("low", 1), keywords.get("high", 5)
    return getattr(parser, "low", 1), getattr(parser, "high", 5)


def _declared_aspects(parser: Callable[..., Any]) -> list[str] | None:
    """Aspect names a dict parser announces (``partial(parse_aspect_scores, aspects=...)`` or ``.aspects``)."""
    aspects = None
    if isinstance(parser, functools.partial):
        aspects = (parser.keywords or {}).get("aspects")
    aspects = aspects if aspects is not None else getattr(parser, "aspects", None)
    return None if aspects is None else [str(a) for a in aspects]


def _model_mismatch(record: Mapping[str, Any], asked: str) -> bool:
    """Whether the server reported a model id that is not the name asked (OpenAI's dated ids, e.g.
    gpt-4o-mini-2024-07-18 for gpt-4o-mini, and a path ending in the name count as a match)."""
    reported = (record.get("provenance") or {}).get("reported_model")
    if not isinstance(reported, str) or not reported:
        return False
    reported = reported.lower()
    return not (reported == asked or reported.startswith(asked) or reported.endswith("/" + asked))


def _parse_reply(parser: Parser, text: str, request_key: str) -> float | Mapping[str, float]:
    try:
        return parser(text)
    except Exception as exc:  # a parser bug must name the reply it choked on; the reply itself is safe in the store
        raise ValueError(f"parser {parser!r} failed on the reply for {request_key!r}: {text[:200]!r}") from exc


@dataclass
class _Replies:
    """The replies of a job's slots, in the caller's order, and what the parser reads from each distinct text."""

    lookups: list[str]  # the key each slot's reply is held under
    found: list[Mapping[str, Any] | None]  # its entry, None when the judgment failed
    texts: list[str | None]
    parsed: dict[str, Any]  # reply text -> parsed value (parsers are pure functions of the text; replies repeat)
    aspects: list[str] | None  # the aspects a dict parser declares
    per_aspect: bool  # a dict parser: one score column per aspect
    low: int
    high: int

    @classmethod
    def read(cls, job: JudgeJob, parser: Parser) -> "_Replies":
        low, high = _score_range(parser)
        declared = _declared_aspects(parser)
        lookups = [key if key is not None else request.key for request, _, key in job.slots]
        found = list(map(job.records.get, lookups))
        texts = [None if record is None else record["text"] for record in found]
        parsed: dict[str, Any] = {}
        for (request, _, _), text in zip(job.slots, texts):
            if text is not None and parsed.get(text) is None:
                parsed[text] = _parse_reply(parser, text, request.key)
        per_aspect = declared is not None or any(_is_aspects(value) for value in parsed.values())
        return cls(lookups, found, texts, parsed, declared, per_aspect, int(low), int(high))

    def error(self, job: JudgeJob, lookup: str) -> str:
        return job.errors.get(lookup, ("no reply", "failed"))[0]


def _is_aspects(parsed: Any) -> bool:
    return not isinstance(parsed, (float, int)) and isinstance(parsed, Mapping)


@dataclass
class AssembledScores:
    """Step 3's result (``assemble_scores``): the run's table and what step 4 counts from it."""

    table: pd.DataFrame
    score_columns: list[str]
    shape_violated: np.ndarray  # per row: out of the judge's output shape
    n_no_logprobs: int
    per_aspect: bool


def assemble_scores(job: JudgeJob, parser: Parser) -> AssembledScores:
    """Step 3 of a judge run (``recjudge.llm.runner.run_judge``): the table of ``job``'s replies in the caller's
    order, each read by ``parser`` (one score column, or one per aspect for a dict parser), with the replies out
    of a constrained judge's output shape marked."""
    replies = _Replies.read(job, parser)
    log_readings(job, parser, replies)
    if replies.per_aspect:
        table, score_columns, n_no_logprobs = _aspect_table(job, replies, parser)
    else:
        table, n_no_logprobs = _score_table(job, replies)
        score_columns = ["score"]
    violated = _mark_shape_violations(job, table, replies.texts)
    return AssembledScores(table, score_columns, violated, n_no_logprobs, replies.per_aspect)


def report_run(job: JudgeJob, mode: str, scores: AssembledScores, started: float) -> JudgeRun:
    """Step 4 of a judge run (``recjudge.llm.runner.run_judge``): what the run did (``RunReport``, from the job
    and its table; new replies priced at the batch rate when the job was asked in batches), appended to the
    failure and job logs, and returned with the table."""
    report = _report(job, mode, scores.table, scores.shape_violated, scores.n_no_logprobs, started,
                     job.batch_priced, per_aspect=scores.per_aspect)
    log_failures(report, job.errors.values())
    log_job(job.config, report)
    return JudgeRun(config=job.config, table=scores.table, report=report, score_columns=scores.score_columns)


def reader_name(parser: Callable[..., Any]) -> str:
    """A reply reader's name, the same in every process: its function's module and qualified name, its own name when
    that differs (``shapes.answer_parser``'s "answer_of_<shape>"), and the keywords a ``functools.partial`` binds."""
    keywords: dict[str, Any] = {}
    while isinstance(parser, functools.partial):
        keywords = {**(parser.keywords or {}), **keywords}  # an outer partial's keywords win
        parser = parser.func
    qualified = getattr(parser, "__qualname__", type(parser).__qualname__)
    name = f"{getattr(parser, '__module__', '')}.{qualified}"
    own = getattr(parser, "__name__", None)
    if own and own != qualified.rsplit(".", 1)[-1]:
        name += f"[{own}]"
    if keywords:
        name += "(" + ", ".join(f"{key}={list(value) if isinstance(value, tuple) else value!r}"
                                for key, value in sorted(keywords.items())) + ")"
    return name


def log_readings(job: JudgeJob, parser: Parser, replies: _Replies) -> Path | None:
    """Append the job's line (judge label, scoring, model, ``reader_name``, the store keys of the stored replies its
    reader read) to the file named by env RECJUDGE_READING_LOG; None, and nothing written, when it is unset or the
    job read no stored reply."""
    name = os.environ.get(READING_LOG_ENV, "").strip()
    if not name or job.store is None:
        return None
    keys = sorted({key for (_, _, key), text in zip(job.slots, replies.texts) if key is not None and text is not None})
    if not keys:
        return None
    line = {"judge": job.config.label, "scoring": job.config.scoring, "model": job.config.model,
            "reader": reader_name(parser), "store_keys": keys}
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def log_failures(report: RunReport, errors: Any = ()) -> Path | None:
    """Append one line (judge, failed count, failures by kind, the first error) to the file named by env
    RECJUDGE_FAILURE_LOG when judgments failed; None, and nothing written, when none did or it is unset."""
    name = os.environ.get(FAILURE_LOG_ENV, "").strip()
    kinds = {kind: n for kind, n in report.failed_by_kind.items() if kind not in NOT_LOGGED_KINDS}
    if not name or not kinds:
        return None
    first = next((why for why, kind in errors if kind in kinds), None)
    line = {"judge": report.config_label, "n_failed": sum(kinds.values()), "failed_by_kind": kinds,
            "first_error": first}
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:  # one short line per write: concurrent writers do not interleave
        log.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


#: The counts of a job's summary line (``log_job``), in the order ``recjudge run`` prints them.
JOB_COUNTS = ("n_replies_wanted", "n_asked", "n_from_store", "n_failed", "n_unparsable", "n_shape_violations",
              "n_left_out", "n_planned")


def log_job(config: JudgeConfig, report: RunReport) -> Path | None:
    """Append the job's summary line (judge label, provider, model and ``JOB_COUNTS``) to the file named by env
    RECJUDGE_JOB_LOG; None, and nothing written, when it is unset."""
    name = os.environ.get(JOB_LOG_ENV, "").strip()
    if not name:
        return None
    counts = {"n_replies_wanted": report.n_replies + report.n_failed + report.n_planned + report.n_left_out,
              "n_asked": report.n_asked, "n_from_store": report.n_from_store, "n_failed": report.n_failed,
              "n_unparsable": report.n_unparsable, "n_shape_violations": report.n_shape_violations,
              "n_left_out": report.n_left_out, "n_planned": report.n_planned}
    line = {"judge": report.config_label, "provider": config.provider, "model": config.model, **counts}
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:  # one short line per write: concurrent writers do not interleave
        log.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def read_job_log(path: Path) -> list[dict[str, Any]]:
    """The lines ``log_job`` appended to ``path`` (none when it does not exist; unreadable lines are skipped: the
    summary they feed is a report, the failures have their own log)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    lines = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and all(isinstance(line.get(name), int) for name in JOB_COUNTS):
            lines.append(line)
    return lines


def read_failure_log(path: Path) -> list[dict[str, Any]]:
    """The lines ``log_failures`` appended to ``path`` (none when it does not exist; an unreadable line is kept as
    one failure whose error says so, so that it is never taken for success)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            line = json.loads(raw)
            if not isinstance(line, dict) or not isinstance(line.get("n_failed"), int):
                raise ValueError("not a failure line")
        except ValueError as exc:
            line = {"judge": "?", "n_failed": 1, "failed_by_kind": {"unreadable": 1},
                    "first_error": f"{path}:{number}: unreadable failure line ({exc})"}
        lines.append(line)
    return lines


def _table_columns(score_columns: list[str], expected: bool) -> list[str]:
    leading = ["key", "run", *score_columns]
    if expected:
        leading += ["text_score", "modal_score"]
    return [*leading, "reply", "parsed_ok", "input_tokens", "output_tokens", "from_store", "error", "store_key"]


def _aspect_table(job: JudgeJob, replies: _Replies, parser: Parser) -> tuple[pd.DataFrame, list[str], int]:
    """The table of a dict parser (one score column per aspect), built row by row; its score columns and the number
    of replies without log-probabilities."""
    import pandas as pd

    aspects = replies.aspects
    rows: list[dict[str, Any]] = []
    n_no_logprobs = 0
    for (request, run, key), lookup, record in zip(job.slots, replies.lookups, replies.found):
        row: dict[str, Any] = {"key": request.key, "run": run}
        rows.append(row)
        if record is None:
            row.update(score=math.nan, reply=None, parsed_ok=False, input_tokens=None, output_tokens=None,
                       from_store=False, error=replies.error(job, lookup), store_key=key)
            continue
        text = record["text"]
        parsed = replies.parsed.get(text)
        if parsed is None:
            parsed = replies.parsed[text] = _parse_reply(parser, text, request.key)
        if _is_aspects(parsed):
            if aspects is None:
                aspects = list(parsed)
            row.update({aspect: float(value) for aspect, value in parsed.items()})
            ok = all(not math.isnan(float(v)) for v in parsed.values())
        else:
            ok, no_logprobs = _single_score(row, float(parsed), record, replies, job.want_logprobs)
            n_no_logprobs += no_logprobs
        row.update(reply=text, parsed_ok=ok, input_tokens=record.get("input_tokens"),
                   output_tokens=record.get("output_tokens"), from_store=lookup in job.from_store, error=None,
                   store_key=key)
    score_columns = aspects or []
    for row in rows:
        if "score" in row and row["error"] is not None:
            row.pop("score")
            row.update({a: math.nan for a in score_columns})
    table = pd.DataFrame(rows, columns=_table_columns(score_columns, expected=False))
    # Built from rows: give the columns the types the column-wise table builds them with.
    for column in score_columns:
        table[column] = table[column].astype(float)
    for column in ("input_tokens", "output_tokens"):
        table[column] = pd.array(table[column].tolist(), dtype="Int64")
    for column, kind in (("run", int), ("parsed_ok", bool), ("from_store", bool)):
        table[column] = table[column].astype(kind)
    return table, score_columns, n_no_logprobs


def _single_score(row: dict[str, Any], value: float, record: Mapping[str, Any], replies: _Replies,
                  expected: bool) -> tuple[bool, int]:
    """A reply's one score in a row of the aspect table (the expected score in expected mode, the text's reading
    beside it); (whether it parsed, 1 when log-probabilities were wanted and missing)."""
    missing = 0
    if expected:
        row["text_score"] = value
        row["modal_score"] = modal_score(record.get("logprobs"), replies.low, replies.high)
        value = expected_score(record.get("logprobs"), replies.low, replies.high)
        missing = int(not record.get("logprobs"))
    row["score"] = value
    return not math.isnan(value), missing


def _score_table(job: JudgeJob, replies: _Replies) -> tuple[pd.DataFrame, int]:
    """The table of one score per reply (the usual case), built column by column, several times faster than from
    one dict per row; each column is handed to pandas as a typed array (pandas infers nothing per value).  Also the
    number of replies without log-probabilities."""
    import numpy as np
    import pandas as pd

    nan = math.nan
    found, slots = replies.found, job.slots
    values = np.array([nan if text is None else float(replies.parsed[text]) for text in replies.texts], dtype=float)
    data: dict[str, Any] = {"key": _objects([request.key for request, _, _ in slots]),
                            "run": np.array([run for _, run, _ in slots], dtype=np.int64)}
    n_no_logprobs = 0
    if job.want_logprobs:
        data["text_score"] = values
        logprobs = [None if record is None else record.get("logprobs") for record in found]
        low, high = replies.low, replies.high
        values = np.array([nan if record is None else expected_score(lp, low, high)
                           for record, lp in zip(found, logprobs)], dtype=float)
        data["modal_score"] = np.array([nan if record is None else modal_score(lp, low, high)
                                        for record, lp in zip(found, logprobs)], dtype=float)
        n_no_logprobs = sum(1 for record, lp in zip(found, logprobs) if record is not None and not lp)
    data["score"] = values
    answered = np.array([record is not None for record in found], dtype=bool)
    data.update(
        reply=_objects(replies.texts),
        parsed_ok=answered & ~np.isnan(values),
        input_tokens=_token_column([None if record is None else record.get("input_tokens") for record in found]),
        output_tokens=_token_column([None if record is None else record.get("output_tokens") for record in found]),
        from_store=answered & np.array([lookup in job.from_store for lookup in replies.lookups], dtype=bool),
        error=_objects([None if record is not None else replies.error(job, lookup)
                        for record, lookup in zip(found, replies.lookups)]),
        store_key=_objects([key for _, _, key in slots]),
    )
    return pd.DataFrame(data, columns=_table_columns(["score"], job.want_logprobs)), n_no_logprobs


def _mark_shape_violations(job: JudgeJob, table: pd.DataFrame, texts: list[str | None]) -> np.ndarray:
    """For a constrained judge, the column shape_violation (why a reply is out of its shape, else None) and a note;
    returns which rows violate it (a violation is not counted as an unparsable reply)."""
    import numpy as np

    shape = job.config.shape
    if shape is None:
        return np.zeros(len(table), dtype=bool)
    problems = {text: shapes.check(shape, text)[1] for text in set(texts) if text is not None}
    table["shape_violation"] = _objects([None if text is None else problems[text] for text in texts])
    violated = table["shape_violation"].notna().to_numpy()
    if violated.any():
        job.notes.append(f"{int(violated.sum())} replies do not conform to the output shape {shape.name!r} "
                         "(column shape_violation says why).")
    return violated


def _report(job: JudgeJob, mode: str, table: pd.DataFrame, violated: np.ndarray, n_no_logprobs: int,
            started: float, batch: bool, *, per_aspect: bool) -> RunReport:
    """What the run did, from the job and its table (new tokens are those of replies not read from the store)."""
    config, counters = job.config, job.counters
    new_keys = set(job.records) - job.from_store
    new_in = sum(int(job.records[k].get("input_tokens") or 0) for k in new_keys)
    new_out = sum(int(job.records[k].get("output_tokens") or 0) for k in new_keys)
    job_in = int(table["input_tokens"].fillna(0).sum())
    job_out = int(table["output_tokens"].fillna(0).sum())
    if pricing.price(config.provider, config.model) is None:
        job.notes.append(f"Cost unknown: no price for {config.provider} model {config.model!r} in "
                         "recjudge.llm.pricing.")
    if job.want_logprobs and per_aspect:
        job.notes.append("Expected scoring reads one score per reply; the aspect scores were read from the reply "
                         "text.")
    if n_no_logprobs:
        job.notes.append(f"{n_no_logprobs} replies came without log-probabilities, so their expected score is NaN.")
    has_reply = table["error"].isna()
    failed_by_kind = _failed_by_kind(job)
    n_planned = failed_by_kind.pop(PLANNED, 0)
    n_left_out = failed_by_kind.pop(LEFT_OUT, 0)
    # A prompt the job was stopped before asking (an interrupt, a server that stopped) or left out was not asked.
    # Prompts, not replies: a prompt wanted by several slots (duplicate requests) is asked once.
    unasked = sum(1 for key in job.to_ask if job.errors.get(key, ("", ""))[1] in ("not_asked", LEFT_OUT))
    n_asked = 0 if mode == PLAN else len(job.to_ask) - int(counters.get("other_process", 0)) - unasked
    n_calls = int(counters.get("calls", 0))
    report = RunReport(
        config_label=config.label, mode=mode, store=str(job.store.root) if job.store is not None else "(none)",
        n_prompts=len({request.key for request, _, _ in job.slots}), n_runs=config.runs,
        n_replies=int(has_reply.sum()), n_from_store=int(table["from_store"].sum()), n_asked=n_asked,
        n_provider_calls=n_calls, n_retries=0 if batch else max(0, n_calls - n_asked),
        n_failed=int((~has_reply).sum()) - n_planned - n_left_out,
        n_unparsable=int((has_reply & ~table["parsed_ok"] & ~violated).sum()),
        n_no_logprobs=n_no_logprobs, input_tokens=new_in, output_tokens=new_out, tokens=new_in + new_out,
        cost_usd=pricing.cost_usd(config.provider, config.model, new_in, new_out, batch=batch),
        job_tokens=job_in + job_out, job_cost_usd=pricing.cost_usd(config.provider, config.model, job_in, job_out),
        seconds=0.0, notes=job.notes, failed_by_kind=failed_by_kind, n_planned=n_planned,
        n_left_out=n_left_out,
        n_from_other_process=int(counters.get("other_process", 0)), n_shape_violations=int(violated.sum()),
        n_throttled=job.n_throttled, concurrency=job.concurrency, batches=job.batches,
    )
    _count_odd_replies(job, new_keys, report)
    report.skipped_store_lines = _skipped_store_lines(job)
    report.seconds = time.perf_counter() - started
    return report


def _failed_by_kind(job: JudgeJob) -> dict[str, int]:
    failed = Counter(job.errors.get(key if key is not None else request.key, ("", "failed"))[1]
                     for request, _, key in job.slots if (key if key is not None else request.key) not in job.records)
    return dict(sorted(failed.items()))


def _count_odd_replies(job: JudgeJob, new_keys: set[str], report: RunReport) -> None:
    """Count (and note) the replies used that were repaired or cut to be stored, and new replies from a model id
    other than the one asked."""
    config, records = job.config, job.records
    used = [records[key] for key in {key for _, _, key in job.slots if key is not None and key in records}]
    report.n_repaired = sum(1 for record in used if record.get("repairs"))
    report.n_truncated = sum(1 for record in used if record.get("truncated_from_chars"))
    asked_name = (config.served_model or config.model).lower()
    report.n_model_mismatch = sum(1 for k in new_keys if _model_mismatch(records[k], asked_name))
    if report.n_truncated:
        job.notes.append(f"{report.n_truncated} replies were longer than the stored-text limit for "
                         f"max_tokens={config.max_tokens} and were cut (entries marked truncated_from_chars).")
    if report.n_model_mismatch:
        job.notes.append(f"{report.n_model_mismatch} replies came from a model id other than {asked_name!r} "
                         "(provenance.reported_model): check that the endpoint serves the judge this configuration "
                         "names.")


def _skipped_store_lines(job: JudgeJob) -> list[str]:
    """The unusable lines met in this model's store shards (and a note naming the first few)."""
    if job.store is None:
        return []
    folder = job.store.root / model_slug(job.config.provider) / model_slug(job.config.model)
    skipped = [str(line) for line in job.store.skipped_lines if line.shard.parent == folder]
    if skipped:
        job.notes.append(f"{len(skipped)} unusable line(s) in this model's store shards were skipped: "
                         + "; ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else "")
                         + " (ResponseStore.compact() moves them to quarantine).")
    return skipped


def _objects(values: list[Any]) -> np.ndarray:
    """A column of Python objects (strings, None) as pandas would store it."""
    import numpy as np

    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def _token_column(counts: list[int | None]) -> pd.api.extensions.ExtensionArray:
    """Token counts (None where unknown) as a nullable Int64 column."""
    import numpy as np
    import pandas as pd

    if None in counts:
        return pd.array(counts, dtype="Int64")
    return pd.array(np.array(counts, dtype=np.int64), dtype="Int64")
