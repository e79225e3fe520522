"""What the papers print, where they print it: the findings cite the table that holds a number, the claims show the
printed numbers and every substitution, and a chapter's sentence about another chapter's prompt matches its
parameter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recjudge.compendium import at_a_glance, claims
from recjudge.compendium.results import load_table

ROOT = Path(__file__).resolve().parents[1]


def claim(starts: str) -> claims.Claim:
    return next(c for c in claims.CLAIMS if c.claim.startswith(starts))


def test_the_rq2_answer_cites_table_5_for_the_numbers_table_5_prints():
    answer = at_a_glance.kang_rq2_rq3_answer(load_table)
    assert "Table 4" not in answer and answer.endswith("Table 5)"), "11.48% and 20.25% are Table 5's numbers"


@pytest.mark.parametrize("starts", ["Averaging several LLM judges", "LLMs evaluate explanations",
                                    "Normalised surprise orders", "The magnitudes of normalised surprise",
                                    "An LLM recommender's lists move"])
def test_claims_on_printed_tables_show_the_printed_numbers(starts):
    assert re.search(r"\d\.\d", claim(starts).evidence(load_table).paper_numbers)


@pytest.mark.parametrize(("starts", "aspect"), [
    ("The proxy metrics agree only weakly", "history"), ("Every proxy metric agrees", "history"),
    ("Auxiliary data in the prompt", "history"), ("Averaging several LLM judges", "history"),
    ("An LLM judge ranks the recommenders' serendipity", "prompt"), ("An Avg. Score@20 of 2.1–2.4", "prompt"),
    ("Normalised surprise orders", "time frames"), ("The magnitudes of normalised surprise", "time frames"),
    ("The choice of item model and distance", "time frames"),
])
def test_each_claim_names_every_substitution_that_applies(starts, aspect):
    assert aspect in {d.aspect for d in claim(starts).evidence(load_table).differences}


def test_lima_claims_give_the_chapters_threshold_and_intervals_beside_the_papers():
    frames = next(d for d in claim("Normalised surprise orders").evidence(load_table).differences
                  if d.aspect == "time frames")
    scope = load_table("normalised_surprise", "experiment2_scope").iloc[0]
    assert frames.here == (f"{int(scope['intervals_used'])} intervals of at least "
                           f"{int(scope['min_common_users'])} common users")
    assert frames.paper == "at least 30 intervals of at least 30 users"


def test_the_prompt_chapter_names_the_prompt_the_reevaluation_uses():
    reevaluation = (ROOT / "notebooks" / "recommender_reevaluation.md").read_text(encoding="utf-8")
    used = re.search(r'^prompt = "([^"]+)"', reevaluation, re.MULTILINE).group(1)
    strategies = (ROOT / "notebooks" / "prompt_strategies.md").read_text(encoding="utf-8")
    assert "keeps CoT as the re-evaluation" not in strategies
    assert "the strategy the recommender re-evaluation uses" not in strategies
    assert f"`{used}`" in strategies

