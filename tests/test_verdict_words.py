"""No verdict word is typed in a chapter: the claims registry's verdicts (``claim_evidence.VERDICTS``) appear in a
notebook's prose or in a string a chapter module writes only when glued from the rule (a ``{glue}`` role, or a
reference to the registry's constant such as ``claim_evidence.NOT_RUN``), never as literal text. The same holds for
comparative wording about judges or methods (``COMPARATIVES``: "better", "steadier", "not invariant", "most useful",
…), whose word a rule reading the numbers chooses. Allowed: docstrings, a rule's named vocabulary (``NAME = "..."``),
a research question, a quotation of a paper in quotation marks followed at once by its citation, and a string passed
as ``label=`` to a formatter: a column header such as "Better / worse (P)" names a computed count of wins and losses,
not a claim. The scanner itself is tested on planted examples, so an empty list of findings means the chapters are
clean, not that the scanner is blind.

Every module of the package is scanned (the compendium's page builders, the chapters' and the domain modules whose
sentences reach a page), and so are the notebooks and the prose pages of ``book/``. A constant is scanned like any
string: only a rule's vocabulary is allowed, an upper-case constant every use of which is a branch of a conditional
(the rule chooses it), and the registry's own verdicts where ``claim_evidence`` defines them. A question (a string
ending in "?"), a claim of the registry (a paper's claim, shown with its paper and section, and its ``quote=``, the
paper's words) and an option's ``help=`` text state no finding either. The built book is scanned once as well
(when ``_build/html`` exists, and always under ``RECJUDGE_REQUIRE_BOOK=1``): a verdict word on a page must stand
inside one of those allowed texts, whatever path it took there."""

from __future__ import annotations

import ast
import functools
import os
import re
from pathlib import Path

import jupytext
import pytest
from python_sources import docstring_ids

from recjudge.compendium import claim_evidence, claims
from recjudge.paths import project_root

NOTEBOOK_DIR = project_root() / "notebooks"
CHAPTER_DIR = project_root() / "src" / "recjudge" / "chapters"
PACKAGE_DIR = project_root() / "src" / "recjudge"
BOOK_DIR = project_root() / "book"
HTML_DIR = project_root() / "_build" / "html"

#: The registry's own vocabulary, longest first, each phrase allowed to wrap across lines.
VERDICT_PATTERN = re.compile(
    "|".join(r"\b" + r"\s+".join(map(re.escape, verdict.split())) + r"\b"
             for verdict in sorted(claim_evidence.VERDICTS, key=len, reverse=True)),
    re.IGNORECASE)
#: A glued value (``{glue:text}`name```) is chosen by code; its role names it, it is not prose.
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
#: Inline code in Markdown names code (``claim_evidence.NOT_RUN``), not prose: single backticks on one line (a fence
#: such as ```{admonition} holds prose). Another role's text (a term, a page title) is shown to the reader and is
#: scanned.
INLINE_CODE = re.compile(r"(?<![`}])`[^`\n]+`(?!`)")

#: Comparative wording about judges or methods: a finding's direction ("the ensemble is steadier") is a verdict too,
#: chosen by a rule that reads n and an interval. Whole words only, each phrase allowed to wrap across lines. Bare
#: "best" and "worst" name order statistics (the best ensemble of each size, the best cell of a grid: a selected
#: maximum, shown as such), so only "best judge" and "worst judge" are scanned.
COMPARATIVES = ("better", "worse", "best judge", "worst judge", "steadier", "more stable", "less stable", "outperform",
                "outperforms", "outperformed", "beats", "beat", "most useful", "superior", "inferior", "invariant",
                "more accurate", "less accurate", "more reliable", "less reliable")
COMPARATIVE_PATTERN = re.compile(
    "|".join(r"\b" + r"\s+".join(map(re.escape, word.split())) + r"\b"
             for word in sorted(COMPARATIVES, key=len, reverse=True)),
    re.IGNORECASE)
#: A quotation of a paper: text in double quotation marks (straight or curly) followed at once by its citation
#: ({cite}`key`, {cite:p}`key`, or "(Author, year)"). Only a quotation that names its source is allowed: a bare
#: quoted phrase is still scanned.
#: A research question (an italic line ending in "?") asks; it states no finding.
RESEARCH_QUESTION = re.compile(r"^\*[^*\n]+\?\*[ \t]*$", re.MULTILINE)
QUOTATION = re.compile(r"(?:\"[^\"\n]+\"|\u201c[^\u201d\n]+\u201d)"
                       r"(?=\s*(?:\{cite(?::\w+)?\}`|\([A-Z][^()\n]*,\s*\d{4}\)))")


def verdict_words(text: str) -> list[str]:
    """Every verdict phrase and comparative word in ``text`` (case-insensitive, across line breaks), in order."""
    matches = [*VERDICT_PATTERN.finditer(text), *COMPARATIVE_PATTERN.finditer(QUOTATION.sub(
        lambda quote: " " * len(quote.group(0)), text))]
    return [" ".join(match.group(0).split()) for match in sorted(matches, key=lambda match: match.start())]


def in_markdown(text: str) -> list[str]:
    """Verdict words in Markdown prose, outside glued values, inline code, a research question and cited quotations
    of a paper."""
    return verdict_words(RESEARCH_QUESTION.sub(" ", INLINE_CODE.sub(" ", GLUE_ROLE.sub(" ", text))))


def _constants(tree: ast.AST) -> dict[str, ast.Constant]:
    """Every ``NAME = "text"`` of ``tree`` with an upper-case name: its name and string."""
    return {target.id: node.value for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name) and target.id.isupper()}


def _after_a_guard(statement: ast.AST, parent: ast.AST) -> bool:
    """Whether ``statement`` follows, in its block of ``parent``, an ``if`` whose branch returns or raises: the code
    after such a guard is its other branch."""
    for block in (getattr(parent, name, None) for name in ("body", "orelse", "finalbody")):
        if isinstance(block, list) and statement in block:
            earlier = block[:block.index(statement)]
            return any(isinstance(guard, ast.If) and isinstance(guard.body[-1], (ast.Return, ast.Raise))
                       for guard in earlier)
    return False


def _in_a_branch(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` lies in a branch of a conditional within its function (an ``x if test else y``, an ``if``
    statement, or the code after an ``if`` that returns): the branch a rule chose, not the test."""
    child = node
    while (parent := parents.get(id(child))) is not None and not isinstance(parent, (ast.Lambda, ast.Module)):
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            return True
        if isinstance(parent, ast.If) and (child in parent.body or child in parent.orelse):
            return True
        if _after_a_guard(child, parent):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        child = parent
    return False


def _uses(tree: ast.AST, names: set[str]) -> list[tuple[str, bool]]:
    """Every use of one of ``names`` in ``tree`` (``NAME`` or ``module.NAME`` read), and whether a rule chose it."""
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) else \
            node.attr if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) else None
        if name in names:
            found.append((name, _in_a_branch(node, parents)))
    return found


@functools.cache
def package_vocabulary() -> frozenset[str]:
    """The package's rule vocabulary, its constants' uses read across every module (one imports another's)."""
    return frozenset(rule_vocabulary({path: ast.parse(path.read_text(encoding="utf-8"))
                                      for path in sorted(PACKAGE_DIR.rglob("*.py"))}))


def rule_vocabulary(trees: dict[Path, ast.AST]) -> set[str]:
    """The names of the upper-case string constants with a verdict word that form a rule's vocabulary: used, and
    every use (in any of ``trees``) a branch of a conditional. A constant used outside one is a typed verdict."""
    worded = {name for tree in trees.values() for name, node in _constants(tree).items()
              if verdict_words(node.value)}
    uses = [use for tree in trees.values() for use in _uses(tree, worded)]
    return {name for name in worded if any(used == name for used, _ in uses)
            and all(chosen for used, chosen in uses if used == name)}


def _definitions(tree: ast.AST, vocabulary: set[str], path: Path | None = None) -> set[int]:
    """The ids of the strings a rule's vocabulary defines (``vocabulary``: the constants' names, see
    :func:`rule_vocabulary`), and the registry's verdicts where ``claim_evidence`` defines them."""
    registry = path is not None and path.name == "claim_evidence.py" and path.parent.name == "compendium"
    return {id(node) for name, node in _constants(tree).items()
            if name in vocabulary or registry and node.value in claim_evidence.VERDICTS}


def _labels(tree: ast.AST) -> set[int]:
    """The ids of the strings passed as ``label=``: a column or row label names a computed field (a header
    "Better / worse (P)" counts wins and losses), it states no finding; an option's ``help=`` text, which
    describes what a command does; and a claim's ``quote=``, the paper's own words."""
    return {id(node) for call in ast.walk(tree) if isinstance(call, ast.Call)
            for keyword in call.keywords if keyword.arg in ("label", "help", "quote")
            for node in ast.walk(keyword.value) if isinstance(node, ast.Constant)}


#: The registry's claims: a paper's claim, shown with its paper and section, states no finding of this book.
CLAIM_TEXTS = frozenset(claim.claim for claim in claims.CLAIMS)


def _stated_elsewhere(text: str) -> bool:
    """A question asks, and a claim of the registry is the paper's: neither is a finding of this book."""
    return text.strip().endswith("?") or text in CLAIM_TEXTS


def in_python(source: str, vocabulary: set[str] | None = None, path: Path | None = None) -> list[tuple[int, str]]:
    """(line, verdict word) for every verdict word in a string literal of ``source`` (f-strings' literal parts and
    constants included), except docstrings, a rule's vocabulary (``vocabulary``: its constants' names; default:
    ``source``'s own, :func:`rule_vocabulary`), questions, the registry's claims and labels passed as ``label=`` or
    ``help=``."""
    tree = ast.parse(source)
    if vocabulary is None:
        vocabulary = rule_vocabulary({Path("<source>"): tree})
    allowed = docstring_ids(tree) | _definitions(tree, vocabulary, path) | _labels(tree)
    return [(node.lineno, word) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed
            and not _stated_elsewhere(node.value)
            for word in verdict_words(node.value)]


def scan_notebook(path: Path) -> list[str]:
    """``path: cell N: word`` for every verdict word typed in a notebook's Markdown or code cells."""
    found = []
    for number, cell in enumerate(jupytext.read(path).cells, start=1):
        if cell.cell_type == "markdown":
            found += [f"{path.name}: cell {number}: {word!r}" for word in in_markdown(cell.source)]
        elif cell.cell_type == "code":
            # IPython magics and shell lines are not Python; no chapter has one, and they hold no prose
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            found += [f"{path.name}: cell {number}, line {line}: {word!r}" for line, word in in_python(source)]
    return found


def scan_module(path: Path) -> list[str]:
    """``path:line: word`` for every verdict word typed in a string of a module (a rule's vocabulary: the package's
    and the module's own)."""
    source = path.read_text(encoding="utf-8")
    in_package = Path(path).resolve().is_relative_to(PACKAGE_DIR.resolve())
    vocabulary = package_vocabulary() if in_package else rule_vocabulary({Path(path): ast.parse(source)})
    return [f"{path.name}:{line}: {word!r}"
            for line, word in in_python(source, set(vocabulary), Path(path))]


#: A glossary's terms (a line of a ``{glossary}`` block that is not indented) name the vocabulary they define.
GLOSSARY_TERM = re.compile(r"^\S.*$", re.MULTILINE)
GLOSSARY_BLOCK = re.compile(r"```\{glossary\}\n(.*?)```", re.DOTALL)


def scan_prose_page(path: Path) -> list[str]:
    """``path: word`` for every verdict word typed in a prose page of the book (a glossary's terms excepted)."""
    text = GLOSSARY_BLOCK.sub(lambda block: GLOSSARY_TERM.sub(" ", block.group(0)), path.read_text(encoding="utf-8"))
    return [f"{path.name}: {word!r}" for word in in_markdown(text)]


def test_the_vocabulary_is_the_registrys_own():
    # a verdict added to the registry is scanned for with no change here
    assert {" ".join(v.split()) for v in claim_evidence.VERDICTS} == {w.lower() for w in verdict_words(
        " | ".join(claim_evidence.VERDICTS))}


@pytest.mark.parametrize("path", sorted(NOTEBOOK_DIR.glob("*.md")) + sorted(NOTEBOOK_DIR.glob("*.ipynb")),
                         ids=lambda path: path.name)
def test_no_notebook_types_a_verdict_word(path):
    assert scan_notebook(path) == []


@pytest.mark.parametrize("path", sorted(PACKAGE_DIR.rglob("*.py")),
                         ids=lambda path: str(path.relative_to(PACKAGE_DIR)))
def test_no_module_types_a_verdict_word(path):
    # the compendium and the constants too: a verdict typed there reaches the landing page as surely as a chapter's
    assert scan_module(path) == []


@pytest.mark.parametrize("path", sorted(BOOK_DIR.glob("*.md")) + sorted((NOTEBOOK_DIR / "prose").glob("*.md")),
                         ids=lambda path: f"{path.parent.name}/{path.name}")
def test_no_prose_page_or_chapter_prose_file_types_a_verdict_word(path):
    # A chapter's prose file holds the sentences its page module fills in: a verdict goes into a slot
    assert scan_prose_page(path) == []


PLANTED_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

- **Glued.** {glue:text}`claim_verdict` and code `claim_evidence.NOT_REPRODUCED` are fine; a term's text is shown:
  {term}`partly <Verdict>`.
- **Typed.** The paper's claim is Not
  reproduced here.

```{admonition} Verdict
The order is partly kept.
```

```{code-cell}
from recjudge.compendium import claim_evidence
ok = claim_evidence.PARTLY
typed = f"{ok}, or partly"
```
"""

PLANTED_MODULE = '''"""A module whose docstring may say "not run in this build"."""
from recjudge.compendium import claim_evidence

KEPT = "reproduced"  # the vocabulary of a rule: its definition, chosen below


def finding(rows):
    """Returns "not testable here" when ``rows`` is empty."""
    if not rows:
        return "not testable here (no rows)"
    word = KEPT if len(rows) > 3 else "few"
    return f"{claim_evidence.REPRODUCED} on {len(rows)} rows ({word}), contradicted by the paper's own numbers"
'''


def test_the_scanner_finds_planted_verdict_words(tmp_path):
    notebook = tmp_path / "planted.md"
    notebook.write_text(PLANTED_NOTEBOOK, encoding="utf-8")
    module = tmp_path / "planted.py"
    module.write_text(PLANTED_MODULE, encoding="utf-8")

    notebook_hits = scan_notebook(notebook)
    assert [hit.split(": ")[-1] for hit in notebook_hits] == ["'partly'", "'Not reproduced'", "'partly'", "'partly'"]
    assert "cell 1" in notebook_hits[2] and "cell 2, line 3" in notebook_hits[3]
    # the docstrings and the definition are allowed; the returned strings are not
    assert scan_module(module) == ["planted.py:10: 'not testable here'",
                                   "planted.py:12: \"contradicted by the paper's own numbers\""]


PLANTED_COMPARATIVE_NOTEBOOK = """# A chapter

*Do ensembles of judges agree better with users?*

The paper finds "ensembles are more stable" {cite:p}`kang2025` and "GPT-4 outperforms the proxies" (Kang et al.,
2025); a bare "steadier" is not attributed. The best ensemble of each size is {glue:text}`best`, and the ensemble
is steadier here, the recorded judge
not invariant, the best
judge Superior.
"""

PLANTED_COMPARATIVE_MODULE = '''from recjudge.compendium.pages import count, text

STEADIER = "averaging makes the result steadier"  # a rule's vocabulary: chosen by the rule below
NOT_STEADIER = "averaging does not make the result steadier"
FORMATS = {"wins": count(label="Better / worse (P)"), "ci": text(label=f"{'more accurate'} [95% CI]")}


def finding(gain):
    return "no judge beats a constant answer" if gain <= 0 else f"the judge is better by {gain}"


def steadiness(worst):
    return STEADIER if all(a <= b for a, b in zip(worst, worst[1:])) else NOT_STEADIER


def question():
    return "Do ensembles agree better with users?"
'''


def test_the_scanner_finds_planted_comparatives(tmp_path):
    notebook = tmp_path / "planted.md"
    notebook.write_text(PLANTED_COMPARATIVE_NOTEBOOK, encoding="utf-8")
    module = tmp_path / "planted.py"
    module.write_text(PLANTED_COMPARATIVE_MODULE, encoding="utf-8")

    # the research question, the cited quotations and the order statistic "best ensemble" are allowed; a quoted
    # phrase with no citation, and every comparative stated as this build's finding, are not (across line breaks)
    assert [hit.split(": ")[-1] for hit in scan_notebook(notebook)] == [
        "'steadier'", "'steadier'", "'invariant'", "'best judge'", "'Superior'"]
    assert in_markdown('"X is better" said someone') == ["better"]
    # labels passed as label= name a computed field, a question asks, and a rule's vocabulary is chosen by its
    # rule; the rule's returned strings typed in place are findings
    assert scan_module(module) == ["planted.py:9: 'beats'", "planted.py:9: 'better'"]


PLANTED_CONSTANT_MODULE = '''STEADIER = "averaging makes the result steadier, as Kang et al. observe"
WORSE = "the judge is worse"
CHOSEN = "the judge is better"


def finding(worst_first, worst_last):
    word = STEADIER  # not chosen by a rule: typed
    return f"{word}; {CHOSEN if worst_last > worst_first else WORSE}"


def other():
    return WORSE
'''


def test_the_scanner_reads_constants_and_allows_only_a_rules_vocabulary(tmp_path):
    # an upper-case constant was once exempt as such: a typed verdict then hid in a constant
    module = tmp_path / "planted.py"
    module.write_text(PLANTED_CONSTANT_MODULE, encoding="utf-8")
    assert scan_module(module) == ["planted.py:1: 'steadier'", "planted.py:2: 'worse'"]


def test_the_scanner_reads_the_registrys_claims_as_the_papers():
    claim = next(iter(CLAIM_TEXTS))
    assert in_python(f"TEXT = {claim!r}\nprint(TEXT)", set()) == []
    assert in_python('print("LLM evaluators agree with users as well as or better than BLEU")', set()) == [
        (1, "better")]


# ------------------------------------------------------------------------------------------------- the built book
@functools.cache
def allowed_phrases() -> tuple[str, ...]:
    """Every text a verdict word may stand in on a page, lower-cased: the registry's verdicts and claims, the rules'
    vocabularies, the labels of tables and the glossary's terms; longest first."""
    vocabulary = package_vocabulary()
    phrases = set(claim_evidence.VERDICTS) | CLAIM_TEXTS
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        phrases |= {node.value for name, node in _constants(tree).items() if name in vocabulary}
        phrases |= {node.value for call in ast.walk(tree) if isinstance(call, ast.Call)
                    for keyword in call.keywords if keyword.arg == "label"
                    for node in ast.walk(keyword.value) if isinstance(node, ast.Constant)
                    and isinstance(node.value, str)}
    glossary = BOOK_DIR / "glossary.md"
    if glossary.is_file():
        for block in GLOSSARY_BLOCK.findall(glossary.read_text(encoding="utf-8")):
            phrases |= set(GLOSSARY_TERM.findall(block))
    shown = {" ".join(phrase.split()).lower().rstrip(".") for phrase in phrases}
    return tuple(sorted((phrase for phrase in shown if verdict_words(phrase)), key=len, reverse=True))


def page_text(html: str) -> str:
    """The text a reader reads on a built page: its article, without code, scripts, styles and navigation, on one
    line."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    article = soup.find("article") or soup.find("main") or soup.body or soup
    for hidden in article.find_all(["script", "style", "pre", "code", "nav", "noscript"]):
        hidden.decompose()
    for shown_code in article.select("div.cell_input, .headerlink"):
        shown_code.decompose()
    return " ".join(article.get_text(" ").split())


def _asks(text: str, position: int) -> bool:
    """Whether the sentence around ``position`` is a question."""
    end = min((found for found in (text.find(mark, position) for mark in ".?!") if found >= 0), default=-1)
    return end >= 0 and text[end] == "?"


def in_html(html: str, phrases: tuple[str, ...] | None = None) -> list[str]:
    """Every verdict word on a built page that stands in none of the allowed texts (``phrases``, lower-cased;
    default :func:`allowed_phrases`), a cited quotation or a question, with a little of its context."""
    phrases = allowed_phrases() if phrases is None else phrases
    text = page_text(html)
    lowered = text.lower()
    covered = [(found.start(), found.end()) for phrase in phrases for found in re.finditer(re.escape(phrase), lowered)]
    unquoted = QUOTATION.sub(lambda quote: " " * len(quote.group(0)), text)
    hits = sorted([*VERDICT_PATTERN.finditer(text), *COMPARATIVE_PATTERN.finditer(unquoted)],
                  key=lambda match: match.start())
    return [f"{match.group(0)!r} in …{text[max(0, match.start() - 60):match.end() + 40]}…" for match in hits
            if not any(start <= match.start() and match.end() <= end for start, end in covered)
            and not _asks(text, match.end())]


def built_pages() -> list[Path]:
    if not (HTML_DIR / "index.html").is_file():
        if os.environ.get("RECJUDGE_REQUIRE_BOOK") == "1":
            pytest.fail(f"no built book at {HTML_DIR}: run `make book` (RECJUDGE_REQUIRE_BOOK=1)")
        pytest.skip(f"no built book at {HTML_DIR}: run `make book`")
    skipped = {"genindex.html", "search.html"}
    return [page for page in sorted(HTML_DIR.rglob("*.html"))
            if page.name not in skipped and not {"_static", "_sources", "_images"} & set(page.parts)]


def test_no_built_page_shows_a_verdict_word_no_rule_chose():
    found = [f"{page.relative_to(HTML_DIR)}: {hit}" for page in built_pages()
             for hit in in_html(page.read_text(encoding="utf-8", errors="replace"))]
    assert found == []


PLANTED_PAGE = """<html><body><nav>a better menu</nav><article>
<h1>A chapter</h1>
<p><strong>Not testable here:</strong> <em>Averaging several LLM judges agrees better with users than one</em>.</p>
<p>Do ensembles agree better with users? The worst ensemble is steadier here, and the judge is better.</p>
<table><tr><th>Better / worse (P)</th></tr><tr><td>averaging does not make the result steadier</td></tr></table>
<p>The paper finds that "ensembles are more stable" (Zhang et al., 2024).</p>
<div class="cell_input"><pre>better = 1</pre></div>
</article></body></html>"""


def test_the_page_scanner_finds_what_no_rule_chose():
    phrases = ("not testable here", "averaging several llm judges agrees better with users than one",
               "better / worse (p)", "averaging does not make the result steadier")
    hits = in_html(PLANTED_PAGE, phrases)
    assert [hit.split(" in ")[0] for hit in hits] == ["'steadier'", "'better'"]
    assert "The worst ensemble is steadier here" in hits[0]
