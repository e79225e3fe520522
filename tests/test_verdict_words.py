"""No verdict word is typed in a chapter: the claims registry's verdicts (``claim_evidence.VERDICTS``) appear in a
notebook's prose or in a string a chapter module writes only when glued from the rule (a ``{glue}`` role, or a
reference to the registry's constant such as ``claim_evidence.NOT_RUN``), never as literal text. The same holds for
comparative wording about judges or methods (``COMPARATIVES``: "better", "steadier", "not invariant", "most useful",
…), whose word a rule reading the numbers chooses. Allowed: docstrings, a rule's named vocabulary (``NAME = "..."``),
a research question, a quotation of a paper in quotation marks followed at once by its citation, and a string passed
as ``label=`` to a formatter: a column header such as "Better / worse (P)" names a computed count of wins and losses,
not a claim. The scanner itself is tested on planted examples, so an empty list of findings means the chapters are
clean, not that the scanner is blind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

from recjudge.compendium import claim_evidence
from recjudge.paths import project_root

NOTEBOOK_DIR = project_root() / "notebooks"
CHAPTER_DIR = project_root() / "src" / "recjudge" / "chapters"

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


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree`` (they document the code; no reader sees them on a page)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _definitions(tree: ast.AST) -> set[int]:
    """The ids of the strings a rule's vocabulary defines: ``NAME = "verdict"`` with an upper-case name."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and all(isinstance(target, ast.Name) and target.id.isupper() for target in node.targets):
            found.add(id(node.value))
    return found


def _labels(tree: ast.AST) -> set[int]:
    """The ids of the strings passed as ``label=``: a column or row label names a computed field (a header
    "Better / worse (P)" counts wins and losses), it states no finding."""
    return {id(node) for call in ast.walk(tree) if isinstance(call, ast.Call)
            for keyword in call.keywords if keyword.arg == "label"
            for node in ast.walk(keyword.value) if isinstance(node, ast.Constant)}


def in_python(source: str) -> list[tuple[int, str]]:
    """(line, verdict word) for every verdict word in a string literal of ``source`` (f-strings' literal parts
    included), except docstrings, the definitions of a rule's vocabulary and labels passed as ``label=``."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | _definitions(tree) | _labels(tree)
    return [(node.lineno, word) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed
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
    """``path:line: word`` for every verdict word typed in a string of a chapter module."""
    return [f"{path.name}:{line}: {word!r}" for line, word in in_python(path.read_text(encoding="utf-8"))]


def test_the_vocabulary_is_the_registrys_own():
    # a verdict added to the registry is scanned for with no change here
    assert {" ".join(v.split()) for v in claim_evidence.VERDICTS} == {w.lower() for w in verdict_words(
        " | ".join(claim_evidence.VERDICTS))}


@pytest.mark.parametrize("path", sorted(NOTEBOOK_DIR.glob("*.md")) + sorted(NOTEBOOK_DIR.glob("*.ipynb")),
                         ids=lambda path: path.name)
def test_no_notebook_types_a_verdict_word(path):
    assert scan_notebook(path) == []


@pytest.mark.parametrize("path", sorted(CHAPTER_DIR.glob("*.py")), ids=lambda path: path.name)
def test_no_chapter_module_types_a_verdict_word(path):
    assert scan_module(path) == []


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

KEPT = "reproduced"  # the vocabulary of a rule: its definition


def finding(rows):
    """Returns "not testable here" when ``rows`` is empty."""
    if not rows:
        return "not testable here (no rows)"
    return f"{claim_evidence.REPRODUCED} on {len(rows)} rows, contradicted by the paper's own numbers"
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
                                   "planted.py:11: \"contradicted by the paper's own numbers\""]


PLANTED_COMPARATIVE_NOTEBOOK = """# A chapter

*Do ensembles of judges agree better with users?*

The paper finds "ensembles are more stable" {cite:p}`kang2025` and "GPT-4 outperforms the proxies" (Kang et al.,
2025); a bare "steadier" is not attributed. The best ensemble of each size is {glue:text}`best`, and the ensemble
is steadier here, the recorded judge
not invariant, the best
judge Superior.
"""

PLANTED_COMPARATIVE_MODULE = '''from recjudge.compendium.pages import count, text

STEADIER = "averaging makes the result steadier"  # a rule's vocabulary
FORMATS = {"wins": count(label="Better / worse (P)"), "ci": text(label=f"{'more accurate'} [95% CI]")}


def finding(gain):
    return "no judge beats a constant answer" if gain <= 0 else f"the judge is better by {gain}"
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
    # labels passed as label= name a computed field; the rule's returned strings are findings
    assert scan_module(module) == ["planted.py:8: 'beats'", "planted.py:8: 'better'"]
