"""Every claim names the section of its paper that holds it: the claim's quoted words or numbers are found in that
section of the paper's text (``../shared/papers/`` beside the checkout)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recjudge.compendium import claims

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
#: The file of each paper's text, by the start of its name.
PAPER_FILES = {claims.KANG: "kang2025", claims.TOKUTAKE: "tokutake2025", claims.ZHANG: "zhang2024",
               claims.LIMA: "lima", claims.KHIRBAT: "khirbat2024"}
#: Per claim, words or numbers its section prints (None: the claim is not the paper's text, with the reason).
QUOTES: dict[str, str | tuple[None, str]] = {
    "The proxy metrics agree only weakly with users' serendipity ratings": "SOG 4.6095 1.5231 1.8736 5.7226",
    "Every proxy metric agrees with users better than random": "proxy metrics surpass random baselines",
    "Every Pearson correlation of Table 2 is significant at p < 0.05":
        "all reported Pearson correlation coefficients are statistically significant",
    "Zero-shot LLM judges beat the best proxy (SOG) by about 100% in Pearson":
        "by approximately 100% in Pearson correlation compared to the best proxy metric (SOG)",
    "Auxiliary data in the prompt makes the judge agree better with users": "Auxiliary Data 18.2535",
    "Averaging several LLM judges agrees better with users than one": "Multi-LLM & Auxiliary Data 20.2293",
    "The ground truth g has the printed distribution": "1 (321), 2 (1,022), 3 (586), 4 (208), and 5 (13)",
    "Chain-of-thought makes the best serendipity judge": "CoT\t<b>0.8470</b>",
    "The six recommenders rank by accuracy on ML-1M as printed": "<b>8.28</b>\t<b>11.8</b>",
    "An LLM judge ranks the recommenders' serendipity as printed": "<b>2.387</b>",
    "An Avg. Score@20 of 2.1–2.4 aligns with g, so the judge reflects real users' serendipity":
        "the Avg. Score remained in the 2.1–2.4 range",
    "The annotator rows": "Annotator-1\t19.88 / 18.31 / 16.72",
    "The BLEU and ROUGE rows": "ROUGE-L-F\t14.16 / 16.39 / 17.56",
    "LLMs evaluate explanations as well as or better than the reference metrics": "21.07 / 21.90 / 23.63",
    "The LLM is asked about each aspect with the users' questionnaire statement":
        (None, "the authors' prompt is in their published code, not in the paper's text"),
    "Normalised surprise orders MSI ≥ kNN ≥ LSI": "Median, mean and standard deviation of",
    "The magnitudes of normalised surprise on MovieLens-1M with movie descriptions": "0.912\t0.910\t0.031",
    "The choice of item model and distance has a non-negligible effect (coefficients of variation 13.6%, 29.9%, "
    "13.8%, 20.7%)": "is 13.6% with cosine distance, and 29.9% with Euclidean distance",
    "An LLM recommender's lists move under semantics-preserving prompt changes": "MR1: Multiply\t0.4829(0.0082)",
}
_HEADING = re.compile(r"^(?:#+\s*)?(?:<span[^>]*></span>\s*)?(\d+(?:\.\d+)*)\.?\s+[A-Z]")
_CAPTION = re.compile(r"^(?:\*\*|<span[^>]*></span>)?\s*(Table|Figure)\s+(\d+)\s*[.:]")


def _paper_lines(paper: str) -> list[str]:
    found = sorted(PAPERS.glob(PAPER_FILES[paper] + "*"))
    assert len(found) == 1, f"one text of {paper} in {PAPERS}, found {found}"
    return found[0].read_text(encoding="utf-8").splitlines()


def _numbered_section(lines: list[str], number: str) -> str:
    """The text of section ``number`` ("3.2", "5"): from its heading to the next heading of its level or above."""
    depth = number.count(".") + 1
    start = next((i for i, line in enumerate(lines) if (m := _HEADING.match(line)) and m.group(1) == number), None)
    assert start is not None, f"the paper has no section {number}"
    end = next((i for i in range(start + 1, len(lines))
                if (m := _HEADING.match(lines[i])) and m.group(1).count(".") + 1 <= depth), len(lines))
    return "\n".join(lines[start:end])


def _table(lines: list[str], number: int) -> str:
    """Table ``number``'s caption and body: up to the next caption or numbered heading."""
    start = next((i for i, line in enumerate(lines)
                  if (m := _CAPTION.match(line)) and (m.group(1), int(m.group(2))) == ("Table", number)), None)
    assert start is not None, f"the paper has no Table {number}"
    end = next((i for i in range(start + 1, len(lines)) if _CAPTION.match(lines[i]) or _HEADING.match(lines[i])),
               len(lines))
    return "\n".join(lines[start:end])


def section_text(paper: str, section: str) -> str:
    """The text a claim's ``section`` names: "section 3.2", "section 5.2, finding (3)", "Table 2", "Tables 2–4",
    "RQ2, Tables 4–5", "Discussion"."""
    lines = _paper_lines(paper)
    if (m := re.search(r"section (\d+(?:\.\d+)*)", section)):
        return _numbered_section(lines, m.group(1))
    if (m := re.search(r"Tables? (\d+)(?:–(\d+))?", section)):
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        return "\n".join(_table(lines, n) for n in range(first, last + 1))
    if section == "Discussion":
        start = next(i for i, line in enumerate(lines) if _HEADING.match(line) and "DISCUSSION" in line.upper())
        return _numbered_section(lines, _HEADING.match(lines[start]).group(1))
    raise AssertionError(f"no rule reads the section {section!r} of {paper}")


PAPER_CLAIMS = [claim for claim in claims.CLAIMS if claim.paper in PAPER_FILES]


def test_every_paper_claim_has_its_quote():
    assert {claim.claim for claim in PAPER_CLAIMS} == set(QUOTES)


@pytest.mark.skipif(not PAPERS.is_dir(), reason=f"the papers' texts are not in {PAPERS}")
@pytest.mark.parametrize("claim", PAPER_CLAIMS, ids=lambda claim: claim.claim[:40])
def test_the_claims_words_or_numbers_are_in_the_section_it_names(claim):
    quote = QUOTES[claim.claim]
    if isinstance(quote, tuple):
        pytest.skip(quote[1])
    text = section_text(claim.paper, claim.section)
    assert quote in text, f"{claim.paper}, {claim.section} does not hold {quote!r}"


@pytest.mark.skipif(not PAPERS.is_dir(), reason=f"the papers' texts are not in {PAPERS}")
def test_a_wrong_section_is_found_wrong():
    assert "all reported Pearson correlation" not in section_text(claims.KANG, "section 4.1")
    with pytest.raises(AssertionError, match="no section 5.1"):
        section_text(claims.KANG, "section 5.1")
