"""Prompts for LLM serendipity judges (Kang et al. 2025) and the LLM baselines they compare with.

Templates (``src/recjudge/prompts/templates``):

- ``kang_basic``: the paper's basic prompt (section 2.4), verbatim. The system turn holds everything up to
  "## Output Format" and its line, the user turn the "## Response" block, so system + user is the printed prompt.
  Only the domain wording varies: the platform ("a Chinese e-commerce platform" / "a movie recommendation platform
  (MovieLens)") and what the history holds ("the items you have clicked on or purchased" / "the movies you have
  rated"). With the e-commerce wording and the paper's placeholders it reproduces the printed text exactly.
- ``kang_fewshot``: the same with five solved examples as earlier user/assistant turns (5-shot).
- ``kang_llm4seren``, ``kang_serenprompt_1``, ``kang_serenprompt_2``: *reconstructions*. Kang et al. describe the
  baselines only in words: LLM4Seren (Tokutake and Okamoto 2024) asks for a five-level serendipity score from the
  last ten items and the target, without defining serendipity; SerenPrompt "Discrete Style 1 and 2" (Fu and Niu
  2024) are discrete prompts that put both relevance and unexpectedness into the question. The wording here follows
  those descriptions; it is not the original text.

History and item text for Serendipity-2018: the history is a comma-separated list of "Title (year)" oldest to
newest; the recommended item is "Title (year), genres: A, B" (the prompt says the judge is given the item's genres).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: Prompt template names of the RQ1 methods.
KANG_PROMPTS = ("kang_basic", "kang_fewshot")
BASELINE_PROMPTS = ("kang_llm4seren", "kang_serenprompt_1", "kang_serenprompt_2")
#: Method names as in Table 2 for each template.
METHOD_NAMES = {
    "kang_basic": "zero-shot",
    "kang_fewshot": "few-shot (5)",
    "kang_llm4seren": "LLM4Seren",
    "kang_serenprompt_1": "SerenPrompt_1",
    "kang_serenprompt_2": "SerenPrompt_2",
}
#: Templates whose wording is reconstructed from a description rather than copied from a printed prompt.
RECONSTRUCTED = frozenset(BASELINE_PROMPTS)
N_SHOTS = 5

DOMAINS: Mapping[str, Mapping[str, str]] = {
    "ecommerce": {
        "platform": "a Chinese e-commerce platform",
        "platform_definite": "the Chinese e-commerce platform",
        "history_description": "the items you have clicked on or purchased",
        "item_noun": "item",
        "items_noun": "items",
    },
    "movies": {
        "platform": "a movie recommendation platform (MovieLens)",
        "platform_definite": "the movie recommendation platform (MovieLens)",
        "history_description": "the movies you have rated",
        "item_noun": "movie",
        "items_noun": "movies",
    },
}
#: Shown when a user has no earlier interaction (each user's first survey answer under the survey fallback).
EMPTY_HISTORY = "(no earlier movies)"


def _title(movies: pd.DataFrame, item_id) -> tuple[str, str]:
    if item_id in movies.index:
        # .at reads one value without building a row Series: prompts name tens of thousands of movies at paper scale
        title = str(movies.at[item_id, "title"])
        year = movies.at[item_id, "year"] if "year" in movies.columns else None
        if year is not None and not pd.isna(year) and f"({int(year)})" not in title:
            title = f"{title} ({int(year)})"
        listed = movies.at[item_id, "genres"] if "genres" in movies.columns else None
        genres = [g for g in (listed or ()) if g != "(no genres listed)"]
        return title, ", ".join(genres) or "unknown"
    return f"movie {item_id}", "unknown"


class MovieNames:
    """``_title`` of each movie of ``movies``, each looked up once: a study's prompts name the same movies tens of
    thousands of times (every answer's history), and a plan builds every prompt to count them."""

    def __init__(self, movies: pd.DataFrame):
        self.movies = movies
        self._known: dict = {}

    def __call__(self, item_id) -> tuple[str, str]:
        try:
            return self._known[item_id]
        except KeyError:
            named = self._known[item_id] = _title(self.movies, item_id)
            return named
        except TypeError:  # an unhashable id: looked up as it is
            return _title(self.movies, item_id)


def _names(movies: pd.DataFrame | MovieNames) -> MovieNames:
    return movies if isinstance(movies, MovieNames) else MovieNames(movies)


def movie_item_text(item_id, movies: pd.DataFrame | MovieNames) -> str:
    """"Title (year), genres: A, B" for the recommended movie; ``movies`` indexed by item_id (title, year, genres),
    or their ``MovieNames``. A movie missing from the table is named by its id."""
    title, genres = _names(movies)(item_id)
    return f"{title}, genres: {genres}"


def movie_history_text(item_ids: Sequence, movies: pd.DataFrame | MovieNames) -> str:
    """Comma-separated "Title (year)" of the history items, oldest first; ``EMPTY_HISTORY`` when empty."""
    names = _names(movies)
    titles = [names(item)[0] for item in item_ids]
    return ", ".join(titles) if titles else EMPTY_HISTORY


def domain_fields(domain: str) -> dict[str, str]:
    try:
        return dict(DOMAINS[domain])
    except KeyError:
        raise KeyError(f"unknown prompt domain {domain!r}; known: {sorted(DOMAINS)}")


def build_messages(
    prompt: str,
    domain: str,
    history: str,
    item: str,
    examples: Sequence[Mapping[str, object]] | None = None,
) -> list[dict[str, str]]:
    """Fill a serendipity template. ``examples`` (few-shot only): ``N_SHOTS`` mappings with history, item, rating."""
    from recjudge.prompts import fill_template, load_template

    fields: dict[str, object] = {**domain_fields(domain), "history": history, "item": item}
    if prompt == "kang_fewshot":
        if examples is None or len(examples) != N_SHOTS:
            given = 0 if examples is None else len(examples)
            raise ValueError(f"kang_fewshot needs exactly {N_SHOTS} examples, got {given}")
        for number, example in enumerate(examples, start=1):
            fields[f"example_{number}_history"] = example["history"]
            fields[f"example_{number}_item"] = example["item"]
            fields[f"example_{number}_rating"] = _rating_text(example["rating"])
    template = load_template(prompt)  # each template uses only some of the domain words
    return fill_template(template, **{name: value for name, value in fields.items() if name in template.fields})


def _rating_text(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number.is_integer() else f"{number:g}"


def request_key(user_id, item_id) -> str:
    """Request key of one judged answer in judge result tables: "user_id:item_id", each id with "%" written "%25"
    and ":" written "%3A" so that no two (user, item) pairs share a key ("a:b", "c" and "a", "b:c" would); ids
    without those characters are written as they are."""
    return f"{_key_part(user_id)}:{_key_part(item_id)}"


def _key_part(value) -> str:
    return str(value).replace("%", "%25").replace(":", "%3A")


def history_texts(targets: pd.DataFrame, history: pd.DataFrame, movies: pd.DataFrame | MovieNames) -> pd.Series:
    """The history text of each target row (index aligned with ``targets``)."""
    ordered = history.sort_values(["user_id", "item_id", "position"]) if len(history) else history
    by_target = ordered.groupby(["user_id", "item_id"])["history_item_id"].agg(list).to_dict() if len(history) else {}
    names = _names(movies)
    return pd.Series(
        [movie_history_text(by_target.get((u, i), []), names)
         for u, i in targets[["user_id", "item_id"]].itertuples(index=False)],
        index=targets.index,
    )


def select_fewshot_examples(
    pool: pd.DataFrame,
    level_column: str,
    n: int = N_SHOTS,
    seed: int = 0,
    exclude_users: Sequence = (),
) -> pd.DataFrame:
    """Pick ``n`` solved examples from ``pool`` (answers outside the evaluated sample), one per ground-truth Likert
    level 1..5 where available, never from ``exclude_users`` (the evaluated users, so no user's own answers leak into
    their judgment), seeded. Returned in shuffled order so the rating does not rise monotonically across turns."""
    rng = np.random.default_rng(seed)
    candidates = pool[~pool["user_id"].isin(set(exclude_users)) & pool[level_column].notna()]
    if len(candidates) < n:
        raise ValueError(f"only {len(candidates)} candidate examples for {n} shots")
    chosen: list = []
    levels = sorted(candidates[level_column].unique())
    for level in levels[:n]:
        rows = candidates.index[candidates[level_column] == level]
        chosen.append(rows[rng.integers(len(rows))])
    rest = candidates.index.difference(pd.Index(chosen))
    if len(chosen) < n:
        chosen.extend(rng.choice(rest, size=n - len(chosen), replace=False).tolist())
    order = rng.permutation(len(chosen))
    return candidates.loc[[chosen[i] for i in order]]


def serendipity_requests(
    targets: pd.DataFrame,
    history: pd.DataFrame,
    movies: pd.DataFrame,
    prompt: str,
    domain: str = "movies",
    examples: Sequence[Mapping[str, object]] | None = None,
):
    """One ``JudgeRequest`` per target (key "user_id:item_id") for a Serendipity-2018 judge.

    targets: user_id, item_id; history: long history frame (``recjudge.serendipity.ground_truth.last_k_history``);
    movies: item_id-indexed title, year, genres."""
    from recjudge.llm import JudgeRequest

    names = _names(movies)
    histories = history_texts(targets, history, names)
    requests = []
    # itertuples, not iterrows: a row Series per answer costs more than its prompt at paper scale
    for user, item, text in zip(targets["user_id"], targets["item_id"], histories):
        messages = build_messages(prompt, domain, text, movie_item_text(item, names), examples)
        requests.append(JudgeRequest(key=request_key(user, item), messages=messages,
                                     meta={"user_id": user, "item_id": item, "prompt": prompt}))
    return requests


def fewshot_example_fields(
    examples: pd.DataFrame, history: pd.DataFrame, movies: pd.DataFrame, rating_column: str
) -> list[dict[str, object]]:
    """The few-shot examples as mappings (history text, item text, rating) for ``build_messages``."""
    names = _names(movies)
    texts = history_texts(examples, history, names)
    return [
        {"history": texts[i], "item": movie_item_text(row["item_id"], names), "rating": row[rating_column]}
        for i, row in examples.iterrows()
    ]
