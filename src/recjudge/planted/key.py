"""The truth a planted judge holds: a key built from the data, never passed by a chapter.

A planted judge reads a prompt (:mod:`recjudge.planted.reading`) and looks up what the prompt is about by the texts
it shows, exactly as the book's prompt builders write them:

- **Serendipity-2018** (Kang et al.'s and Tokutake et al.'s prompts): the recommended movie's text and the history's
  text. Every answer is keyed by its movie and every last-k part of its history (k = 1 .. its length: the auxiliary
  data chapter shortens histories, never to nothing), so a prompt finds the answers it can be about; two answers a
  prompt cannot tell apart (the same movie after the same history) are one answer to the judge, whose truth is their
  mean. The key holds each answer's ground truth as Kang et al. define it (``truth``) and as Tokutake et al. do
  (``g``), and SOG's correlation with the former over every answer (the best proxy, which the null judge matches).
- **ml-latest-small's recommendation lists** (the re-evaluation chapter): each fold's test users' histories and the
  items of their lists, with the recommenders that put each item in a user's top 20.
- **Lu et al.'s explanations** (Zhang et al.'s prompts): the movie and the explanation text, with the users' four
  ratings, and ROUGE-1-F's correlation with each (the reference metric the null judge matches).

Each part is built on first use (loading its dataset through the data layer) and kept; ``PlantedKey`` is safe to use
from several threads.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from recjudge.planted.model import standardised, text_hash, thresholds_for

#: The list length Table 3 reads (``@20``): an item belongs to a recommender's list when it is in its top this many.
LIST_LENGTH = 20
#: A history movie's rating as the auxiliary-data setting "Rating" writes it ("Title (1999) (rated 4.5/5)").
RATED = re.compile(r" \(rated [0-9.]+/5\)")
#: The reference metric the explanation claim sets a judge against, and the null judge matches.
REFERENCE_METRIC = "ROUGE-1-F"


@dataclass(frozen=True)
class Found:
    """What a prompt is about: its family (``serendipity``, ``recsys``, ``explanations``), the answers it can be
    (positions in that family's table), and the hash that names them together."""

    family: str
    members: tuple[int, ...]
    answer: int


@dataclass
class SerendipityTruth:
    """Serendipity-2018's answers (``answers``: user_id, item_id, truth, g) and the prompts' texts that find them."""

    answers: pd.DataFrame
    views: Mapping[tuple[str, str], tuple[int, ...]]
    sog_pearson: float
    #: Each answer's view with its whole history (what the chapters' plain prompts show).
    full_views: Sequence[tuple[str, str]] = ()

    @functools.cached_property
    def kang_thresholds(self) -> tuple[float, ...]:
        from recjudge.serendipity.ground_truth import likert_level

        return thresholds_for(likert_level(self.answers["truth"]).to_numpy(dtype=float))

    @functools.cached_property
    def g_thresholds(self) -> tuple[float, ...]:
        return thresholds_for(self.answers["g"].to_numpy(dtype=float))

    @functools.cached_property
    def z(self) -> dict[str, np.ndarray]:
        """Each answer's standardised truth, Kang et al.'s (``truth``) and Tokutake et al.'s (``g``)."""
        return {column: standardised(self.answers[column].to_numpy(dtype=float)) for column in ("truth", "g")}

    @functools.cached_property
    def driver(self) -> dict[str, np.ndarray]:
        """The standardised truth that drives a judge's answer to each answer's plain prompt: the mean over the
        answers that prompt cannot tell apart (``find``), which the planted effects are solved with."""
        return {column: _drivers(z, self.views, self.full_views) for column, z in self.z.items()}

    def find(self, item: str, history: str) -> Found | None:
        """The answers a prompt showing ``item`` after ``history`` can be about (a history with the user's ratings,
        as the auxiliary-data setting "Rating" shows it, is read without them)."""
        members = self.views.get((item, history)) or self.views.get((item, RATED.sub("", str(history))))
        if not members:
            return None
        names = "|".join(sorted(f"{u}:{i}" for u, i in self.answers.iloc[list(members)][["user_id", "item_id"]]
                                .itertuples(index=False)))
        return Found("serendipity", members, text_hash(f"serendipity-2018 {names}"))


def build_serendipity(source: str = "mirror") -> SerendipityTruth:
    """The Serendipity-2018 part of the key, from the data (the chapters' own loaders and ground truths)."""
    from recjudge.prompts import serendipity as texts
    from recjudge.serendipity import ground_truth as ser
    from recjudge.serendipity import prompt_strategies as ps
    from recjudge.serendipity import proxies

    loaded = ser.load_serendipity2018(source, history_k=10)
    answers = loaded.answers
    answers["truth"] = ser.serendipity_ground_truth(answers, ser.PRIMARY_DEFINITION)
    answers["g"] = ps.candidate_from_row(ps.search_ground_truth(answers).iloc[0]).levels(answers)
    names = texts.MovieNames(loaded.movies)
    ordered = loaded.history.sort_values(["user_id", "item_id", "position"])
    histories = ordered.groupby(["user_id", "item_id"])["history_item_id"].agg(list).to_dict()
    views: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, (user, item) in enumerate(answers[["user_id", "item_id"]].itertuples(index=False)):
        item_text = texts.movie_item_text(item, names)
        titles = [names(h)[0] for h in histories.get((user, item), [])]
        for k in range(1, len(titles) + 1) if titles else (0,):  # a history is shortened, never emptied
            views[(item_text, ", ".join(titles[len(titles) - k:]) if k else texts.EMPTY_HISTORY)].append(position)
    study = ser.Serendipity2018Study(answers, loaded.movies, loaded.history, loaded.source, answers.iloc[:0],
                                     answers.iloc[:0], loaded.synthetic)
    sog = proxies.study_proxies(study, seed=0).scores["SOG"].to_numpy(dtype=float)
    truth = answers["truth"].to_numpy(dtype=float)
    present = ~np.isnan(truth) & ~np.isnan(sog)
    full = [(texts.movie_item_text(item, names), ", ".join(names(h)[0] for h in histories.get((user, item), []))
             or texts.EMPTY_HISTORY) for user, item in answers[["user_id", "item_id"]].itertuples(index=False)]
    return SerendipityTruth(answers[["user_id", "item_id", "truth", "g"]].reset_index(drop=True),
                            {view: tuple(dict.fromkeys(members)) for view, members in views.items()},
                            float(np.corrcoef(sog[present], truth[present])[0, 1]), full)


def _drivers(z: np.ndarray, views: Mapping[tuple[str, str], tuple[int, ...]],
             full_views: Sequence[tuple[str, str]]) -> np.ndarray:
    """Per answer, the mean of ``z`` over the answers its own view finds (itself, and any it cannot be told from)."""
    return np.array([z[list(views[view])].mean() for view in full_views])


@dataclass
class RecsysTruth:
    """The re-evaluation chapter's judged pairs (``pairs``: fold, user_id, item_id, recommenders: those whose top 20
    hold it) and the prompts' texts that find them."""

    pairs: pd.DataFrame
    views: Mapping[tuple[str, str], tuple[int, ...]]
    recommenders: tuple[str, ...]

    def find(self, item: str, history: str) -> Found | None:
        members = self.views.get((item, history))
        if not members:
            return None
        names = "|".join(sorted(f"{f}:{u}:{i}" for f, u, i in self.pairs.iloc[list(members)][
            ["fold", "user_id", "item_id"]].itertuples(index=False)))
        return Found("recsys", members, text_hash(f"ml-latest-small {names}"))


def build_recsys(dataset: str = "latest-small") -> RecsysTruth:
    """The re-evaluation part of the key: every fold's test lists of the committed recommenders, with the histories
    the chapter's prompts show (``recsys.judging``'s prompt builder)."""
    from recjudge.data.loaders import load_movielens
    from recjudge.prompts import serendipity as texts
    from recjudge.recsys import judging, split
    from recjudge.recsys import lists as recsys_lists

    ml = load_movielens(dataset)
    folds = split.folds(ml.ratings)
    lists, _ = recsys_lists.load_committed_lists(dataset)
    test = lists[lists["part"] == "test"]
    top = test[test["rank"] <= LIST_LENGTH]
    listing = top.groupby(["fold", "user_id", "item_id"])["recommender"].agg(lambda names: tuple(sorted(set(names))))
    pairs = test[["fold", "user_id", "item_id"]].drop_duplicates().reset_index(drop=True)
    pairs["recommenders"] = [listing.get(key, ()) for key in pairs.itertuples(index=False, name=None)]
    views: dict[tuple[str, str], list[int]] = defaultdict(list)
    for fold in folds:
        builder = judging._PromptBuilder(fold.train, ml.items, judging.DEFAULT_PROMPT, "movies", judging.HISTORY_K)
        mine = pairs[pairs["fold"] == fold.fold]
        for position, user, item in zip(mine.index, mine["user_id"], mine["item_id"]):
            history = texts.movie_history_text(builder.recent.get(user, []), builder.movies)
            views[(texts.movie_item_text(item, builder.movies), history)].append(int(position))
    return RecsysTruth(pairs, {view: tuple(members) for view, members in views.items()},
                       tuple(sorted(test["recommender"].unique())))


@dataclass
class ExplanationTruth:
    """Lu et al.'s rated explanations (``truth``: row_id, user_id, item_id and the four aspects), the prompts' texts
    that find them, and the reference metric's dataset-level correlation with each aspect (``reference_pearson``)."""

    truth: pd.DataFrame
    views: Mapping[tuple[str, str], tuple[int, ...]]
    reference_pearson: Mapping[str, float]
    #: Each text's view (its movie and explanation).
    full_views: Sequence[tuple[str, str]] = ()

    def find(self, movie: str, explanation: str) -> Found | None:
        members = self.views.get((movie, explanation))
        if not members:
            return None
        names = "|".join(str(r) for r in sorted(self.truth.iloc[list(members)]["row_id"]))
        return Found("explanations", members, text_hash(f"lu-2023 {names}"))

    def thresholds(self, aspect: str) -> tuple[float, ...]:
        return self._thresholds[aspect]

    @functools.cached_property
    def _thresholds(self) -> dict[str, tuple[float, ...]]:
        return {aspect: thresholds_for(self.truth[aspect].round().to_numpy(dtype=float))
                for aspect in self.reference_pearson}

    @functools.cached_property
    def z(self) -> dict[str, np.ndarray]:
        """Each text's standardised rating of each aspect."""
        return {aspect: standardised(self.truth[aspect].to_numpy(dtype=float)) for aspect in self.reference_pearson}

    @functools.cached_property
    def driver(self) -> dict[str, np.ndarray]:
        """Per aspect, the standardised rating that drives a judge's answer about each text: the mean over the
        texts its prompt cannot tell apart (the same movie and explanation)."""
        return {aspect: _drivers(z, self.views, self.full_views) for aspect, z in self.z.items()}


def build_explanations() -> ExplanationTruth:
    """The explanation part of the key: the study's texts as Zhang et al.'s prompts show them, the users' ratings,
    and the reference metric's correlation with them over every text (``DROP_NULLS``: a missing rating left out)."""
    from recjudge.data.lu2023 import load_explanation_study
    from recjudge.explanations import evaluators as ex

    study = load_explanation_study()
    truth = ex.truth_frame(study).reset_index(drop=True)
    texts = study.explanations.set_index("row_id")
    views: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, row_id in enumerate(truth["row_id"]):
        views[(str(texts.at[row_id, "movie_title"]), str(texts.at[row_id, "explanation_text"]))].append(position)
    reference = ex.reference_metric_evaluator_scores(study)
    reference = reference[reference["evaluator"] == REFERENCE_METRIC]
    table = ex.meta_evaluate(truth, reference, nulls=ex.DROP_NULLS, methods=("pearson",))
    dataset = table[table["level"] == "dataset"].set_index("aspect")["value"]
    full = [(str(texts.at[row_id, "movie_title"]), str(texts.at[row_id, "explanation_text"]))
            for row_id in truth["row_id"]]
    return ExplanationTruth(truth, {view: tuple(members) for view, members in views.items()},
                            {aspect: float(dataset[aspect]) for aspect in ex.ASPECTS}, full)


@dataclass
class PlantedKey:
    """The three parts of the key, each built on first use (``source``: Serendipity-2018's, "mirror" or
    "synthetic")."""

    source: str = "mirror"
    _parts: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _part(self, name: str, build):
        with self._lock:
            if name not in self._parts:
                self._parts[name] = build()
            return self._parts[name]

    @property
    def serendipity(self) -> SerendipityTruth:
        return self._part("serendipity", lambda: build_serendipity(self.source))

    @property
    def recsys(self) -> RecsysTruth:
        return self._part("recsys", build_recsys)

    @property
    def explanations(self) -> ExplanationTruth:
        return self._part("explanations", build_explanations)
