"""The book's answer (landing page) and its closing page, generated from the claims registry."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from recjudge.compendium import answer, claim_evidence, claims
from recjudge.compendium.results import load_table
from recjudge.trust.papers_worth import paper_judges_worth

ROOT = Path(__file__).resolve().parents[1]


def test_the_answer_states_the_papers_numbers_the_verdicts_and_the_caveat():
    records, worth = claims.registry(load_table), paper_judges_worth()
    text = answer.answer_markdown(records, worth)
    assert answer.QUESTION in text and answer.CAVEAT in text
    assert f"{worth['labels_saved_pct'].max():.1f}%" in text
    counts = text.split(f"on {len(records)} claims:**", 1)[1].split(". Of the", 1)[0]
    counted = re.findall(r"(\d+) (?:" + "|".join(re.escape(v) for v in claim_evidence.VERDICTS) + ")", counts)
    assert sum(int(c) for c in counted) == len(records)
    assert "errs less than every one of the 8 judges" in text  # Tokutake's Table 1 against answering 2


def test_the_landing_page_opens_with_the_answer():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert intro.index(answer.ANSWER_FILE) < intro.index("## Findings")


def test_the_closing_page_says_what_would_settle_every_untested_claim():
    records = claims.registry(load_table)
    text = answer.learned_markdown(records)
    for paper in records["paper"].unique():
        assert f"## {paper}" in text
    untested = records[records["verdict"] == claim_evidence.NOT_TESTABLE]
    assert len(untested) and all(row.reason in text for row in untested.itertuples())
    assert text.count("recjudge run --judge") == len(records[records["verdict"].isin([claim_evidence.NOT_TESTABLE,
                                                                                         claim_evidence.NOT_RUN])])


def test_the_closing_page_is_in_the_run_plan_and_the_table_of_contents():
    runs = [run["name"] for run in yaml.safe_load((ROOT / "runplan.yaml").read_text())["runs"]]
    assert "what_we_learned" in runs
    assert "book/notebooks/what_we_learned" in (ROOT / "_toc.yml").read_text()



def test_the_caveat_is_the_short_answers_first_point():
    # measured in the browser (test_book_render): as the last point it started 927 px down a 1280 x 800 screen
    text = answer.answer_markdown(claims.registry(load_table), paper_judges_worth())
    points = [line for line in text.splitlines() if line.startswith("- ")]
    assert points[0] == f"- {answer.CAVEAT}" and len(points) == 4
