"""Metamorphic robustness of the compendium's own LLM judges.

A judge under test (``JudgeUnderTest``) is a configuration, its original requests, its reply parser and where its
prompt holds the user's history (markers around it). ``perturb`` applies one relation to every request:

- ``mr3``: spaces between the characters of the history (or of the judged text when the prompt has no history);
- ``mr4``: random words inserted into the same span (seeded by the request's position);
- ``shuffle``: the history items in a random order (only where the prompt holds a list of items);
- ``mr1`` / ``mr2``: the rating relations, only where ratings "R/5" appear in the span;
- ``paraphrase``: the instruction reworded by the judge's own sentence replacements.

A relation that does not apply to a judge (no history list, no ratings) is reported as not applicable, never run.
``robustness`` compares original and perturbed scores per (judge, relation): cases run, filtered (a NaN on either
side) and scored (the n of every measure), the mean absolute change of the score, the share of verdict flips
(``verdict_flips``: the one definition of a flip), Spearman's rank correlation between original and perturbed
scores, and the change in Pearson agreement with the ground truth. A move of the score that leaves the verdict
alone is not counted as a flip: on a 1–5 scale a change of 0.02 is no change of judgement, and the mean absolute
change already says how far the scores move.
The judge list is a parameter of the chapter; a new judge is one more ``JudgeUnderTest`` (builders here: Kang et al.'s
basic prompt, Tokutake et al.'s single-call templates, the explanation judge of Zhang et al.).  ``constrained`` gives
a generating judge's twin whose replies are held to its template's output shape, and ``shape_effect`` sets the two
side by side per relation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge, shapes
from recjudge.metaeval.baselines import CONSTANT_PEARSON_NOTE, RANDOM

from .relations import apply_to_span, mr1_multiply, mr2_shift, mr3_spaces, mr4_random_words, paraphrase, shuffle_list

#: Separators of a "Title (year), Title (year)" history: a comma after a closing parenthesis (titles hold commas).
HISTORY_SPLIT = r"(?<=\)), "
RELATIONS = ("mr3", "mr4", "shuffle", "mr1", "mr2", "paraphrase")
RELATION_NAMES = {"mr3": "MR3: spaces", "mr4": "MR4: random words", "shuffle": "History order shuffled",
                  "mr1": "MR1: ratings multiplied", "mr2": "MR2: ratings shifted",
                  "paraphrase": "Paraphrased instruction"}
_RATING = re.compile(r"\s\d+(?:\.\d+)?/5\b")

#: Kang et al.'s basic prompt, reworded sentence by sentence (same meaning, other words).
KANG_BASIC_PARAPHRASE = {
    "Please provide a serendipity rating for the recommended item using a 5-point Likert scale:":
        "Rate how serendipitous the recommended item is on a five-point Likert scale:",
    "Rate the recommended item from the perspective of serendipity, based on your behavior history.":
        "Judge the recommended item for serendipity in the light of your behavior history.",
    "Generate only the rating number, without any additional commentary or explanation.":
        "Reply with the rating number alone and nothing else.",
}
#: The explanation judge's (Zhang et al. multiple-aspect zero-shot) instruction, reworded.
EXPLANATION_PARAPHRASE = {
    "Please rate the user experience with the explanation in the following aspects:":
        "Score your experience of the explanation on each of these aspects:",
    "Try to immerse yourself in this user's experience and provide feedback.":
        "Put yourself in this user's place and give your feedback.",
}
#: The sentences Tokutake et al.'s Base, LS and CoT templates share (their system turn), reworded.
TOKUTAKE_PARAPHRASE = {
    "You are an evaluator of serendipity in a movie recommender system.":
        "Your task is to assess serendipity in a system that recommends movies.",
    "Serendipity means that a recommended movie is both relevant to the user (the user will like it) and unexpected "
    "to the user (the user would not have expected it or found it on their own).":
        "A recommended movie is serendipitous when it suits the user (they will enjoy it) and surprises them (they "
        "would not have expected it or come across it by themselves).",
    "You are given the names and categories of the last movies the user watched, oldest first, and a movie "
    "recommended to the user.":
        "Below are the names and categories of the movies the user watched most recently, oldest first, followed by "
        "a movie recommended to them.",
}


@dataclass(frozen=True)
class JudgeUnderTest:
    """label; config (the judge); requests (originals); parser (reply -> score or aspect dict); span markers of the
    history or judged text in the last message (end None = to the message's end); list_sep when the span is a list
    (enables ``shuffle``); paraphrase: sentence replacements; truth: request key -> ground truth (optional)."""

    label: str
    config: JudgeConfig
    requests: list[JudgeRequest]
    parser: Callable[[str], object]
    span_start: str
    span_end: str | None
    list_sep: str | None = None
    list_split: str | None = None
    paraphrase: Mapping[str, str] = field(default_factory=dict)
    truth: Mapping[str, float] | None = None
    #: run_judge's batch option (a reader's judge asked through its provider's batch API); None: the environment's
    batch: bool | None = None


def _span_text(judge: JudgeUnderTest, request: JudgeRequest) -> str:
    text = request.messages[-1]["content"]
    begin = text.index(judge.span_start) + len(judge.span_start)
    end = len(text) if judge.span_end is None else text.index(judge.span_end, begin)
    return text[begin:end]


def applicable(judge: JudgeUnderTest, relation: str) -> tuple[bool, str]:
    """(applies, why not)."""
    if relation == "shuffle" and judge.list_sep is None:
        return False, "no list of history items in the prompt"
    if relation in ("mr1", "mr2"):
        if not any(_RATING.search(" " + _span_text(judge, r)) for r in judge.requests):
            return False, "no ratings in the prompt"
    if relation == "paraphrase" and not judge.paraphrase:
        return False, "no paraphrase defined"
    return True, ""


def _relation(judge: JudgeUnderTest, relation: str, position: int) -> Callable[[str], str]:
    if relation == "mr3":
        return mr3_spaces
    if relation == "mr4":
        return partial(mr4_random_words, seed=position)
    if relation == "shuffle":
        return partial(shuffle_list, seed=position, sep=judge.list_sep, split=judge.list_split)
    if relation == "mr1":
        return lambda text: mr1_multiply(" " + text)[1:]
    if relation == "mr2":
        return lambda text: mr2_shift(" " + text)[1:]
    raise ValueError(f"unknown relation {relation!r}; known: {', '.join(RELATIONS)}")


def perturb(judge: JudgeUnderTest, relation: str) -> list[JudgeRequest]:
    """The follow-up requests of ``judge`` under ``relation`` (same keys, changed messages)."""
    out = []
    for position, request in enumerate(judge.requests):
        messages = [dict(m) for m in request.messages]
        if relation == "paraphrase":
            joined = "\n\x00\n".join(m["content"] for m in messages)
            parts = paraphrase(joined, judge.paraphrase).split("\n\x00\n")
            for message, content in zip(messages, parts):
                message["content"] = content
        else:
            messages[-1]["content"] = apply_to_span(messages[-1]["content"], judge.span_start, judge.span_end,
                                                    _relation(judge, relation, position))
        out.append(JudgeRequest(key=request.key, messages=messages, meta={**request.meta, "relation": relation}))
    return out


def _long_scores(run) -> pd.Series:
    scores = run.scores()
    if isinstance(scores, pd.DataFrame):  # one column per aspect: one case per (key, aspect)
        scores = scores.stack(future_stack=True)
        scores.index = [f"{k}:{a}" for k, a in scores.index]
    return scores.astype(float)


def run_relations(judge: JudgeUnderTest, relations: Sequence[str] = RELATIONS, mode: str | None = None,
                  store=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores: case, relation, original, perturbed, truth; skipped: relation, reason) for one judge."""
    original = _long_scores(run_judge(judge.config, judge.requests, judge.parser, mode=mode, store=store,
                                      progress=False, batch=judge.batch))
    frames, skipped = [], []
    for relation in relations:
        ok, why = applicable(judge, relation)
        if not ok:
            skipped.append({"judge": judge.label, "relation": RELATION_NAMES[relation], "reason": why})
            continue
        changed = _long_scores(run_judge(judge.config, perturb(judge, relation), judge.parser, mode=mode,
                                         store=store, progress=False, batch=judge.batch))
        frame = pd.DataFrame({"case": original.index, "original": original.to_numpy(),
                              "perturbed": changed.reindex(original.index).to_numpy()})
        if judge.truth is not None:
            frame["truth"] = [judge.truth.get(c, math.nan) for c in frame["case"]]
        frames.append(frame.assign(judge=judge.label, relation=RELATION_NAMES[relation]))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
            pd.DataFrame(skipped, columns=["judge", "relation", "reason"]))


def for_readers(judge: JudgeUnderTest, readers: Sequence[Mapping]) -> list[JudgeUnderTest]:
    """``judge`` played by each reader's judge of ``readers`` (a chapter's ``judges`` parameter:
    ``JudgeSpec.to_parameter()`` dicts): the same requests, parser, spans, paraphrase and truth, so the same
    relations apply; the reader's identity in the role of ``judge.config`` (``judge_spec.role_of``: prompt, scoring,
    reply length), labelled ``"<judge's label>, <reader's label>"``. Empty without readers."""
    from recjudge.llm.judge_spec import chapter_judge, role_of

    played = []
    for reader in readers:
        label, config, batch = chapter_judge(reader, **role_of(judge.config))
        played.append(replace(judge, label=f"{judge.label}, {label}", config=config, batch=batch))
    return played


def judge_slug(label: str) -> str:
    """A judge's label as a file-name part ("Explanation (Zhang)" -> "explanation_zhang")."""
    slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    if not slug:
        raise ValueError(f"judge label {label!r} has no letters or digits to name its files")
    return slug


#: The midpoint of the 1–5 scale every judge here scores on: a verdict is the side of it a score falls on.
SCALE_MIDPOINT = 3


def verdict(scores: pd.Series | np.ndarray) -> np.ndarray:
    """The verdict of each score: the side of the scale's midpoint its nearest scale point (half up) falls on,
    -1 (below 3), 0 (at 3) or 1 (above 3). A generated integer score is its own nearest point; an expected score
    (Kang's, from log-probabilities) is rounded first, so 2.6 and 3.4 are both the midpoint's verdict."""
    return np.sign(np.floor(np.asarray(scores, dtype=float) + 0.5) - SCALE_MIDPOINT)


def verdict_flips(original: pd.Series | np.ndarray, perturbed: pd.Series | np.ndarray) -> np.ndarray:
    """Whether each pair of scores (both present) has a different ``verdict``: the one definition of a verdict flip
    in this package; a move within one side of the midpoint is not a flip."""
    return verdict(original) != verdict(perturbed)


def flip_within_reach(scores: pd.DataFrame) -> bool:
    """Whether any scored case could have flipped its verdict by the largest change its cell saw: some original
    score lies within that change of a verdict's edge (``verdict``). No flip among scores that all lie farther
    from an edge than any score moved says nothing about the judge's steadiness: none could happen."""
    both = scores.dropna(subset=["original", "perturbed"])
    if both.empty:
        return False
    reach = float((both["perturbed"] - both["original"]).abs().max())
    original = both["original"].to_numpy(dtype=float)
    return bool(((verdict(original + reach) != verdict(original))
                 | (verdict(original - reach) != verdict(original))).any())


def robustness(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, relation) from ``run_relations`` scores (see the module docstring)."""
    rows = []
    for (judge, relation), group in scores.groupby(["judge", "relation"], sort=False):
        both = group.dropna(subset=["original", "perturbed"])
        change = (both["perturbed"] - both["original"]).abs()
        row = {"judge": judge, "relation": relation, "cases": len(group), "filtered": len(group) - len(both),
               "scored": len(both), "mean_abs_change": change.mean() if len(both) else math.nan,
               "verdict_flip_rate": verdict_flips(both["original"], both["perturbed"]).mean()
               if len(both) else math.nan,
               "spearman": math.nan, "delta_pearson_truth": math.nan}
        if len(both) > 2 and both["original"].nunique() > 1 and both["perturbed"].nunique() > 1:
            row["spearman"] = float(stats.spearmanr(both["original"], both["perturbed"]).statistic)
        if "truth" in both.columns:
            t = both.dropna(subset=["truth"])
            if len(t) > 2 and t["truth"].nunique() > 1 and t["original"].nunique() > 1 and t["perturbed"].nunique() > 1:
                row["delta_pearson_truth"] = float(stats.pearsonr(t["perturbed"], t["truth"]).statistic
                                                   - stats.pearsonr(t["original"], t["truth"]).statistic)
        rows.append(row)
    return pd.DataFrame(rows)


#: A constant answer's row in :func:`baseline_robustness` (any constant: it never moves).
CONSTANT_ANSWER = "constant answer (any level)"


def baseline_robustness(low: int = 1, high: int = 5) -> pd.DataFrame:
    """What the trivial baselines would change by under any relation, the rows a judge's flip rate is read against:
    Random (``recjudge.metaeval.baselines.RANDOM``) answers each prompt, original or perturbed, with an independent
    uniform draw from ``low``..``high``, so its expected flip rate (``verdict_flips``) and mean absolute change are
    exact means over every pair of draws and its expected Spearman ρ is 0; a constant answer never moves (0 and 0;
    its Spearman ρ is undefined for want of variance). Columns as :func:`robustness`'s measures, ``relation`` "any"."""
    levels = np.arange(low, high + 1, dtype=float)
    original, perturbed = (grid.ravel() for grid in np.meshgrid(levels, levels))
    return pd.DataFrame({
        "judge": [RANDOM, CONSTANT_ANSWER], "relation": "any",
        "mean_abs_change": [float(np.abs(perturbed - original).mean()), 0.0],
        "verdict_flip_rate": [float(verdict_flips(original, perturbed).mean()), 0.0],
        "spearman": [0.0, math.nan],
        "spearman_note": ["expected 0 (independent draws)", CONSTANT_PEARSON_NOTE],
    })


CONSTRAINED = ", constrained"


def constrained(judge: JudgeUnderTest, max_tokens: int | None = None) -> JudgeUnderTest:
    """``judge`` with every reply, original and perturbed, held to its template's output shape
    (``recjudge.prompts.output_shapes``) and read as the shape's answer; labelled ``<label>, constrained``.  A judge
    that reads its score from log-probabilities (expected scoring) has no reply to constrain: ValueError."""
    from recjudge.prompts.output_shapes import output_shape

    if judge.config.scoring == "expected":
        raise ValueError(f"judge {judge.label!r} reads an expected score from log-probabilities; only a judge that "
                         "generates its reply can be constrained")
    shape = output_shape(judge.config.prompt)
    config = judge.config.constrained(shape)
    if max_tokens is not None:
        config = config.with_(max_tokens=max_tokens)
    return replace(judge, label=judge.label + CONSTRAINED, config=config, parser=shapes.answer_parser(shape))


SHAPE_EFFECT_MEASURES = ("filtered", "mean_abs_change", "verdict_flip_rate", "spearman")


def shape_effect(table: pd.DataFrame) -> pd.DataFrame:
    """Each judge that has a constrained twin in a ``robustness`` table beside that twin, one row per relation both
    ran: the cases, and for each of ``SHAPE_EFFECT_MEASURES`` its free and its constrained value."""
    twins = [label for label in table["judge"].unique()
             if not label.endswith(CONSTRAINED) and label + CONSTRAINED in set(table["judge"])]
    parts = []
    for label in twins:
        free = table[table["judge"] == label].set_index("relation")
        held = table[table["judge"] == label + CONSTRAINED].set_index("relation")
        both = free.index.intersection(held.index, sort=False)
        part = pd.DataFrame({"judge": label, "relation": both, "cases": free.loc[both, "cases"].to_numpy()})
        for measure in SHAPE_EFFECT_MEASURES:
            part[f"{measure}_free"] = free.loc[both, measure].to_numpy()
            part[f"{measure}_constrained"] = held.loc[both, measure].to_numpy()
        parts.append(part)
    columns = ["judge", "relation", "cases", *(f"{m}_{v}" for m in SHAPE_EFFECT_MEASURES
                                              for v in ("free", "constrained"))]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


@dataclass
class RobustnessRun:
    """Judges run under relations (``run_robustness``): the judges built, every judge under test (the reader's judges
    in their roles, the constrained twins), the scores and skipped relations of ``run_relations`` over all of them,
    and, for each reader's judge, the label of the judge whose role it plays."""

    judges: list[JudgeUnderTest]
    under_test: list[JudgeUnderTest]
    scores: pd.DataFrame
    skipped: pd.DataFrame
    roles: dict[str, str]


def run_robustness(built: Sequence[JudgeUnderTest], relations: Sequence[str] = RELATIONS, *,
                   readers: Sequence[Mapping] = (), twins: bool = False, twin_max_tokens: int | None = None,
                   mode: str | None = None, store=None) -> RobustnessRun:
    """Run every relation on the ``built`` judges, on each reader's judge of ``readers`` in each of their roles
    (``for_readers``) and, with ``twins``, on the constrained twin (``constrained``, ``twin_max_tokens``) of every
    generating one (an expected-score judge reads log-probabilities: it has nothing to constrain)."""
    under_test, roles = list(built), {}
    for judge in built:
        played = for_readers(judge, readers)
        roles.update({reader.label: judge.label for reader in played})
        under_test += played
    if twins:
        under_test += [constrained(judge, twin_max_tokens) for judge in under_test
                       if judge.config.scoring == "generate"]
    scores, skipped = [], []
    for judge in under_test:
        part, not_run = run_relations(judge, relations, mode=mode, store=store)
        scores.append(part)
        skipped.append(not_run)
    return RobustnessRun(list(built), under_test,
                         pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(),
                         pd.concat(skipped, ignore_index=True) if skipped
                         else pd.DataFrame(columns=["judge", "relation", "reason"]), roles)


def serendipity_judges(source: str, judge_list: Sequence[str], kang_config: JudgeConfig,
                       tokutake_config: JudgeConfig, strategy: str = "cot", *, kang_sample: int, kang_cases: int,
                       tokutake_sample: int, tokutake_cases: int | None = None,
                       suffix: str = "") -> list[JudgeUnderTest]:
    """The judges of ``judge_list`` among "kang_basic" and "tokutake" on Serendipity-2018 (``source="mirror"``) or
    the synthetic survey (``"synthetic"``): Kang's on the first ``kang_cases`` answers of a seeded sample of
    ``kang_sample`` stratified by level (as the serendipity chapter draws it), Tokutake's ``strategy`` on the first
    ``tokutake_cases`` (None: all) of a sample of ``tokutake_sample`` stratified by g (as the prompt chapter), each
    labelled with ``suffix``."""
    from recjudge.prompts.tokutake import STRATEGY_NAMES
    from recjudge.serendipity import ground_truth, prompt_strategies

    unknown = sorted(set(judge_list) - {"kang_basic", "tokutake", "explanation"})
    if unknown:
        raise ValueError(f"judge_list names {unknown}; the judges are 'kang_basic', 'tokutake' and 'explanation'")
    built = []
    if "kang_basic" in judge_list:
        study = ground_truth.prepare_serendipity2018(source, history_k=10, sample_size=kang_sample, seed=0)
        built.append(kang_basic_judge(study, kang_config, kang_cases, label="Kang basic" + suffix))
    if "tokutake" in judge_list:
        study = prompt_strategies.prepare_study(source, sample_size=tokutake_sample, seed=0, history_k=10)
        built.append(tokutake_judge(study, tokutake_config, strategy, n=tokutake_cases,
                                    label=f"Tokutake {STRATEGY_NAMES[strategy]}" + suffix))
    return built


__all__ = ["CONSTANT_ANSWER", "CONSTRAINED", "EXPLANATION_PARAPHRASE", "JudgeUnderTest", "KANG_BASIC_PARAPHRASE",
           "RELATIONS",
           "RELATION_NAMES", "RobustnessRun", "SCALE_MIDPOINT", "SHAPE_EFFECT_MEASURES", "TOKUTAKE_PARAPHRASE",
           "applicable", "baseline_robustness", "constrained",
           "explanation_judge", "for_readers", "judge_slug", "kang_basic_judge", "perturb", "robustness",
           "run_relations", "run_robustness", "serendipity_judges", "shape_effect", "tokutake_judge", "verdict",
           "verdict_flips"]


def kang_basic_judge(study, config: JudgeConfig, n: int | None = None, label: str = "Kang basic") -> JudgeUnderTest:
    """Kang et al.'s basic prompt on the first ``n`` answers of a Serendipity-2018 study's judged sample
    (``recjudge.serendipity.ground_truth.Serendipity2018Study``); truth: the primary ground truth."""
    from recjudge.prompts.serendipity import request_key

    frame = study.sample if n is None else study.sample.iloc[:n]
    truth = {request_key(u, i): t for u, i, t in frame[["user_id", "item_id", "truth"]].itertuples(index=False)}
    return JudgeUnderTest(label=label, config=config.with_(prompt="kang_basic"),
                          requests=study.requests("kang_basic", frame), parser=_likert_parser(config),
                          span_start="Your behavior history: ", span_end="\nRecommended item:", list_sep=", ",
                          list_split=HISTORY_SPLIT,
                          paraphrase=KANG_BASIC_PARAPHRASE, truth=truth)


def tokutake_judge(study, config: JudgeConfig, strategy: str = "cot", n: int | None = None,
                   label: str = "Tokutake CoT") -> JudgeUnderTest:
    """One of Tokutake et al.'s single-call templates (``base``, ``ls``, ``cot``; 10-shot) on the first ``n`` items of a
    prompt-strategy study (``recjudge.serendipity.prompt_strategies.PromptStrategyStudy``), with the study's own
    examples block and reply parser; truth: the study's g.  The relations act on the user's history in the user turn;
    the examples in the system turn stay as they are.  LtM is a chain of three calls, each built from the previous
    reply, so it is not a single judge to perturb."""
    from recjudge.prompts.tokutake import TEMPLATES, first_messages
    from recjudge.serendipity.prompt_strategies import parser_for

    if strategy not in ("base", "ls", "cot"):
        raise ValueError(f"tokutake_judge takes a single-call strategy (base, ls, cot), not {strategy!r}")
    items = study.items if n is None else study.items.iloc[:n]
    examples = study.examples_block(strategy)
    requests = [JudgeRequest(str(key), first_messages(strategy, history, item, examples))
                for key, history, item in items[["key", "history", "item"]].itertuples(index=False)]
    truth = {str(key): float(g) for key, g in items[["key", "g"]].itertuples(index=False)}
    return JudgeUnderTest(label=label, config=config.with_(prompt=TEMPLATES[strategy]), requests=requests,
                          parser=parser_for(strategy), span_start="User's last movies: ",
                          span_end="\nRecommended movie:", list_sep=", ", list_split=HISTORY_SPLIT,
                          paraphrase=TOKUTAKE_PARAPHRASE, truth=truth)


def explanation_judge(study, config: JudgeConfig, row_ids: Sequence[int],
                      label: str = "Explanation judge") -> JudgeUnderTest:
    """The explanation judge (Zhang et al., multiple-aspect zero-shot) on ``row_ids`` of the Lu et al. study
    (``recjudge.data.lu2023.ExplanationStudy``): MR3/MR4 act on the explanation text; truth: the user's own rating
    of each aspect."""
    from recjudge.data.lu2023 import ASPECTS
    from recjudge.prompts.explanations import build_requests, parser_for

    prompts = build_requests(study, row_ids, "multi", "zero_shot")
    # one lookup for every text, not a pandas .loc per (text, aspect)
    ratings = study.user_ratings.set_index("row_id").loc[[int(r) for r in row_ids], list(ASPECTS)]
    truth = {f"{r}:{a}": float(value) for r, values in zip(row_ids, ratings.to_numpy(dtype=float))
             for a, value in zip(ASPECTS, values)}
    return JudgeUnderTest(label=label, config=config.with_(prompt=prompts.template), requests=prompts.requests,
                          parser=parser_for("multi"), span_start="Explanation: ", span_end="\n\nReply with",
                          paraphrase=EXPLANATION_PARAPHRASE, truth=truth)


def _likert_parser(config: JudgeConfig):
    from recjudge.llm import parse_likert

    return parse_likert
