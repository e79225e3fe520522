"""What a planted judge reads in a prompt: which of the book's templates it was filled from, and the fields it was
filled with (the history, the recommended item, the explanation, ...), read back from the messages alone.

Each template's sections become patterns (its text literally, each ``{field}`` any text), and a request's messages
are matched against them: the first message against the template's first section and the last message against its
last (a few-shot prompt's middle turns are its examples). A template of fewer fields wins over one that matches with
empty fields (``kang_fewshot`` over ``kang_fewshot_aux`` without an auxiliary line). A least-to-most chain's later
steps (``CHAINS``) are read as their step, with the fields of the chain's first turn. A prompt no template matches
is read as :data:`UNKNOWN` (the book's robustness chapter sends rewritten prompts), never an error.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from recjudge.prompts import list_templates, load_template

#: A prompt no template matches.
UNKNOWN = "unknown"
#: Continuation templates -> the template whose chat they continue (their fields are that chat's first turns').
CHAINS = {"tokutake_ltm_step2": "tokutake_ltm", "tokutake_ltm_step3": "tokutake_ltm"}
_FIELD = re.compile(r"\{(\w+)(?:[:!][^{}]*)?\}")


@dataclass(frozen=True)
class Reading:
    """A request as a planted judge reads it: the template it was filled from (or :data:`UNKNOWN`) and the fields,
    by name."""

    template: str
    fields: Mapping[str, str] = field(default_factory=dict)


def _pattern(text: str) -> re.Pattern:
    """A section's text as a pattern: literal text, each field any text (a field seen before: the same text)."""
    parts, seen, position = [], set(), 0
    for match in _FIELD.finditer(text):
        parts.append(re.escape(text[position:match.start()].replace("{{", "{").replace("}}", "}")))
        name = match.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        position = match.end()
    parts.append(re.escape(text[position:].replace("{{", "{").replace("}}", "}")))
    return re.compile("".join(parts), re.DOTALL)


@dataclass(frozen=True)
class _Shape:
    name: str
    roles: tuple[str, ...]
    first: re.Pattern
    last: re.Pattern
    fields: int


@functools.lru_cache(maxsize=1)
def _shapes() -> tuple[_Shape, ...]:
    shapes = []
    for name in list_templates():
        template = load_template(name)
        roles = tuple(role for role, _ in template.sections)
        shapes.append(_Shape(name, roles, _pattern(template.sections[0][1]), _pattern(template.sections[-1][1]),
                             len(template.fields)))
    return tuple(sorted(shapes, key=lambda shape: (shape.fields, shape.name)))


def _by_name() -> dict[str, _Shape]:
    return {shape.name: shape for shape in _shapes()}


def read_messages(messages: Sequence[Mapping[str, str]]) -> Reading:
    """The template and fields of a chat (a request's ``messages``), or :data:`UNKNOWN`."""
    roles = tuple(str(message.get("role", "")) for message in messages)
    texts = [str(message.get("content", "")) for message in messages]
    if not texts:
        return Reading(UNKNOWN)
    for shape in _shapes():
        if shape.name in CHAINS or shape.roles != roles:
            continue
        first = shape.first.fullmatch(texts[0])
        last = shape.last.fullmatch(texts[-1]) if first is not None else None
        if last is not None:
            return Reading(shape.name, {**first.groupdict(), **last.groupdict()})
    shapes = _by_name()
    for step, base in CHAINS.items():
        chain, opening = shapes.get(step), shapes.get(base)
        if chain is None or opening is None or len(texts) <= len(opening.roles):
            continue
        if roles[:len(opening.roles)] != opening.roles or chain.last.fullmatch(texts[-1]) is None:
            continue
        steps = (len(texts) - len(opening.roles)) // 2 + 1  # each later step adds a reply and a question
        if f"_step{steps}" not in step:
            continue
        first = opening.first.fullmatch(texts[0])
        last = opening.last.fullmatch(texts[len(opening.roles) - 1]) if first is not None else None
        if last is not None:
            return Reading(step, {**first.groupdict(), **last.groupdict()})
    return Reading(UNKNOWN)
