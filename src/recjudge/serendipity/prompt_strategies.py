"""Prompt strategies for a serendipity judge (Tokutake, Okamoto et al. 2025, section 4 and Table 1).

Ground truth g
--------------
The paper defines g as "the average of the five-level responses to the six serendipity questions in the dataset
rounded to the nearest integer" and reports its distribution 1: 321, 2: 1,022, 3: 586, 4: 208, 5: 13 (2,150
answers), without naming the six statements. ``search_ground_truth`` scores every candidate reading against that
distribution:

- which six of s1–s8 (28 subsets);
- s3 ("I expected to enjoy this movie") as answered or reverse-keyed (6 − s3), when it is among the six;
- NA ("don't remember"): ``skip`` (mean of the answered statements; no g when none is answered), ``complete``
  (only answers with all six answered), ``as_3`` (NA counts as the neutral 3), ``as_1`` (NA counts as 1);
- rounding: ``half_up`` (2.5 → 3), ``half_even`` (Python/NumPy ``round``: 2.5 → 2, 3.5 → 4), ``half_down``
  (2.5 → 2), ``floor``, ``ceil``.

The distance of a candidate is the sum over levels 1–5 of |its count − the paper's count| (answers without a g count
as missing from every level). ``closest_ground_truth`` returns the candidate with the smallest distance (ties broken
by the order of the search space: fewer reversals, then the NA and rounding rules in the order above).

Strategies
----------
Four templates, all 10-shot (two solved examples per level from answers outside the evaluated sample, never of an
evaluated user, seeded) and *reconstructions* (the paper prints no prompt text): ``base`` (``tokutake_base``), ``ls``
(``tokutake_ls``), ``cot`` (``tokutake_cot``) and ``ltm`` (``tokutake_ltm`` → ``tokutake_ltm_step2`` →
``tokutake_ltm_step3``: three chained calls per item; the chat of step k+1 is the chat of step k, the model's reply
to it and the next question, so the chain replays from the response store like any request).

The examples' step answers: relevance = the user's star rating at answer time rounded half up to 1–5 (the survey has
no relevance statement), unexpectedness = mean of the unexpectedness statements s4, s5, s6 rounded half up,
serendipity = the example's g.

Parsing (``parse_serendipity``): the *final serendipity score* of a reply, by the package's grammar of what a score
is (``recjudge.llm.parsing``: a whole number 1-5, standing alone; never a scale bound, a legend level, a value after
N/A, a signed number, another scale's numerator or part of a number such as 3.5, .5 or 1e1), NaN when there is none:

1. Markdown emphasis, step numbers ("Step 3") and what ``recjudge.llm.parsing.score_text`` blanks are removed: what
   echoes the prompt (a line from the field of a prompt it repeats, "User's last movies:", "Recommended movie:"; a
   template's fixed text; a scale's legend; list numbers, "1. The ..."), the 1-5 scale's notation ("1-5",
   "(out of 5)", "a 5-point scale") and the reasons after an N/A. A *labelled* value is the first value after the word
   "serendipity" on the same line, starting at most ``LABEL_REACH`` characters after it; "x/5" and "x out of 5" are
   x. The **last** labelled value counts (CoT states relevance and unexpectedness first; a reply may restate its
   answer); a labelled range ("3-4", "3 to 4", "3 or 4") or any other value that is no score gives NaN.
2. Without a label: ``cot`` gives NaN (the first number of a CoT reply is the relevance step, not the answer).
   ``base``, ``ls`` and the last ``ltm`` step (whose reply is only the serendipity step) take the values outside
   brackets: all of them one and the same score, the first standing where a score stands
   (``recjudge.llm.parsing.in_score_position``: first in the reply or after a colon, "is", "say", ...; not the number
   of a title, "Ice Age 2") → it; a range, a value that is no score or several distinct scores → NaN. Bracketed
   asides and everything after an opening bracket that is never closed are not read
   (``recjudge.llm.parsing.outside_brackets``: a reply cut inside an echoed title's year, "The (2", holds no score).

Metrics: MAE and three-class accuracy (negative < 3, neutral = 3, positive > 3) of predicted vs g with seeded
percentile bootstrap intervals, and the 5 × 5 and 3 × 3 confusion matrices (``sklearn.metrics.confusion_matrix``).
Unparsable replies are counted and left out, never scored as 0.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recjudge import papers
from recjudge.llm.parsing import in_score_position, labelled_values, outside_brackets, score_text, values
from recjudge.metaeval.baselines import three_class
from recjudge.prompts.tokutake import (
    LTM_STEPS,
    RECONSTRUCTED,
    STEP_NAMES,
    STRATEGIES,
    STRATEGY_NAMES,
    TEMPLATES,
    examples_block,
    first_messages,
    ltm_next_messages,
)
from recjudge.prompts.tokutake import check_strategy as _check_strategy
from recjudge.serendipity.ground_truth import STATEMENTS, likert_level

# ------------------------------------------------------------------------------------------------- ground truth g

#: The paper's distribution of g (section 4.1), levels 1..5 (``recjudge.papers``).
PAPER_G_DISTRIBUTION: dict[int, int] = {
    int(level): int(answers) for level, answers in papers.table("tokutake2025framework_g_distribution")[
        ["level", "answers"]].itertuples(index=False)}
NA_RULES = ("skip", "complete", "as_3", "as_1")
ROUNDING_RULES = ("half_up", "half_even", "half_down", "floor", "ceil")


def round_level(values: pd.Series | np.ndarray, rule: str) -> pd.Series:
    """Round means to integer levels by ``rule`` (see the module docstring); NaN stays NaN."""
    x = pd.Series(values, dtype=float)
    return pd.Series(round_level_array(x.to_numpy(), rule), index=x.index)


def round_level_array(x: np.ndarray, rule: str) -> np.ndarray:
    """``round_level`` on a float array (the search rounds every candidate's means: no Series per candidate)."""
    if rule == "half_up":
        return np.floor(x + 0.5)
    if rule == "half_even":
        return np.round(x)
    if rule == "half_down":
        return np.ceil(x - 0.5)
    if rule == "floor":
        return np.floor(x)
    if rule == "ceil":
        return np.ceil(x)
    raise ValueError(f"unknown rounding rule {rule!r}; known: {ROUNDING_RULES}")


@dataclass(frozen=True)
class GroundTruthCandidate:
    """One reading of "the average of the six serendipity questions rounded to the nearest integer"."""

    statements: tuple[str, ...]
    s3_reversed: bool = False
    na_rule: str = "skip"
    rounding: str = "half_up"

    def __post_init__(self) -> None:
        unknown = [s for s in self.statements if s not in STATEMENTS]
        if unknown:
            raise ValueError(f"unknown statement(s) {unknown}; known: {STATEMENTS}")
        if self.s3_reversed and "s3" not in self.statements:
            raise ValueError("s3_reversed needs s3 among the statements")
        if self.na_rule not in NA_RULES:
            raise ValueError(f"unknown NA rule {self.na_rule!r}; known: {NA_RULES}")
        if self.rounding not in ROUNDING_RULES:
            raise ValueError(f"unknown rounding rule {self.rounding!r}; known: {ROUNDING_RULES}")

    @property
    def label(self) -> str:
        names = ", ".join("6−s3" if s == "s3" and self.s3_reversed else s for s in self.statements)
        return f"mean({names}); NA {self.na_rule}; round {self.rounding}"

    def require_columns(self, answers: pd.DataFrame) -> None:
        missing = [c for c in self.statements if c not in answers.columns]
        if missing:
            raise KeyError(f"ground-truth candidate needs answer column(s) {missing}")

    def mean(self, answers: pd.DataFrame) -> pd.Series:
        self.require_columns(answers)
        return pd.Series(self.mean_array(answers[list(self.statements)].to_numpy(dtype=float)), index=answers.index)

    def mean_array(self, values: np.ndarray) -> np.ndarray:
        """The row means of ``values`` (answers × ``statements``, floats) under the keying and the NA rule: the sum
        of the answered statements over their number, NaN where none is (or, for "complete", one is missing)."""
        values = values.copy()
        if self.s3_reversed:
            column = self.statements.index("s3")
            values[:, column] = 6.0 - values[:, column]
        answered = ~np.isnan(values)
        if self.na_rule in ("as_3", "as_1"):
            values[~answered] = 3.0 if self.na_rule == "as_3" else 1.0
            answered[:] = True
        count = answered.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(answered, values, 0.0).sum(axis=1) / count
        means[count == 0] = np.nan
        if self.na_rule == "complete":
            means[count < values.shape[1]] = np.nan
        return means

    def levels(self, answers: pd.DataFrame) -> pd.Series:
        """g for every answer (float level 1–5, NaN where the NA rule leaves none)."""
        return round_level(self.mean(answers), self.rounding).rename("g")


def ground_truth_candidates(k: int = 6) -> list[GroundTruthCandidate]:
    """The search space: every k of s1–s8 × s3 keying × NA rule × rounding rule, in a fixed order."""
    out = []
    for subset in itertools.combinations(STATEMENTS, k):
        for reversed_ in ((False, True) if "s3" in subset else (False,)):
            for na in NA_RULES:
                for rounding in ROUNDING_RULES:
                    out.append(GroundTruthCandidate(subset, reversed_, na, rounding))
    return out


def level_counts(levels: pd.Series) -> dict[int, int]:
    values = np.asarray(levels, dtype=float)
    return {k: int((values == k).sum()) for k in PAPER_G_DISTRIBUTION}


def distribution_distance(counts: Mapping[int, int], reference: Mapping[int, int] = PAPER_G_DISTRIBUTION) -> int:
    """Sum over levels of |count − reference count|."""
    return int(sum(abs(int(counts.get(k, 0)) - int(v)) for k, v in reference.items()))


def search_ground_truth(answers: pd.DataFrame, candidates: Sequence[GroundTruthCandidate] | None = None
                        ) -> pd.DataFrame:
    """Every candidate's distribution of g beside the paper's, closest first.

    Columns: rank, candidate (label), statements, s3_reversed, na_rule, rounding, n_1..n_5, n_without_g, distance,
    exact (distance 0 and no answer without g)."""
    candidates = list(candidates) if candidates is not None else ground_truth_candidates()
    rows = []
    # Arrays, and each reading's means once for its five roundings: two thousand candidates, one Series each, took
    # seconds per search
    columns: dict[str, np.ndarray] = {}
    means: dict[tuple, np.ndarray] = {}
    for order, cand in enumerate(candidates):
        cand.require_columns(answers)
        reading = (cand.statements, cand.s3_reversed, cand.na_rule)
        if reading not in means:
            for name in cand.statements:
                if name not in columns:
                    columns[name] = answers[name].to_numpy(dtype=float)
            means[reading] = cand.mean_array(np.column_stack([columns[name] for name in cand.statements]))
        levels = round_level_array(means[reading], cand.rounding)
        counts = level_counts(levels)
        distance = distribution_distance(counts)
        rows.append({"order": order, "candidate": cand.label, "statements": ", ".join(cand.statements),
                     "s3_reversed": cand.s3_reversed, "na_rule": cand.na_rule, "rounding": cand.rounding,
                     **{f"n_{k}": v for k, v in counts.items()}, "n_without_g": int(np.isnan(levels).sum()),
                     "distance": distance, "exact": distance == 0 and sum(counts.values()) == len(answers)})
    table = pd.DataFrame(rows).sort_values(["distance", "order"], kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return table.drop(columns="order")


def candidate_from_row(row: Mapping[str, object]) -> GroundTruthCandidate:
    return GroundTruthCandidate(tuple(str(row["statements"]).split(", ")), bool(row["s3_reversed"]),
                                str(row["na_rule"]), str(row["rounding"]))


def closest_ground_truth(answers: pd.DataFrame) -> GroundTruthCandidate:
    """The candidate whose distribution of g is closest to the paper's (see ``search_ground_truth``)."""
    return candidate_from_row(search_ground_truth(answers).iloc[0])


def paper_distribution_table() -> pd.DataFrame:
    return pd.DataFrame({"level": list(PAPER_G_DISTRIBUTION), "paper": list(PAPER_G_DISTRIBUTION.values())})


# ------------------------------------------------------------------------------------------------------ strategies

N_PER_LEVEL = 2
#: The strategy the recommender re-evaluation uses: CoT, the paper's best on MAE for both models and on accuracy for
#: GPT-4o-mini (Table 1; the paper re-evaluates recommenders with GPT-4o-mini and CoT). The tiny local model cannot
#: rank the templates (its results are near noise level), so the chapter reports its ranking but does not let it
#: override this choice.
DEFAULT_STRATEGY = "cot"

#: Tokutake et al. (2025), Table 1, as printed (accuracy in %; ``recjudge.papers``).
PAPER_TABLE1 = papers.table("tokutake2025framework_table1")


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1: strategy, template name, MAE and accuracy (%) for GPT-4o-mini and Llama-3.1-70B (4-bit)."""
    return PAPER_TABLE1.assign(template=PAPER_TABLE1["strategy"].map(STRATEGY_NAMES)).copy()


# ----------------------------------------------------------------------------------------------------- examples

def example_step_scores(examples: pd.DataFrame, g_column: str = "g") -> pd.DataFrame:
    """Relevance, unexpectedness and serendipity answers of solved examples (see the module docstring)."""
    relevance = likert_level(examples["rating"].astype(float)).clip(1, 5)
    unexpected = likert_level(examples[["s4", "s5", "s6"]].astype(float).mean(axis=1)).clip(1, 5)
    out = pd.DataFrame({"relevance": relevance, "unexpectedness": unexpected,
                        "serendipity": examples[g_column].astype(float)}, index=examples.index)
    bad = out.index[out.isna().any(axis=1)]
    if len(bad):
        raise ValueError(f"example answer(s) {list(bad)[:5]} lack a rating, s4–s6 or {g_column}")
    return out.astype(int)


def select_examples(pool: pd.DataFrame, g_column: str = "g", per_level: int = N_PER_LEVEL, seed: int = 0,
                    exclude_users: Sequence = (), strict: bool = True) -> pd.DataFrame:
    """``per_level`` solved examples per level 1–5 of ``g_column`` from ``pool`` (answers outside the evaluated set),
    never of ``exclude_users``, with a rating and s4–s6 answered (their step answers), seeded; shuffled so that the
    level does not rise across the block. A level with too few candidates raises, unless ``strict`` is False
    (synthetic fixtures): its missing examples are then taken from the nearest levels (their own g is shown)."""
    rng = np.random.default_rng(seed)
    ok = (pool[g_column].notna() & ~pool["user_id"].isin(set(exclude_users)) & pool["rating"].notna()
          & pool[["s4", "s5", "s6"]].notna().any(axis=1))
    candidates = pool[ok]
    chosen: list = []
    for level in range(1, 6):
        rows = candidates.index[candidates[g_column] == level]
        if len(rows) < per_level and strict:
            raise ValueError(f"only {len(rows)} candidate examples of level {level} in column {g_column!r} "
                             f"(need {per_level})")
        if len(rows) < per_level:  # nearest levels first, then the lower one
            rest = candidates.drop(index=pd.Index(chosen).union(rows))
            order = (rest[g_column] - level).abs().to_numpy() * 2 + (rest[g_column] > level).to_numpy()
            extra = rest.index[np.argsort(order, kind="stable")][: per_level - len(rows)]
            rows = rows.append(extra)
        chosen.extend(rng.choice(rows, size=per_level, replace=False).tolist())
    return candidates.loc[[chosen[i] for i in rng.permutation(len(chosen))]]


# ------------------------------------------------------------------------------------------------------- parsing

_EMPHASIS = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")
_STEP_NUMBER = re.compile(r"\bstep\s*\d\b", re.IGNORECASE)  # "Step 3 (serendipity): 4": the 3 is no score
#: How far after its label ("Serendipity", a step's name) a labelled value may start (characters, on its line).
LABEL_REACH = 30
_LABEL = re.compile(r"serendipity\b", re.IGNORECASE)
_STEP_LABEL = {step: re.compile(rf"{step}\b", re.IGNORECASE) for step in STEP_NAMES}


def _lone_number(text: str) -> float:
    """The one score a reply without a label gives: every value outside brackets the same score token, the first
    standing where a score stands; NaN for a range, a value that is no score or several distinct ones."""
    unscaled = outside_brackets(text).strip()
    found = list(values(unscaled, 1, 5))
    if not found or any(value.score is None for value in found) or len({value.score for value in found}) != 1:
        return math.nan
    return found[0].score if in_score_position(unscaled, found[0].start) else math.nan


def _last_labelled(text: str, label: re.Pattern[str]) -> float | None:
    """The score of the last value labelled ``label`` (NaN when that value is no score), None when none is."""
    labelled = labelled_values(text, label, 1, 5, reach=LABEL_REACH)
    if not labelled:
        return None
    return math.nan if labelled[-1].score is None else labelled[-1].score


def _cleaned(text: str) -> str:
    """A reply without what holds no score: step numbers, and what ``recjudge.llm.parsing.score_text`` blanks
    (emphasis, the prompt's echo, the 1-5 scale's notation, the reasons after an N/A)."""
    return score_text(_STEP_NUMBER.sub("step", _EMPHASIS.sub("", text)), 1, 5)


def parse_serendipity(text: str | None, strategy: str = "base") -> float:
    """The final serendipity score of a reply to ``strategy``'s prompt (for ``ltm``: the step-3 reply), or NaN.

    Rules in the module docstring: the last value labelled "Serendipity" (a range, or any value that is no score,
    gives NaN); without a label, NaN for CoT, else the single distinct value, a score token of 1-5."""
    _check_strategy(strategy)
    if not isinstance(text, str) or not text.strip():
        return math.nan
    cleaned = _cleaned(text)
    labelled = _last_labelled(cleaned, _LABEL)
    if labelled is not None:
        return labelled
    if strategy == "cot":
        return math.nan
    return _lone_number(cleaned)


def parse_step(text: str | None, step: str) -> float:
    """The last score labelled ``step`` (relevance, unexpectedness or serendipity) in a reply, or NaN."""
    if step not in STEP_NAMES:
        raise ValueError(f"unknown step {step!r}; known: {STEP_NAMES}")
    if not isinstance(text, str):
        return math.nan
    labelled = _last_labelled(_cleaned(text), _STEP_LABEL[step])
    return math.nan if labelled is None else labelled


def parser_for(strategy: str):
    """The reply parser the engine uses for ``strategy`` (the final step of LtM)."""
    _check_strategy(strategy)
    return functools.partial(parse_serendipity, strategy=strategy)


# ------------------------------------------------------------------------------------------------------ judging

@dataclass
class StrategyRun:
    """One strategy's judgments: ``table`` has one row per item (key, reply or the three LtM replies, step scores,
    predicted), ``calls_per_item`` the model calls per item, ``reports`` the engine's run reports."""

    strategy: str
    table: pd.DataFrame
    reports: list
    calls_per_item: int
    #: the model's wall-clock seconds when these replies were asked, summed from the store's records (a timing:
    #: shown, never written to a result table)
    model_seconds: float = 0.0

    @property
    def n_left_out(self) -> int:
        """Items never asked (the judge is not among those asked, ``RECJUDGE_LLM_ASK_ONLY``): those the last step
        left out, which an item left out at an earlier step is too (its next prompt holds no reply to ask with)."""
        return int(getattr(self.reports[-1], "n_left_out", 0)) if self.reports else 0

    @property
    def n_unparsable(self) -> int:
        """Items asked whose replies held no score (an item never asked is left out, not unparsable)."""
        return int(self.table["predicted"].isna().sum()) - self.n_left_out


def run_strategy(config, strategy: str, items: pd.DataFrame, examples: str, *, mode: str | None = None,
                 store=None, progress: bool = False, provider=None, constrained: bool = False) -> StrategyRun:
    """Judge ``items`` (columns key, history, item) with ``strategy``.

    ``config`` is a ``recjudge.llm.JudgeConfig``; its ``prompt`` is set to the strategy's template. Base, LS and CoT
    are one call per item; LtM runs its three steps as three engine runs, step k+1's chat built from step k's chat and
    stored reply, so a replay (``mode="replay"``) rebuilds the same chain from the store. The engine asks missing
    prompts in prefix order (``order_prompts``), so prompts sharing the examples block reuse the model's cache.
    ``provider``: an already built provider (tests), passed to ``run_judge``.  ``constrained``: every reply held to
    the output shape its template declares (``recjudge.prompts.output_shapes``: CoT's three steps as one JSON
    object, each LtM step's own score), read from that object; not the paper's setting."""
    from recjudge.llm import JudgeRequest, run_judge, shapes
    from recjudge.prompts.output_shapes import output_shape

    def judged(template: str, parser):
        if not constrained:
            return config.with_(prompt=template), parser
        shape = output_shape(template)
        return config.with_(prompt=template).constrained(shape), shapes.answer_parser(shape)

    _check_strategy(strategy)
    for column in ("key", "history", "item"):
        if column not in items.columns:
            raise KeyError(f"items frame lacks column {column!r}")
    messages = [first_messages(strategy, h, i, examples) for h, i in zip(items["history"], items["item"])]
    keys = items["key"].astype(str).tolist()
    if strategy != "ltm":
        call, parser = judged(TEMPLATES[strategy], parser_for(strategy))
        run = run_judge(call, [JudgeRequest(k, m) for k, m in zip(keys, messages)], parser,
                        mode=mode, store=store, progress=progress, provider=provider)
        table = run.table.drop_duplicates("key").set_index("key").reindex(keys)
        out = pd.DataFrame({"key": keys, "reply": table["reply"].to_numpy()})
        if strategy == "cot":
            for step in STEP_NAMES:
                out[step] = [_shaped_step(r, step, call.shape) if constrained else parse_step(r, step)
                             for r in out["reply"]]
        out["predicted"] = table["score"].to_numpy(dtype=float)
        return StrategyRun(strategy, out, [run.report], 1, _model_seconds(run, store))

    out = pd.DataFrame({"key": keys})
    reports, seconds = [], 0.0
    for number, template in enumerate(LTM_STEPS, start=1):
        if number > 1:
            previous = out[f"reply_{number - 1}"].tolist()
            messages = [ltm_next_messages(m, r, number) for m, r in zip(messages, previous)]
        call, parser = judged(template, parser_for("ltm") if number == 3
                              else functools.partial(parse_step, step=STEP_NAMES[number - 1]))
        run = run_judge(call, [JudgeRequest(k, m) for k, m in zip(keys, messages)],
                        parser, mode=mode, store=store, progress=progress, provider=provider)
        table = run.table.drop_duplicates("key").set_index("key").reindex(keys)
        out[f"reply_{number}"] = table["reply"].to_numpy()
        out[STEP_NAMES[number - 1]] = table["score"].to_numpy(dtype=float)
        reports.append(run.report)
        seconds += _model_seconds(run, store)
    out["predicted"] = out["serendipity"]
    return StrategyRun(strategy, out, reports, 3, seconds)


def _shaped_step(reply, step: str, shape) -> float:
    """Step ``step`` of a constrained CoT reply (its JSON object), NaN out of shape."""
    from recjudge.llm import shapes

    value, _ = shapes.check(shape, reply if isinstance(reply, str) else None)
    return math.nan if value is None else float(value[step])


def _model_seconds(run, store) -> float:
    from recjudge.llm import ResponseStore, open_store

    opened = store if isinstance(store, ResponseStore) else open_store(store)
    keys = run.table["store_key"].dropna().tolist()
    records = opened.peek_many(keys)  # read in place, not copied: one field of each is summed
    return float(sum((records.get(key) or {}).get("latency_s") or 0.0 for key in keys))


def ltm_chain(run: StrategyRun, key: str) -> list[dict[str, str]]:
    """The replies of one item's LtM chain in order, as (step, reply, score) records."""
    if run.strategy != "ltm":
        raise ValueError("ltm_chain needs an LtM run")
    row = run.table.set_index("key").loc[str(key)]
    return [{"step": step, "reply": row[f"reply_{n}"], "score": row[step]}
            for n, step in enumerate(STEP_NAMES, start=1)]


# ------------------------------------------------------------------------------------------------------ metrics

CLASS_NAMES = ("negative", "neutral", "positive")


def _mae(pred: np.ndarray, true: np.ndarray) -> float:
    return float(np.mean(np.abs(pred - true)))


def _accuracy(pred: np.ndarray, true: np.ndarray) -> float:
    return float(np.mean(three_class(pred) == three_class(true)))


def strategy_metrics(predicted: pd.Series | np.ndarray, truth: pd.Series | np.ndarray, n_boot: int = 1000,
                     seed: int = 0) -> dict[str, float]:
    """MAE and three-class accuracy (%) on the rows where both are present, with seeded percentile bootstrap 95%
    intervals (``scipy.stats.bootstrap``, paired), n and the number of rows without a prediction."""
    from scipy import stats

    pred, true = np.asarray(predicted, dtype=float), np.asarray(truth, dtype=float)
    if pred.shape != true.shape:
        raise ValueError(f"predicted and truth differ in length: {pred.shape} vs {true.shape}")
    has_truth = ~np.isnan(true)
    both = has_truth & ~np.isnan(pred)
    out = {"n": int(both.sum()), "n_unparsable": int((has_truth & np.isnan(pred)).sum())}
    p, t = pred[both], true[both]
    for name, fn, scale in (("mae", _mae, 1.0), ("accuracy_pct", _accuracy, 100.0)):
        out[name] = scale * fn(p, t) if len(p) else math.nan
        if len(p) > 1 and n_boot > 0 and not (name == "mae" and np.all(p - t == (p - t)[0])):
            ci = stats.bootstrap((p, t), fn, paired=True, vectorized=False, n_resamples=n_boot,
                                 confidence_level=0.95, method="percentile", random_state=seed).confidence_interval
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = scale * ci.low, scale * ci.high
        else:
            out[f"{name}_ci_low"] = out[f"{name}_ci_high"] = out[name]
    return out


def gaps_to(metrics: pd.DataFrame, predictions: Mapping[tuple[str, str], pd.Series], truth: pd.Series,
            best: str = "cot") -> pd.DataFrame:
    """``metrics`` (one row per judge and strategy) with each strategy's paired MAE gap to ``best`` of the same judge
    on the items both parsed: ``mae_gap`` (its MAE minus ``best``'s), ``mae_gap_sd`` (the standard deviation of the
    per-item differences of absolute errors) and ``n_paired``; ``predictions``: (judge, strategy) -> predicted scores
    by item key, ``truth`` g by item key. The claims' comparison of prompts on the same answers reads them."""
    gaps = []
    for row in metrics.itertuples(index=False):
        mine, theirs = predictions.get((row.judge, row.strategy)), predictions.get((row.judge, best))
        if mine is None or theirs is None:
            gaps.append((math.nan, math.nan, 0))
            continue
        both = pd.DataFrame({"mine": mine, "theirs": theirs, "truth": truth}).dropna()
        difference = (both["mine"] - both["truth"]).abs() - (both["theirs"] - both["truth"]).abs()
        gaps.append((float(difference.mean()) if len(both) else math.nan,
                     float(difference.std(ddof=1)) if len(both) > 1 else math.nan, len(both)))
    return metrics.assign(mae_gap=[g[0] for g in gaps], mae_gap_sd=[g[1] for g in gaps],
                          n_paired=[g[2] for g in gaps])


def confusion(predicted, truth, classes: str = "levels") -> pd.DataFrame:
    """Confusion matrix (rows: true, columns: predicted) over levels 1–5 (``"levels"``; non-integer predictions are
    rounded half up) or the three classes (``"three"``), rows where both are present."""
    from sklearn.metrics import confusion_matrix

    pred, true = np.asarray(predicted, dtype=float), np.asarray(truth, dtype=float)
    both = ~np.isnan(pred) & ~np.isnan(true)
    if classes == "levels":
        labels, names = [1, 2, 3, 4, 5], [str(k) for k in range(1, 6)]
        p, t = np.floor(pred[both] + 0.5).astype(int), true[both].astype(int)
    elif classes == "three":
        labels, names = [0, 1, 2], list(CLASS_NAMES)
        p, t = three_class(pred[both]).astype(int), three_class(true[both]).astype(int)
    else:
        raise ValueError(f"classes must be 'levels' or 'three', got {classes!r}")
    if len(t) == 0:  # no reply parsed: an all-zero matrix, not an error
        matrix = np.zeros((len(labels), len(labels)), dtype=int)
    else:
        matrix = confusion_matrix(t, p, labels=labels)
    return pd.DataFrame(matrix, index=pd.Index(names, name="true"), columns=pd.Index(names, name="predicted"))


# ---------------------------------------------------------------------------------------------------- the study

@dataclass
class PromptStrategyStudy:
    """The inputs of the prompt-selection experiment, built once by ``prepare_study``.

    answers:   the survey answers with ``g`` (the chosen ground truth, level 1–5 or NaN).
    search:    ``search_ground_truth`` of the answers; ``definition`` the candidate used for g.
    items:     the evaluated sample: key ("user_id:item_id"), user_id, item_id, g, history, item (prompt texts).
    examples:  the ten solved examples (rows of ``answers`` with history, item and step scores).
    source:    the history's label (``recjudge.serendipity.ground_truth.HistorySource``); synthetic: bool.
    """

    answers: pd.DataFrame
    search: pd.DataFrame
    definition: GroundTruthCandidate
    items: pd.DataFrame
    examples: pd.DataFrame
    source: object
    synthetic: bool

    def examples_block(self, strategy: str) -> str:
        return examples_block(strategy, self.examples.to_dict("records"))


def prepare_study(source: str = "mirror", sample_size: int = 60, seed: int = 0, history_k: int = 10,
                  definition: GroundTruthCandidate | None = None, examples_first: bool = False) -> PromptStrategyStudy:
    """Load Serendipity-2018 (``"mirror"``) or the committed synthetic survey (``"synthetic"``), search the ground
    truth and use the closest candidate (or ``definition``), build last-``history_k`` histories (training.csv when
    present, else the survey fallback), draw a sample stratified by g (seeded) and ten solved examples from the
    other answers of users outside the sample (``examples_first``: see ``ground_truth.sample_and_examples``)."""
    from recjudge.prompts import serendipity as texts
    from recjudge.serendipity.ground_truth import load_serendipity2018, sample_and_examples

    loaded = load_serendipity2018(source, history_k)
    answers, movies = loaded.answers, loaded.movies
    search = search_ground_truth(answers)
    definition = definition or candidate_from_row(search.iloc[0])
    answers["g"] = definition.levels(answers)
    answers["history"] = texts.history_texts(answers, loaded.history, movies)
    answers["item"] = [texts.movie_item_text(i, movies) for i in answers["item_id"]]
    answers["key"] = [texts.request_key(u, i) for u, i in answers[["user_id", "item_id"]].itertuples(index=False)]
    sample, examples = sample_and_examples(
        answers, "g", sample_size,
        lambda pool, exclude: select_examples(pool, "g", seed=seed, exclude_users=exclude, strict=not loaded.synthetic),
        seed, examples_first)
    examples = examples.join(example_step_scores(examples, "g"))
    items = sample[["key", "user_id", "item_id", "g", "history", "item"]].copy()
    return PromptStrategyStudy(answers, search, definition, items, examples, loaded.source, loaded.synthetic)


__all__ = [
    "CLASS_NAMES", "DEFAULT_STRATEGY", "GroundTruthCandidate", "LTM_STEPS", "NA_RULES", "PAPER_G_DISTRIBUTION",
    "RECONSTRUCTED", "ROUNDING_RULES", "STEP_NAMES", "STRATEGIES", "STRATEGY_NAMES", "StrategyRun", "TEMPLATES",
    "closest_ground_truth", "confusion", "distribution_distance", "example_step_scores",
    "candidate_from_row", "examples_block", "first_messages", "ground_truth_candidates", "level_counts", "ltm_chain",
    "ltm_next_messages",
    "paper_distribution_table", "paper_table1", "parse_serendipity", "parse_step", "parser_for", "round_level",
    "PromptStrategyStudy", "prepare_study", "run_strategy", "search_ground_truth", "select_examples",
    "strategy_metrics", "three_class",
]
