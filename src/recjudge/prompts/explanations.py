"""Prompts for LLM evaluators of recommendation explanations (Zhang et al. 2024) and reading their replies.

Templates (``src/recjudge/prompts/templates``), all *reconstructions* of the outline the paper prints (Figure 2:
Instruction, Aspect, Output, Example, Data — its sentences used verbatim, the aspect statements of section 2.2.2,
an answer-format line of ours), English instruction, Chinese data:

==========================  =====================================================================================
``zhang_multi_zero_shot``   the four aspects at once, no example
``zhang_multi_one_shot``    + one example rated by *another user* (non-personalised one-shot)
``zhang_multi_personalised``+ one example rated by *the same user*: same explanation system, another movie
``zhang_single_*``          the same three settings asking for one aspect per prompt (four prompts per text)
==========================  =====================================================================================

Examples (section 2.3.2): for an explanation E = g(u, i), the personalised example is the same user's rating of
E' = g(u, i0) for a randomly chosen other movie i0 of that user; the non-personalised example is the rating of
E' = g(u0, i0) for a randomly chosen (u0, i0) of another user, here with the same explanation system g (the paper's
formula keeps g; its text says only "randomly selected (u0, i0) pair"). Only examples whose four ratings are all
present are used. A text with no eligible personalised example (its user saw that system for one movie only) gets
no request in that setting and is reported.

Request keys: ``"<row_id>"`` for multiple-aspect prompts, ``"<row_id>:<aspect>"`` for single-aspect ones;
``meta`` holds row_id, aspect (single), setting and the example's row_id.

**The authors' own prompts** (``zhang_authors_multi``, ``zhang_authors_single``; ``build_authors_requests``) are
rebuilt from the public repository of Zhang et al. (``prompt.py`` and the annotation scripts): the settings are
their ``CONTAIN_SHOT`` values, "None" (zero-shot), "Type" (one example per explanation system, all taken from one
randomly chosen movie of the file's first user) and "Personalized Type" (per user, one randomly chosen other movie
whose explanation of the same system is the example; a target whose system is missing there gets the header and no
case, as in their code), each with or without their user profile (``CONTAIN_USER_PROFILE``: gender, interest in
movies, movies per year and in all, from ``user_demo.csv``). Example ratings left blank count as 3, as in their
code. ``AUTHORS_DIFFERENCES`` lists where a request here still differs from theirs. Replies are read with their rule
(``parse_authors_reply``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recjudge.data.lu2023 import ASPECTS, ExplanationStudy
from recjudge.llm import JudgeRequest, parse_aspect_scores, parse_likert
from recjudge.llm.parsing import score_text, values
from recjudge.prompts import fill_template, load_template, one_line

__all__ = [
    "ASPECT_MODES",
    "ASPECT_STATEMENTS",
    "AUTHORS_ASPECTS",
    "AUTHORS_DIFFERENCES",
    "AUTHORS_SETTINGS",
    "PROFILE_SUFFIX",
    "authors_parser",
    "names_parser",
    "build_authors_requests",
    "parse_authors_reply",
    "SETTINGS",
    "ExplanationPrompts",
    "build_requests",
    "choose_examples",
    "evaluator_name",
    "first_users",
    "parser_for",
    "sample_pairs",
    "scores_from_run",
    "template_name",
]

SETTINGS = ("zero_shot", "one_shot", "personalised")
ASPECT_MODES = ("multi", "single")
#: The questionnaire statements of the four aspects (Zhang et al. section 2.2.2).
ASPECT_STATEMENTS = {
    "persuasiveness": "This explanation is convincing to me.",
    "transparency": "Based on this explanation, I understand why this movie is recommended.",
    "accuracy": "This explanation is consistent with my interests.",
    "satisfaction": "I am satisfied with this explanation.",
}
_SETTING_LABELS = {"zero_shot": "zero-shot", "one_shot": "one-shot", "personalised": "personalised one-shot"}
#: The authors' CONTAIN_SHOT settings (our name -> theirs).
AUTHORS_SETTINGS = {"none": "None", "type": "Type", "personalised_type": "Personalized Type"}
#: Setting suffix of the user-profile ablation (CONTAIN_USER_PROFILE = True).
PROFILE_SUFFIX = "+profile"
_AUTHORS_LABELS = {"none": "zero-shot", "type": "one-shot", "personalised_type": "personalised one-shot"}
#: Our aspect -> the authors' name and statement (prompt.py's aspect_description).
AUTHORS_ASPECTS = {
    "persuasiveness": ("Persuasiveness", ASPECT_STATEMENTS["persuasiveness"]),
    "transparency": ("Transparency", ASPECT_STATEMENTS["transparency"]),
    "accuracy": ("Accuracy", ASPECT_STATEMENTS["accuracy"]),
    "satisfaction": ("Satisfactory", ASPECT_STATEMENTS["satisfaction"]),
}
#: Where a request built here still differs from what the authors' code sends (shown in the book).
AUTHORS_DIFFERENCES = (
    ("Model wrapping", "their local models get a hand-written chat format per model (Qwen with a system line); "
                       "here the model's own chat template wraps one user message, with no system message"),
    ("Whitespace", "their prompt starts with a newline and ends with four spaces; a message here is stripped of "
                   "its leading and trailing blank lines"),
    ("Examples", "their examples come from Python's unseeded random.choice; here from a seeded generator, so the "
                 "example movies differ from theirs (the rule that picks them is the same)"),
    ("Evaluated texts", "they judge every text but the example movies'; here a sample of whole (user, movie) pairs "
                        "whose example movies lie outside the sample"),
    ("Profile text", "their user_demo.csv values go in as stored (\"&lt;100\"); here HTML entities are decoded "
                     "(\"<100\")"),
    ("Sampling", "theirs: greedy, top_p 0.95, repetition_penalty 1.2, up to 512 tokens (vLLM); here the same "
                 "options on llama.cpp, with the reply length the judge's configuration gives"),
    ("Reading replies", "theirs: the first four single digits separated by whitespace (multiple aspects), the last "
                        "digit of the reply (one aspect); here the same, except that a digit must stand alone and "
                        "lie in 1-5, and the last-digit rule skips list numbers, scales (1-5) and denominators "
                        "(out of 5) echoed from the prompt (their rule reads the 5 of an echoed 1-5 as a score)"),
)


def template_name(aspect_mode: str, setting: str) -> str:
    """``zhang_<multi|single>_<zero_shot|one_shot|personalised>``."""
    if aspect_mode not in ASPECT_MODES:
        raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    return f"zhang_{aspect_mode}_{setting}"


def evaluator_judge(name: str) -> str:
    """The model label of an evaluator's row name (``evaluator_name``'s inverse): "smollm2-135m (M, zero-shot)" ->
    "smollm2-135m"."""
    return name.rsplit(" (", 1)[0] if name.endswith(")") else name


def evaluator_name(model_label: str, aspect_mode: str, setting: str) -> str:
    """Row name in result tables, e.g. ``smollm2-135m (M, zero-shot)`` — (S)/(M) as in the paper's Table 1. The
    authors' prompts (``setting`` one of ``AUTHORS_SETTINGS``, optionally + ``PROFILE_SUFFIX``) are named e.g.
    ``smollm2-135m (M, one-shot + profile, authors' prompt)``."""
    mode = "M" if aspect_mode == "multi" else "S"
    base = setting.removesuffix(PROFILE_SUFFIX)
    if base in AUTHORS_SETTINGS:
        profile = " + profile" if setting.endswith(PROFILE_SUFFIX) else ""
        return f"{model_label} ({mode}, {_AUTHORS_LABELS[base]}{profile}, authors' prompt)"
    return f"{model_label} ({mode}, {_SETTING_LABELS[setting]})"


#: The suffix of the evaluator rows that read the authors' prompts' replies again, by aspect name.
READ_BY_NAME = ", read by name"


def distinct_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that read replies no earlier run read: those whose ``rereads`` is empty (a table written before the
    column existed marks a re-reading by its name's suffix ", read by name")."""
    if "rereads" in runs.columns:
        return runs[runs["rereads"].fillna("").eq("")]
    return runs[~runs["evaluator"].str.endswith(READ_BY_NAME)]


# --------------------------------------------------------------------------------------------------------------------
# Sample and examples
# --------------------------------------------------------------------------------------------------------------------
def sample_pairs(study: ExplanationStudy, n_users: int, pairs_per_user: int, seed: int = 0) -> np.ndarray:
    """row_ids of a reproducible sample made of whole (user, movie) pairs, so every level of the meta-evaluation is
    defined on it: ``n_users`` users drawn at random, ``pairs_per_user`` of each one's movies drawn at random, all
    explanations of those pairs. Sorted by row_id."""
    ratings = study.user_ratings
    rng = np.random.default_rng(seed)
    users = np.sort(ratings["user_id"].unique())
    if n_users > len(users):
        raise ValueError(f"n_users={n_users} but the study has {len(users)} users")
    chosen_users = rng.choice(users, size=n_users, replace=False)
    rows: list[np.ndarray] = []
    for user in chosen_users:
        mine = ratings[ratings["user_id"] == user]
        movies = np.sort(mine["item_id"].unique())
        take = rng.choice(movies, size=min(pairs_per_user, len(movies)), replace=False)
        rows.append(mine.loc[mine["item_id"].isin(take), "row_id"].to_numpy())
    return np.sort(np.concatenate(rows))


def _by_row_id(frame: pd.DataFrame, *columns: str) -> dict[int, tuple]:
    """row_id -> the values of ``columns`` in ``frame``'s row. Builders look texts up here, once per table: a pandas
    ``.loc`` per text made a paper-scale set of prompts take tens of seconds."""
    return dict(zip(frame["row_id"].tolist(), zip(*(frame[column].tolist() for column in columns))))


def choose_examples(study: ExplanationStudy, row_ids: Sequence[int], setting: str, seed: int = 0) -> pd.Series:
    """The example row_id for each target row (index: target row_id; NaN-free, rows without an eligible example
    are absent). ``setting`` "one_shot": same explanation system, another user; "personalised": same user, same
    system, another movie. Candidates need all four user ratings. Seeded (numpy PCG64)."""
    if setting not in ("one_shot", "personalised"):
        raise ValueError(f"examples exist for 'one_shot' and 'personalised', not {setting!r}")
    ratings = study.user_ratings
    complete = ratings.dropna(subset=list(ASPECTS))
    # per explanation system, its candidates' user, movie and row_id in file order (the order the draw indexes)
    by_type = {kind: (group["user_id"].to_numpy(), group["item_id"].to_numpy(), group["row_id"].to_numpy())
               for kind, group in complete.groupby("explanation_type")}
    targets = _by_row_id(ratings, "explanation_type", "user_id", "item_id")
    rng = np.random.default_rng(seed)
    chosen: dict[int, int] = {}
    for row_id in (int(r) for r in row_ids):
        kind, user, item = targets[row_id]
        if kind not in by_type:
            continue
        users, items, candidates = by_type[kind]
        if setting == "personalised":
            candidates = candidates[(users == user) & (items != item)]
        else:
            candidates = candidates[users != user]
        if len(candidates):
            chosen[row_id] = int(candidates[rng.integers(len(candidates))])
    return pd.Series(chosen, name="example_row_id", dtype="int64").rename_axis("row_id")


# --------------------------------------------------------------------------------------------------------------------
# Requests and parsing
# --------------------------------------------------------------------------------------------------------------------
@dataclass
class ExplanationPrompts:
    """Requests of one (aspect mode, setting) plus what could not be asked.

    requests:   the JudgeRequests (keys as in the module docstring).
    template:   the template name (use it as ``JudgeConfig.prompt``).
    skipped:    target row_ids with no eligible example (personalised / one-shot only).
    """

    aspect_mode: str
    setting: str
    template: str
    requests: list[JudgeRequest]
    skipped: list[int]


def _title(aspect: str) -> str:
    return aspect.capitalize()


def build_requests(
    study: ExplanationStudy,
    row_ids: Sequence[int],
    aspect_mode: str = "multi",
    setting: str = "zero_shot",
    *,
    seed: int = 0,
    aspects: Sequence[str] = ASPECTS,
) -> ExplanationPrompts:
    """Render the prompts of ``row_ids`` for one aspect mode and setting (examples chosen with ``seed``)."""
    name = template_name(aspect_mode, setting)
    template = load_template(name)
    texts = _by_row_id(study.explanations, "movie_title", "explanation_text")
    ratings = _by_row_id(study.user_ratings, *ASPECTS)
    examples = choose_examples(study, row_ids, setting, seed).to_dict() if setting != "zero_shot" else None
    requests: list[JudgeRequest] = []
    skipped: list[int] = []
    for row_id in (int(r) for r in row_ids):
        movie, explanation = texts[row_id]
        fields = {"movie": movie, "explanation": explanation}
        meta = {"row_id": row_id, "setting": setting, "aspect_mode": aspect_mode}
        example_fields: dict[str, object] = {}
        if examples is not None:
            if row_id not in examples:
                skipped.append(row_id)
                continue
            example_id = int(examples[row_id])
            meta["example_row_id"] = example_id
            example_movie, example_explanation = texts[example_id]
            example_fields = {"example_movie": example_movie, "example_explanation": example_explanation}
            example_ratings = {a: int(value) for a, value in zip(ASPECTS, ratings[example_id])}
        if aspect_mode == "multi":
            if examples is not None:
                example_fields.update({f"example_{a}": example_ratings[a] for a in ASPECTS})
            requests.append(JudgeRequest(key=str(row_id), messages=fill_template(template, **fields, **example_fields),
                                         meta=meta))
            continue
        for aspect in aspects:
            single = {"aspect_title": _title(aspect), "aspect_statement": ASPECT_STATEMENTS[aspect]}
            if examples is not None:
                single["example_score"] = example_ratings[aspect]
            requests.append(JudgeRequest(key=f"{row_id}:{aspect}",
                                         messages=fill_template(template, **fields, **example_fields, **single),
                                         meta={**meta, "aspect": aspect}))
    return ExplanationPrompts(aspect_mode, setting, name, requests, skipped)


def parser_for(aspect_mode: str):
    """The reply parser: four named integer scores (multi) or one score (single), 1–5, NaN when unreadable."""
    if aspect_mode == "multi":
        return functools.partial(parse_aspect_scores, aspects=list(ASPECTS), low=1, high=5)
    if aspect_mode == "single":
        return functools.partial(parse_likert, low=1, high=5)
    raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")


def scores_from_run(run, prompts: ExplanationPrompts, evaluator: str,
                    fill_unparsable: float | None = None) -> pd.DataFrame:
    """Long scores (row_id, evaluator, aspect, score) from a ``JudgeRun`` of ``prompts.requests``; a score is the
    mean over the run's samples. ``fill_unparsable`` is passed to ``JudgeRun.scores`` (None keeps NaN; 0.0 is the
    paper's "parse failure -> 0")."""
    means = run.scores(fill_unparsable=fill_unparsable)
    by_key = {request.key: request.meta for request in prompts.requests}
    rows = []
    if prompts.aspect_mode == "multi":
        if isinstance(means, pd.Series):  # no reply held aspect scores (e.g. a plan, which asks nothing): all NaN
            means = pd.DataFrame(np.nan, index=means.index, columns=list(ASPECTS))
        values = means[list(ASPECTS)].to_numpy(dtype=float)
        rows = [(by_key[key]["row_id"], evaluator, aspect, float(value))
                for key, scores in zip(means.index, values) for aspect, value in zip(ASPECTS, scores)]
    else:
        for key, value in means.items():
            rows.append((by_key[key]["row_id"], evaluator, by_key[key]["aspect"], float(value)))
    return pd.DataFrame(rows, columns=["row_id", "evaluator", "aspect", "score"])


def first_users(study: ExplanationStudy, row_ids: Sequence[int], n_users: int) -> np.ndarray:
    """The row_ids among ``row_ids`` of their first ``n_users`` users (users ordered by their first row_id), every
    pair of each: a nested, smaller sample for the costlier single-aspect prompts that keeps several pairs per user,
    so that its user and pair levels of the meta-evaluation differ."""
    ratings = study.user_ratings.set_index("row_id").loc[np.sort(np.asarray(row_ids, dtype=int))]
    users = set(list(dict.fromkeys(ratings["user_id"]))[:n_users])
    return ratings.index.to_numpy()[ratings["user_id"].isin(users).to_numpy()]


# --------------------------------------------------------------------------------------------------------------------
# The authors' own prompts
# --------------------------------------------------------------------------------------------------------------------
# Blocks their prompt.py and annotation scripts insert into the templates, wording and spacing as there.
_AUTHORS_PROFILE = ("You are a user of this type:\n    \n        Your gender is : {gender}. \n        Your interest in "
                    "movies is {interest}.\n        Number of movies you watch per year is : {per_year}.\n        The "
                    "total number of films you've watched is around : {total}\n    ")
_AUTHORS_CASE = (" \n    Movie:{movie}\n    Explanation:{explanation}\n        -Persuasiveness : {persuasiveness}\n"
                 "        -Transparency : {transparency}\n        -Accuracy : {accuracy}\n"
                 "        -Satisfactory : {satisfaction}")
_AUTHORS_CASES_HEADER = {"type": "Previous cases of ratings as reference:\n    ",
                         "personalised_type": "Previous cases of the user's ratings as reference:\n    "}


def _authors_example_movies(study: ExplanationStudy, row_ids: Sequence[int], setting: str,
                            seed: int) -> dict[int, tuple[int, int]]:
    """target row_id -> (user_id, item_id) of the movie whose explanations are the examples (see the module
    docstring); the movie is never one of the evaluated pairs."""
    ratings = study.user_ratings
    targets = ratings[ratings["row_id"].isin([int(r) for r in row_ids])]
    evaluated = set(zip(targets["user_id"], targets["item_id"]))
    rng = np.random.default_rng(seed)
    rows_of_user = ratings.groupby("user_id").indices
    items = ratings["item_id"].to_numpy()

    def random_movie(user) -> tuple[int, int] | None:
        movies = [m for m in np.sort(pd.unique(items[rows_of_user[user]]))
                  if (user, m) not in evaluated]
        return (user, int(movies[rng.integers(len(movies))])) if movies else None

    if setting == "type":
        first_user = ratings.sort_values("row_id")["user_id"].iloc[0]
        movie = random_movie(first_user)
        return {int(r): movie for r in targets["row_id"]} if movie else {}
    per_user = {user: random_movie(user) for user in sorted(targets["user_id"].unique())}
    return {int(r): per_user[u] for r, u in zip(targets["row_id"], targets["user_id"]) if per_user[u]}


def _authors_cases(study: ExplanationStudy, row_ids: Sequence[int], setting: str, seed: int) -> dict[int, str]:
    """target row_id -> the cases block of its prompt ("" for "none")."""
    if setting == "none":
        return {int(r): "" for r in row_ids}
    ratings = study.user_ratings
    kinds = _by_row_id(ratings, "explanation_type")
    scores_of = _by_row_id(ratings, *ASPECTS)
    texts = _by_row_id(study.explanations, "movie_title", "explanation_text")
    movies = _authors_example_movies(study, row_ids, setting, seed)
    by_pair_type = {(u, i, t): row_id for row_id, u, i, t in
                    zip(ratings["row_id"], ratings["user_id"], ratings["item_id"], ratings["explanation_type"])}
    blocks = {}
    for row_id in (int(r) for r in row_ids):
        case = ""
        if row_id in movies:
            example = by_pair_type.get((*movies[row_id], kinds[row_id][0]))
            if example is not None:
                scores = {a: int(3 if pd.isna(v) else v) for a, v in zip(ASPECTS, scores_of[example])}
                movie, explanation = texts[example]
                case = _AUTHORS_CASE.format(movie=one_line(str(movie)), explanation=one_line(str(explanation)),
                                            **scores)
        blocks[row_id] = _AUTHORS_CASES_HEADER[setting] + case
    return blocks


def _authors_profiles(study: ExplanationStudy) -> dict:
    return {row.user_id: _AUTHORS_PROFILE.format(gender=row.gender, interest=row.movie_interest,
                                                 per_year=row.movies_per_year, total=row.movies_watched_total)
            for row in study.users.itertuples(index=False)}


def build_authors_requests(study: ExplanationStudy, row_ids: Sequence[int], aspect_mode: str = "multi",
                           setting: str = "none", *, seed: int = 0,
                           aspects: Sequence[str] = ASPECTS) -> ExplanationPrompts:
    """The authors' prompts for ``row_ids`` (module docstring). ``setting``: a key of ``AUTHORS_SETTINGS``, with
    ``PROFILE_SUFFIX`` appended for the user-profile ablation. Keys as ``build_requests``'; every target gets a
    request (a missing example leaves the case empty, as in the authors' code)."""
    if aspect_mode not in ASPECT_MODES:
        raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")
    base = setting.removesuffix(PROFILE_SUFFIX)
    if base not in AUTHORS_SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(AUTHORS_SETTINGS)} (optionally + "
                         f"{PROFILE_SUFFIX!r}), got {setting!r}")
    name = f"zhang_authors_{aspect_mode}"
    template = load_template(name)
    texts = _by_row_id(study.explanations, "movie_title", "explanation_text", "user_id")
    cases = _authors_cases(study, row_ids, base, seed)
    profiles = _authors_profiles(study) if setting.endswith(PROFILE_SUFFIX) else {}
    requests: list[JudgeRequest] = []
    for row_id in (int(r) for r in row_ids):
        movie, explanation, user = texts[row_id]
        fields = {"movie": movie, "explanation": explanation, "user_profile": profiles.get(user, ""),
                  "cases": cases[row_id]}
        meta = {"row_id": row_id, "setting": setting, "aspect_mode": aspect_mode}
        if aspect_mode == "multi":
            requests.append(JudgeRequest(key=str(row_id), messages=fill_template(template, **fields), meta=meta))
            continue
        for aspect in aspects:
            title, statement = AUTHORS_ASPECTS[aspect]
            requests.append(JudgeRequest(key=f"{row_id}:{aspect}", meta={**meta, "aspect": aspect},
                                         messages=fill_template(template, **fields, aspect_title=title,
                                                                aspect_statement=statement)))
    return ExplanationPrompts(aspect_mode, setting, name, requests, [])


# Four single digits separated by single whitespace characters ("Summary: 4 3 4 5"), none part of a longer number.
_FOUR_DIGITS = re.compile(r"(?<![\d.,+\-−])(?=([0-9])\s([0-9])\s([0-9])\s([0-9])(?![0-9]|[.,][0-9]))")
# What the last-digit rule would misread as a score beyond what ``score_text`` blanks: list numbers at a line start
# ("2. Transparency", "3) ").
_LINE_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s", re.MULTILINE)


def parse_authors_reply(text: str | None, aspect_mode: str) -> dict[str, float] | float:
    """The authors' reading of a reply: "multi", the first four digits separated by single whitespace characters
    ("Summary: 4 3 4 5"), one per aspect in their order; "single", the last digit of the reply. Stricter than
    theirs where their rule reads what is no score, by the package's grammar (``recjudge.llm.parsing``): a digit is
    one written alone (not part of 2019, 3.5 or 1e1) and no scale's bound ("2-5", "out of 7"), and the last one
    decides only as a score token in 1-5 (not signed, not another scale's numerator, "4/10", not "1%"); neither rule
    reads what ``score_text`` blanks (the prompt's echo,
    a "Movie:" or "Explanation:" line, list numbers, a legend, the 1-5 scale's notation, the reasons after an N/A).
    A run of four with a 0 or 6-9 in it, such as a spaced-out year, is skipped."""
    cleaned = score_text(text or "", 1, 5)
    if aspect_mode == "multi":
        for match in _FOUR_DIGITS.finditer(cleaned):
            digits = [int(v) for v in match.groups()]
            if all(1 <= v <= 5 for v in digits):
                return {a: float(v) for a, v in zip(ASPECTS, digits)}
        return {a: math.nan for a in ASPECTS}
    if aspect_mode == "single":
        lone_digits = [value for value in values(_LINE_NUMBER.sub(" ", cleaned), 1, 5)
                       if len(value.digits) == 1 and not value.bounds]
        return math.nan if not lone_digits or lone_digits[-1].score is None else lone_digits[-1].score
    raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")


def authors_parser(aspect_mode: str):
    """``parse_authors_reply`` for one aspect mode (the engine's parser argument)."""
    if aspect_mode not in ASPECT_MODES:
        raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")
    return functools.partial(parse_authors_reply, aspect_mode=aspect_mode)


def names_parser(aspect_mode: str):
    """A second reading of replies to the authors' prompts, by aspect name ("Persuasiveness: 4", their names, so
    "Satisfactory" for satisfaction) for multiple aspects and ``parse_likert`` for one; the authors' own rule
    (``authors_parser``) reads only a run of four digits."""
    if aspect_mode == "single":
        return functools.partial(parse_likert, low=1, high=5)
    if aspect_mode != "multi":
        raise ValueError(f"aspect_mode must be one of {ASPECT_MODES}, got {aspect_mode!r}")
    names = {title.lower(): aspect for aspect, (title, _) in AUTHORS_ASPECTS.items()}

    def parse(text: str | None) -> dict[str, float]:
        read = parse_aspect_scores(text, aspects=list(names), low=1, high=5)
        return {names[name]: value for name, value in read.items()}

    return parse
