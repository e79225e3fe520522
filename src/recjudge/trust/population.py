"""The population the trust part studies: every covered Serendipity-2018 answer, its human rating, the properties a
judge might follow instead, and every judge's score of it.

``judged_population`` assembles one frame (one row per answer of ``recjudge.trust.judges.coverage``) with

- ``truth`` (the mean of s4, s5, s6; ``recjudge.serendipity.ground_truth``) and ``serendipitous`` (truth ≥ 4);
- properties: ``predicted_rating`` (MovieLens's prediction before the user rated), ``log_popularity`` (log of 1 +
  the users who rated the movie in the popularity source of the proxies), ``release_year``, ``title_length``
  (characters, year left out) and ``history_length`` (items in the history the judges were shown);
- one column per judge: the recorded gpt-3.5-turbo scores, each local judge's expected score and its most likely
  score token (``<name>, integer``; NaN outside a sampled judge's rows), and the four proxies on the 1–5 scale
  (eq. 6), the way the RQ1 chapter compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recjudge.serendipity.ground_truth import INTEGER
from recjudge.trust import judges as trust_judges

RECORDED = "gpt-3.5-turbo (recorded)"
#: The properties a judge might follow instead of serendipity: column of the population frame -> readable name.
PROPERTIES = {"log_popularity": "popularity (log)", "release_year": "release year",
              "title_length": "title length", "history_length": "history length"}


@dataclass(frozen=True)
class JudgedPopulation:
    """frame: one row per covered answer (see the module); judges: one row per judge column of ``frame`` with its
    kind, family, scoring, the answers it scored and a note."""

    frame: pd.DataFrame
    judges: pd.DataFrame

    def scored_by(self, judge: str) -> pd.DataFrame:
        """The rows ``judge`` scored."""
        return self.frame[self.frame[judge].notna()]

    def kind(self, judge: str) -> str:
        """The judge's kind: "recorded LLM", "local LLM", "reader's LLM" or "proxy metric"."""
        return self.judges.set_index("judge").at[judge, "kind"]

    def answers(self, judge: str) -> int:
        """How many answers the judge scored."""
        return int(self.judges.set_index("judge").at[judge, "answers"])

    def analysed(self, min_answers: int, integer_readings: bool = True) -> list[str]:
        """The judge columns with at least ``min_answers`` scored answers (the others can only be listed), in order;
        without ``integer_readings``, one reading per judge: a local judge's expected score, not its most likely
        score token."""
        table = self.judges
        keep = table["answers"] >= min_answers
        if not integer_readings:
            keep &= table["scoring"] != "most likely score token"
        return table.loc[keep, "judge"].tolist()


def varying_properties(frame: pd.DataFrame) -> dict[str, str]:
    """The ``PROPERTIES`` that vary in ``frame``: a property with one value for every answer (the synthetic survey's
    history length) cannot be tested."""
    return {column: name for column, name in PROPERTIES.items() if frame[column].nunique() > 1}


def _title_length(titles: pd.Series) -> pd.Series:
    return titles.fillna("").str.replace(r"\s*\(\d{4}\)\s*$", "", regex=True).str.len()


def judged_population(study, local_judges: Sequence[str] | None = None, use_recorded: bool = True,
                      mode: str | None = None, seed: int = 0,
                      readers: Sequence[trust_judges.TrustJudge] = ()) -> JudgedPopulation:
    """Every covered answer of ``study`` (a ``Serendipity2018Study``) with its properties and judges' scores.

    local_judges: names from ``recjudge.trust.judges.LOCAL_JUDGES`` (default: all); use_recorded: add the recorded
    gpt-3.5-turbo scores (real data only); mode: the LLM mode (the book replays the store); readers: the reader's
    judges (``recjudge.trust.judges.reader_judges``), after the local ones, of kind "reader's LLM"."""
    from recjudge.prompts.serendipity import request_key
    from recjudge.serendipity import proxies

    covered = trust_judges.coverage(study.answers, study.examples)
    keys = pd.Index([request_key(u, i) for u, i in covered[["user_id", "item_id"]].itertuples(index=False)])
    frame = covered[["user_id", "item_id", "truth", "level"]].copy()
    frame["serendipitous"] = (frame["truth"] >= 4).astype(float)
    frame["predicted_rating"] = covered["predicted_rating"].astype(float)

    study_proxies = proxies.study_proxies(study, seed=seed)
    popularity = study_proxies.popularity.reindex(covered["item_id"]).fillna(0).to_numpy(dtype=float)
    frame["log_popularity"] = np.log1p(popularity)
    movies = study.movies.reindex(covered["item_id"])
    frame["release_year"] = pd.to_numeric(movies["year"], errors="coerce").to_numpy() if "year" in movies else np.nan
    frame["title_length"] = _title_length(movies["title"]).to_numpy(dtype=float)
    history_length = study.history.groupby(["user_id", "item_id"]).size()
    frame["history_length"] = (covered.set_index(["user_id", "item_id"]).index.map(history_length)
                               .fillna(0).astype(float).to_numpy())

    rows = []
    if use_recorded and not study.synthetic:
        scores = trust_judges.recorded_gpt35(covered, mode=mode).scores()
        frame[RECORDED] = scores.reindex(keys).to_numpy()
        rows.append({"judge": RECORDED, "kind": "recorded LLM", "family": "GPT-3.5", "scoring": "generated integer",
                     "note": "recorded by a third party with its own prompt and history"})
    names = [j.name for j in trust_judges.LOCAL_JUDGES] if local_judges is None else list(local_judges)
    asked = [(trust_judges.by_name(name), "local LLM") for name in names] + [(r, "reader's LLM") for r in readers]
    for judge, kind in asked:
        run = trust_judges.run(judge, study, covered, mode=mode, seed=seed)
        sampled = ("" if judge.sample_size is None or judge.sample_size >= len(covered)
                   else f"; a random sample of {judge.sample_size:,} answers")
        for column, label, scoring in ((None, judge.name, "expected score"),
                                       ("modal_score", f"{judge.name}{INTEGER}", "most likely score token")):
            frame[label] = run.scores(column=column).reindex(keys).to_numpy()
            rows.append({"judge": label, "kind": kind, "family": judge.family, "scoring": scoring,
                         "note": judge.note + sampled})
    for method in proxies.PROXIES:
        frame[method] = study_proxies.scores.set_index(study.answers.index)[method].reindex(covered.index).to_numpy()
        rows.append({"judge": method, "kind": "proxy metric", "family": "proxy", "scoring": "eq. 6 (1-5)",
                     "note": "as in the RQ1 chapter"})
    table = pd.DataFrame(rows)
    table["answers"] = [int(frame[j].notna().sum()) for j in table["judge"]]
    return JudgedPopulation(frame.reset_index(drop=True), table)
