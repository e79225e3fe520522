"""A chapter's sentences live in its prose file (``notebooks/prose/<chapter>.md``), not in its page module: the
passages and their slots, the errors that name the file and passage, and a scanner of the page modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from python_sources import docstring_ids

from recjudge.compendium.prose import PROSE_DIR, Prose, ProseError, parse, unwrap
from recjudge.paths import project_root

ROOT = project_root()
CHAPTERS = ROOT / "src" / "recjudge" / "chapters"
#: A string of this many words or more in a page module is a sentence, which belongs in the chapter's prose file.
SENTENCE_WORDS = 6


def write(folder: Path, chapter: str, text: str) -> Prose:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{chapter}.md").write_text(text, encoding="utf-8")
    return Prose(chapter, folder=folder)


def test_a_passage_is_unwrapped_as_a_writer_wraps_it_and_filled_by_name(tmp_path):
    prose = write(tmp_path, "toy", "A note to writers, never shown.\n\n## found\nThe judge reaches {{ r }} on\n"
                                   "{{ n }} answers.\n\nA second paragraph.\n- one item\n  continued\n- two\n")
    assert prose("found", r="0.15", n=12) == ("The judge reaches 0.15 on 12 answers.\n\nA second paragraph.\n"
                                             "- one item continued\n- two")
    assert unwrap(["  a", "b", "", "", "c"]) == "a b\n\nc"


def test_a_value_is_text_never_template_syntax(tmp_path):
    prose = write(tmp_path, "toy", "## name\nJudge {{ label }} and {role}`x` stay as written.\n")
    assert prose("name", label="{{ secret }} {% if %}") == "Judge {{ secret }} {% if %} and {role}`x` stay as written."


def test_an_unfilled_slot_or_an_unused_value_names_the_file_and_passage(tmp_path):
    prose = write(tmp_path, "toy", "## one\nfirst {{ a }}\n\n## two\nsecond\n")
    with pytest.raises(ProseError, match=r"toy\.md: passage 'one' \(line 1\): slot\(s\) not filled: a"):
        prose("one")
    with pytest.raises(ProseError, match=r"passage 'two' \(line 4\): value\(s\) no slot takes: b"):
        prose("two", b=1)
    with pytest.raises(ProseError, match=r"toy\.md: no passage 'three'"):
        prose("three")
    with pytest.raises(ProseError, match=r"missing\.md: the prose file of chapter 'missing' does not exist"):
        Prose("missing", folder=tmp_path)("one")


@pytest.mark.parametrize("text, message", [
    ("## a\nx\n## a\ny\n", r"line 3: passage 'a' is defined twice \(first at line 1\)"),
    ("## A b\nx\n", r"line 1: passage name 'A b' is not lower-case"),
    ("## a\n\n## b\nx\n", r"passage 'a' \(line 1\) is empty"),
    ("## a\nx {{ y \n", r"passage 'a' \(line 1\): "),
])
def test_a_malformed_prose_file_is_refused_with_its_line(text, message):
    with pytest.raises(ProseError, match=message):
        parse(text, "toy.md")


def chapter_modules() -> list[Path]:
    return sorted(path for path in CHAPTERS.glob("*.py") if path.stem != "__init__")


def sentences_in(path: Path) -> list[str]:
    """Every string constant (f-strings by their literal parts) of ``SENTENCE_WORDS`` words or more outside
    docstrings, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_fstrings = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for value in node.values}
    skipped = docstring_ids(tree) | in_fstrings
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(value.value for value in node.values if isinstance(value, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            text = node.value
        else:
            continue
        if len(text.split()) >= SENTENCE_WORDS:
            found.append(f"{path.name}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_page_module_holds_a_sentence_each_is_in_its_chapters_prose_file():
    offenders = [line for path in chapter_modules() for line in sentences_in(path)]
    assert not offenders, "sentences to move into notebooks/prose/<chapter>.md:\n" + "\n".join(offenders)


def test_every_prose_file_parses_and_each_passage_is_asked_for_by_its_page_module():
    files = sorted((ROOT / PROSE_DIR).glob("*.md"))
    assert files
    for path in files:
        module = CHAPTERS / f"{path.stem}.py"
        assert module.is_file(), f"{path.name}: no page module recjudge.chapters.{path.stem}"
        source = module.read_text(encoding="utf-8")
        passages = Prose(path.stem)
        # A passage is asked for by its name as written, or by a prefix an f-string completes
        asked = set(re.findall(r"""["']([a-z0-9_.-]+)["']""", source))
        prefixes = set(re.findall(r"""f["']([a-z0-9_.-]+\.)\{""", source))
        unused = [name for name in passages.passages()
                  if name not in asked and not any(name.startswith(prefix) for prefix in prefixes)]
        assert not unused, f"{path.name}: passages no code asks for: {', '.join(unused)}"


def test_a_project_without_prose_files_reads_the_package_checkouts(tmp_path, monkeypatch):
    monkeypatch.setenv("RECJUDGE_HOME", str(tmp_path))
    assert Prose("planted_judges").path == ROOT / PROSE_DIR / "planted_judges.md"
    own = tmp_path / PROSE_DIR / "planted_judges.md"
    own.parent.mkdir(parents=True)
    own.write_text("## undecided.none\nNothing is left undecided\n", encoding="utf-8")
    assert Prose("planted_judges")("undecided.none") == "Nothing is left undecided"
