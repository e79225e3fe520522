"""Auxiliary data in the serendipity judge's prompt (Kang et al. 2025, RQ2, section 4, Table 3): each kind of datum
as a prompt fragment, built from Serendipity-2018 and stated with its source.

Kang et al. describe the data in words only; the fragments and their wording are **reconstructions** (template
``kang_fewshot_aux``: the 5-shot prompt with one "Label: value" line per datum between the history and the
recommended item, and a sentence in the Background naming the data given).

========================= ===========================================================================================
setting                   datum and source
========================= ===========================================================================================
Pop (popularity)          "percentage of users who rated the movie". ``training.csv`` is absent from the public copy,
                          so the population is the caller's rating table (the book: MovieLens latest-small, the
                          users who rated each movie among all its users; a movie absent from it counts 0%).
Sim (similarity)          "minimum collaborative-based Jaccard distance between the target item and the user's
                          historical interactions": 1 - |U_i ∩ U_j| / |U_i ∪ U_j| with U the set of users who rated
                          the item in the same rating table, minimised over the history items; unknown without history
                          or when the target or every history item is absent from the table.
Rating (interaction type) the history with the user's own rating of each movie (Table 4's "Rating" row).
L-prof. (long-term)       an LLM-written summary of the user's whole earlier history (template
                          ``kang_profile_long``), generated through the judge engine and stored like any judgment.
S-prof. (short-term)      the interactions of the ``SHORT_TERM_DAYS`` days before the target (the paper: "past 2-4
                          weeks"), aggregated: how many, their mean rating, their most frequent genres.
k (interaction length)    the last k interactions as history (the sweep of Figure 4), no auxiliary line.
========================= ===========================================================================================

Combinations are the union of the lines (Figures 2-3: "ALL").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from recjudge import papers

#: Days before the target whose interactions form the short-term profile (the paper: the past 2-4 weeks).
SHORT_TERM_DAYS = 28
#: Most frequent genres named in the short-term profile.
PROFILE_GENRES = 3
#: Longest long-term profile text kept from the summariser's reply (characters).
PROFILE_MAX_CHARS = 300
COMPONENTS = ("popularity", "similarity", "rating", "long_profile", "short_profile")
LABELS = {"popularity": "Pop", "similarity": "Sim", "rating": "Rating", "long_profile": "L-prof.",
          "short_profile": "S-prof."}
DESCRIPTIONS = {
    "popularity": "the popularity of the recommended movie",
    "similarity": "its similarity to the movies in your history",
    "rating": "your rating of each movie in your history",
    "long_profile": "a summary of your long-term preferences",
    "short_profile": "a summary of your recent activity",
}


@dataclass(frozen=True)
class Setting:
    """One RQ2 condition: the auxiliary components in the prompt and the history length (None: the default)."""

    name: str
    components: tuple[str, ...] = ()
    k: int | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.components) - set(COMPONENTS))
        if unknown:
            raise ValueError(f"setting {self.name!r}: unknown component(s) {unknown}; known: {list(COMPONENTS)}")


#: Name of the baseline without auxiliary data (the paper's "NA"; spelled out so CSV readers do not take it for a
#: missing value). ``settings_by_name`` also accepts "NA".
NA = "none (NA)"

#: The settings of Figures 2-3 and Table 4 (the length sweep is added by ``length_settings``).
SETTINGS: tuple[Setting, ...] = (
    Setting(NA),
    Setting("Pop", ("popularity",)),
    Setting("Sim", ("similarity",)),
    Setting("Pop + Sim", ("popularity", "similarity")),
    Setting("Rating", ("rating",)),
    Setting("S-prof.", ("short_profile",)),
    Setting("L-prof.", ("long_profile",)),
    Setting("S-prof. + L-prof.", ("short_profile", "long_profile")),
)


def length_settings(ks: Sequence[int]) -> list[Setting]:
    """One setting per history length k (no auxiliary line)."""
    return [Setting(f"k={k}", (), int(k)) for k in ks]


def settings_by_name(names: Sequence[str]) -> list[Setting]:
    """The named settings of ``SETTINGS``, or "k=N" for a history length; ValueError naming an unknown one."""
    known = {s.name: s for s in SETTINGS}
    known["NA"] = known[NA]
    out = []
    for name in names:
        if name in known:
            out.append(known[name])
        elif name.startswith("k=") and name[2:].isdigit():
            out.extend(length_settings([int(name[2:])]))
        else:
            raise ValueError(f"unknown auxiliary-data setting {name!r}; known: {list(known)} or 'k=N'")
    return out


# ---------------------------------------------------------------------------------------------------- the data

def item_popularity_percent(ratings: pd.DataFrame, item_ids: Sequence) -> pd.Series:
    """Percentage of the users of ``ratings`` (user_id, item_id) who rated each of ``item_ids`` (0 when none did)."""
    missing = sorted({"user_id", "item_id"} - set(ratings.columns))
    if missing:
        raise KeyError(f"ratings frame lacks column(s) {missing}")
    n_users = ratings["user_id"].nunique()
    if n_users == 0:
        raise ValueError("ratings frame is empty; popularity needs a population of users")
    raters = ratings.groupby("item_id")["user_id"].nunique()
    return pd.Series(100.0 * raters.reindex(list(item_ids)).fillna(0).to_numpy() / n_users,
                     index=pd.Index(list(item_ids), name="item_id"), name="popularity_pct")


def grouped_lists(frame: pd.DataFrame, by, columns) -> dict:
    """Per group of ``frame`` by ``by`` (a column or a list of them; the key a value or a tuple as pandas gives it):
    the values of ``columns`` in the frame's row order, a list of values for one column name, a list of tuples for a
    list of names. Read from arrays by group positions: iterating a groupby's sub-frames took a second per table."""
    names = [columns] if isinstance(columns, str) else list(columns)
    arrays = [frame[name].to_numpy() for name in names]
    out = {}
    for key, positions in frame.groupby(by, sort=False).indices.items():
        values = [array[positions].tolist() for array in arrays]
        out[key] = values[0] if isinstance(columns, str) else list(zip(*values))
    return out


def jaccard_distance(a: set, b: set) -> float:
    """1 - |a ∩ b| / |a ∪ b|; NaN when both sets are empty."""
    union = len(a | b)
    return float("nan") if union == 0 else 1.0 - len(a & b) / union


def min_jaccard_distance(ratings: pd.DataFrame, targets: pd.DataFrame, history: pd.DataFrame) -> pd.Series:
    """Per target row (user_id, item_id): the smallest collaborative Jaccard distance between the target item and
    its history items (``history``: user_id, item_id, history_item_id), rater sets from ``ratings``. NaN when the
    target has no history, or the target or all its history items have no rater in ``ratings``."""
    raters = {item: set(users) for item, users in grouped_lists(ratings, "item_id", "user_id").items()}
    by_target = grouped_lists(history, ["user_id", "item_id"], "history_item_id")
    values = []
    for user, item in targets[["user_id", "item_id"]].itertuples(index=False):
        target_raters = raters.get(item)
        distances = [jaccard_distance(target_raters, raters[h]) for h in by_target.get((user, item), [])
                     if target_raters and h in raters]
        values.append(min(distances) if distances else np.nan)
    return pd.Series(values, index=targets.index, name="similarity_jaccard")


def rated_history_texts(targets: pd.DataFrame, history: pd.DataFrame, movies: pd.DataFrame) -> pd.Series:
    """The history text with the user's rating of each movie: "Title (year) (rated 4.5/5)", oldest first."""
    from recjudge.prompts.serendipity import EMPTY_HISTORY, MovieNames, movie_history_text

    movies = MovieNames(movies)
    ordered = history.sort_values(["user_id", "item_id", "position"]) if len(history) else history
    by_target = grouped_lists(ordered, ["user_id", "item_id"], ["history_item_id", "history_rating"])
    texts = []
    for user, item in targets[["user_id", "item_id"]].itertuples(index=False):
        pairs = by_target.get((user, item), [])
        parts = [movie_history_text([h], movies) + ("" if pd.isna(r) else f" (rated {float(r):g}/5)")
                 for h, r in pairs]
        texts.append(", ".join(parts) if parts else EMPTY_HISTORY)
    return pd.Series(texts, index=targets.index, name="history_rated")


def short_term_profile_texts(targets: pd.DataFrame, interactions: pd.DataFrame, movies: pd.DataFrame,
                             days: int = SHORT_TERM_DAYS) -> pd.Series:
    """The short-term profile of each target: the user's interactions in the ``days`` days before the target's
    timestamp (strictly earlier, target item excluded), aggregated as "N movies rated in the past D days, mean
    rating R; most frequent genres: G (n), ..."; "no movie rated in the past D days" when none."""
    for name, frame in (("targets", targets), ("interactions", interactions)):
        missing = sorted({"user_id", "item_id", "timestamp"} - set(frame.columns))
        if missing:
            raise KeyError(f"{name} frame lacks column(s) {missing}")
    from recjudge.serendipity.ground_truth import comparable_times

    window = pd.Timedelta(days=days)
    # Per user: timestamps (sorted), items and ratings as arrays, so that each target costs a binary search and a
    # slice (a frame per user and a filtered frame per target took seconds at paper scale)
    times_all = comparable_times(interactions["timestamp"])
    items_all = interactions["item_id"].to_numpy()
    ratings_all = (interactions["rating"].to_numpy(dtype=float) if "rating" in interactions.columns
                   else np.full(len(interactions), np.nan))
    by_user = {}
    for user, positions in interactions.groupby("user_id", sort=False).indices.items():
        positions = positions[np.argsort(times_all[positions], kind="stable")]
        by_user[user] = (times_all[positions], items_all[positions], ratings_all[positions])
    genres_of: dict = {}  # each movie's genres looked up once: the same movies recur in every user's window
    texts = []
    for user, item, start_time, end_time in zip(targets["user_id"].tolist(), targets["item_id"].tolist(),
                                                comparable_times(targets["timestamp"] - window),
                                                comparable_times(targets["timestamp"])):
        recent_items = recent_ratings = ()
        if user in by_user:  # the window [when - window, when) by binary search in the sorted timestamps
            times, items, ratings = by_user[user]
            start, end = np.searchsorted(times, [start_time, end_time], side="left")
            kept = items[start:end] != item
            recent_items, recent_ratings = items[start:end][kept], ratings[start:end][kept]
        if not len(recent_items):
            texts.append(f"no movie rated in the past {days} days")
            continue
        genres: Counter = Counter()
        for movie in recent_items.tolist():
            if movie not in genres_of:
                genres_of[movie] = ([g for g in (movies.loc[movie, "genres"] or ()) if g != "(no genres listed)"]
                                    if movie in movies.index else [])
            genres.update(genres_of[movie])
        n = len(recent_items)
        text = f"{n} movie{'s' if n != 1 else ''} rated in the past {days} days"
        rated = recent_ratings[~np.isnan(recent_ratings)]
        if len(rated):
            text += f", mean rating {rated.sum() / len(rated):.1f}/5"
        if genres:
            top = sorted(genres.items(), key=lambda kv: (-kv[1], kv[0]))[:PROFILE_GENRES]
            text += "; most frequent genres: " + ", ".join(f"{g} ({n})" for g, n in top)
        texts.append(text)
    return pd.Series(texts, index=targets.index, name="short_profile")


def clean_profile_reply(text: str | None) -> str:
    """The long-term profile from the summariser's reply: whitespace collapsed, cut at ``PROFILE_MAX_CHARS`` on a
    word boundary; "(no profile)" for an empty reply."""
    words = " ".join(str(text or "").split())
    if not words:
        return "(no profile)"
    if len(words) > PROFILE_MAX_CHARS:
        words = words[:PROFILE_MAX_CHARS].rsplit(" ", 1)[0] + " ..."
    return words


def long_profile_requests(targets: pd.DataFrame, history: pd.DataFrame, movies: pd.DataFrame,
                          domain: str = "movies"):
    """One summarisation request (template ``kang_profile_long``) per target that has an earlier history; the
    history given is ``history`` with ratings (pass the *whole* earlier history). Key "user_id:item_id"."""
    from recjudge.llm import JudgeRequest
    from recjudge.prompts import render, template_fields
    from recjudge.prompts.serendipity import EMPTY_HISTORY, domain_fields, request_key

    texts = rated_history_texts(targets, history, movies)
    needed = template_fields("kang_profile_long")
    fields = {k: v for k, v in domain_fields(domain).items() if k in needed}
    return [JudgeRequest(key=request_key(u, i), messages=render("kang_profile_long", **fields, history=text),
                         meta={"user_id": u, "item_id": i})
            for (u, i), text in zip(targets[["user_id", "item_id"]].itertuples(index=False), texts)
            if text != EMPTY_HISTORY]


# ------------------------------------------------------------------------------------------------- fragments

def popularity_fragment(percent: float) -> str:
    if percent is None or pd.isna(percent):
        return "Popularity of the recommended movie: unknown\n"
    return f"Popularity of the recommended movie: rated by {percent:.1f}% of users\n"


def similarity_fragment(distance: float) -> str:
    if distance is None or pd.isna(distance):
        return "Similarity to your history: unknown (no earlier movie to compare)\n"
    return (f"Similarity to your history: smallest Jaccard distance {distance:.2f} to a movie you rated "
            "(0 = rated by exactly the same users, 1 = no user in common)\n")


def long_profile_fragment(text: str) -> str:
    return f"Your long-term profile: {text}\n"


def short_profile_fragment(text: str) -> str:
    return f"Your short-term profile: {text}\n"


FRAGMENTS = {"popularity": ("popularity_pct", popularity_fragment),
             "similarity": ("similarity_jaccard", similarity_fragment),
             "long_profile": ("long_profile", long_profile_fragment),
             "short_profile": ("short_profile", short_profile_fragment)}


def auxiliary_block(values: Mapping[str, object], components: Sequence[str]) -> str:
    """The auxiliary lines of one Response block: one fragment per component in ``COMPONENTS`` order ("rating"
    changes the history text instead and has no line). ``values`` maps the columns named in ``FRAGMENTS``."""
    lines = []
    for component in COMPONENTS:
        if component in components and component in FRAGMENTS:
            column, fragment = FRAGMENTS[component]
            if column not in values:
                raise KeyError(f"auxiliary component {component!r} needs the value {column!r}")
            lines.append(fragment(values[column]))
    return "".join(lines)


def auxiliary_description(components: Sequence[str]) -> str:
    """The Background sentence naming the auxiliary data ("" for none)."""
    named = [DESCRIPTIONS[c] for c in COMPONENTS if c in components]
    if not named:
        return ""
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return f" You are also given {listed}."


def auxiliary_messages(components: Sequence[str], history: str, item: str, values: Mapping[str, object],
                       examples: Sequence[Mapping[str, object]], domain: str = "movies"):
    """Messages of template ``kang_fewshot_aux``: ``examples`` (5) carry history, item, rating and their own
    auxiliary ``values`` mapping."""
    from recjudge.prompts import fill_template, load_template
    from recjudge.prompts.serendipity import N_SHOTS, _rating_text, domain_fields

    if len(examples) != N_SHOTS:
        raise ValueError(f"kang_fewshot_aux needs exactly {N_SHOTS} examples, got {len(examples)}")
    fields: dict[str, object] = {**domain_fields(domain), "history": history, "item": item,
                                 "auxiliary": auxiliary_block(values, components),
                                 "auxiliary_description": auxiliary_description(components)}
    for number, example in enumerate(examples, start=1):
        fields[f"example_{number}_history"] = example["history"]
        fields[f"example_{number}_item"] = example["item"]
        fields[f"example_{number}_rating"] = _rating_text(example["rating"])
        fields[f"example_{number}_auxiliary"] = auxiliary_block(example["values"], components)
    template = load_template("kang_fewshot_aux")
    return fill_template(template, **{k: v for k, v in fields.items() if k in template.fields})


# --------------------------------------------------------------------------------------------- study wiring

def auxiliary_table(answers: pd.DataFrame, history: pd.DataFrame, movies: pd.DataFrame,
                    ratings: pd.DataFrame, interactions: pd.DataFrame | None = None,
                    days: int = SHORT_TERM_DAYS) -> pd.DataFrame:
    """Every non-LLM auxiliary datum of every answer (index aligned with ``answers``): popularity_pct,
    similarity_jaccard, history_rated, short_profile. ``ratings``: the population for popularity and similarity;
    ``interactions`` (default: the answers) for the short-term profile."""
    out = pd.DataFrame(index=answers.index)
    out["popularity_pct"] = item_popularity_percent(ratings, answers["item_id"]).to_numpy()
    out["similarity_jaccard"] = min_jaccard_distance(ratings, answers, history)
    out["history_rated"] = rated_history_texts(answers, history, movies)
    out["short_profile"] = short_term_profile_texts(answers, answers if interactions is None else interactions,
                                                    movies, days)
    return out


def setting_requests(setting: Setting, rows: pd.DataFrame, examples: pd.DataFrame, aux: pd.DataFrame,
                     history: pd.DataFrame, movies: pd.DataFrame, answers: pd.DataFrame | None = None,
                     domain: str = "movies", history_texts: pd.Series | None = None):
    """Judge requests of one setting for ``rows`` (answers to judge) with the 5 few-shot ``examples`` (answers with
    ``level``), both index-aligned with ``aux`` (``auxiliary_table`` plus ``long_profile`` when used).

    "NA" and the length settings use the plain ``kang_fewshot`` template (so "NA" is exactly the RQ1 few-shot
    judge); the others ``kang_fewshot_aux``. For a length setting, ``answers`` (all answers) provide the
    last-k histories. ``history_texts``: the plain history text of every row and example under ``history``
    (``prompts.serendipity.history_texts``), when the caller built it once for all its settings."""
    from recjudge.llm import JudgeRequest
    from recjudge.prompts import serendipity as prompts

    if setting.k is not None:
        from recjudge.serendipity.ground_truth import last_k_history

        source = answers if answers is not None else pd.concat([rows, examples])
        history = last_k_history(pd.concat([rows, examples]), source, setting.k)
    if not setting.components:
        fewshot = prompts.fewshot_example_fields(examples, history, movies, "level")
        return prompts.serendipity_requests(rows, history, movies, "kang_fewshot", domain, fewshot)
    if "long_profile" in setting.components and "long_profile" not in aux.columns:
        raise KeyError("setting needs the long-term profiles: add a 'long_profile' column to the auxiliary table")

    names = prompts.MovieNames(movies)

    def history_text(frame: pd.DataFrame) -> pd.Series:
        if "rating" in setting.components:
            return aux.loc[frame.index, "history_rated"]
        if history_texts is not None and setting.k is None:
            return history_texts.loc[frame.index]
        return prompts.history_texts(frame, history, names)

    example_texts = history_text(examples)
    shots = [{"history": example_texts[i], "item": prompts.movie_item_text(row["item_id"], names),
              "rating": row["level"], "values": aux.loc[i].to_dict()} for i, row in examples.iterrows()]
    requests = []
    # one row's values a prompt: read as records once, not one .loc (or one row Series) per answer
    values = aux.loc[rows.index].to_dict("records")
    for user, item, text, aux_values in zip(rows["user_id"], rows["item_id"], history_text(rows), values):
        messages = auxiliary_messages(setting.components, text, prompts.movie_item_text(item, names),
                                      aux_values, shots, domain)
        requests.append(JudgeRequest(key=prompts.request_key(user, item), messages=messages,
                                     meta={"user_id": user, "item_id": item, "setting": setting.name}))
    return requests


def kang2025_tables45() -> pd.DataFrame:
    """The paper's Table 4 and Table 5 rows (table, method, dataset, pearson_pct, mae, rmse), numbers as printed
    (``recjudge.papers``: ``kang2025serendipity_tables4_5``)."""
    table = papers.table("kang2025serendipity_tables4_5")
    return table.assign(method=table["method"].replace({"NA": NA}))


#: What Serendipity-2018 and the Taobao file cannot support, with the reason (Kang et al. RQ2 and RQ3).
NOT_SUPPORTED = (
    ("Taobao: LLM judge with any auxiliary datum (Figures 1-5, Table 4 and 5 Taobao rows)",
     "the public file has no item text and no user histories, only anonymised ids; a judge has nothing to read"),
    ("Taobao: demographic data (Figure 1b: age, gender)",
     "the file has no age or gender column (its README reports 7,769 female users, per-user values are absent)"),
    ("Taobao: interaction types click / purchase (Table 4)",
     "the click and purchase flags refer to the recommended item itself, not to a history"),
    ("Taobao: popularity (HOT function flag)", "not in the public file"),
    ("Serendipity-2018: curiosity, Big-Five, demographics", "the survey did not collect them"),
    ("Serendipity-2018: last 10 interactions, long histories (Figure 4 beyond k = 4)",
     "training.csv is absent from the public copy; histories are the user's earlier survey answers (at most 4)"),
    ("Serendipity-2018: popularity as 'percentage of users who rated the movie' in the study's population",
     "training.csv is absent; the percentage is taken over the MovieLens latest-small users instead"),
    ("Category-level data (weekly/hourly frequency, time since last interaction)",
     "the paper omits its results; the histories here are too short to aggregate"),
    ("Qwen2.5-14B/72B, GPT-4 and other judges of the paper",
     "not available offline; a configured API model can be added as a parameter"),
)


def profile_parser(text: str | None) -> float:
    """Parser for the summariser's replies: 1.0 when the reply has text, else NaN (the text itself is the result)."""
    return 1.0 if text and str(text).strip() else float("nan")


@dataclass
class RQ2Run:
    """Scores of every setting on the judged rows, and what was asked.

    scores:          one column per setting name, index = the judged rows' index.
    aux:             the auxiliary table of the judged rows and the few-shot examples (with ``long_profile`` when
                     used).
    reports:         one row per engine run (setting, prompts, from_store, provider_calls, unparsable).
    integer_scores:  in expected-score mode, the same replies read as the papers' judges answer: the most likely
                     score token (``modal_score``); otherwise None.
    readers:         each reader's judge (label -> scores like ``scores``), judged beside the book's judge.
    reader_integers: the same, read as the most likely score token (expected-score mode only).
    """

    scores: pd.DataFrame
    aux: pd.DataFrame
    reports: pd.DataFrame
    integer_scores: pd.DataFrame | None = None
    readers: dict[str, pd.DataFrame] = field(default_factory=dict)
    reader_integers: dict[str, pd.DataFrame] = field(default_factory=dict)


def setting_config(setting: Setting, model: str, scoring: str = "expected"):
    """The book's judge in one setting's role: Kang et al.'s 5-shot prompt (with the auxiliary line when the setting
    has data), ``scoring``, one reply token, temperature 0, one run, seed 0 (a reader's judge plays the same role:
    ``judge_spec.role_of``)."""
    from recjudge.llm import JudgeConfig

    prompt = "kang_fewshot_aux" if setting.components else "kang_fewshot"
    return JudgeConfig(provider="local", model=model, prompt=prompt, scoring=scoring, max_tokens=1, temperature=0.0,
                       runs=1, seed=0)


@dataclass
class SettingPrompts:
    """What every judge of the auxiliary-data grid is asked: the auxiliary table of the judged rows and the few-shot
    examples (``aux``, with ``long_profile`` when used), each setting's requests (``requests``: setting name ->
    ``JudgeRequest`` s, the rows' order), and the reports of the runs that wrote the long-term profiles."""

    aux: pd.DataFrame
    requests: dict[str, list]
    reports: list[dict]


def setting_prompts(study, rows: pd.DataFrame, ratings: pd.DataFrame, settings: Sequence[Setting], *, model: str,
                    mode: str | None = None, profile_max_tokens: int = 48, progress: bool = False) -> SettingPrompts:
    """The requests of every setting on ``rows`` (answers of ``study``, a ``Serendipity2018Study``; the few-shot
    examples are ``study.examples``).  Long-term profiles are generated first by the local model (template
    ``kang_profile_long``, greedy, ``profile_max_tokens``) for the rows and the examples that have an earlier
    history: they are data of the setting, the same for every judge."""
    from recjudge.llm import JudgeConfig, run_judge

    frames = pd.concat([rows, study.examples])
    aux = auxiliary_table(frames, study.history, study.movies, ratings, interactions=study.answers)
    reports = []
    if any("long_profile" in s.components for s in settings):
        requests = long_profile_requests(frames, study.history, study.movies)
        config = JudgeConfig(provider="local", model=model, prompt="kang_profile_long", scoring="generate",
                             max_tokens=profile_max_tokens, temperature=0.0, runs=1, seed=0)
        run = run_judge(config, requests, profile_parser, mode=mode, progress=progress)
        replies = run.table.drop_duplicates("key").set_index("key")["reply"]
        keys = [f"{u}:{i}" for u, i in frames[["user_id", "item_id"]].itertuples(index=False)]
        from recjudge.prompts.serendipity import EMPTY_HISTORY

        aux["long_profile"] = [clean_profile_reply(replies[k]) if k in replies.index else EMPTY_HISTORY
                               for k in keys]
        reports.append({"setting": "long-term profiles (summaries)", "prompts": run.report.n_prompts,
                        "from_store": run.report.n_from_store, "provider_calls": run.report.n_provider_calls,
                        "unparsable": run.report.n_unparsable})
    # the plain history texts are the same in every setting that keeps the default history: built once
    from recjudge.prompts.serendipity import MovieNames, history_texts

    plain_texts = history_texts(frames, study.history, MovieNames(study.movies))
    requests = {setting.name: setting_requests(setting, rows, study.examples, aux, study.history, study.movies,
                                               answers=study.answers, history_texts=plain_texts)
                for setting in settings}
    return SettingPrompts(aux, requests, reports)


def run_settings(study, rows: pd.DataFrame, ratings: pd.DataFrame, settings: Sequence[Setting], *,
                 model: str, judges: Sequence[Mapping] = (), mode: str | None = None, scoring: str = "expected",
                 profile_max_tokens: int = 48, progress: bool = False) -> RQ2Run:
    """Judge ``rows`` (answers of ``study``, a ``Serendipity2018Study``) under every setting (``setting_prompts``)
    with the local judge (``setting_config``), through the judge engine and its store, and with each reader's judge
    of ``judges`` (a chapter's ``judges`` parameter: ``JudgeSpec.to_parameter()`` dicts) in the same role, beside it
    (``RQ2Run.readers``; the reports then name the judge of each run).  The engine asks each job's prompts in prefix
    order."""
    from recjudge.llm import run_judge
    from recjudge.llm.judge_spec import chapter_judge, role_of

    prompts = setting_prompts(study, rows, ratings, settings, model=model, mode=mode,
                              profile_max_tokens=profile_max_tokens, progress=progress)
    reports = list(prompts.reports)
    expected = scoring == "expected"
    scores = pd.DataFrame(index=rows.index)
    integer_scores = pd.DataFrame(index=rows.index) if expected else None
    readers: dict[str, pd.DataFrame] = {}
    reader_integers: dict[str, pd.DataFrame] = {}
    keys = pd.Index([f"{u}:{i}" for u, i in rows[["user_id", "item_id"]].itertuples(index=False)])
    for setting in settings:
        requests = prompts.requests[setting.name]
        own = setting_config(setting, model, scoring)
        asked = [(None, own, None)] + [chapter_judge(judge, **role_of(own)) for judge in judges]
        for label, config, batch in asked:
            run = run_judge(config, requests, mode=mode, progress=progress, batch=batch)
            into = scores if label is None else readers.setdefault(label, pd.DataFrame(index=rows.index))
            into[setting.name] = run.scores().reindex(keys).to_numpy()
            if expected:
                into = (integer_scores if label is None
                        else reader_integers.setdefault(label, pd.DataFrame(index=rows.index)))
                into[setting.name] = run.scores(column="modal_score").reindex(keys).to_numpy()
            reports.append({"setting": setting.name, "judge": label, "prompts": run.report.n_prompts,
                            "from_store": run.report.n_from_store, "provider_calls": run.report.n_provider_calls,
                            "unparsable": run.report.n_unparsable})
    reports = pd.DataFrame(reports)
    if not judges:  # the book's own judge only: its reports as they always were
        reports = reports.drop(columns="judge")
    else:
        reports["judge"] = reports["judge"].fillna(f"{model} (the book's judge)")
    return RQ2Run(scores, prompts.aux, reports, integer_scores, readers, reader_integers)


def readers_agreement(run: RQ2Run, rows: pd.DataFrame, settings: Sequence[str], *, n_boot: int, seed: int,
                      integer: bool = False) -> pd.DataFrame:
    """``ground_truth.agreement_table`` of each reader's judge of ``run`` over ``settings`` on ``rows`` (with
    ``truth`` and ``user_id``), against its own NA when judged, one block per judge (column ``judge``: its label);
    ``integer``: its most likely score tokens.  Empty (no rows) without a reader's judge."""
    from recjudge.serendipity import ground_truth

    parts = []
    for label, scores in (run.reader_integers if integer else run.readers).items():
        scored = scores.assign(truth=rows["truth"], user_id=rows["user_id"])
        parts.append(ground_truth.agreement_table(scored, list(settings), n_boot=n_boot, seed=seed, groups="user_id",
                                                  reference=NA if NA in settings else None).assign(judge=label))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "judge"])


def _held_out_note(held: pd.DataFrame, n_splits: int) -> str:
    """What the held-out row's choice was: distinct cells chosen, in how many distinct splits (every possible one
    when the users allow fewer than ``n_splits``), and the splits where none could be chosen."""
    chosen = held["cell"].dropna()
    drawn = len(held)
    note = (f"chosen per split ({chosen.nunique()} distinct cells in {drawn} splits"
            + (", every distinct split of the users" if drawn < n_splits else ""))
    undefined = drawn - len(chosen)
    return note + (f"; in {undefined} every cell is constant on the selection half, so none is chosen)"
                   if undefined else ")")


def _held_out_counts(held: pd.DataFrame) -> dict[str, int]:
    """The answers of a held-out half as counts: the smallest (``n``) and largest (``n_max``) over the splits (halves
    of an odd number of users differ), never their mean."""
    counts = held["heldout_n"].dropna()
    return {"n": int(counts.min()), "n_max": int(counts.max())} if len(counts) else {"n": 0, "n_max": 0}


def _with_count_range(frame: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Rows whose ``n`` is one count get ``n_max`` equal to it; counts as integers, metrics as floats."""
    frame = frame.assign(n_max=frame["n_max"].fillna(frame["n"]) if "n_max" in frame else frame["n"])
    frame.insert(frame.columns.get_loc("n") + 1, "n_max", frame.pop("n_max"))
    return frame.astype({"n": int, "n_max": int, **{m: float for m in metrics}})


def _held_out(cells: Mapping[str, pd.Series], na_cell: str, na_scores: pd.Series, truth: pd.Series,
              users: pd.Series, n_splits: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The best of ``cells`` chosen on half of the users and reported on the other half, and NA alone on the same
    halves (a split where every cell is constant is reported, not raised)."""
    from recjudge.metaeval import ensembles
    from recjudge.metaeval.agreement import agreement_pct

    choose = dict(truth=truth, groups=users, metric=agreement_pct, select_by="pearson_pct", n_splits=n_splits,
                  seed=seed, undefined="nan")
    return (ensembles.held_out_selection(cells, **choose),
            ensembles.held_out_selection({na_cell: na_scores}, **choose))


#: The best setting's name when no setting has a defined Pearson (nothing scored, or every score constant).
UNDEFINED_BEST = "none (no setting has a defined Pearson)"


def tables45_rows(table: pd.DataFrame, scores: pd.DataFrame, truth: pd.Series, users: pd.Series, *,
                  n_splits: int, seed: int, suffix: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of Kang et al.'s Tables 4-5 from one reading of the judge (``suffix`` names it, e.g. ", integer").

    ``table``: ``ground_truth.agreement_table`` of ``scores`` (one column per setting). Rows: NA; Rating (when
    judged); "Auxiliary Data", the best other setting by Pearson, chosen and reported on the same answers as the
    paper does (its ``best_setting`` says which, ``UNDEFINED_BEST`` when none has a defined Pearson; a history
    length ``k=N`` is a quantity of interaction data, not a datum); "Auxiliary Data, held out", the best chosen on a
    random half of the users and reported on the other half (mean over ``n_splits`` splits); and NA on the same
    held-out halves. A held-out row's ``n`` and ``n_max`` are the fewest and most answers of a held-out half.
    Returns (rows, the held-out splits with NA's held-out Pearson)."""
    candidates = table[table["method"] != NA]
    if candidates["pearson_pct"].notna().any():
        best = candidates.loc[candidates["pearson_pct"].idxmax()]
    else:  # no setting has a defined Pearson (e.g. a plan, which asks nothing): no best setting to name
        best = pd.Series({"method": UNDEFINED_BEST, "n": 0, "pearson_pct": np.nan, "mae": np.nan, "rmse": np.nan})
    held, na_held = _held_out({name: scores[name] for name in candidates["method"]}, NA, scores[NA], truth, users,
                              n_splits, seed)
    held = held.assign(na_heldout_pearson_pct=na_held["heldout_pearson_pct"].to_numpy())
    metrics = ["n", "pearson_pct", "mae", "rmse"]
    by = table.set_index("method")
    rows = [{"method": f"{NA}{suffix}", **by.loc[NA, metrics].to_dict(), "best_setting": ""},
            *([{"method": f"Rating{suffix}", **by.loc["Rating", metrics].to_dict(), "best_setting": ""}]
              if "Rating" in by.index else []),
            {"method": f"Auxiliary Data{suffix}", **best[metrics].to_dict(), "best_setting": str(best["method"])},
            {"method": f"Auxiliary Data{suffix}, held out", **_held_out_counts(held),
             "pearson_pct": held["heldout_pearson_pct"].mean(), "mae": held["heldout_mae"].mean(),
             "rmse": held["heldout_rmse"].mean(),
             "best_setting": _held_out_note(held, n_splits)},
            {"method": f"{NA}{suffix}, same held-out halves", **_held_out_counts(na_held),
             "pearson_pct": na_held["heldout_pearson_pct"].mean(), "mae": na_held["heldout_mae"].mean(),
             "rmse": na_held["heldout_rmse"].mean(), "best_setting": ""}]
    return _with_count_range(pd.DataFrame(rows), ["pearson_pct", "mae", "rmse"]), held


def tables45_readings(table: pd.DataFrame, scores: pd.DataFrame, integer_scores: pd.DataFrame | None,
                       rows: pd.DataFrame, settings: Sequence[str], *, n_boot: int, n_splits: int,
                       seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`tables45_rows` of the judge read as its expected score (``table``, ``scores``) and, when
    ``integer_scores`` are given (``RQ2Run.integer_scores``), as the most likely score token, the way the paper's
    judges answer (rows suffixed ``ground_truth.INTEGER``; their agreement table against NA is computed here on
    ``rows``' truth and users).  Returns (the rows of both readings, their held-out splits with a ``reading``
    column)."""
    from recjudge.serendipity import ground_truth

    readings = {"": (table, scores)}
    if integer_scores is not None:
        integers = integer_scores.assign(truth=rows["truth"], user_id=rows["user_id"])
        readings[ground_truth.INTEGER] = (ground_truth.agreement_table(integers, list(settings), reference=NA,
                                                                       n_boot=n_boot, seed=seed, groups="user_id"),
                                          integers)
    parts, held_parts = [], []
    for suffix, (reading_table, reading_scores) in readings.items():
        part, held = tables45_rows(reading_table, reading_scores, reading_scores["truth"], reading_scores["user_id"],
                                   n_splits=n_splits, seed=seed, suffix=suffix)
        parts.append(part)
        held_parts.append(held.assign(reading="expected score" if not suffix else "most likely score token"))
    return pd.concat(parts, ignore_index=True), pd.concat(held_parts, ignore_index=True)


def table5_rows(grid: pd.DataFrame, cells: Mapping[str, pd.Series], truth: pd.Series, users: pd.Series, *,
                na_cell: str, n_splits: int, seed: int, suffix: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of Kang et al.'s Table 5 from a grid of ensembles × auxiliary data (``metaeval.ensembles.grid_search``
    of one reading of the judges; ``suffix`` names the reading). Rows: NA (``na_cell``, the 5-shot judge alone);
    "Auxiliary Data", the best single-judge cell; "Multi-LLM & Auxiliary Data", the best cell, both chosen and
    reported on the same answers as the paper does; the best cell chosen on a random half of the users and reported
    on the other half (mean over ``n_splits`` splits); and NA on the same held-out halves (a held-out row's ``n`` and
    ``n_max``: the fewest and most answers of a held-out half). Returns (rows with the chosen cell, the held-out
    splits with NA's held-out values)."""
    held, na_held = _held_out(cells, na_cell, cells[na_cell], truth, users, n_splits, seed)
    for metric in ("pearson_pct", "mae", "rmse"):
        held[f"na_heldout_{metric}"] = na_held[f"heldout_{metric}"].to_numpy()
    metrics = ["n", "pearson_pct", "mae", "rmse"]
    ranked = grid.sort_values("pearson_pct", ascending=False, kind="stable")
    best, single = ranked.iloc[0], ranked[ranked["size"] == 1].iloc[0]
    na = grid.set_index("members").loc[na_cell]
    rows = pd.DataFrame([
        {"method": f"{NA}{suffix}", "cell": na_cell, **na[metrics].to_dict()},
        {"method": f"Auxiliary Data{suffix}", "cell": single["members"], **single[metrics].to_dict()},
        {"method": f"Multi-LLM & Auxiliary Data{suffix}", "cell": best["members"], **best[metrics].to_dict()},
        {"method": f"Multi-LLM & Auxiliary Data{suffix}, held out",
         "cell": _held_out_note(held, n_splits), **_held_out_counts(held),
         "pearson_pct": held["heldout_pearson_pct"].mean(),
         "mae": held["heldout_mae"].mean(), "rmse": held["heldout_rmse"].mean()},
        {"method": f"{NA}{suffix}, same held-out halves", "cell": na_cell, **_held_out_counts(held),
         "pearson_pct": held["na_heldout_pearson_pct"].mean(), "mae": held["na_heldout_mae"].mean(),
         "rmse": held["na_heldout_rmse"].mean()},
    ])
    return _with_count_range(rows, ["pearson_pct", "mae", "rmse"]), held


def settings_grid(setting_scores: pd.DataFrame, others: Mapping[str, pd.Series], truth: pd.Series, *,
                  transform=None) -> tuple[dict[str, pd.Series], pd.DataFrame]:
    """The grid of Table 5 for one reading of the judges: the 5-shot judge under each auxiliary-data setting (a column
    of ``setting_scores``, its cell named "few-shot [setting]") joined with every subset of ``others`` while the pool
    allows (``metaeval.ensembles.grid_search``, ``sizes_within``), Pearson (%), MAE and RMSE against ``truth``
    (``agreement_pct``), each cell's mean scores after ``transform`` (e.g. rounding). Returns (cell name -> scores,
    one row per cell with its ``setting``), as ``table5_rows`` reads them."""
    from recjudge.metaeval.agreement import agreement_pct
    from recjudge.metaeval.ensembles import grid_search, sizes_within

    base = {f"few-shot [{s}]": setting_scores[s] for s in setting_scores.columns}
    cells, found = grid_search(base, others, truth, agreement_pct, transform=transform, sizes=sizes_within(len(others)))
    found.insert(0, "setting", found.pop("base").map({name: s for s, name in zip(setting_scores.columns, base)}))
    return cells, found


def plot_agreement_by_setting(table: pd.DataFrame, settings: Sequence[str], title: str = ""):
    """Pearson (%), MAE and RMSE with their 95% bootstrap intervals per setting, three panels side by side (the
    shape of Kang et al.'s Figures 2-3). ``table``: rows of ``ground_truth.agreement_table``."""
    import matplotlib.pyplot as plt

    from recjudge.compendium import figures

    part = table.set_index("method").loc[list(settings)]
    fig, axes = plt.subplots(1, 3, figsize=(figures.FIGURE_WIDTH_IN, 3.6))
    panels = (("pearson_pct", "pearson_ci_low", "pearson_ci_high", "Pearson (%)"),
              ("mae", "mae_ci_low", "mae_ci_high", "MAE"), ("rmse", "rmse_ci_low", "rmse_ci_high", "RMSE"))
    for ax, (metric, low, high, label) in zip(axes, panels):
        y = part[metric].to_numpy(dtype=float)
        err = np.vstack([y - part[low].to_numpy(dtype=float), part[high].to_numpy(dtype=float) - y])
        ax.errorbar(np.arange(len(y)), y, yerr=err, fmt="o", color=figures.colours(1)[0], capsize=3)
        ax.set_xticks(np.arange(len(y)), list(settings), rotation=60, ha="right")
        ax.set_title(label)
        ax.set_ylabel(label)
        ax.set_xlabel("Setting")
        if metric == "pearson_pct":
            ax.axhline(0, color="grey", lw=0.8, ls=":")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
