"""A response-store entry: the one home of its schema.

Fields, in the order a line is written (``StoredReply``, whose fields are the schema; the fast reader's ``_Entry``
must list the same, in the same order, and a test checks it): ``key``, ``provider``, ``model``, ``sample``,
``request_key`` (the caller's id, informational only), ``text`` (raw reply), ``logprobs`` (see below, or null),
``input_tokens``, ``output_tokens``, ``latency_s``, ``finish_reason``, ``created`` (UTC ISO-8601).  Parsed scores
are not stored: parsing is re-done at read time so a parser fix applies to old replies.  Messages are not stored
either (they dominate size; the key commits to them).  Optional fields, absent from older entries (readers accept
both), written only when set:

- ``provenance``: what produced the reply (see ``recjudge.llm.providers``): for HTTP providers the model id the server
  reported (``reported_model``), its ``system_fingerprint`` when given and the endpoint when it is not the default;
  for the local provider the llama-cpp-python version, its CPU backend and build flags, and the GGUF file's sha256;
  for a batch reply the batch's id (``batch_id``).
- ``repairs``: what ``sanitise_record`` changed to make an odd reply storable (e.g. a lone UTF-16 surrogate replaced
  by U+FFFD, a content given as a list of parts joined, a token count of NaN dropped, the ``user:password@`` of a URL
  in the provenance removed: no entry carries a credential).
- ``truncated_from_chars``: the reply text was longer than ``max_stored_chars(max_tokens)`` and was cut to that
  length; this holds its original length.

Here too: the entry of a fresh reply (``reply_entry``, used by the runner and by batch mode), the normalising every
entry gets before it is written (``sanitise_record``), the check every line read must pass (``entry_problem``) and
the stricter one for a file shared between stores (``strict_entry_problem``: no field outside the schema, and a key
that is a sha256 in hexadecimal).

Log-probabilities are kept compact: for the first ``LOGPROB_MIN_POSITIONS`` generated tokens, and beyond that up
to the first position whose alternatives include a numeric token (where a score is read; at most
``LOGPROB_MAX_POSITIONS``), the top alternatives as returned (at most 20) with log-probabilities rounded to 4
decimals.  That is all ``expected_score`` needs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Annotated, Any, Mapping, Sequence, Union

import msgspec

from .providers.base import Completion

LOGPROB_MIN_POSITIONS = 16
LOGPROB_MAX_POSITIONS = 128
LOGPROB_DECIMALS = 4
#: Stored reply text is cut at ``max_stored_chars(max_tokens)``: ``STORED_CHARS_PER_TOKEN`` characters per token
#: asked (no tokenizer's token is that long; an honest reply averages about 4), and never less than
#: ``MIN_STORED_CHARS``.  A longer reply is a misbehaving server; what is kept is marked ``truncated_from_chars``.
STORED_CHARS_PER_TOKEN = 64
MIN_STORED_CHARS = 16_384
#: Token counts above this are not believable for one reply (or its prompt) and are dropped as invalid.
MAX_TOKEN_COUNT = 100_000_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def compact_logprobs(logprobs: Sequence[Mapping[str, float]] | None) -> list[dict[str, float]] | None:
    """Trim per-token alternatives to what expected-score reading needs (see module docstring)."""
    if not logprobs:
        return None
    kept: list[dict[str, float]] = []
    seen_numeric = False
    for position, alternatives in enumerate(logprobs):
        if position >= LOGPROB_MAX_POSITIONS:
            break
        entry = {
            str(tok): rounded
            for tok, lp in list(alternatives.items())[:20]
            if lp is not None and (rounded := _valid_logprob(lp)) is not None
        }
        kept.append(entry)
        seen_numeric = seen_numeric or any(_is_numeric_token(t) for t in entry)
        if position + 1 >= LOGPROB_MIN_POSITIONS and seen_numeric:
            break
    return kept


def _valid_logprob(value: Any) -> float | None:
    """``value`` rounded as stored, or None when it is no log-probability: not finite (-inf, probability 0, is not
    valid JSON), or above 0 once rounded (a server's 1e308 would overflow every expected score computed from it)."""
    number = round(float(value), LOGPROB_DECIMALS)
    return number if math.isfinite(number) and number <= 0 else None


def invalid_logprobs(logprobs: Any) -> int:
    """How many of the values ``compact_logprobs`` reads are no log-probability (dropped, and said in repairs)."""
    count = 0
    try:
        for alternatives in list(logprobs)[:LOGPROB_MAX_POSITIONS]:
            count += sum(lp is not None and _valid_logprob(lp) is None for lp in list(alternatives.values())[:20])
    except (TypeError, ValueError, AttributeError, OverflowError):
        return 0
    return count


def _is_numeric_token(token: str) -> bool:
    return token.strip().replace(".", "", 1).isdigit()


@dataclass(frozen=True, kw_only=True)
class StoredReply:
    """One entry of the store (a read-only view of one JSON line); its fields, in their order, are the schema."""

    key: str
    provider: str
    model: str
    sample: int
    request_key: str | None = None
    text: str
    logprobs: list[dict[str, float]] | None
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float | None
    finish_reason: str | None
    created: str
    provenance: dict[str, Any] | None = None
    repairs: list[str] | None = None
    truncated_from_chars: int | None = None

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> "StoredReply":
        values = {name: record.get(name) for name in ENTRY_FIELDS}
        values.update(key=record["key"], provider=record["provider"], model=record["model"], text=record["text"],
                      sample=int(record.get("sample", 0)), created=record.get("created", ""))
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The entry as written: fields in ``ENTRY_FIELDS`` order; optional fields only when set, so entries
        without them keep the original line format."""
        record = {name: getattr(self, name) for name in ENTRY_FIELDS}
        for name in OPTIONAL_FIELDS:
            if not record[name]:
                del record[name]
        return record


#: The fields of an entry in the order a line is written.
ENTRY_FIELDS = tuple(field.name for field in dataclasses.fields(StoredReply))
#: Fields written only when set.
OPTIONAL_FIELDS = ("provenance", "repairs", "truncated_from_chars")
_NUMBER_TYPES = frozenset((int, float))
_COUNT_FIELDS = ("input_tokens", "output_tokens")


def max_stored_chars(max_tokens: int | None) -> int:
    """The longest reply text stored for a request of ``max_tokens`` (see ``STORED_CHARS_PER_TOKEN``)."""
    return max(MIN_STORED_CHARS, STORED_CHARS_PER_TOKEN * int(max_tokens or 0))


def clean_text(text: str) -> tuple[str, bool]:
    """``text`` with lone UTF-16 surrogates (half an emoji; not encodable as UTF-8) replaced by U+FFFD and
    surrogate pairs joined; (text, whether it changed)."""
    if not _SURROGATE.search(text):
        return text, False
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), True


def reply_text(content: Any) -> tuple[str, str | None]:
    """A reply's content as text, and a note when it was not a plain string.

    OpenAI-compatible servers may send ``content`` as a list of parts (``[{"type": "text", "text": ...}, ...]``) or
    a dict; the text parts are joined in order; anything else is kept as canonical JSON so nothing is lost."""
    if isinstance(content, str):
        return content, None
    if content is None:
        return "", None
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(_json_fallback(part))
        return "".join(parts), f"text: content was a list of {len(content)} part(s), joined"
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return content["text"], "text: content was an object, its 'text' kept"
    return _json_fallback(content), f"text: content was a {type(content).__name__}, kept as JSON"


def _json_fallback(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def token_count(value: Any) -> tuple[int | None, str | None]:
    """A usage number as a non-negative int, or None with a note when it is missing, not a whole number, negative
    or implausibly large (a string of digits is accepted, with a note)."""
    if value is None:
        return None, None
    note = None
    if isinstance(value, str) and value.strip().isdigit():
        value, note = int(value.strip()), "was a string"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if type(value) is int and 0 <= value <= MAX_TOKEN_COUNT:
        return value, note
    return None, f"invalid value {str(value)[:40]!r} dropped"


def sanitise_record(record: Mapping[str, Any], *, max_chars: int | None = None) -> dict[str, Any]:
    """A copy of an entry made storable: text as a string without lone surrogates (and at most ``max_chars``
    long), token counts as non-negative ints or None, latency finite or None, log-probabilities finite.  What was
    changed is listed in ``repairs`` (added to what the record already lists)."""
    out = dict(record)
    repairs = list(out.get("repairs") or [])
    text, note = reply_text(out.get("text"))
    if note:
        repairs.append(note)
    text, changed = clean_text(text)
    if changed:
        repairs.append("text: lone UTF-16 surrogate(s) replaced by U+FFFD")
    if max_chars is not None and len(text) > max_chars:
        out["truncated_from_chars"] = len(text)
        text = text[:max_chars]
    out["text"] = text
    for name in _COUNT_FIELDS:
        value, note = token_count(out.get(name))
        out[name] = value
        if note:
            repairs.append(f"{name}: {note}")
    latency = out.get("latency_s")
    if latency is not None and not (type(latency) in (int, float) and math.isfinite(latency)):
        out["latency_s"] = None
        repairs.append(f"latency_s: invalid value {str(latency)[:40]!r} dropped")
    finish = out.get("finish_reason")
    if finish is not None:
        finish_text = clean_text(finish if isinstance(finish, str) else _json_fallback(finish))[0][:64]
        if finish_text != finish:
            repairs.append("finish_reason: normalised")
        out["finish_reason"] = finish_text
    if out.get("logprobs") is not None:
        invalid = invalid_logprobs(out["logprobs"])
        if invalid:
            repairs.append(f"logprobs: {invalid} value(s) not a finite log-probability <= 0 dropped")
        try:
            cleaned = compact_logprobs(out["logprobs"])
            out["logprobs"] = [{clean_text(token)[0]: lp for token, lp in position.items()} for position in cleaned]
        except (TypeError, ValueError, AttributeError, OverflowError):
            out["logprobs"] = None
            repairs.append("logprobs: not a list of token -> log-probability mappings, dropped")
    for name in ("request_key", "created"):
        if isinstance(out.get(name), str):
            out[name] = clean_text(out[name])[0]
    if out.get("provenance") is not None:
        try:
            provenance, stripped = _without_credentials(_plain_json(out["provenance"]))
        except RecursionError:
            provenance, stripped = {"dropped": "nested too deeply"}, 0
        if stripped:
            repairs.append(f"provenance: credentials removed from {stripped} URL(s)")
        capped = _capped(provenance)
        if capped != provenance:
            repairs.append(f"provenance: strings cut at {PROVENANCE_MAX_CHARS} characters, at most "
                           f"{PROVENANCE_MAX_FIELDS} fields")
        out["provenance"] = capped
    if repairs:
        out["repairs"] = repairs
    return out


#: Provenance says what produced a reply (model id, fingerprint, build flags, file hash): short strings, few fields.
#: A server can send anything there; more than this is cut, so one reply cannot bloat the store.
PROVENANCE_MAX_CHARS = 256
PROVENANCE_MAX_FIELDS = 32


def _capped(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value[:PROVENANCE_MAX_CHARS]
    if isinstance(value, dict):
        if depth >= 2:
            return _json_fallback(value)[:PROVENANCE_MAX_CHARS]
        return {key[:PROVENANCE_MAX_CHARS]: _capped(item, depth + 1)
                for key, item in list(value.items())[:PROVENANCE_MAX_FIELDS]}
    if isinstance(value, list):
        return [_capped(item, depth + 1) for item in value[:PROVENANCE_MAX_FIELDS]]
    return value


#: The user-information part of a URL (``scheme://user:password@``), wherever it appears in a string.
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s?#@]*@")


def _without_credentials(value: Any) -> tuple[Any, int]:
    """``value`` (plain JSON) with the user information (``user:password@``) of every URL in its strings removed,
    and how many URLs had one.  An endpoint is recorded without credentials (``endpoint_label``); this also holds
    for entries written otherwise (by hand, by older code) before they are stored or shared."""
    if isinstance(value, str):
        if "@" not in value:
            return value, 0
        return _URL_USERINFO.subn(r"\1", value)
    if isinstance(value, dict):
        count = 0
        out = {}
        for key, item in value.items():
            out[key], found = _without_credentials(item)
            count += found
        return out, count
    if isinstance(value, list):
        items = [_without_credentials(item) for item in value]
        return [item for item, _ in items], sum(found for _, found in items)
    return value, 0


def _plain_json(value: Any) -> Any:
    """``value`` round-tripped through JSON (non-JSON leaves as text, lone surrogates replaced, NaN as null)."""
    if isinstance(value, str):
        return clean_text(value)[0]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, Mapping):
        return {clean_text(str(k))[0]: _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    return clean_text(str(value))[0]


def entry_problem(record: Any) -> str | None:
    """Why a parsed store line is not a usable entry, or None when it is (the check readers apply to every line)."""
    if type(record) is not dict:
        return f"not a JSON object but {type(record).__name__}"
    for name in ("key", "provider", "model", "text"):
        value = record.get(name)
        if type(value) is not str:
            return f"field {name!r} missing" if value is None else f"field {name!r} is a {type(value).__name__}"
    if not record["key"]:
        return "field 'key' is empty"
    sample = record.get("sample", 0)
    if type(sample) is not int or sample < 0:
        return f"field 'sample' is {str(sample)[:40]!r}, not a non-negative integer"
    for name in _COUNT_FIELDS:
        value = record.get(name)
        if value is not None and (type(value) is not int or not 0 <= value <= MAX_TOKEN_COUNT):
            return f"field {name!r} is {str(value)[:40]!r}, not a token count"
    latency = record.get("latency_s")
    if latency is not None and type(latency) not in (int, float):
        return f"field 'latency_s' is a {type(latency).__name__}"
    for name in ("finish_reason", "created", "request_key"):
        value = record.get(name)
        if value is not None and type(value) is not str:
            return f"field {name!r} is a {type(value).__name__}"
    logprobs = record.get("logprobs")
    if logprobs is not None:
        if type(logprobs) is not list:
            return "field 'logprobs' is not a list"
        for position in logprobs:
            # set.issuperset walks the types in C: this check runs on every line read.
            if type(position) is not dict or not _NUMBER_TYPES.issuperset(map(type, position.values())):
                return "field 'logprobs' holds a position that is not a token -> number mapping"
    provenance = record.get("provenance")
    if provenance is not None and type(provenance) is not dict:
        return "field 'provenance' is not an object"
    return None


def strict_entry_problem(record: Any) -> str | None:
    """``entry_problem``, and a field outside the schema (``ENTRY_FIELDS``) is a problem too: what a file shared
    between stores must pass (``recjudge.llm.store_share``), so that it carries entries and nothing else.  (The
    store's own readers accept unknown fields, written by a newer version.)"""
    problem = entry_problem(record)
    if problem is None:
        unknown = [name for name in record if name not in _SCHEMA_FIELDS]
        if unknown:
            return f"field {str(unknown[0])[:40]!r} is not an entry field (the fields are: {', '.join(ENTRY_FIELDS)})"
        if not _STORE_KEY.fullmatch(record["key"]):  # it names the shard: '/', '.' or a newline would escape it
            return (f"field 'key' is {record['key'][:70]!r}, not a store key (64 lower-case hexadecimal digits, "
                    "a sha256)")
    return problem


#: A store key as ``recjudge.llm.store.store_key`` makes it: a sha256 in hexadecimal.
_STORE_KEY = re.compile(r"[0-9a-f]{64}")


_SCHEMA_FIELDS = frozenset(ENTRY_FIELDS)
_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKEN_COUNT)]
_Number = Union[int, float]  # ints stay ints, as json.loads gives them
_Unset = msgspec.UnsetType
_UNSET = msgspec.UNSET


class _Entry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A store line as ``_index_lines_fast`` decodes it: exactly the checks of ``entry_problem`` (tested to agree).

    Optional fields default to UNSET so that ``msgspec.to_builtins`` gives back only the fields the line has (the
    same dict ``json.loads`` gives); an unknown field fails the decoding, so such a line goes the slow way and keeps
    it.  Its fields are ``ENTRY_FIELDS`` in their order (a test checks)."""

    key: Annotated[str, msgspec.Meta(min_length=1)]
    provider: str
    model: str
    sample: Union[Annotated[int, msgspec.Meta(ge=0)], _Unset] = _UNSET
    request_key: Union[str, None, _Unset] = _UNSET
    text: str
    logprobs: Union[list[dict[str, _Number]], None, _Unset] = _UNSET
    input_tokens: Union[_Count, None, _Unset] = _UNSET
    output_tokens: Union[_Count, None, _Unset] = _UNSET
    latency_s: Union[_Number, None, _Unset] = _UNSET
    finish_reason: Union[str, None, _Unset] = _UNSET
    created: Union[str, None, _Unset] = _UNSET
    provenance: Union[dict[str, Any], None, _Unset] = _UNSET
    repairs: Any = _UNSET  # not checked by entry_problem either
    truncated_from_chars: Any = _UNSET

    # Read access by field name, as on the dict ``json.loads`` gives for the line (fields the line lacks are
    # missing), so the runner reads an entry without first copying it into a dict.
    def get(self, name: str, default: Any = None) -> Any:
        value = getattr(self, name, _UNSET) if name in _ENTRY_FIELDS else _UNSET
        return default if value is _UNSET else value

    def __getitem__(self, name: str) -> Any:
        value = self.get(name, _UNSET)
        if value is _UNSET:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return self.get(name, _UNSET) is not _UNSET  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The line's fields as ``json.loads`` gives them (a fresh copy)."""
        return msgspec.to_builtins(self)  # omits the UNSET fields


_ENTRY_FIELDS = frozenset(_Entry.__struct_fields__)
_ENTRY_DECODER = msgspec.json.Decoder(_Entry)
#: What the index holds for a line: a dict (written by this process, or read line by line) or the decoded entry.
_Record = Union[dict[str, Any], _Entry]


def _as_dict(record: _Record) -> dict[str, Any]:
    return record.to_dict() if type(record) is _Entry else record  # type: ignore[union-attr,return-value]


def reply_entry(completion: Completion, *, key: str, provider: str, model: str, sample: int, request_key: str,
                max_chars: int, batch_id: str | None = None) -> dict[str, Any]:
    """The store entry of a reply just received, sanitised (what is written reads back).  A batch reply
    (``batch_id``) names its batch in its provenance and has no latency: the batch's wait is not the model's."""
    provenance = dict(completion.provenance or {})
    if batch_id is not None:
        provenance["batch_id"] = batch_id
    latency = completion.latency_s
    reply = StoredReply(
        key=key, provider=provider, model=model, sample=int(sample), request_key=request_key, text=completion.text,
        logprobs=completion.logprobs, input_tokens=completion.input_tokens, output_tokens=completion.output_tokens,
        latency_s=round(latency, 3) if isinstance(latency, (int, float)) and batch_id is None else None,
        finish_reason=completion.finish_reason, created=now_utc(), provenance=provenance or None)
    return sanitise_record(reply.to_json(), max_chars=max_chars)


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
