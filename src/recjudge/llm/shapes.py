"""Output shapes: the form a reply must take, declared once and enforced by every provider.

A shape is a JSON schema of an object (every property required, no other property), which each provider knows how
to enforce: the local provider compiles it to a llama.cpp grammar (GBNF, ``llama_cpp.LlamaGrammar.from_json_schema``),
OpenAI and OpenAI-compatible servers receive it as ``response_format`` (``json_schema``, strict; a server that refuses
that form, as llama-cpp-python's does, gets ``json_object`` with the schema), and Anthropic as a
forced tool call whose input schema it is (the tool's input, written back as JSON text, is the reply).

A judge asks for a shape with ``JudgeConfig(output_shape=shape.json)`` (``JudgeConfig.constrained(shape)``).  The
runner then sends the schema as the provider option ``output_schema``, so it is part of the response-store key; a
configuration without a shape sends nothing new, and its keys are unchanged.  Replies are checked against the
schema (``check``): a reply that does not conform (a server that ignored the constraint, a reply cut by
``max_tokens``) is a shape violation, counted apart from unparsable replies.

Chain-of-thought prompts keep their thinking: ``reasoning_then`` puts a free-text ``reasoning`` property before the
answer's properties, and JSON objects are generated in schema order, so the model writes its reasoning first and the
constrained answer after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The provider option that carries the schema (part of the store key when present).
OPTION = "output_schema"


class ShapeError(ValueError):
    """A shape that cannot be declared or enforced (names the shape and what is wrong)."""


@dataclass(frozen=True)
class OutputShape:
    """A named JSON schema of the reply object; ``answer`` names the property (or properties) that hold the score."""

    name: str
    schema: Mapping[str, Any]
    answer: tuple[str, ...]

    def __post_init__(self) -> None:
        problem = _schema_problem(self.schema)
        if problem:
            raise ShapeError(f"output shape {self.name!r}: {problem}")
        missing = [a for a in self.answer if a not in self.schema["properties"]]
        if not self.answer or missing:
            raise ShapeError(f"output shape {self.name!r}: answer property {missing or '(none)'} not in the schema")

    @property
    def json(self) -> str:
        """The JSON text of the shape (what ``JudgeConfig.output_shape`` holds).  Keys are not sorted: the order of
        the properties is the order the model writes them in (CoT's steps before its score)."""
        return json.dumps({"name": self.name, "schema": self.schema, "answer": list(self.answer)},
                          separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "OutputShape":
        try:
            data = json.loads(text)
            return cls(name=str(data["name"]), schema=data["schema"], answer=tuple(data["answer"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ShapeError(f"not an output shape: {type(exc).__name__}: {exc}") from None


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return "the schema must be a JSON object schema ({'type': 'object', ...})"
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return "the schema has no properties"
    if sorted(schema.get("required", [])) != sorted(properties):
        return "every property must be required (strict structured output needs it)"
    if schema.get("additionalProperties") is not False:
        return "the schema must set additionalProperties to false"
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"the schema is not plain JSON: {exc}"
    return None


def _object(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(properties),
            "additionalProperties": False}


def score(low: int = 1, high: int = 5, name: str = "score") -> OutputShape:
    """One integer score from ``low`` to ``high``: ``{"score": 4}``."""
    if low > high:
        raise ShapeError(f"score shape: low {low} > high {high}")
    return OutputShape(f"{name}_{low}_{high}", _object({name: {"type": "integer", "enum": list(range(low, high + 1))}}),
                       (name,))


def scores(names: Sequence[str], low: int = 1, high: int = 5, answer: Sequence[str] | None = None) -> OutputShape:
    """One integer score per name, in that order: ``{"persuasiveness": 4, "transparency": 3, ...}``; ``answer``:
    the names read as the answer (default all; e.g. only the last of worked steps)."""
    if not names or len(set(names)) != len(names):
        raise ShapeError(f"scores shape: names must be distinct and not empty, got {list(names)}")
    levels = {"type": "integer", "enum": list(range(low, high + 1))}
    return OutputShape("scores_" + "_".join(names), _object({n: dict(levels) for n in names}),
                       tuple(answer or names))


def label(labels: Sequence[str], name: str = "label") -> OutputShape:
    """One of the given labels: ``{"label": "agree"}``."""
    if not labels:
        raise ShapeError("label shape: no labels")
    return OutputShape(f"{name}_of_{len(labels)}", _object({name: {"type": "string", "enum": list(labels)}}),
                       (name,))


#: The longest title a ``titles`` shape lets through (characters): a model that never closes its string stops there.
MAX_TITLE_CHARS = 100


def titles(k: int, catalogue: Sequence[str] | None = None, name: str = "titles") -> OutputShape:
    """A list of exactly ``k`` titles of 1 to ``MAX_TITLE_CHARS`` characters (restricted to ``catalogue`` when
    given): ``{"titles": ["A", "B"]}``.  The item count and title length are enforced by the local grammar; a
    server whose structured outputs reject such constraints refuses the request (the judgment fails with its
    message)."""
    if k < 1:
        raise ShapeError(f"titles shape: k must be >= 1, got {k}")
    item: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS}
    if catalogue is not None:
        item = {"type": "string", "enum": sorted(set(catalogue))}
    suffix = "" if catalogue is None else f"_of_{len(item['enum'])}"
    return OutputShape(f"{name}_{k}{suffix}", _object({name: {"type": "array", "items": item, "minItems": k,
                                                              "maxItems": k}}), (name,))


def reasoning_then(shape: OutputShape) -> OutputShape:
    """``shape`` with a free-text ``reasoning`` property first: the model thinks, then answers in shape."""
    if "reasoning" in shape.schema["properties"]:
        raise ShapeError(f"output shape {shape.name!r} already has a reasoning property")
    properties = {"reasoning": {"type": "string"}, **shape.schema["properties"]}
    return OutputShape(f"reasoning_then_{shape.name}", _object(properties), shape.answer)


def check(shape: OutputShape, text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The reply's object if it conforms to the shape, else (None, why it does not)."""
    import jsonschema

    if not text or not text.strip():
        return None, "empty reply"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON ({exc.msg} at character {exc.pos})"
    try:
        jsonschema.validate(value, shape.schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the reply"
        return None, f"{where}: {exc.message}"[:300]
    return value, None


def answer_parser(shape: OutputShape):
    """A reply parser for a constrained run: the answer property as a float, or a dict of the answer properties
    (several), NaN when the reply does not conform."""
    def parse(text: str | None) -> float | dict[str, float]:
        value, _ = check(shape, text)
        if len(shape.answer) == 1:
            return float("nan") if value is None else _number(value[shape.answer[0]])
        return {a: float("nan") if value is None else _number(value[a]) for a in shape.answer}

    parse.__name__ = f"answer_of_{shape.name}"
    return parse


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


# ------------------------------------------------------------------------------------ provider translations
def openai_response_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``response_format`` of OpenAI structured outputs (strict JSON schema)."""
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema), "strict": True}}


def json_object_response_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The same constraint in the form llama-cpp-python's server accepts (``json_object`` with a ``schema``: it
    compiles the schema to a grammar), for a server that refuses ``json_schema``."""
    return {"type": "json_object", "schema": dict(schema)}


#: The tool Anthropic is forced to call; its input is the answer.
ANTHROPIC_TOOL = "answer"


def anthropic_tool(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` and ``tool_choice`` forcing one call of a tool whose input schema is the shape."""
    return {"tools": [{"name": ANTHROPIC_TOOL, "description": "Give your answer in this form.",
                       "input_schema": dict(schema)}],
            "tool_choice": {"type": "tool", "name": ANTHROPIC_TOOL}}


_GRAMMARS: dict[str, Any] = {}


def _enum_strings(schema: Any) -> Iterator[str]:
    if isinstance(schema, Mapping):
        for value in schema.get("enum", ()):
            if isinstance(value, str):
                yield value
        for sub in schema.values():
            yield from _enum_strings(sub)
    elif isinstance(schema, list):
        for sub in schema:
            yield from _enum_strings(sub)


def llama_grammar(schema: Mapping[str, Any]):
    """The llama.cpp grammar enforcing ``schema`` (compiled once per schema); ShapeError when it cannot be.

    llama-cpp-python's converter does not escape a backslash or a double quote inside an ``enum`` string, and the
    grammar it then writes fails to parse inside llama.cpp, which takes the process down at the first reply; such a
    value is refused here, by name, before anything is asked (11'09"01 - September 11 (2002) is one such title of
    ml-latest-small)."""
    bad = sorted({value for value in _enum_strings(schema) if '"' in value or "\\" in value})
    if bad:
        raise ShapeError(f"the local grammar cannot hold a double quote or a backslash inside an enum value "
                         f"({len(bad)}: {', '.join(map(repr, bad[:3]))}{' ...' if len(bad) > 3 else ''}); "
                         "leave such values out")
    key = json.dumps(schema)  # not sorted: the property order is part of the grammar
    if key not in _GRAMMARS:
        from llama_cpp import LlamaGrammar

        try:
            _GRAMMARS[key] = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception as exc:  # the converter and the grammar parser raise several types
            raise ShapeError(f"the output schema cannot be compiled to a llama.cpp grammar: "
                             f"{type(exc).__name__}: {exc}"[:400]) from None
    return _GRAMMARS[key]
