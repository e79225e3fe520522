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


@pytest.mark.parametrize("starts", ["Averaging several LLM judges", "Certain LLMs evaluate explanations",
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



# ------------------------------------------------------------------------ the sections the claims and pages cite
PAPERS = ROOT.parent / "shared" / "papers"
needs_papers = pytest.mark.skipif(not PAPERS.is_dir(), reason=f"the papers' texts are not in {PAPERS}")
#: The file of each paper's text, by the start of its name.
PAPER_FILES = {claims.KANG: "kang2025", claims.TOKUTAKE: "tokutake2025", claims.ZHANG: "zhang2024",
               claims.LIMA: "lima", claims.KHIRBAT: "khirbat2024"}
#: The author whose name in a sentence says which paper it cites.
AUTHORS = {"Kang": claims.KANG, "Tokutake": claims.TOKUTAKE, "Zhang": claims.ZHANG, "Lima": claims.LIMA,
           "Khirbat": claims.KHIRBAT}
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
    "RQ2, Table 5", "Discussion" (the first named, where it names several)."""
    lines = _paper_lines(paper)
    if (m := re.search(r"(?:section|§)\s*(\d+(?:\.\d+)*)", section, re.IGNORECASE)):
        return _numbered_section(lines, m.group(1))
    if (m := re.search(r"Tables? (\d+)(?:–(\d+))?", section)):
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        return "\n".join(_table(lines, n) for n in range(first, last + 1))
    if section == "Discussion":
        start = next(i for i, line in enumerate(lines) if _HEADING.match(line) and "DISCUSSION" in line.upper())
        return _numbered_section(lines, _HEADING.match(lines[start]).group(1))
    raise AssertionError(f"no rule reads the section {section!r} of {paper}")


def words(text: str) -> list[str]:
    """The words and numbers of ``text``, lower-cased, in order (typography, markup and a PDF's leftovers aside)."""
    return re.findall(r"[a-z0-9]+", text.lower().replace("’", "'"))


def quoted_in(text: str, quote: str) -> bool:
    """Whether ``text`` holds ``quote``'s words in order, each part of a quote elided with "…" after the one
    before, a part's words close together (a PDF's text may put a formula's leftovers between two of them)."""
    found, at = words(text), 0
    for part in (words(piece) for piece in quote.split("…")):
        window = 2 * len(part) + 10
        end = next((stop for start in range(at, len(found)) if found[start] == part[0]
                    for stop in [_matched_end(found, part, start, window)] if stop is not None), None)
        if end is None:
            return False
        at = end
    return True


def _matched_end(found: list[str], part: list[str], start: int, window: int) -> int | None:
    position = start
    for word in part:
        while position < min(len(found), start + window) and found[position] != word:
            position += 1
        if position >= min(len(found), start + window):
            return None
        position += 1
    return position


PAPER_CLAIMS = [claim for claim in claims.CLAIMS if claim.paper in PAPER_FILES]
#: Claims that are not the paper's text, with the reason (everything else carries its quote).
NOT_IN_THE_PAPERS_TEXT = {"the authors' prompt": "the authors' prompt is in their published code, not the paper"}


def test_every_paper_claim_carries_the_papers_words():
    missing = [claim.claim for claim in PAPER_CLAIMS if not claim.quote and claim.section not in NOT_IN_THE_PAPERS_TEXT]
    assert missing == []


@pytest.mark.parametrize("claim", [claim for claim in PAPER_CLAIMS if claim.quote], ids=lambda claim: claim.claim[:40])
def test_a_number_in_a_claims_words_is_the_papers(claim):
    # a claim may print a decimal or a percentage only where the paper's quoted words print it (the typed-number
    # test allows it there); a name's digits (Qwen2.5-14B, Table 2, Score@20) are no such number
    def numbers(text: str) -> set[str]:
        return set(re.findall(r"(?<![\w.@-])(\d+(?:\.\d+)?(?=%)|\d*\.\d+)(?![\w.]*\d)", text))

    assert numbers(claim.claim) <= numbers(claim.quote), claim.claim


@needs_papers
@pytest.mark.parametrize("claim", [claim for claim in PAPER_CLAIMS if claim.quote], ids=lambda claim: claim.claim[:40])
def test_every_section_a_claim_cites_holds_its_quoted_words(claim):
    assert quoted_in(section_text(claim.paper, claim.section), claim.quote), \
        f"{claim.paper}, {claim.section} does not hold {claim.quote!r}"


@needs_papers
def test_a_wrong_section_or_a_misquote_is_found_wrong():
    assert not quoted_in(section_text(claims.KANG, "section 4.1"), "all reported Pearson correlation coefficients")
    with pytest.raises(AssertionError, match="no section 5.1"):
        section_text(claims.KANG, "section 5.1")
    zhang_3 = section_text(claims.ZHANG, "section 3")
    assert quoted_in(zhang_3, "the evaluation of Transparency is relatively independent")
    assert not quoted_in(zhang_3, "the evaluation of Transparency is relatively independently")
    assert not quoted_in(section_text(claims.ZHANG, "section 2.4"), "relatively independent")


#: A reference to a section ("Section 4.1", "section 2.3.2", "§3.2") and a quotation in double quotation marks.
SECTION_REFERENCE = re.compile(r"(?:\b[Ss]ection|§)\s*(\d+(?:\.\d+)*)")
QUOTED = re.compile(r"\"([^\"]{12,}?)\"|\u201c([^\u201d]{12,}?)\u201d")
#: The paper of each chapter that examines one (its claims' paper).
CHAPTER_PAPERS = {claim.chapter: claim.paper for claim in claims.CLAIMS if claim.paper in PAPER_FILES}


def cited_quotations(text: str, paper: str | None) -> list[tuple[str, str, str]]:
    """(paper, section, quote) for every quotation of a paragraph that follows a section reference in it: the
    quotation cites that section of the paper the paragraph names by its author, else of ``paper``."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        references = list(SECTION_REFERENCE.finditer(paragraph))
        for quote in QUOTED.finditer(paragraph):
            before = [reference for reference in references if reference.start() < quote.start()]
            if not before:
                continue
            named = [AUTHORS[name] for name in AUTHORS if name in paragraph[:quote.start()]]
            cited = named[-1] if named else paper
            if cited is not None:
                found.append((cited, f"section {before[-1].group(1)}", quote.group(1) or quote.group(2)))
    return found


def page_quotations() -> list[tuple[str, str, str, str]]:
    """(where, paper, section, quote) for every quotation a chapter's prose (its notebook's Markdown, its page
    module's strings) attributes to a section of a paper."""
    import ast

    import jupytext

    found = []
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        prose = "\n\n".join(cell.source for cell in jupytext.read(path).cells if cell.cell_type == "markdown")
        found += [(path.name, *cited) for cited in cited_quotations(prose, CHAPTER_PAPERS.get(path.stem))]
    for path in sorted((ROOT / "src" / "recjudge" / "chapters").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [(f"{path.name}:{node.lineno}", *cited)
                          for cited in cited_quotations(node.value, CHAPTER_PAPERS.get(path.stem))]
    return found


@needs_papers
def test_every_quotation_a_page_attributes_to_a_section_is_in_that_section():
    # "Section 4.1 says that 'all reported ...'" (it is section 2.5), and "relatively independently" cited as
    # section 2.4 (the paper, section 3: "relatively independent")
    wrong = [f"{where}: {section} of {paper} does not hold {quote!r}"
             for where, paper, section, quote in page_quotations()
             if not _holds(paper, section, quote)]
    assert wrong == []


def _holds(paper: str, section: str, quote: str) -> bool:
    try:
        return quoted_in(section_text(paper, section), quote)
    except AssertionError:  # no such section
        return False


def test_the_scanner_attributes_a_quotation_to_the_section_before_it():
    text = ('Section 4.1 says that "all reported Pearson correlations are significant"; Zhang et al. find it '
            '(section 3) "relatively independent of the rest".\n\nA "quoted phrase with no section" is not read.')
    assert cited_quotations(text, claims.KANG) == [
        (claims.KANG, "section 4.1", "all reported Pearson correlations are significant"),
        (claims.ZHANG, "section 3", "relatively independent of the rest")]
