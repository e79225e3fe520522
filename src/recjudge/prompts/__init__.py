"""Prompt templates: plain-text files that become chat messages.

A template is ``templates/<name>.txt``. Lines that read exactly ``### system``, ``### user`` or ``### assistant``
start a message with that role (``assistant`` turns hold few-shot answers); the text up to the next such line is
the message, with leading and trailing blank lines removed. Text before the first header is the template's
description (source, page of the paper, what was reconstructed) and is never sent. Fields are written
``{name}`` and filled by ``render``; literal braces are doubled (``{{`` and ``}}``), as in ``str.format``, and a
format spec such as ``{score:.1f}`` is allowed. Any other line, including other Markdown headings, is message text.

A field written after other text on its line (``Recommended item: {item}``) holds one line: its value's line breaks
become spaces (``one_line``), so a value (an item named "Foo\nScore: 5") cannot add a line of its own to the prompt,
nor to a reply that repeats the prompt. A field opening its line (``{examples}``, ``{cases}``) may hold several.

Builders for the papers' prompts live beside this module, one module per paper, and call ``render``:
``serendipity`` (Kang et al.), ``tokutake`` (Tokutake et al.: Base, LS, CoT, LtM), ``explanations``
(Zhang et al.) and ``recommendation`` (Khirbat et al., the LLM recommender under metamorphic test).
``output_shapes`` declares the shape of each template's answer, which a constrained judge is held to.
"""

from __future__ import annotations

import re
import stat
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recjudge.llm.providers.base import Message

#: Folder of the template files shipped with the package.
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"

ROLES = ("system", "user", "assistant")
_HEADER = re.compile(r"^###\s+(system|user|assistant)\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FORMATTER = string.Formatter()


class TemplateError(ValueError):
    """A template is missing or malformed, or ``render`` got fields that do not match it."""


@dataclass(frozen=True)
class Template:
    """A parsed template: its description and its (role, text-with-fields) sections in order."""

    name: str
    path: Path | None  # None for a template parsed from a string
    description: str
    sections: tuple[tuple[str, str], ...]
    fields: frozenset[str]
    #: the fields written after other text on their line: their values hold one line (``one_line``)
    inline_fields: frozenset[str] = frozenset()


_LINE_BREAK = re.compile(r"[ \t]*(?:\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029])\s*")


def one_line(text: str) -> str:
    """``text`` with its line breaks (and the whitespace around them) made one space: a value that must stay on the
    line of the prompt it is written on."""
    return _LINE_BREAK.sub(" ", text) if _LINE_BREAK.search(text) else text


def list_templates() -> list[str]:
    """Names of the available templates, sorted."""
    if not TEMPLATE_DIR.is_dir():
        return []
    return sorted(path.stem for path in TEMPLATE_DIR.glob("*.txt"))


def template_path(name: str) -> Path:
    """The file of template ``name``; TemplateError listing the available names when there is none."""
    path = _named_path(name)
    if not path.is_file():
        raise _unknown(name, path)
    return path


def _named_path(name: str) -> Path:
    if not isinstance(name, str) or not _NAME.match(name):
        raise TemplateError(f"invalid template name {name!r}: use letters, digits, '_' and '-'")
    return TEMPLATE_DIR / f"{name}.txt"


def _unknown(name: str, path: Path) -> TemplateError:
    available = ", ".join(list_templates()) or "none"
    return TemplateError(f"unknown prompt template {name!r} (no file {path}); available: {available}")


def template_text(name: str) -> str:
    """The template file's full text, exactly as stored (for showing a prompt in the book)."""
    return template_path(name).read_text(encoding="utf-8")


def load_template(name: str) -> Template:
    """The parsed template (re-read when its file changes)."""
    path = _named_path(name)
    try:  # one stat per call: builders load a template for each of tens of thousands of prompts
        status = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise _unknown(name, path) from None
    if not stat.S_ISREG(status.st_mode):
        raise _unknown(name, path)
    return _parse_cached(name, path, status.st_mtime_ns)


def template_fields(name: str) -> frozenset[str]:
    """The field names template ``name`` needs."""
    return load_template(name).fields


def render(name: str, /, **fields: Any) -> list[Message]:
    """The chat messages of template ``name`` with its fields filled in.

    Every field the template uses must be given and no other: a missing or an unknown field raises a
    TemplateError naming the template and the fields. A builder that renders one template many times loads it once
    (``load_template``) and calls ``fill_template``: ``render`` looks the file up on every call, so that an edited
    template is read again.
    """
    return fill_template(load_template(name), **fields)


def fill_template(template: Template, /, **fields: Any) -> list[Message]:
    """``render`` of an already loaded template (the same messages and errors)."""
    name = template.name
    missing = sorted(template.fields - fields.keys())
    unknown = sorted(fields.keys() - template.fields)
    problems = []
    if missing:
        problems.append(f"missing field(s) {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown field(s) {', '.join(unknown)}")
    if problems:
        expected = ", ".join(sorted(template.fields)) or "none"
        raise TemplateError(f"template {name!r}: {'; '.join(problems)} (it uses: {expected})")
    for field in template.inline_fields:
        if isinstance(fields[field], str):
            fields[field] = one_line(fields[field])
    messages: list[Message] = []
    for role, text in template.sections:
        try:
            content = text.format_map(fields)
        except (ValueError, TypeError) as exc:
            raise TemplateError(f"template {name!r}, {role} message: cannot fill a field: {exc}") from None
        messages.append({"role": role, "content": content})
    return messages


@lru_cache(maxsize=256)
def _parse_cached(name: str, path: Path, mtime_ns: int) -> Template:
    return parse_template(path.read_text(encoding="utf-8"), name=name, path=path)


def parse_template(text: str, *, name: str = "<string>", path: Path | None = None) -> Template:
    """Parse template text (see the module docstring); TemplateError naming the template and line on problems."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    description: list[str] = []
    sections: list[tuple[str, int, list[str]]] = []  # role, header line number, body lines
    for number, line in enumerate(lines, start=1):
        header = _HEADER.match(line)
        if header:
            sections.append((header.group(1), number, []))
        elif sections:
            sections[-1][2].append(line)
        else:
            description.append(line)
    if not sections:
        raise TemplateError(f"template {name!r}: no '### system' / '### user' / '### assistant' section header")
    parsed: list[tuple[str, str]] = []
    fields: set[str] = set()
    inline: set[str] = set()
    for role, number, body in sections:
        content = "\n".join(body).strip("\n")
        if not content.strip():
            raise TemplateError(f"template {name!r}: the {role} section at line {number} is empty")
        try:
            pieces = list(_FORMATTER.parse(content))
        except ValueError as exc:  # a lone brace
            raise TemplateError(
                f"template {name!r}: {role} section at line {number}: {exc} (write literal braces as {{{{ and }}}})"
            ) from None
        line = ""  # the section's text on the current line so far
        for literal, field_name, spec, _conversion in pieces:
            line = (line + literal).rsplit("\n", 1)[-1]
            if field_name is None:
                continue
            if line.strip():
                inline.add(field_name)
            line += "{}"
            if not _FIELD.match(field_name):
                raise TemplateError(
                    f"template {name!r}: {role} section at line {number}: field {{{field_name}}} is not a plain name "
                    "(use {name}; write literal braces as {{ and }})"
                )
            if spec and ("{" in spec or "}" in spec):
                raise TemplateError(
                    f"template {name!r}: {role} section at line {number}: field {{{field_name}}} has a nested field "
                    "in its format spec, which is not supported"
                )
            fields.add(field_name)
        parsed.append((role, content))
    return Template(
        name=name,
        path=path,
        description="\n".join(description).strip(),
        sections=tuple(parsed),
        fields=frozenset(fields),
        inline_fields=frozenset(inline),
    )


__all__ = [
    "ROLES",
    "TEMPLATE_DIR",
    "Template",
    "TemplateError",
    "fill_template",
    "list_templates",
    "load_template",
    "one_line",
    "parse_template",
    "render",
    "template_fields",
    "template_path",
    "template_text",
]
