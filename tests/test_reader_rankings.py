"""A reader's judge's ranking of the recommenders decides the re-evaluation claim only on enough judged lists."""

from __future__ import annotations

import pandas as pd

from recjudge import papers
from recjudge.compendium import pages
from recjudge.compendium.claim_evidence import READER_JUDGES
from recjudge.compendium.comparisons import reader_rankings

READER = "reader-judge"


def loader(lists: int, errors: float = 0.01):
    """Table 3 of a reader's judge that ranks the printed ML-1M recommenders exactly as the paper's judge does, each
    mean over ``lists`` judged lists."""
    printed = papers.table("tokutake2025framework_table3").query("dataset == 'ML-1M'")
    table3 = pd.DataFrame({"recommender": printed["recommender"], "avg_score_mean": printed["avg_score"],
                           "avg_score_se": errors, "n_lists": lists, "judge": READER})

    def load(chapter: str, name: str) -> pd.DataFrame:
        assert (chapter, name) == ("recommender_reevaluation", "table3_latest-small")
        return table3
    return load


def test_a_ranking_on_fewer_judged_lists_than_the_books_minimum_decides_nothing():
    """On 3 judged users per fold the chapter's page shows the serendipity numbers as too few, yet the claim read a
    planted judge's τ from them as "reproduced" (2 of 15 seeds): the check carries its lists as its n."""
    (few,) = reader_rankings(loader(pages.MIN_ANSWERS - 1), [READER])
    assert few.n == pages.MIN_ANSWERS - 1 and few.by == READER_JUDGES
    assert few.state() == "undecided"
    (enough,) = reader_rankings(loader(pages.MIN_ANSWERS), [READER])
    assert enough.state() == "holds"
