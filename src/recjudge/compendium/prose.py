"""A chapter's sentences, kept as prose beside its notebook: ``notebooks/prose/<chapter>.md``.

A page module (``recjudge.chapters.<chapter>``) computes values and applies the rules that choose words (a verdict,
a comparative, "too few answers"); the sentences those values and words go into live in the chapter's prose file,
which a writer edits as Markdown. Each ``## name`` heading opens one passage; ``{{ slot }}`` marks a value the page
module fills in (Jinja2 syntax, strict: a slot left unfilled or a value no slot takes is an error naming the file
and passage). Everything before the first heading is the file's own note to writers and is never shown.

A passage is written as a writer likes to wrap it: the lines of a paragraph are joined with one space, paragraphs
(blank-line separated) stay apart, and a line opening a list item (``- ``) starts a new line. Values are inserted
as they are and never read as template syntax, so a reader's text in a value cannot open a slot; a value that is a
reader's text holds no markup either (refused where it enters, ``recjudge.llm.judge_spec.reader_text``).

    from recjudge.compendium.prose import Prose
    PROSE = Prose("normalised_surprise")
    PROSE("caveat", n_users=120)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from recjudge.paths import project_root, shown_in_project

#: Where the chapters' prose files are, relative to the project root.
PROSE_DIR = Path("notebooks") / "prose"
#: The checkout this package is installed from (``src/recjudge/compendium/prose.py``): a project elsewhere
#: (``RECJUDGE_HOME``, a student's copied chapter) that has no prose file of its own reads the checkout's.
_PACKAGE_CHECKOUT = Path(__file__).resolve().parents[3]
_HEADING = re.compile(r"^## +(?P<name>.*?)\s*$")
_NAME = re.compile(r"^[a-z0-9_]+(?:[.-][a-z0-9_]+)*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.) ")


class ProseError(ValueError):
    """A prose file or passage that cannot be used; the message names the file, the passage and what is wrong."""


@dataclass(frozen=True)
class Passage:
    name: str
    line: int  # of its heading, 1-based
    text: str  # unwrapped
    slots: frozenset[str]


def unwrap(lines: list[str]) -> str:
    """A passage's lines as text: a paragraph's lines joined with a space, list items on their own lines,
    paragraphs separated by one blank line."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if not line.strip():
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        current = paragraphs[-1]
        if current and not _LIST_ITEM.match(line):
            current[-1] = f"{current[-1]} {line.strip()}"
        else:
            current.append(line.rstrip() if _LIST_ITEM.match(line) else line.strip())
    return "\n\n".join("\n".join(paragraph) for paragraph in paragraphs if paragraph)


def _environment():
    import jinja2

    # Undefined slots are errors; no autoescape (the output is MyST, not HTML); block and comment syntax that
    # prose never holds, so a "{%" or "{#" a writer types stays text
    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
                              block_start_string="{%%%", block_end_string="%%%}",
                              comment_start_string="{###", comment_end_string="###}")


def parse(text: str, source: str) -> dict[str, Passage]:
    """The passages of a prose file's ``text`` (``source`` names it in errors)."""
    from jinja2 import TemplateSyntaxError, meta

    environment = _environment()
    passages: dict[str, Passage] = {}
    name, start, body = None, 0, []

    def close() -> None:
        if name is None:
            return
        unwrapped = unwrap(body)
        if not unwrapped:
            raise ProseError(f"{source}: passage '{name}' (line {start}) is empty")
        try:
            slots = frozenset(meta.find_undeclared_variables(environment.parse(unwrapped)))
        except TemplateSyntaxError as error:
            raise ProseError(f"{source}: passage '{name}' (line {start}): {error.message}") from None
        passages[name] = Passage(name, start, unwrapped, slots)

    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        if heading:
            close()
            name, start, body = heading["name"], number, []
            if not _NAME.match(name):
                raise ProseError(f"{source}: line {number}: passage name '{name}' is not lower-case words joined "
                                 "by '_', '.' or '-'")
            if name in passages:
                raise ProseError(f"{source}: line {number}: passage '{name}' is defined twice (first at line "
                                 f"{passages[name].line})")
        elif name is not None:
            body.append(line)
    close()
    return passages


@lru_cache(maxsize=None)
def _load(path: Path, mtime_ns: int) -> dict[str, Passage]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ProseError(f"{shown_in_project(path)}: cannot be read ({error.strerror})") from None
    return parse(text, shown_in_project(path))


class Prose:
    """The passages of one chapter's prose file, filled in by name: ``Prose(chapter)(name, **values)``."""

    def __init__(self, chapter: str, folder: Path | None = None) -> None:
        self.chapter = chapter
        self._folder = folder

    @property
    def path(self) -> Path:
        """The project's prose file of the chapter if it has one, else the package checkout's."""
        if self._folder is not None:
            return self._folder / f"{self.chapter}.md"
        candidates = [folder / PROSE_DIR / f"{self.chapter}.md" for folder in (project_root(), _PACKAGE_CHECKOUT)]
        return next((path for path in candidates if path.is_file()), candidates[0])

    def passages(self) -> dict[str, Passage]:
        path = self.path
        if not path.is_file():
            raise ProseError(f"{shown_in_project(path)}: the prose file of chapter '{self.chapter}' does not exist")
        return _load(path, path.stat().st_mtime_ns)

    def __call__(self, name: str, /, **values: object) -> str:
        passages = self.passages()
        if name not in passages:
            raise ProseError(f"{shown_in_project(self.path)}: no passage '{name}'")
        passage = passages[name]
        missing = sorted(passage.slots - values.keys())
        unused = sorted(values.keys() - passage.slots)
        if missing or unused:
            said = [f"slot(s) not filled: {', '.join(missing)}" if missing else "",
                    f"value(s) no slot takes: {', '.join(unused)}" if unused else ""]
            raise ProseError(f"{shown_in_project(self.path)}: passage '{name}' (line {passage.line}): "
                             + "; ".join(part for part in said if part))
        if not passage.slots:
            return passage.text
        return _compiled(passage.text).render(**values)


@lru_cache(maxsize=None)
def _compiled(text: str):
    return _environment().from_string(text)


__all__ = ["PROSE_DIR", "Passage", "Prose", "ProseError", "parse", "unwrap"]
