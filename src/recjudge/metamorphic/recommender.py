"""The LLM recommender under test (Khirbat et al. 2024, sections 3.2 and 4): prompts, reply parsing, title matching.

- ``liked_history``: a user's l liked items (rating above 3), the l most recent, written oldest first. The paper
  says only "the user's items rated above 3" (Table 2: all of them; Table 3: l of them); which l is ours.
- ``parse_titles``: the titles of a reply's numbered or bulleted list ("1. Title (1999) - why", "- **Title**"),
  the text after a dash or colon that follows the title dropped. A reply with no list line is "not a list"
  (``ParsedReply.is_list`` False; counted by the chapter, never silently an empty list of recommendations).
  A constrained reply (``recjudge.prompts.output_shapes``: ``{"titles": [...]}``) is read as its list of titles.
- ``TitleMatcher``: each title matched to a catalogue item with RapidFuzz (``fuzz.token_sort_ratio`` on normalised
  titles: lower case, a trailing ", The" / ", A" / ", An" moved to the front, punctuation and the "(year)" removed);
  when the reply gives a year, candidates of that year win among those above the threshold. The default threshold
  ``MATCH_THRESHOLD`` = 90 is justified in the chapter by the catalogue's own collision rate (the share of
  catalogue titles whose nearest *other* title scores at least the threshold) and by the variants LLMs write
  (articles moved, case, punctuation, missing year), which score 100 after normalisation; sequels ("Toy Story" vs
  "Toy Story 2") score about 90-95, so a year, when given, decides between them. Unmatched titles are kept as
  their normalised text ("?title"), so two replies naming the same unknown film still agree.
- ``ranking_of``: the ranked list of a reply (item ids or "?title"), duplicates dropped, cut at k.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from rapidfuzz import fuzz, process

from recjudge.llm import JudgeRequest
from recjudge.prompts.recommendation import recommendation_messages

MATCH_THRESHOLD = 90.0
LIKED_ABOVE = 3.0

_LIST_LINE = re.compile(r"^\s*(?:\d{1,3}\s*[.):]|[-*•·]|#{1,6}\s*\d{1,3}[.):]?)\s*(.+?)\s*$")
_YEAR = re.compile(r"\((\d{4})\)")
_ARTICLE = re.compile(r"^(.*),\s*(the|a|an|les|la|le|il|el|das|der|die)$", re.IGNORECASE)
_CUT = re.compile(r"\s+[-–—:|]\s+|\s*:\s+|\s+[-–—]\s*")


def liked_history(ratings: pd.DataFrame, items: pd.DataFrame, user_id,
                  l: int | None) -> list[tuple[str, float]]:  # noqa: E741 (Khirbat et al.'s l)
    """(title, rating) of ``user_id``'s ratings above 3, the ``l`` most recent (all when l is None), oldest first.

    ratings: user_id, item_id, rating, timestamp; items: item_id, title."""
    mine = ratings[(ratings["user_id"] == user_id) & (ratings["rating"] > LIKED_ABOVE)]
    if mine.empty:
        raise ValueError(f"user {user_id!r} has no rating above {LIKED_ABOVE:g}")
    mine = mine.sort_values(["timestamp", "item_id"], kind="stable")
    if l is not None:
        mine = mine.tail(int(l))
    titles = items.set_index("item_id")["title"]
    missing = sorted(set(mine["item_id"]) - set(titles.index))
    if missing:
        raise ValueError(f"user {user_id!r}: item id(s) {missing[:5]} have no title in the items table")
    return [(str(titles[i]), float(r)) for i, r in zip(mine["item_id"], mine["rating"])]


def recommendation_request(key: str, user_id, history: Sequence[tuple[str, float]], k: int, **meta) -> JudgeRequest:
    """One request of the recommender: the verbatim prompt for ``history`` asking for ``k`` items."""
    return JudgeRequest(key=key, messages=recommendation_messages(user_id, history, k),
                        meta={"user_id": user_id, "k": k, "l": len(history), **meta})


def list_length(reply: str) -> float:
    """Parser for the judge engine: the number of list titles in the reply (NaN when it is not a list)."""
    parsed = parse_titles(reply)
    return float(len(parsed.titles)) if parsed.is_list else float("nan")


@dataclass(frozen=True)
class ParsedReply:
    titles: list[str]
    is_list: bool


def _clean_title(text: str) -> str:
    text = re.sub(r"[*_`\"“”]", "", text).strip()
    year = _YEAR.search(text)
    if year:  # keep up to and including the first "(year)"
        text = text[: year.end()]
    else:
        text = _CUT.split(text, maxsplit=1)[0]
    return text.strip(" .,;'")


def _json_titles(reply: str) -> list[str] | None:
    """The titles of a constrained reply (a JSON object with a list "titles"), cleaned; None for any other text."""
    text = reply.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    items = value.get("titles") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return None
    return [title for title in (_clean_title(item) for item in items if isinstance(item, str)) if title]


def parse_titles(reply: str | None) -> ParsedReply:
    """The titles of the list items in ``reply`` in order (see the module docstring)."""
    if not isinstance(reply, str):
        return ParsedReply([], False)
    shaped = _json_titles(reply)
    if shaped is not None:
        return ParsedReply(shaped, bool(shaped))
    titles = []
    for line in reply.splitlines():
        match = _LIST_LINE.match(line)
        if match:
            title = _clean_title(match.group(1))
            if title:
                titles.append(title)
    return ParsedReply(titles, bool(titles))


def normalise_title(title: str) -> str:
    """Lower case, accents and the "(year)" removed, a trailing article moved to the front, punctuation dropped."""
    text = unicodedata.normalize("NFKD", str(title)).encode("ascii", "ignore").decode()
    text = _YEAR.sub(" ", text)
    text = re.sub(r"\([^)]*\)", " ", text).strip()  # alternative titles "(a.k.a. ...)"
    text = re.sub(r"\s+", " ", text).strip()
    article = _ARTICLE.match(text)
    if article:
        text = f"{article.group(2)} {article.group(1)}"
    text = re.sub(r"[^a-z0-9 ]", " ", text.lower())
    return re.sub(r"\s+", " ", text).strip()


def title_year(title: str) -> int | None:
    found = _YEAR.findall(str(title))
    return int(found[-1]) if found else None


@dataclass
class TitleMatcher:
    """Match free-text titles to catalogue item ids (see the module docstring).

    items: item_id, title (MovieLens style "Title, The (1999)")."""

    items: pd.DataFrame
    threshold: float = MATCH_THRESHOLD
    _names: list[str] = field(init=False, repr=False)
    _ids: np.ndarray = field(init=False, repr=False)
    _years: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for column in ("item_id", "title"):
            if column not in self.items.columns:
                raise ValueError(f"TitleMatcher: the items table has no column {column!r}")
        if not 0 < self.threshold <= 100:
            raise ValueError(f"TitleMatcher: threshold must be in (0, 100], got {self.threshold}")
        self._names = [normalise_title(t) for t in self.items["title"]]
        self._ids = self.items["item_id"].to_numpy()
        self._years = np.array([title_year(t) or -1 for t in self.items["title"]])

    def match(self, title: str) -> tuple[Hashable | None, float]:
        """(item id, score) of the best catalogue match, or (None, best score) below the threshold."""
        name = normalise_title(title)
        if not name:
            return None, 0.0
        hits = process.extract(name, self._names, scorer=fuzz.token_sort_ratio, score_cutoff=self.threshold,
                               limit=20)
        if not hits:
            best = process.extractOne(name, self._names, scorer=fuzz.token_sort_ratio)
            return None, float(best[1]) if best else 0.0
        year = title_year(title)
        # Best score first; a candidate of the reply's year wins a tie-free comparison by a bonus of 5 points;
        # among equals the lower catalogue row (MovieLens: the older id) wins, deterministically.
        ranked = sorted(hits, key=lambda h: (-(h[1] + (5 if year is not None and self._years[h[2]] == year else 0)),
                                             h[2]))
        _, score, row = ranked[0]
        return self._ids[row].item() if hasattr(self._ids[row], "item") else self._ids[row], float(score)

    def collision_rate(self, thresholds: Sequence[float] | None = None, sample: int | None = None,
                       seed: int = 0) -> pd.Series:
        """Share of catalogue titles whose most similar *other* title scores at least each threshold (default: the
        matcher's), over all titles or a seeded ``sample`` of them compared with the whole catalogue."""
        thresholds = [self.threshold] if thresholds is None else list(thresholds)
        rows = np.arange(len(self._names))
        if sample is not None and sample < len(rows):
            rows = np.sort(np.random.default_rng(seed).choice(rows, size=sample, replace=False))
        queries = [self._names[i] for i in rows]
        scores = process.cdist(queries, self._names, scorer=fuzz.token_sort_ratio, workers=1)
        scores[np.arange(len(rows)), rows] = 0  # not the title itself
        best = scores.max(axis=1)
        return pd.Series([float((best >= t).mean()) for t in thresholds], index=thresholds, name="collision_rate")


def ranking_of(reply: str | None, matcher: TitleMatcher, k: int) -> list[Hashable]:
    """The ranked recommendations of a reply: matched item ids or "?normalised title", no duplicates, at most k."""
    out: list[Hashable] = []
    for title in parse_titles(reply).titles:
        item, _ = matcher.match(title)
        entry = item if item is not None else f"?{normalise_title(title)}"
        if entry not in out:
            out.append(entry)
        if len(out) == k:
            break
    return out


__all__ = ["LIKED_ABOVE", "MATCH_THRESHOLD", "ParsedReply", "TitleMatcher", "liked_history", "list_length",
           "normalise_title", "parse_titles", "ranking_of", "recommendation_request", "title_year"]
