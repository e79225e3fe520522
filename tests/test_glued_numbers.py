"""Every number a reader-facing sentence prints is glued from a table or a named constant, never typed: a typed
number outlives the computation it once described ("100.4 labels", "the papers' best reported judge, 14.55%", "2.1–2.4"
after the table changed). The page modules (the chapters' and the compendium's, whose strings are the sentences of
the pages) hold no decimal number and no percentage in their prose, except the book's conventions
(``CONVENTIONS``), a number that names something (a section, table or figure; a model such as Qwen2.5-14B), a cited
quotation of a paper, and a registered claim's words (a paper's claim, its quote checked against the paper's text in
``tests/test_papers_where_they_say_it.py``). Strings that are not prose (a format, a style sheet) are not read. The
scanner is tested on planted examples."""

from __future__ import annotations

import ast
import re

import pytest
from python_sources import docstring_ids

from recjudge.compendium import claims
from recjudge.paths import project_root

ROOT = project_root()
#: The modules whose strings are sentences of the pages: the chapters' and the compendium's, and the domain modules
#: that write a finding, a caption or a figure's alt text (the headline figure's is written by trust.judge_table).
#: Left out: data/ (its strings are the datasets' file notes, facts about files) and planted/ (its strings are the
#: claims' short names, a claim's words).
PAGE_PACKAGES = ("chapters", "compendium", "trust", "metamorphic", "recsys", "serendipity", "explanations", "metaeval")
PAGE_MODULES = sorted(path for package in PAGE_PACKAGES for path in (ROOT / "src" / "recjudge" / package).rglob("*.py"))

#: A decimal number or a percentage standing alone (not part of a name such as Qwen2.5-14B or gpt-3.5-turbo, nor a
#: version or a section number such as 4.1 after "section").
NUMBER = re.compile(r"(?<![\w.\-/@])[−-]?(?:\d+(?:,\d{3})*(?:\.\d+)?\s?%|\d*\.\d+)(?![\w.\-]*\d)(?![A-Za-z])")
#: What names a number rather than states it: "section 4.1", "§3.2", "Table 2.1", "Figure 3", "eq. 5".
NAMING = re.compile(r"(?:sections?|§|tables?|figures?|eq\.|equation|version|v)\s*$", re.IGNORECASE)
#: The book's conventions, the same on every page: 95% intervals, 80% power, the 0.05 level of significance.
CONVENTIONS = frozenset({"95%", "80%", "0.05"})
#: Text in double quotation marks followed at once by a citation: a paper's words, printed as the paper prints them.
QUOTATION = re.compile(r"(?:\"[^\"\n]+\"|\u201c[^\u201d\n]+\u201d)"
                       r"(?=\s*(?:\{cite(?::\w+)?\}`|\([A-Z][^()\n]*,\s*\d{4}\)|\((?:section|§)))")
#: A string is prose when it holds words: two words of letters one space apart. A style sheet and a format are not.
PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")
STYLE = re.compile(r"[\w-]+\s*:\s*[^;{}]+[;}]")
CLAIM_TEXTS = frozenset(claim.claim for claim in claims.CLAIMS)


def typed_numbers(text: str) -> list[str]:
    """The decimal numbers and percentages ``text`` states that are neither a convention nor a name, outside cited
    quotations."""
    text = QUOTATION.sub(lambda quote: " " * len(quote.group(0)), text)
    found = []
    for match in NUMBER.finditer(text):
        number = match.group(0).replace(" ", "").replace("−", "-")
        if number.lstrip("-") in CONVENTIONS or NAMING.search(text[:match.start()]):
            continue
        found.append(match.group(0))
    return found


def _quotes(tree: ast.AST) -> set[int]:
    """The ids of the strings passed as ``quote=``: a claim's quote, the paper's own words, checked against its text."""
    return {id(node) for call in ast.walk(tree) if isinstance(call, ast.Call)
            for keyword in call.keywords if keyword.arg == "quote"
            for node in ast.walk(keyword.value) if isinstance(node, ast.Constant)}


def in_python(source: str) -> list[tuple[int, str]]:
    """(line, number) for every number typed in the prose of a string literal of ``source`` (f-strings' literal
    parts included), except docstrings, the registry's claims and their quotes."""
    tree = ast.parse(source)
    skipped = docstring_ids(tree) | _quotes(tree)
    return [(node.lineno, number) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
            and node.value not in CLAIM_TEXTS and PROSE.search(node.value) and not STYLE.search(node.value)
            for number in typed_numbers(node.value)]


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_no_page_module_types_a_number_in_its_prose(path):
    assert [f"{path.name}:{line}: {number!r}" for line, number in in_python(path.read_text(encoding="utf-8"))] == []


#: The chapters' prose files (``recjudge.compendium.prose``): the sentences the page modules fill in.
PROSE_FILES = sorted((ROOT / "notebooks" / "prose").glob("*.md"))


@pytest.mark.parametrize("path", PROSE_FILES, ids=lambda path: path.name)
def test_no_prose_file_types_a_number_its_module_should_fill_in(path):
    from recjudge.compendium.prose import Prose

    passages = Prose(path.stem, folder=path.parent).passages()
    assert [f"{path.name}: {name}: {number!r}" for name, passage in passages.items()
            for number in typed_numbers(passage.text)] == []


PLANTED_MODULE = '''"""A docstring may say 100.4 labels."""
CSS = "table{margin:0.4em 0 0.2em;width:100%}"
FORMAT = "{:.1%}"


def finding(worth):
    typed = "one with rho near 0 is worth about 100.4 labels at n = 100"
    ok = f"worth {worth:.1f} labels [95% interval], p < 0.05, with Qwen2.5-14B as in section 4.1 and Table 2.1"
    quoted = 'the paper says "the Avg. Score remained in the 2.1–2.4 range" (section 5.2)'
    return typed, ok, quoted, "the papers' best reported judge (GPT-4 few-shot, 14.55%) and −21.3% to 89.7%"
'''


def test_the_scanner_finds_planted_numbers():
    assert in_python(PLANTED_MODULE) == [(7, "100.4"), (10, "14.55%"), (10, "−21.3%"), (10, "89.7%")]
    assert typed_numbers("the strongest of 12, 38.3% [−1.2, 4.5], in section 4.1; \"about 100%\" (section 3.2)") \
        == ["38.3%", "−1.2", "4.5"]
