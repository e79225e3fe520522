"""Sharing replies between response stores: one file holding a store's entries, and its import into another store.

A reader who ran the book with their judge (``recjudge run --judge SPEC``) shares that variant's replies with
``recjudge store export OUT --provider P --model M``; someone else imports the file
(``recjudge store import OUT``) and rebuilds the variant with no key by replaying it from their store
(``RECJUDGE_LLM_MODE=replay recjudge run --judge SPEC --profile P``, the same SPEC: the keys cover every sampling
setting).

The file (``EXPORT_FORMAT`` 1) is JSON Lines, gzip-compressed when its name ends in ``.gz``.  Its first line is a
header saying what it holds::

    {"recjudge_store_export":1,"key_version":1,"entries":N,"provider":P|null,"model":M|null,
     "models":[{"provider":...,"model":...,"entries":n},...]}

(``key_version`` is the store's ``KEY_VERSION``: keys of another version would never be found), then one entry per
line, as the store writes it (``recjudge.llm.entry``), sorted by key.  Every entry is passed through
``sanitise_record`` (which removes the ``user:password@`` of any URL in a provenance) and keeps only the schema's
fields; an entry holding the value of a secret environment variable (``SECRET_ENV_VARS``) stops the export, which
then writes nothing.  No date, path or host is written, and the gzip header has neither name nor time: exporting the
same entries twice gives the same bytes.

Import checks every line with ``parse_line`` and ``strict_entry_problem`` (the store's own checks, no field
outside the schema, and a key that is a sha256 in hexadecimal: a key names the shard it is written to) and then,
key by key: an absent key is added; a key stored with the same reply (provider,
model, sample, text and log-probabilities: what a score is read from) is already present; a key stored with another
reply is a conflict, reported and never overwritten.  A line that is not an entry (bad JSON, a field missing or of
the wrong type, a file cut short) is reported with the file and line number, and every valid line is still
imported.  The header is optional (a store shard imports too), but when present it must be of a known format and
key version, the number of entries it announces must follow it (exports joined with ``cat`` import too: each
header counts the lines up to the next), and an entry of a provider or model it does not announce is refused
(reported by line, not imported).  A local model's entry made with other weights (``provenance.gguf_sha256``) than
those its name stands for here is refused too: it would stop the local judge from adding replies.  A line longer
than ``MAX_LINE_BYTES`` is reported and ends the reading (the entries before it are imported): memory stays bounded
whatever the file.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from .entry import ENTRY_FIELDS, sanitise_record, strict_entry_problem
from .providers._common import SECRET_ENV_VARS
from .store import KEY_VERSION, ResponseStore, entry_line, parse_line

EXPORT_FORMAT = 1
#: The header's marker field (its value is the format version).
HEADER_FIELD = "recjudge_store_export"
#: What makes two replies under one key the same: what a score is read from, and whose reply it is.
REPLY_FIELDS = ("provider", "model", "sample", "text", "logprobs")
#: Secret values shorter than this are not looked for (a placeholder such as "EMPTY" is no key, and would match
#: ordinary reply text).
_MIN_SECRET_CHARS = 16
#: Longest line an import reads (bytes, newline excluded): far beyond any entry (a reply's text is cut at the
#: stored-text limit), and the bound on what one line of a file costs in memory.  A longer line ends the import's
#: reading there (reported by line number; the entries before it are imported): it is never read whole.
MAX_LINE_BYTES = 16 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_HEADER_MARK = f'"{HEADER_FIELD}"'.encode()


class ShareError(ValueError):
    """An export or import that cannot be done at all (nothing matches, a secret found, an unreadable file)."""


# ------------------------------------------------------------------------------------------------------ export
def shareable(record: Mapping[str, Any]) -> dict[str, Any]:
    """An entry as it is exported: sanitised, with the schema's fields only, in their written order."""
    clean = sanitise_record(record)
    return {name: clean[name] for name in ENTRY_FIELDS if name in clean}


def export_entries(store: ResponseStore, out: str | os.PathLike[str], *, provider: str | None = None,
                   model: str | None = None) -> dict[str, Any]:
    """Write the entries of ``store`` (those of ``provider`` and ``model`` when given) to ``out`` (see the module
    docstring); returns the header written.  Raises ``ShareError`` when no entry matches, when ``out`` is inside
    the store, or when an entry holds a secret (nothing is written then)."""
    out = Path(out)
    store.refresh()
    if out.is_dir():
        raise ShareError(f"{out}: is a folder; give the path of the export file to write (e.g. "
                         f"{out / 'replies.jsonl.gz'})")
    if _inside(out, store.root):
        raise ShareError(f"{out}: the export file must not be inside the store folder {store.root} (it would be "
                         "read as a shard)")
    chosen = [record for record in store.records()
              if (provider is None or record["provider"] == provider) and (model is None or record["model"] == model)]
    if not chosen:
        held = sorted({(record["provider"], record["model"]) for record in store.records()})
        listing = "; ".join(f"--provider {p} --model {m}" for p, m in held) or "nothing"
        raise ShareError(f"no entry in the store at {store.root} matches provider={provider!r} model={model!r}; "
                         f"it holds: {listing}")
    lines = []
    secrets = _secrets()
    for record in sorted(map(shareable, chosen), key=lambda record: record["key"]):
        line = entry_line(record)
        for name, value in secrets:
            if value in line:
                raise ShareError(f"entry {record['key']} ({record['provider']} / {record['model']}) holds the value "
                                 f"of {name}; nothing was exported")
        lines.append(line)
    counts = Counter((record["provider"], record["model"]) for record in chosen)
    header = {HEADER_FIELD: EXPORT_FORMAT, "key_version": KEY_VERSION, "entries": len(chosen),
              "provider": provider, "model": model,
              "models": [{"provider": p, "model": m, "entries": n} for (p, m), n in sorted(counts.items())]}
    header_line = json.dumps(header, separators=(",", ":"), ensure_ascii=False)  # the marker first, as written
    body = "".join(line + "\n" for line in [header_line, *lines]).encode("utf-8")
    try:
        _write_atomically(out, body, compress=str(out).endswith(".gz"))
    except OSError as exc:  # a parent that is a file, a read-only folder, a full disk
        raise ShareError(f"{out}: cannot write the export file ({_os_reason(exc)}); nothing was exported") from None
    return header


def _os_reason(exc: OSError) -> str:
    """What went wrong on disk, in one line naming the path at fault."""
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def _secrets() -> list[tuple[str, str]]:
    values = [(name, (os.environ.get(name) or "").strip()) for name in SECRET_ENV_VARS]
    return [(name, value) for name, value in values if len(value) >= _MIN_SECRET_CHARS]


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _write_atomically(out: Path, body: bytes, *, compress: bool) -> None:
    """Write ``body`` to ``out`` through a temporary file beside it (a reader never sees half a file); gzip without
    file name or time in its header, so the same body gives the same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as raw:
            if compress:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                    packed.write(body)
            else:
                raw.write(body)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


# ------------------------------------------------------------------------------------------------------ import
@dataclass
class Conflict:
    """A line whose key the store holds with another reply (the stored one is kept)."""

    line: int
    key: str
    provider: str
    model: str
    fields: tuple[str, ...]


@dataclass
class ImportReport:
    """What an import did: counts, and the conflicting and malformed lines (1-based line numbers in ``file``)."""

    file: Path
    store: Path
    added: int = 0
    present: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    #: valid entries not imported: outside what their header announces, or replies of other local weights
    refused: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.conflicts or self.malformed or self.refused)

    def summary(self) -> str:
        return (f"{self.file} -> store {self.store}: {self.added} added, {self.present} already present, "
                f"{len(self.conflicts)} conflicting, {len(self.malformed)} malformed, {len(self.refused)} refused")

    def problems(self) -> list[str]:
        """One line per conflicting or malformed line: file, line number and what is wrong."""
        return [*(f"{self.file}:{item.line}: conflict: key {item.key} ({item.provider} / {item.model}) is stored "
                  f"with another reply ({', '.join(item.fields)} differ); the stored one is kept"
                  for item in self.conflicts),
                *(f"{self.file}:{line}: malformed: {reason}" for line, reason in self.malformed),
                *(f"{self.file}:{line}: refused: {reason}" for line, reason in self.refused)]


def import_entries(store: ResponseStore, path: str | os.PathLike[str]) -> ImportReport:
    """Add the entries of an export file (or any file of store lines) to ``store``; see the module docstring.
    Raises ``ShareError`` (nothing imported) when the file cannot be read or its header is of an unknown format or
    another key version."""
    path = Path(path)
    report = ImportReport(file=path, store=store.root)
    store.refresh()
    pending: dict[str, dict[str, Any]] = {}
    # (line number, header) of the section being read, and its entry lines: exports joined with `cat` (gzip
    # members joined are one stream) are sections, each checked against its own header.
    section: tuple[int, Mapping[str, Any]] | None = None
    entry_lines = 0
    weights = _LocalWeights(store)
    for number, raw in _numbered_lines(path, report):
        if not raw.strip():
            continue
        found = _header(raw)
        if found is not None:
            _check_header(path, number, found)
            _check_count(section, entry_lines, report)
            section, entry_lines = (number, found), 0
            continue
        entry_lines += 1
        record, problem = parse_line(raw)
        if problem is None:
            problem = strict_entry_problem(record)
        if problem is None:
            record = sanitise_record(record)
            problem = strict_entry_problem(record)
        if problem is not None:
            report.malformed.append((number, problem))
            continue
        refusal = _outside_header(section, record) or weights.refusal(record)
        if refusal is not None:
            report.refused.append((number, refusal))
            continue
        key = record["key"]
        held = pending.get(key) or store.get_record(key)
        if held is None:
            pending[key] = record
            continue
        differ = tuple(name for name in REPLY_FIELDS if _reply_field(held, name) != _reply_field(record, name))
        if differ:
            report.conflicts.append(Conflict(number, key, record["provider"], record["model"], differ))
        else:
            report.present += 1
    _check_count(section, entry_lines, report)
    try:
        store.put_records(pending[key] for key in sorted(pending))
    except OSError as exc:  # a read-only store, a store folder under a file, a full disk
        raise ShareError(f"the response store at {store.root} cannot be written ({_os_reason(exc)}); the import "
                         "stopped (entries written before it are complete lines; run it again once the store can be "
                         "written: what is there is not added twice)") from None
    report.added = len(pending)
    return report


def _outside_header(section: tuple[int, Mapping[str, Any]] | None, record: Mapping[str, Any]) -> str | None:
    """Why an entry is not among what its section's header announces (its provider and model filters and its list
    of models), or None (also when there is no header: a store shard announces nothing)."""
    if section is None:
        return None
    number, header = section
    pair = (record["provider"], record["model"])
    listed = header.get("models")
    announced = {(item.get("provider"), item.get("model")) for item in listed if isinstance(item, dict)} \
        if isinstance(listed, list) else None
    if (header.get("provider") not in (None, pair[0]) or header.get("model") not in (None, pair[1])
            or (announced is not None and pair not in announced)):
        return (f"an entry of {pair[0]} / {pair[1]}, which the header on line {number} does not announce "
                f"(it announces {_announced(header, announced)}); only what a file says it holds is imported")
    return None


def _announced(header: Mapping[str, Any], announced: set[tuple[Any, Any]] | None) -> str:
    if announced is not None:
        return ", ".join(f"{p} / {m}" for p, m in sorted(announced, key=str)) or "no entries"
    return f"provider {header.get('provider')!r}, model {header.get('model')!r}"


class _LocalWeights:
    """The weights (GGUF sha256) a local model name stands for on this machine, to refuse imported replies of other
    weights under that name: the runner refuses to add replies of one GGUF to a name holding another's
    (``asking._check_local_weights``), so such an entry would block the local judge.  The weights are the pinned
    ones of an optional model, else those of the file the name resolves to here, else those the store's own entries
    of that name record; None when none is known (then the entry is imported)."""

    def __init__(self, store: ResponseStore):
        self.store = store
        self.known: dict[str, str | None] = {}

    def refusal(self, record: Mapping[str, Any]) -> str | None:
        claimed = (record.get("provenance") or {}).get("gguf_sha256")
        if record["provider"] != "local" or not claimed:
            return None
        model = record["model"]
        if model not in self.known:
            self.known[model] = self._weights(model)
        expected = self.known[model]
        if expected is None or claimed == expected:
            return None
        return (f"an entry of local / {model} made with weights of sha256 {str(claimed)[:16]}..., but {model} is "
                f"the weights of sha256 {expected[:16]}... here; imported, it would stop the local judge {model} "
                "from adding replies")

    def _weights(self, model: str) -> str | None:
        from .models import OPTIONAL_MODELS

        if model in OPTIONAL_MODELS:
            return OPTIONAL_MODELS[model].sha256
        try:
            from .providers.local import gguf_sha256, resolve_model_path

            return gguf_sha256(resolve_model_path(model))
        except Exception:  # no file for that name here (ProviderError), or an unusable local stack
            pass
        for held in self.store.records():
            if held["provider"] == "local" and held["model"] == model:
                sha = (held.get("provenance") or {}).get("gguf_sha256")
                if sha:
                    return str(sha)
        return None


def _numbered_lines(path: Path, report: ImportReport) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line) of a plain or gzip file (told by its first bytes, not its name); a gzip file
    that is cut short or damaged ends the lines, and is reported as a malformed line where it broke off."""
    try:
        with open(path, "rb") as probe:
            compressed = probe.read(2) == _GZIP_MAGIC
    except OSError as exc:
        raise ShareError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    number = 0
    with (gzip.open(path, "rb") if compressed else open(path, "rb")) as lines:
        try:
            while raw := lines.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    report.malformed.append((number, f"the line is longer than {MAX_LINE_BYTES:,} bytes (no entry "
                                                     "is); it and the lines after it are not read"))
                    return
                yield number, raw
        except (EOFError, OSError, zlib.error) as exc:
            report.malformed.append((number + 1, f"the gzip data is cut short or damaged ({exc}); the lines "
                                                 "before are read"))


def _reply_field(record: Mapping[str, Any], name: str) -> Any:
    """A field of ``REPLY_FIELDS`` as read (an entry without ``sample`` is sample 0)."""
    return record.get(name, 0) if name == "sample" else record.get(name)


def _check_count(section: tuple[int, Mapping[str, Any]] | None, entry_lines: int, report: ImportReport) -> None:
    """Report a header whose announced number of entries is not the number of entry lines after it."""
    if section is not None and section[1].get("entries") != entry_lines:
        report.malformed.append((section[0], f"the header announces {section[1].get('entries')!r} entries but "
                                             f"{entry_lines} entry line(s) follow it: is the file cut short?"))


def _header(raw: bytes) -> dict[str, Any] | None:
    """The export header on this line, or None when the line is no header."""
    if _HEADER_MARK not in raw:  # the cheap test first: entries are parsed once, by parse_line
        return None
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return record if type(record) is dict and HEADER_FIELD in record else None


def _check_header(path: Path, number: int, header: Mapping[str, Any]) -> None:
    if header.get(HEADER_FIELD) != EXPORT_FORMAT:
        raise ShareError(f"{path}:{number}: export format {header.get(HEADER_FIELD)!r} is not known here (this "
                         f"version reads format {EXPORT_FORMAT}); nothing was imported")
    if header.get("key_version") != KEY_VERSION:
        raise ShareError(f"{path}:{number}: the entries' keys are of version {header.get('key_version')!r}, this "
                         f"store's of version {KEY_VERSION}: they would never be found; nothing was imported")
