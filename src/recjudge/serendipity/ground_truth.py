"""Serendipity ground truth, user histories and samples for the proxy-versus-LLM meta-evaluation (Kang et al. 2025).

Ground truth
------------
*Serendipity-2018* has no single serendipity statement. Following Kang et al. (2025), who average "three
unexpectedness-related variables, as validated in (Wang and Chen, 2023)", the primary definition is the mean of the
three statements that ask directly whether the movie lies outside the user's own profile:

- s4 "This is the type of movie I would not normally discover on my own; I need a recommender system like MovieLens
  to find movies like this one."  (unexpectedness, *find*)
- s5 "This movie is different (e.g., in style, genre, topic) from the movies I usually watch."  (unexpectedness,
  *implicit*)
- s6 "I was (or, would have been) surprised that MovieLens picked this movie to recommend to me."  (unexpectedness,
  *recommend*)

Why these three: Kotkov et al. (2018) operationalise four kinds of unexpectedness with s3 (relevant), s4 (find),
s5 (implicit) and s6 (recommend). s3 ("I expected to enjoy this movie") asks about expected *enjoyment*, is
reverse-keyed and mixes relevance into the construct; s4–s6 all ask whether the movie departs from what the user
knows or expects of the system, and they are the three items that intercorrelate (r ≈ 0.4–0.5 on the data) while s3
correlates weakly and negatively with them. The alternatives (``GROUND_TRUTH_DEFINITIONS``) include s3 reversed,
the six-statement mean used by Tokutake and Okamoto and the novelty statements, so that the sensitivity of every
result to this choice can be shown.

NA handling: the README codes "don't remember" as NA. A definition's score is the mean of the statements the user
answered, provided at least ``min_answered`` of them were answered (2 of 3 for the primary definition); otherwise the
answer has no ground truth (NaN) and is left out of every agreement statistic (20 of the 2,150 answers).

*Taobao Serendipity*: the ``Serendipity`` Likert answer ("The item recommended to me is a pleasant surprise.").

Histories
---------
The paper gives the judge and the proxies the user's last ten interactions before the target item. The full
Serendipity-2018 release holds them in ``training.csv`` (ratings, millisecond timestamps). When that file is absent
(it is absent from the mirror), the history falls back to the user's *other survey answers rated before the
target*, ordered by time: at most four items, none for each user's earliest answer. Every result is labelled with
the history it used (``HistorySource``).
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from recjudge import papers

#: Suffix of an expected-score judge's row read as its most likely score token: the integer the papers' judges generate.
INTEGER = ", integer"
#: Statement columns of Serendipity-2018 answers.csv (Likert 1–5, NaN = "don't remember").
STATEMENTS = ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8")


@dataclass(frozen=True)
class GroundTruthDefinition:
    """A serendipity score built as the mean of survey statements.

    statements:    statement columns averaged.
    reverse_keyed: those among ``statements`` scored as 6 − answer (agreement means *less* serendipity).
    min_answered:  fewest answered statements for a score; fewer gives NaN.
    description:   one line for tables and the book.
    """

    name: str
    statements: tuple[str, ...]
    reverse_keyed: tuple[str, ...] = ()
    min_answered: int = 1
    description: str = ""

    def score(self, answers: pd.DataFrame) -> pd.Series:
        missing = [c for c in self.statements if c not in answers.columns]
        if missing:
            raise KeyError(f"ground truth {self.name!r} needs columns {missing} that the answers frame lacks")
        values = answers[list(self.statements)].astype(float).copy()
        for column in self.reverse_keyed:
            values[column] = 6.0 - values[column]
        answered = values.notna().sum(axis=1)
        return values.mean(axis=1).where(answered >= self.min_answered).rename(self.name)


#: The primary definition (Kang et al. 2025 after Wang and Chen 2023): mean of the three unexpectedness statements.
PRIMARY_DEFINITION = "unexpectedness_s4_s5_s6"

GROUND_TRUTH_DEFINITIONS: dict[str, GroundTruthDefinition] = {
    d.name: d
    for d in (
        GroundTruthDefinition(
            PRIMARY_DEFINITION, ("s4", "s5", "s6"), min_answered=2,
            description="mean(s4, s5, s6): unexpectedness find/implicit/recommend (primary)"),
        GroundTruthDefinition(
            "unexpectedness_complete", ("s4", "s5", "s6"), min_answered=3,
            description="mean(s4, s5, s6), only answers with all three statements answered"),
        GroundTruthDefinition(
            "unexpectedness_s3r_s4_s5_s6", ("s3", "s4", "s5", "s6"), reverse_keyed=("s3",), min_answered=3,
            description="mean(6−s3, s4, s5, s6): all four unexpectedness statements of Kotkov et al. 2018"),
        GroundTruthDefinition(
            "unexpectedness_s3r_s5_s6", ("s3", "s5", "s6"), reverse_keyed=("s3",), min_answered=2,
            description="mean(6−s3, s5, s6): relevant/implicit/recommend unexpectedness"),
        GroundTruthDefinition(
            "six_statements_s1_s6", ("s1", "s2", "s3", "s4", "s5", "s6"), reverse_keyed=("s3",), min_answered=4,
            description="mean(s1, s2, 6−s3, s4, s5, s6): novelty and unexpectedness statements together"),
        GroundTruthDefinition(
            "novelty_unexpectedness_s1_s4_s5_s6", ("s1", "s4", "s5", "s6"), min_answered=3,
            description="mean(s1, s4, s5, s6): strict novelty plus the three unexpectedness statements"),
        GroundTruthDefinition(
            "broadening_s8", ("s8",), min_answered=1,
            description="s8 alone: 'Watching this movie broadened my preferences'"),
    )
}


def serendipity_ground_truth(answers: pd.DataFrame, definition: str = PRIMARY_DEFINITION) -> pd.Series:
    """The Serendipity-2018 ground-truth score of each answer (float in [1, 5], NaN when too few statements were
    answered) under a named definition of ``GROUND_TRUTH_DEFINITIONS``."""
    try:
        spec = GROUND_TRUTH_DEFINITIONS[definition]
    except KeyError:
        raise KeyError(f"unknown ground-truth definition {definition!r}; known: {sorted(GROUND_TRUTH_DEFINITIONS)}")
    return spec.score(answers)


def truth_reliability(answers: pd.DataFrame, definition: str = PRIMARY_DEFINITION) -> dict[str, object]:
    """How consistently the users answered the statements their ground truth averages: Cronbach's α of the
    definition's statements (reverse-keyed ones reversed) on the answers that answered all of them, and the ceiling it
    sets on any judge's correlation with the truth, √α (classical test theory: a score correlates with a noisy measure
    at most the square root of that measure's reliability). Serendipity-2018 holds no second human reading of the
    same answers; this is the best bound its data give. Keys: ``definition``, ``statements``, ``n``, ``alpha``,
    ``ceiling_r``."""
    spec = GROUND_TRUTH_DEFINITIONS[definition]
    values = answers[list(spec.statements)].astype(float).copy()
    for column in spec.reverse_keyed:
        values[column] = 6.0 - values[column]
    values = values.dropna()
    k = values.shape[1]
    if k < 2 or len(values) < 2:
        raise ValueError(f"ground truth {definition!r}: Cronbach's α needs two statements and two complete answers")
    # α = k / (k − 1) × (1 − Σ item variances / variance of the sum)
    alpha = k / (k - 1) * (1 - values.var(ddof=1).sum() / values.sum(axis=1).var(ddof=1))
    return {"definition": definition, "statements": ", ".join(spec.statements), "n": int(len(values)),
            "alpha": float(alpha), "ceiling_r": float(np.sqrt(max(alpha, 0.0)))}


def ground_truth_definitions_table() -> pd.DataFrame:
    """One row per definition: name, statements, reverse-keyed statements, minimum answered, description."""
    return pd.DataFrame(
        [
            {
                "definition": d.name,
                "statements": ", ".join(d.statements),
                "reverse_keyed": ", ".join(d.reverse_keyed) or "-",
                "min_answered": d.min_answered,
                "primary": d.name == PRIMARY_DEFINITION,
                "description": d.description,
            }
            for d in GROUND_TRUTH_DEFINITIONS.values()
        ]
    )


def all_ground_truths(answers: pd.DataFrame) -> pd.DataFrame:
    """Every definition's score as one column per definition, index aligned with ``answers``."""
    return pd.concat([d.score(answers) for d in GROUND_TRUTH_DEFINITIONS.values()], axis=1)


def likert_level(scores: pd.Series | np.ndarray) -> pd.Series:
    """Round a mean-of-statements score to the nearest Likert level, halves rounded up (2.5 → 3), NaN kept.

    Used for stratifying samples and for few-shot example ratings; agreement statistics use the unrounded mean."""
    values = pd.Series(scores, dtype=float)
    return np.floor(values + 0.5).rename(getattr(scores, "name", None))


def round_to_level(long: pd.DataFrame) -> pd.DataFrame:
    """Long scores (a ``score`` column, e.g. an ensemble's means) with each score rounded to its Likert level
    (``likert_level``: halves up)."""
    return long.assign(score=likert_level(long["score"]).to_numpy())


def taobao_ground_truth(survey: pd.DataFrame) -> pd.Series:
    """The Taobao ``Serendipity`` Likert answer ("The item recommended to me is a pleasant surprise.") as float."""
    for column in ("serendipity", "Serendipity"):
        if column in survey.columns:
            return survey[column].astype(float).rename("serendipity")
    raise KeyError(f"the Taobao survey frame has no serendipity column; columns are {list(survey.columns)}")


# --------------------------------------------------------------------------------------------------------- histories

@dataclass(frozen=True)
class HistorySource:
    """Which interactions a history was built from, as a label for every table and figure that uses it."""

    name: str  # "training" | "survey_before_target"
    label: str
    k: int


def history_source(training_available: bool, k: int) -> HistorySource:
    if training_available:
        return HistorySource("training", f"last {k} training.csv ratings before the target", k)
    return HistorySource(
        "survey_before_target",
        f"last {k} of the user's other survey answers rated before the target (training.csv absent: at most 4)",
        k,
    )


def comparable_times(times: pd.Series) -> np.ndarray:
    """Timestamps as an array to binary-search: datetimes (tz-aware too) as integers, numbers as they are."""
    return times.astype("int64").to_numpy() if pd.api.types.is_datetime64_any_dtype(times) else times.to_numpy()


def last_k_history(
    targets: pd.DataFrame,
    interactions: pd.DataFrame,
    k: int = 10,
) -> pd.DataFrame:
    """The last ``k`` interactions of each target's user strictly before the target's timestamp.

    targets:      user_id, item_id, timestamp (one row per judged answer).
    interactions: user_id, item_id, timestamp and optionally rating: training.csv ratings, or the survey answers
                  themselves for the fallback history. The target item itself is never part of its history.

    Returns a long frame: user_id, item_id (the target), position (0 = oldest kept), history_item_id,
    history_rating (NaN when the interactions carry no rating), history_timestamp; ordered oldest to newest per
    target. Targets without any earlier interaction have no rows.
    """
    if k < 0:
        raise ValueError(f"history length k must be >= 0, got {k}")
    for name, frame, cols in (("targets", targets, ("user_id", "item_id", "timestamp")),
                              ("interactions", interactions, ("user_id", "item_id", "timestamp"))):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise KeyError(f"{name} frame lacks column(s) {missing}")
    columns = ["user_id", "item_id", "position", "history_item_id", "history_rating", "history_timestamp"]
    if k == 0 or targets.empty:
        return pd.DataFrame(columns=columns)

    users = set(targets["user_id"].unique())
    pool = interactions.loc[interactions["user_id"].isin(users), ["user_id", "item_id", "timestamp"]].copy()
    pool["rating"] = interactions.loc[pool.index, "rating"] if "rating" in interactions.columns else np.nan
    pool = pool.sort_values(["user_id", "timestamp", "item_id"], kind="stable")
    # Per user: its rows' positions in ``pool``, timestamps and items as arrays, so that each target costs a search
    # and a slice (building a frame per target took seconds per setting at paper scale)
    pool_times, pool_items = comparable_times(pool["timestamp"]), pool["item_id"].to_numpy()
    by_user = {user: (positions, pool_times[positions], pool_items[positions])
               for user, positions in pool.groupby("user_id", sort=False).indices.items()}

    taken: list[np.ndarray] = []
    owners: list[tuple] = []
    for user, item, when in zip(targets["user_id"].tolist(), targets["item_id"].tolist(),
                                comparable_times(targets["timestamp"])):
        if user not in by_user:
            continue
        positions, times, items = by_user[user]
        stop = np.searchsorted(times, when, side="left")  # strictly earlier interactions only
        earlier = positions[:stop][items[:stop] != item][-k:]
        if len(earlier):
            taken.append(earlier)
            owners.append((user, item, len(earlier)))
    if not taken:
        return pd.DataFrame(columns=columns)
    picked = pool.iloc[np.concatenate(taken)]
    counts = [count for _, _, count in owners]
    return pd.DataFrame({
        "user_id": np.repeat(np.array([user for user, _, _ in owners]), counts),
        "item_id": np.repeat(np.array([item for _, item, _ in owners]), counts),
        "position": np.concatenate([np.arange(count) for count in counts]),
        "history_item_id": picked["item_id"].to_numpy(),
        "history_rating": picked["rating"].to_numpy(dtype=float),
        "history_timestamp": picked["timestamp"].to_numpy(),
    })[columns]


def serendipity_histories(
    answers: pd.DataFrame,
    training: pd.DataFrame | None = None,
    k: int = 10,
) -> tuple[pd.DataFrame, HistorySource]:
    """Histories for every Serendipity-2018 answer and the label of their source.

    With ``training`` (training.csv ratings) the history is the user's last ``k`` ratings before the answer's
    timestamp. Without it, the fallback is the user's other survey answers rated before the target, ordered by time.
    """
    if training is not None:
        return last_k_history(answers, training, k), history_source(True, k)
    return last_k_history(answers, answers, k), history_source(False, k)


# ------------------------------------------------------------------------------------------------------------ sample

def stratified_sample(
    frame: pd.DataFrame,
    level: pd.Series | str,
    n: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """A seeded sample of ``n`` rows stratified by ground-truth Likert level, with proportional allocation.

    Proportional allocation keeps the level distribution of the full data, so that correlations on the sample
    estimate the same quantity as on all answers. Rows whose level is NaN are never drawn. A level with a single
    row is pooled with its nearest level for the stratification (scikit-learn needs two rows per stratum).
    Returns the sampled rows in their original order; all rows when ``n`` is at least their number.
    """
    from sklearn.model_selection import train_test_split

    levels = frame[level] if isinstance(level, str) else pd.Series(level, index=frame.index)
    eligible = frame.loc[levels.notna()]
    strata = levels.loc[eligible.index].astype(float)
    if n >= len(eligible):
        return eligible
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    counts = strata.value_counts()
    for value in counts[counts < 2].index:  # pool singleton levels with their nearest neighbour level
        others = counts.index[counts.index != value]
        if len(others):
            strata = strata.replace(value, others[np.argmin(np.abs(others - value))])
    try:
        sample, _ = train_test_split(eligible, train_size=n, stratify=strata, random_state=seed)
    except ValueError:  # too few rows for stratification (tiny fixtures): fall back to a plain seeded sample
        sample = eligible.sample(n=n, random_state=seed)
    return eligible.loc[eligible.index.isin(sample.index)]


# ------------------------------------------------------------------------------------------------- the study inputs

@dataclass
class Serendipity2018Study:
    """Everything the RQ1 meta-evaluation reads from Serendipity-2018, built once by ``prepare_serendipity2018``.

    answers:        the survey answers with ``truth`` (primary ground truth) and ``level`` (its Likert level).
    movies:         item_id-indexed title, year, genres.
    history:        long frame of each answer's last-k history (``last_k_history``), with ``source`` its label.
    sample:         the stratified sample judged by the local model (rows of ``answers``).
    examples:       the few-shot examples (rows of ``answers`` outside the sample and its users).
    synthetic:      True when built from the synthetic survey fixture.
    """

    answers: pd.DataFrame
    movies: pd.DataFrame
    history: pd.DataFrame
    source: HistorySource
    sample: pd.DataFrame
    examples: pd.DataFrame
    synthetic: bool
    _sample_requests: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def data_label(self) -> str:
        return "SYNTHETIC survey (not real users)" if self.synthetic else "Serendipity-2018 (mirror)"

    def requests(self, prompt: str, frame: pd.DataFrame | None = None):
        """Judge requests for ``frame`` (default: the sample) with one of the serendipity templates. The sample's
        are built once per template: every judge in a template's role (the book's and each reader's) is asked the
        same prompts."""
        from recjudge.prompts import serendipity as prompts

        if frame is None:
            built = self._sample_requests.get(prompt)
            if built is None or built[0] is not self.sample:  # a sample assigned since: built anew
                built = self._sample_requests[prompt] = (self.sample, self.requests(prompt, self.sample))
            return list(built[1])
        examples = None
        if prompt == "kang_fewshot":
            examples = prompts.fewshot_example_fields(self.examples, self.history, self.movies, "level")
        return prompts.serendipity_requests(frame, self.history, self.movies, prompt, "movies", examples)

    def recorded_requests(self):
        """A request for every answer, keyed as the serendipity templates key it and without messages: what a
        recorded judge (``recorded_gpt35``) is asked, its replies looked up by key."""
        from recjudge.llm import JudgeRequest

        return [JudgeRequest(key, []) for key in self._answer_of_key.index]

    def scores_of(self, run, integer: bool = False) -> pd.Series:
        """A judge's scores (``JudgeRun``) indexed as the answers it judged; ``integer``: a run read as an expected
        score gives its most likely score token instead (the integer the papers' judges answer), any other run its
        scores."""
        scores = run.scores(column="modal_score" if integer and run.config.scoring == "expected" else None)
        return pd.Series(scores.to_numpy(), index=self._answer_of_key.loc[scores.index].to_numpy())

    @functools.cached_property
    def _answer_of_key(self) -> pd.Series:
        """The answers' index, indexed by each answer's request key (``prompts.serendipity.request_key``); built
        once, as every judge's scores are read through it."""
        from recjudge.prompts.serendipity import request_key

        keys = [request_key(u, i) for u, i in self.answers[["user_id", "item_id"]].itertuples(index=False)]
        return pd.Series(self.answers.index, index=keys)


def rq1_judge(prompt: str, model: str = "smollm2-135m-instruct-q4_1", scoring: str = "expected",
              options: tuple = ()):
    """The RQ1 chapters' local judge (``JudgeConfig``): one greedy token read as the expected score (or generated,
    ``scoring="generate"``), one run, seed 0, on one of the serendipity templates."""
    from recjudge.llm import JudgeConfig

    return JudgeConfig(provider="local", model=model, prompt=prompt, scoring=scoring, max_tokens=1, temperature=0.0,
                       runs=1, seed=0, options=options)


def reader_rq1_judges(judges, prompts: list[str], model: str = "smollm2-135m-instruct-q4_1",
                      scoring: str = "expected"):
    """Each reader's judge (a chapter's ``judges`` parameter) in every RQ1 prompt's role (``rq1_judge``):
    ``(name, prompt, JudgeConfig)`` triples, the name the judge's label and the prompt's method name."""
    from recjudge.llm.judge_spec import judge_configs, role_of
    from recjudge.prompts.serendipity import METHOD_NAMES

    return [(f"{label} {METHOD_NAMES.get(prompt, prompt)}", prompt, config)
            for prompt in prompts
            for label, config in judge_configs(judges, **role_of(rq1_judge(prompt, model, scoring=scoring)))]


#: The prompt each of a reader's judges joins their average with (``readers_average``): Kang et al.'s Table 5 averages
#: few-shot judges.
AVERAGED_PROMPT = "kang_fewshot"


def readers_average(judged: Mapping[str, pd.Series], answers: pd.DataFrame, labels: Sequence[str], *,
                    prompt: str = AVERAGED_PROMPT, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The average of a reader's judges against each of them, on the answers every one scored (Kang et al.'s RQ3 with
    the reader's judges): ``agreement_table`` rows of the mean (``READERS_AVERAGE``) and of each judge in the role
    of ``prompt`` (``judged``: method name -> scores by answer, named "<label> <method name>"), every row set against
    the mean (``versus``, ``r_with_versus``, ``n_with_versus``), with column ``judge`` (the label, or the mean's
    name). ``answers``: the judged answers (user_id, truth). No rows with fewer than two judges: an average of one
    judge is that judge."""
    from recjudge.compendium.comparisons import READERS_AVERAGE
    from recjudge.prompts.serendipity import METHOD_NAMES

    columns = ["method", "judge", "n", "pearson_pct", "versus", "n_with_versus", "r_with_versus"]
    if len(labels) < 2:
        return pd.DataFrame(columns=columns)
    members = {label: f"{label} {METHOD_NAMES.get(prompt, prompt)}" for label in labels}
    missing = [name for name in members.values() if name not in judged]
    if missing:
        raise KeyError(f"no scores of {missing} to average (the chapter asks each reader's judge the prompt {prompt})")
    frame = answers[["user_id", "truth"]].assign(**{name: judged[name].reindex(answers.index)
                                                     for name in members.values()})
    frame[READERS_AVERAGE] = frame[list(members.values())].mean(axis=1, skipna=False)
    table = agreement_table(frame, [READERS_AVERAGE, *members.values()], n_boot=n_boot, seed=seed, groups="user_id",
                            versus=READERS_AVERAGE)
    table["judge"] = table["method"].map({name: label for label, name in members.items()}).fillna(READERS_AVERAGE)
    return table


#: Reply length of an RQ1 judge that generates its score: free ("Generate only the rating number") and held to the
#: template's shape ({"rating": n}, about seven tokens).
GENERATED_REPLY_TOKENS = {"free": 8, "constrained": 16}


def rq1_shape_effect(study: "Serendipity2018Study", prompts: list[str], model: str = "smollm2-135m-instruct-q4_1",
                     method_names: dict[str, str] | None = None, frame: pd.DataFrame | None = None,
                     mode: str | None = None, store=None, provider=None) -> pd.DataFrame:
    """Each RQ1 prompt's judge generating its score, with free replies (read by ``parse_likert``) and with replies
    held to the template's output shape (``recjudge.prompts.output_shapes``: ``{"rating": 1..5}``), on ``frame``
    (rows of the study's answers; default its sample): one row per prompt with the replies, those out of shape,
    those parsed each way, and Pearson (%) and MAE against the ground truth on the parsed replies
    (``recjudge.metaeval.agreement.agreement_pct``: NaN when undefined), and those left out each way (never asked:
    the judge is not among those asked, ``RECJUDGE_LLM_ASK_ONLY``)."""
    from recjudge.llm import run_judge
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.prompts.output_shapes import output_shape

    frame = study.sample if frame is None else frame
    rows = []
    for prompt in prompts:
        generating = rq1_judge(prompt, model, scoring="generate")
        requests = study.requests(prompt, frame)
        truth = pd.Series(frame["truth"].to_numpy(), index=[request.key for request in requests])
        row = {"prompt": prompt, "method": (method_names or {}).get(prompt, prompt), "replies": len(requests)}
        for variant in ("free", "constrained"):
            config = generating.with_(max_tokens=GENERATED_REPLY_TOKENS[variant])
            if variant == "constrained":
                config = config.constrained(output_shape(prompt))
            run = run_judge(config, requests, mode=mode, store=store, provider=provider, progress=False)
            found = agreement_pct(run.scores().reindex(truth.index).astype(float), truth)
            row[f"parsed_{variant}"] = found["n"]
            row[f"pearson_{variant}"] = found["pearson_pct"]
            row[f"mae_{variant}"] = found["mae"]
            row[f"left_out_{variant}"] = run.report.n_left_out  # never asked (not among the judges asked)
            if variant == "constrained":
                row["shape_violations"] = run.report.n_shape_violations
        rows.append(row)
    columns = ["prompt", "method", "replies", "shape_violations", "parsed_free", "parsed_constrained",
               "pearson_free", "pearson_constrained", "mae_free", "mae_constrained", "left_out_free",
               "left_out_constrained"]
    return pd.DataFrame(rows, columns=columns)


def recorded_gpt35():
    """The recorded judge (``JudgeConfig``): gpt-3.5-turbo scores of every Serendipity-2018 answer, published with
    their own prompt (provider "recorded", source "gpt35-serendipity")."""
    from recjudge.llm import JudgeConfig

    return JudgeConfig(provider="recorded", model="gpt-3.5-turbo", prompt="tvergara2023",
                       options=(("source", "gpt35-serendipity"),))


def labelled_judge(spec) -> tuple[str, object]:
    """A judge given as ``JudgeConfig`` fields plus an optional ``label`` (a chapter's ``other_families`` entry; its
    prompt defaults to the basic prompt): (its name, default the model and the prompt's method name; its config)."""
    from recjudge.llm import JudgeConfig
    from recjudge.prompts.serendipity import METHOD_NAMES

    spec = dict(spec)
    label = spec.pop("label", None)
    prompt = spec.setdefault("prompt", "kang_basic")
    config = JudgeConfig(**spec)
    return label or f"{config.model} {METHOD_NAMES.get(prompt, prompt)}", config


def judged_by_answer(study: Serendipity2018Study, runs) -> dict[str, pd.Series]:
    """Each judge's scores indexed as the study's answers (``Serendipity2018Study.scores_of``): ``runs`` maps a
    method name to its ``JudgeRun``; a run read as an expected score is given twice, as its expected score and, under
    ``name + INTEGER``, as its most likely score token (the integer the papers' judges answer)."""
    judged = {}
    for name, run in runs.items():
        judged[name] = study.scores_of(run)
        if run.config.scoring == "expected":
            judged[f"{name}{INTEGER}"] = study.scores_of(run, integer=True)
    return judged


@dataclass(frozen=True)
class Serendipity2018Data:
    """Serendipity-2018 as the studies read it, from ``load_serendipity2018``.

    answers:  the survey answers (a copy the caller may add columns to).
    history:  each answer's last-k history (``serendipity_histories``); ``source`` its label.
    movies:   item_id-indexed title, year, genres.
    synthetic: True when built from the synthetic survey fixture.
    """

    answers: pd.DataFrame
    history: pd.DataFrame
    source: HistorySource
    movies: pd.DataFrame
    synthetic: bool


def load_serendipity2018(source: str = "mirror", history_k: int = 10) -> Serendipity2018Data:
    """Load Serendipity-2018 (``source="mirror"``: the dataset through the data layer; ``"synthetic"``: the committed
    synthetic survey) with last-``history_k`` histories (training.csv when present, else the survey fallback)."""
    from recjudge import data

    if source not in ("mirror", "synthetic"):
        raise ValueError(f"source must be 'mirror' or 'synthetic', got {source!r}")
    loader_source = None if source == "mirror" else source
    answers = data.load_serendipity_answers(loader_source).copy()
    synthetic = bool(answers.attrs.get("synthetic", source == "synthetic"))
    try:
        training = data.load_serendipity_training(loader_source)
    except data.MissingDataError:
        training = None
    history, history_label = serendipity_histories(answers, training, history_k)
    movies = data.load_serendipity_movies(loader_source).drop_duplicates("item_id").set_index("item_id")
    return Serendipity2018Data(answers, history, history_label, movies, synthetic)


def sample_and_examples(answers: pd.DataFrame, level: str, sample_size: int,
                        pick_examples: Callable[[pd.DataFrame, Sequence], pd.DataFrame], seed: int = 0,
                        examples_first: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judged sample (stratified by ``level``: ``stratified_sample``) and its solved prompt examples, whose users
    are never in the sample. ``pick_examples(pool, exclude_users)`` picks the examples.

    ``examples_first`` False: the sample is drawn from every answer, then the examples from the other answers of
    users outside it. A sample of every answer leaves no such answer, so a run that judges "every answer" (the paper
    profile) picks the examples first, from every answer, and then draws the sample from the other users' answers."""
    if not examples_first:
        sample = stratified_sample(answers, level, n=sample_size, seed=seed)
        return sample, pick_examples(answers.drop(index=sample.index), sample["user_id"].unique())
    examples = pick_examples(answers, ())
    rest = answers.loc[~answers["user_id"].isin(set(examples["user_id"]))]
    return stratified_sample(rest, level, n=sample_size, seed=seed), examples


def prepare_serendipity2018(
    source: str = "mirror",
    history_k: int = 10,
    sample_size: int = 200,
    seed: int = 0,
    definition: str = PRIMARY_DEFINITION,
    examples_first: bool = False,
) -> Serendipity2018Study:
    """Load Serendipity-2018 (``load_serendipity2018``), attach the ground truth, draw the stratified sample and pick
    the few-shot examples (seeded; ``examples_first``: see ``sample_and_examples``)."""
    from recjudge.prompts.serendipity import select_fewshot_examples

    loaded = load_serendipity2018(source, history_k)
    answers = loaded.answers
    answers["truth"] = serendipity_ground_truth(answers, definition)
    answers["level"] = likert_level(answers["truth"])
    sample, examples = sample_and_examples(
        answers, "level", sample_size,
        lambda pool, exclude: select_fewshot_examples(pool, "level", seed=seed, exclude_users=exclude),
        seed, examples_first)
    return Serendipity2018Study(answers, loaded.movies, loaded.history, loaded.source, sample, examples,
                                loaded.synthetic)


# ---------------------------------------------------------------------------------------------- meta-evaluation

def agreement_table(
    scores: pd.DataFrame,
    methods: list[str],
    truth: str = "truth",
    reference: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    groups: str | None = None,
    ranking: bool = False,
    versus: str | None = None,
) -> pd.DataFrame:
    """Pearson (%), MAE and RMSE of each method's Likert scores against the ground truth, with seeded bootstrap
    95% intervals (``recjudge.metaeval.agreement.bootstrap_ci``, percentile; none when ``n_boot`` is 0; with
    ``groups``, a column such as ``user_id``, they resample its groups, not rows: column ``interval_resamples``); with
    ``ranking``, also how well the scores rank the answers users called serendipitous (truth at least 4) above the
    rest (``auc``, ``recjudge.metaeval.agreement.ranking_auc``, with its interval); and two-sided tests against
    ``reference``:

    - ``p_pearson_vs_ref``: Williams' t for two dependent correlations sharing the truth
      (``recjudge.metaeval.agreement.compare_dependent_correlations``);
    - ``p_abs_error_vs_ref``: paired t-test of the absolute errors (``scipy.stats.ttest_rel``), i.e. of the MAE
      difference (Kang et al. report two-sided t-tests against the strongest baseline).

    Each method is scored on the rows where it and the truth are present; the tests use the rows where both
    methods and the truth are present. ``n`` is the number of rows used.

    ``versus`` (default: ``reference``) names the method every row is set against by the claims' comparisons on the
    same answers: ``r_with_versus``, the correlation between the row's scores and that method's, and
    ``n_with_versus``, the rows where both and the truth are present (``recjudge.metaeval.dependent``).
    """
    from scipy import stats

    from recjudge.metaeval.agreement import (
        agreement,
        bootstrap_ci,
        compare_dependent_correlations,
        correlation,
        ranking_auc_statistic,
    )

    rows = []
    for method in methods:
        pred, true = scores[method].to_numpy(dtype=float), scores[truth].to_numpy(dtype=float)
        stats_ = agreement(pred, true)
        row = {"method": method, "n": stats_["n"], "pearson_pct": 100 * stats_["pearson_r"],
               "pearson_p": stats_["pearson_p"], "mae": stats_["mae"], "rmse": stats_["rmse"]}
        for name, scale in (("pearson", 100.0), ("mae", 1.0), ("rmse", 1.0)):
            ci = (bootstrap_ci(pred, true, name, n_boot=n_boot, seed=seed, method="percentile",
                               groups=None if groups is None else scores[groups].to_numpy()) if n_boot > 0
                  else {"ci_low": np.nan, "ci_high": np.nan})
            row[f"{name}_ci_low"] = scale * ci["ci_low"]
            row[f"{name}_ci_high"] = scale * ci["ci_high"]
        if ranking:
            auc = ranking_auc_statistic()
            row["auc"] = auc(pred, true)
            ci = (bootstrap_ci(pred, true, auc, n_boot=n_boot, seed=seed, method="percentile",
                               groups=None if groups is None else scores[groups].to_numpy()) if n_boot > 0
                  else {"ci_low": np.nan, "ci_high": np.nan})
            row["auc_ci_low"], row["auc_ci_high"] = ci["ci_low"], ci["ci_high"]
        if groups is not None:
            row["interval_resamples"] = groups
        row["reference"] = reference or ""
        row["p_pearson_vs_ref"] = np.nan
        row["p_abs_error_vs_ref"] = np.nan
        against = versus or reference
        if against is not None:
            both = scores[[method, against, truth]].dropna() if method != against else scores[[method, truth]].dropna()
            row["versus"] = against
            row["n_with_versus"] = len(both)
            row["r_with_versus"] = (1.0 if method == against else
                                    correlation(both[method], both[against]) if len(both) > 2 else np.nan)
        if reference is not None and method != reference:
            both = scores[[method, reference, truth]].dropna()
            if len(both) > 3:
                row["p_pearson_vs_ref"] = compare_dependent_correlations(
                    both[method], both[reference], both[truth])["p_value"]
                errors = (both[method] - both[truth]).abs(), (both[reference] - both[truth]).abs()
                if not np.allclose(errors[0], errors[1]):
                    row["p_abs_error_vs_ref"] = float(stats.ttest_rel(*errors).pvalue)
        rows.append(row)
    return pd.DataFrame(rows)


def kang2025_table2() -> pd.DataFrame:
    """The paper's Table 2 (family, method, dataset, pearson_pct, mae, rmse), numbers as printed
    (``recjudge.papers``: ``kang2025serendipity_table2``)."""
    return papers.table("kang2025serendipity_table2")


def random_baseline_agreement(truth: pd.Series, n_seeds: int = 1000, seed: int = 0, ranking: bool = False
                              ) -> pd.DataFrame:
    """The Random baseline's *expected* agreement: one row shaped like :func:`agreement_table`'s, holding the mean
    over ``n_seeds`` seeds of Pearson (%), MAE and RMSE, with the 2.5-97.5 percentiles over seeds as the interval
    (how far one seed can land from the expectation). A single seed is one draw and can land anywhere in that range.
    """
    from recjudge.metaeval.agreement import random_baseline_over_seeds

    per_seed = random_baseline_over_seeds(truth.to_numpy(dtype=float), n_seeds=n_seeds, seed=seed)
    row: dict[str, object] = {"method": "Random", "n": int(truth.notna().sum()), "pearson_p": np.nan}
    metrics = (("pearson", "pearson", 100.0), ("mae", "mae", 1.0), ("rmse", "rmse", 1.0))
    for name, column, scale in metrics + ((("auc", "auc", 1.0),) if ranking else ()):
        values = scale * per_seed[column]
        key = "pearson_pct" if name == "pearson" else name
        row[key] = float(values.mean())
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = (float(q) for q in values.quantile([0.025, 0.975]))
    row.update(reference="", p_pearson_vs_ref=np.nan, p_abs_error_vs_ref=np.nan, seeds=n_seeds)
    return pd.DataFrame([row])


#: The constant answers' rows in an agreement table (``recjudge.metaeval.baselines``).
CONSTANT_METHODS = {"constant (most frequent level)": "Constant (most frequent level)",
                    "constant (mean)": "Constant (mean)"}


def constant_baseline_agreement(scores: pd.DataFrame, truth: str = "truth", groups: str | None = "user_id",
                                n_boot: int = 1000, seed: int = 0, ranking: bool = False) -> pd.DataFrame:
    """The constant answers (the most frequent level and the mean of the truth, each chosen for a user on the other
    users' answers, or with ``groups`` None for an answer on the other answers:
    ``recjudge.metaeval.baselines.constant_answers``) as :func:`agreement_table` rows; their Pearson is NaN (undefined
    for a constant; ``pearson_note`` says so), MAE and RMSE with their intervals. No rows when fewer than two users
    have an answer."""
    from recjudge.metaeval.baselines import CONSTANT_PEARSON_NOTE, constant_answers

    grouped = groups is not None and groups in scores.columns
    folds = scores[groups].to_numpy() if grouped else None
    if scores[truth].notna().sum() == 0 or (grouped and scores.loc[scores[truth].notna(), groups].nunique() < 2):
        return pd.DataFrame()
    constants = constant_answers(scores[truth], folds)
    framed = pd.DataFrame({truth: scores[truth].to_numpy(dtype=float),
                           **{label: constants[name].to_numpy() for name, label in CONSTANT_METHODS.items()}})
    if grouped:
        framed[groups] = scores[groups].to_numpy()
    rows = agreement_table(framed, list(CONSTANT_METHODS.values()), truth, n_boot=n_boot, seed=seed,
                           groups=groups if grouped else None, ranking=ranking)
    rows[["pearson_pct", "pearson_p", "pearson_ci_low", "pearson_ci_high"]] = np.nan
    rows["pearson_note"] = CONSTANT_PEARSON_NOTE
    rows["constant_chosen_on"] = "the other users' answers" if grouped else "the other answers"
    return rows


def trivial_baselines(scores: pd.DataFrame, truth: str = "truth", n_seeds: int = 1000, n_boot: int = 1000,
                      seed: int = 0, groups: str | None = "user_id") -> pd.DataFrame:
    """Random (``random_baseline_agreement``) and the constant answers (``constant_baseline_agreement``) on the
    answers of ``scores`` with a ``truth``, as :func:`agreement_table` rows: the floor a judge scored on the same
    answers is read against (a separate table, so that readers selecting a judge's rows by name are unaffected)."""
    framed = (scores.drop(columns="truth", errors="ignore").rename(columns={truth: "truth"}) if truth != "truth"
              else scores)
    framed = framed[framed["truth"].notna()]
    if framed.empty:
        raise ValueError(f"no answer with a '{truth}' to score the trivial baselines on")
    return pd.concat([random_baseline_agreement(framed["truth"], n_seeds=n_seeds, seed=seed),
                      constant_baseline_agreement(framed, groups=groups, n_boot=n_boot, seed=seed)],
                     ignore_index=True)


def agreement_beside_random(scores: pd.DataFrame, methods: list[str], reference: str | None = None,
                            n_seeds: int = 1000, n_boot: int = 1000, seed: int = 0,
                            groups: str | None = "user_id", versus: str | None = None) -> pd.DataFrame:
    """The trivial baselines — Random over ``n_seeds`` seeds (``random_baseline_agreement``) and the constant answers
    (``constant_baseline_agreement``) — above every method's agreement with the truth (``agreement_table``, intervals
    resampling ``groups``, tests against ``reference``): the rows of Kang et al.'s Table 2 for one set of answers."""
    return pd.concat([trivial_baselines(scores, n_seeds=n_seeds, n_boot=n_boot, seed=seed, groups=groups),
                      agreement_table(scores, methods, reference=reference, n_boot=n_boot, seed=seed, groups=groups,
                                      versus=versus)],
                     ignore_index=True)


#: The one item-side signal the public Taobao file supports (not one of the four proxies).
CATEGORY_COMMONNESS = "Category commonness (survey)"


def taobao_agreement(survey: pd.DataFrame, n_seeds: int = 1000, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Random and how common each item's category is among the surveyed recommendations (log count, mapped to 1-5 by
    eq. 6: ``proxies.to_likert``) against the Taobao ground truth (``taobao_ground_truth``), as
    ``agreement_beside_random`` rows (no reference, intervals resampling answers)."""
    from recjudge.serendipity.proxies import to_likert

    taobao = pd.DataFrame({"truth": taobao_ground_truth(survey)})
    category_count = survey.groupby("category_id")["user_id"].transform("count")
    taobao[CATEGORY_COMMONNESS] = to_likert(-np.log1p(category_count)).to_numpy()
    return agreement_beside_random(taobao, [CATEGORY_COMMONNESS], n_seeds=n_seeds, n_boot=n_boot, seed=seed,
                                   groups=None)


def eq5_readings(scores: pd.DataFrame, methods: list[str], truth: str = "truth",
                 user: str = "user_id") -> pd.DataFrame:
    """Kang et al.'s eq. 5 read two ways, per method: one *pooled* Pearson correlation over all rows, and the
    paper's formula taken literally, the *mean over users* of each user's own correlation (h = 1/|U| sum_u r).

    A user's correlation is undefined when they have fewer than two scored answers or constant scores on either
    side (common on a 1-5 scale); such users are left out of the mean and counted. Returns method, n_rows,
    pooled_pearson_pct, per_user_pearson_pct, users_defined, users_undefined.
    """
    from recjudge.metaeval.agreement import multilevel_correlation

    rows = []
    for method in methods:
        frame = scores[[user, method, truth]].assign(_item=np.arange(len(scores)))
        table = multilevel_correlation(frame, method, truth, user, "_item", methods=("pearson",)).set_index("level")
        rows.append({"method": method, "n_rows": int(table.loc["dataset", "n_rows"]),
                     "pooled_pearson_pct": 100 * table.loc["dataset", "value"],
                     "per_user_pearson_pct": 100 * table.loc["user", "value"],
                     "users_defined": int(table.loc["user", "n_groups"]),
                     "users_undefined": int(table.loc["user", "n_undefined"])})
    return pd.DataFrame(rows)


def agreement_for_display(table: pd.DataFrame) -> pd.DataFrame:
    """A compact view of :func:`agreement_table` rows for the book: method, n, Pearson (%) with its interval in
    brackets, MAE, RMSE and the two tests against the reference (p-values). The full table stays in results/."""
    def with_interval(row: pd.Series) -> str:
        if pd.isna(row["pearson_pct"]):
            return "–"
        def one(value: float) -> str:  # no "-0.0": a value that rounds to zero is 0.0
            return f"{value:.1f}".replace("-0.0", "0.0").replace("-", "−")

        text = one(row["pearson_pct"])
        if pd.notna(row.get("pearson_ci_low")) and pd.notna(row.get("pearson_ci_high")):
            text += f" [{one(row['pearson_ci_low'])}, {one(row['pearson_ci_high'])}]"
        return text

    view = pd.DataFrame({"method": table["method"], "n": table["n"],
                         "pearson": table.apply(with_interval, axis=1), "mae": table["mae"], "rmse": table["rmse"]})
    if table["p_pearson_vs_ref"].notna().any():
        view["p_pearson"] = table["p_pearson_vs_ref"]
        view["p_mae"] = table["p_abs_error_vs_ref"]
    return view.reset_index(drop=True)


def strongest(scores: pd.DataFrame, candidates: list[str], truth: str = "truth") -> str:
    """The candidate method whose scores correlate highest (Pearson) with the truth."""
    table = agreement_table(scores, candidates, truth, n_boot=0)
    subset = table.dropna(subset=["pearson_pct"])
    if subset.empty:
        raise ValueError(f"none of {candidates} has a defined Pearson correlation")
    return str(subset.sort_values("pearson_pct", ascending=False)["method"].iloc[0])


def sensitivity_table(answers: pd.DataFrame, scores: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Pearson (%) and MAE of every method under every ground-truth definition (rows aligned by index with
    ``answers``). Shows how much the conclusions hang on the choice of statements."""
    from recjudge.metaeval.agreement import agreement

    truths = all_ground_truths(answers)
    rows = []
    for definition in GROUND_TRUTH_DEFINITIONS:
        for method in methods:
            aligned = pd.concat([scores[method], truths[definition]], axis=1, join="inner").dropna()
            result = agreement(aligned.iloc[:, 0], aligned.iloc[:, 1])
            rows.append({"definition": definition, "method": method, "n": result["n"],
                         "pearson_pct": 100 * result["pearson_r"], "mae": result["mae"]})
    return pd.DataFrame(rows)


#: Characters per line of a panel's title and legend entries in ``plot_predicted_vs_true`` (four panels share the text
#: column's width).
LEGEND_COLUMNS = 26


def plot_predicted_vs_true(long: pd.DataFrame, family_order: list[str] | None = None):
    """Mean predicted Likert score (with 95% intervals) per true Likert level, one panel per method family, at most
    six methods a panel, in the book's figure style (``recjudge.compendium.figures``).

    long: columns family, method, level (true Likert level), predicted. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from recjudge.compendium import figures

    families = family_order or list(dict.fromkeys(long["family"]))
    fig, axes = plt.subplots(1, len(families), figsize=(figures.FIGURE_WIDTH_IN, 4.6), sharey=True, squeeze=False)
    for ax, family in zip(axes.flat, families):
        part = long[long["family"] == family]
        methods = list(dict.fromkeys(part["method"]))
        figures.check_series_count(len(methods), where=f"the panel {family!r}")
        # The panel's title names its judge, so a legend entry names the prompt alone; long names wrap, so that a
        # reader's judge named at length still fits the panel (matplotlib would otherwise give up its layout)
        short = {m: textwrap.fill(m.removeprefix(f"{family} "), LEGEND_COLUMNS) for m in methods}
        sns.lineplot(data=part.assign(method=part["method"].map(short)), x="level", y="predicted", hue="method",
                     style="method", markers=list(figures.MARKERS[:len(methods)]), dashes=False,
                     palette=figures.colours(len(methods)), errorbar=("ci", 95),
                     seed=0, ax=ax)  # a seeded bootstrap: the same bands on every build
        ax.plot([1, 5], [1, 5], ls=":", color="grey", lw=1)
        ax.set(xticks=[1, 2, 3, 4, 5], yticks=[1, 2, 3, 4, 5], ylim=(0.8, 5.2),
               title=textwrap.fill(family, LEGEND_COLUMNS), xlabel="True level", ylabel="Mean predicted score")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False, title=None,
                  handlelength=1.5)
    fig.tight_layout()
    return fig
