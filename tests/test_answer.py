"""The book's answer (landing page) and its closing page, generated from the claims registry."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from recjudge.compendium import answer, claim_evidence, claims
from recjudge.compendium.results import load_table
from recjudge.metaeval import paper_judges
from recjudge.trust.papers_worth import paper_judges_worth

ROOT = Path(__file__).resolve().parents[1]


def humans():
    return paper_judges.paper_judges().query("kind == @paper_judges.ANNOTATOR")


def test_the_answer_states_the_papers_numbers_the_ceiling_the_verdicts_and_the_caveat():
    records, worth = claims.registry(load_table), paper_judges_worth()
    text = answer.answer_markdown(records, worth, humans())
    assert answer.QUESTION in text and answer.CAVEAT in text
    best = worth.loc[worth["pearson_pct"].abs().idxmax()]
    # the strongest pooled LLM row as r with its interval, the share it saves, and the annotators' range
    assert f"{{term}}`r <Pearson correlation>` = {best['pearson_pct'] / 100:.2f} [" in text
    assert f"{best['labels_saved_pct']:.1f}%" in text
    pooled = humans()[humans()["reading"] == paper_judges.POOLED]["pearson_pct"] / 100
    assert f"r = {pooled.min():.2f} to {pooled.max():.2f}" in text
    counts = text.split(f"Of the {len(records)} claims one rule read, ", 1)[1].split(" ({doc}", 1)[0]
    counted = re.findall(r"(\d+) (?:" + "|".join(re.escape(words) for words, _ in answer.VERDICT_GROUPS) + ")", counts)
    assert sum(int(c) for c in counted) == len(records)
    assert f"{paper_judges.annotators(humans())} human annotators reach" in text
    assert "errs less ({term}`MAE` on the ground truth {term}`g`) than all 8 judges" in text  # Tokutake's Table 1
    assert "%" not in text.split("` = ")[1].split(")")[0], "correlations as r, not per cent"


def test_every_verdict_falls_in_one_group_of_the_short_answer():
    grouped = [verdict for _, verdicts in answer.VERDICT_GROUPS for verdict in verdicts]
    assert sorted(grouped) == sorted(claim_evidence.VERDICTS)
    records = claims.registry(load_table)
    assert answer.grouped_verdicts(records.head(0).assign(verdict=[])) == ""
    one = records.iloc[[0]].assign(verdict=claim_evidence.NOT_TESTABLE)
    assert answer.grouped_verdicts(one) == "1 cannot be decided here"


def test_an_interval_is_placed_against_a_range_by_whether_they_meet():
    assert [answer.placement(*interval, 9, 26) for interval in ((25, 32), (27, 30), (1, 5), (5, 9))] == [
        "within the range of", "above", "below", "within the range of"]


def test_the_answers_words_follow_the_numbers():
    assert [answer.strength(r) for r in (0.05, 0.29, 0.5)] == ["weakly", "modestly", "strongly"]
    assert [answer.worth(p) for p in (0.5, 8.2, 30)] == [
        "Worth less than a label in a hundred", "Worth a few labels in a hundred", "Worth many labels"]


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
    needs_a_judge = records["verdict"].isin([claim_evidence.NOT_TESTABLE, claim_evidence.NOT_RUN]) \
        & records["reason"].str.contains(claim_evidence.NEEDS_A_CAPABLE_LLM, regex=False)
    assert text.count("recjudge run --judge") == int(needs_a_judge.sum())


def test_a_claim_that_needs_data_is_settled_with_data_not_a_judge():
    # the Lima magnitudes need MovieLens-1M's ratings and descriptions: a judge command settles nothing there
    records = claims.registry(load_table)
    text = answer.learned_markdown(records)
    line = next(line for line in text.splitlines() if "The magnitudes of normalised surprise" in line)
    assert "recjudge run --judge" not in line
    assert "RECJUDGE_DATA_MIRROR" in line and "--only normalised_surprise" in line


def test_the_closing_page_is_in_the_run_plan_and_the_table_of_contents_before_the_appendix():
    runs = [run["name"] for run in yaml.safe_load((ROOT / "runplan.yaml").read_text())["runs"]]
    assert "what_we_learned" in runs
    parts = yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]
    captions = [part["caption"] for part in parts]
    closing = next(i for i, part in enumerate(parts)
                   if any(entry["file"] == "book/notebooks/what_we_learned" for entry in part["chapters"]))
    appendix = next(i for i, caption in enumerate(captions) if caption.startswith("Appendix"))
    assert closing < appendix, f"the closing page is in {captions[closing]!r}, after {captions[appendix]!r}"


def test_the_caveat_is_the_short_answers_first_point_of_three():
    # measured in the browser (test_book_render): as the last point it started 927 px down a 1280 x 800 screen
    text = answer.answer_markdown(claims.registry(load_table), paper_judges_worth(), humans())
    points = [line for line in text.splitlines() if line.startswith("- ")]
    assert points[0].startswith(f"- {answer.CAVEAT}") and len(points) == 3


def test_the_closing_page_shows_every_claim_once_whatever_its_verdict():
    """The supported claims and those the authors' own text contradicts had no section: four of the registry's
    claims were missing from the closing page."""
    records = claims.registry(load_table)
    text = answer.learned_markdown(records)
    assert [claim for claim in records["claim"] if text.count(f"*{claim}*") != 1] == []


def test_the_synthesis_counts_the_claims_about_capable_judges_from_the_registry():
    records = claims.registry(load_table)
    text = answer.synthesis_markdown(records, paper_judges_worth(), humans())
    capable = records[records["about_capable_llms"]]
    hold = capable[capable["verdict"].isin(dict(answer.VERDICT_GROUPS)["hold"])]
    assert f"Of the {len(capable)} claims about what capable LLM judges do, {len(hold)} hold" in text
    assert all(f"*{claim}*" in text for claim in hold["claim"])
    failing = records[records["verdict"].isin(dict(answer.VERDICT_GROUPS)["fail"])]
    assert f"{len(failing)} claims fail" in text and all(f"*{claim}*" in text for claim in failing["claim"])
    for title in ("What it says about LLM judges", "What it does not say", "What would change it"):
        assert f"**{title}.**" in text
    sized = records[records["reason"].str.contains(claim_evidence.NEEDS_A_CAPABLE_LLM, regex=False)
                    & records["n_needed"].notna()]
    assert f"need {int(sized['n_needed'].min()):,} to {int(sized['n_needed'].max()):,} answers" in text


def test_the_synthesis_follows_a_registry_with_other_verdicts():
    records = claims.registry(load_table)
    capable = records["about_capable_llms"]
    changed = records.assign(verdict=records["verdict"].where(~capable, claim_evidence.REPRODUCED))
    text = answer.synthesis_markdown(changed, paper_judges_worth(), humans())
    assert f"{int(capable.sum())} hold, 0 of them by the papers' own numbers" in text
    assert f"0 of the {int(capable.sum())} claims about capable judges cannot be decided here." in text
    assert f"{int(capable.sum())} of the {int(capable.sum())} were tested with a judge of this build." in text
