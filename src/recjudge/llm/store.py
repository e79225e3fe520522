"""The response store: every LLM reply the project has ever received, content-addressed and never expiring.

Layout (a folder, by default ``recjudge.compendium.paths.store_dir()``)::

    <root>/<provider>/<model-slug>/<h>.jsonl     16 shards per model, <h> = first hex digit of the key
    <root>/.locks/                               lock files (git-ignored by the .gitignore the store writes)

Each shard is append-only JSON Lines, one complete entry per line, written with a single ``write()`` while an
exclusive file lock is held, so concurrent threads and processes never interleave.  A writer killed mid-write
(SIGKILL) can leave at most one torn last line; readers skip lines that do not parse, and the next writer first
terminates a torn line with a newline so the fragment stays isolated.  When the same key is written twice (live
mode asks again) the last line wins.  ``compact()`` rewrites shards sorted by key with duplicates and torn lines
removed, for stable diffs.

Key (``store_key``): sha256 of the canonical JSON (sorted keys, no whitespace, UTF-8) of::

    {"v": 1, "provider", "model", "messages", "temperature", "max_tokens", "seed", "logprobs", "options", "sample"}

The endpoint URL is deliberately not part of the key: the same model served from another port is the same judge.
The prompt template name is not part either: the rendered messages are.

Entry fields: ``key``, ``provider``, ``model``, ``sample``, ``request_key`` (the caller's id, informational only),
``text`` (raw reply), ``logprobs`` (see below, or null), ``input_tokens``, ``output_tokens``, ``latency_s``,
``finish_reason``, ``created`` (UTC ISO-8601).  Parsed scores are not stored: parsing is re-done at read time so a
parser fix applies to old replies.  Messages are not stored either (they dominate size; the key commits to them).

Log-probabilities are kept compact: for the first ``LOGPROB_MIN_POSITIONS`` generated tokens, and beyond that up
to the first position whose alternatives include a numeric token (where a score is read; at most
``LOGPROB_MAX_POSITIONS``), the top alternatives as returned (at most 20) with log-probabilities rounded to 4
decimals.  That is all ``expected_score`` needs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from filelock import FileLock
# The string encoder json.dumps(ensure_ascii=False) itself uses; StoreKeyer's fast path relies on it.
from json.encoder import encode_basestring as _encode_str

from ..compendium import paths

KEY_VERSION = 1
LOGPROB_MIN_POSITIONS = 16
LOGPROB_MAX_POSITIONS = 128
LOGPROB_DECIMALS = 4
_SHARD_SUFFIX = ".jsonl"
_LOCK_DIR = ".locks"
_DECODER = json.JSONDecoder()  # its decode() is what json.loads(str) calls


def canonical_json(value: Any) -> str:
    """Deterministic JSON text: sorted keys, no whitespace, non-ASCII kept (UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def store_key(
    *,
    provider: str,
    model: str,
    messages: Sequence[Mapping[str, str]],
    temperature: float,
    max_tokens: int,
    seed: int | None,
    logprobs: bool,
    options: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    sample: int,
) -> str:
    """The content address of one reply (hex sha256); see the module docstring for what it covers."""
    opts = dict(options or {})
    payload = {
        "v": KEY_VERSION,
        "provider": provider,
        "model": model,
        "messages": [dict(m) for m in messages],
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
        "seed": None if seed is None else int(seed),
        "logprobs": bool(logprobs),
        "options": opts,
        "sample": int(sample),
    }
    try:
        text = canonical_json(payload)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"cannot build a store key: messages and options must be plain JSON values (options={opts!r}): {exc}"
        ) from exc
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StoreKeyer:
    """Computes ``store_key`` for many prompts of one configuration fast (the fixed part is encoded once).

    ``StoreKeyer(...).key(messages, sample) == store_key(..., messages=messages, sample=sample)`` exactly: the
    canonical JSON is assembled from pre-encoded pieces in the same sorted-key order.
    """

    def __init__(self, *, provider: str, model: str, temperature: float, max_tokens: int, seed: int | None,
                 logprobs: bool, options: Mapping[str, Any] | Iterable[tuple[str, Any]] | None):
        opts = dict(options or {})
        # Validate once through the reference implementation (also catches non-JSON options).
        store_key(provider=provider, model=model, messages=[], temperature=temperature, max_tokens=max_tokens,
                  seed=seed, logprobs=logprobs, options=opts, sample=0)
        enc = canonical_json
        # Sorted key order: logprobs, max_tokens, messages, model, options, provider, sample, seed, temperature, v.
        self._head = f'{{"logprobs":{enc(bool(logprobs))},"max_tokens":{enc(int(max_tokens))},"messages":'
        self._middle = f',"model":{enc(model)},"options":{enc(opts)},"provider":{enc(provider)},"sample":'
        self._tail = (f',"seed":{enc(None if seed is None else int(seed))},"temperature":{enc(float(temperature))},'
                      f'"v":{KEY_VERSION}}}')

    def messages_json(self, messages: Sequence[Mapping[str, str]]) -> str:
        parts = []
        for message in messages:
            if type(message) is dict and len(message) == 2 and type(message.get("role")) is str \
                    and type(message.get("content")) is str:
                # Fast path for the usual {"role", "content"} pair; identical to canonical_json's output.
                parts.append(f'{{"content":{_encode_str(message["content"])},"role":{_encode_str(message["role"])}}}')
            else:
                parts.append(canonical_json(dict(message)))
        return "[" + ",".join(parts) + "]"

    def key(self, messages: Sequence[Mapping[str, str]] | str, sample: int) -> str:
        """Key for ``messages`` (or their ``messages_json``, to reuse across samples) and a sample index."""
        text = messages if isinstance(messages, str) else self.messages_json(messages)
        payload = f"{self._head}{text}{self._middle}{int(sample)}{self._tail}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def model_slug(model: str) -> str:
    """A folder name for a model: a GGUF path or 'org/name' becomes a safe single path component."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip()).strip("._") or "model"
    if len(slug) > 80 or slug != model:
        # Keep it readable but unique: two different model strings must never share a folder by accident.
        slug = f"{slug[:60]}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}"
    return slug


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
            str(tok): round(float(lp), LOGPROB_DECIMALS)
            for tok, lp in list(alternatives.items())[:20]
            if lp is not None and math.isfinite(float(lp))  # -inf (probability 0) is not valid JSON
        }
        kept.append(entry)
        seen_numeric = seen_numeric or any(_is_numeric_token(t) for t in entry)
        if position + 1 >= LOGPROB_MIN_POSITIONS and seen_numeric:
            break
    return kept


def _is_numeric_token(token: str) -> bool:
    return token.strip().replace(".", "", 1).isdigit()


@dataclass(frozen=True)
class StoredReply:
    """One entry of the store (a read-only view of one JSON line)."""

    key: str
    provider: str
    model: str
    sample: int
    text: str
    logprobs: list[dict[str, float]] | None
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float | None
    finish_reason: str | None
    created: str
    request_key: str | None = None

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> "StoredReply":
        return cls(
            key=record["key"],
            provider=record["provider"],
            model=record["model"],
            sample=int(record.get("sample", 0)),
            text=record["text"],
            logprobs=record.get("logprobs"),
            input_tokens=record.get("input_tokens"),
            output_tokens=record.get("output_tokens"),
            latency_s=record.get("latency_s"),
            finish_reason=record.get("finish_reason"),
            created=record.get("created", ""),
            request_key=record.get("request_key"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "provider": self.provider,
            "model": self.model,
            "sample": self.sample,
            "request_key": self.request_key,
            "text": self.text,
            "logprobs": self.logprobs,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": self.latency_s,
            "finish_reason": self.finish_reason,
            "created": self.created,
        }


class MissingReplies(LookupError):
    """Replay mode met prompts the store has no reply for.

    missing: list of (request key, sample index, store key) for every missing reply.
    """

    def __init__(self, missing: Sequence[tuple[str, int, str]], *, label: str = "", store_root: Path | None = None):
        self.missing = list(missing)
        self.count = len(self.missing)
        shown = ", ".join(f"{rk!r} run {run} (store key {sk[:12]})" for rk, run, sk in self.missing[:5])
        more = f" and {self.count - 5} more" if self.count > 5 else ""
        where = f" in {store_root}" if store_root else ""
        super().__init__(
            f"replay mode: {self.count} repl{'y' if self.count == 1 else 'ies'} for {label or 'this judge'} "
            f"missing{where}: {shown}{more}. Run in mode 'auto' or 'live' with the provider configured to fetch them."
        )


class ResponseStore:
    """Content-addressed, append-only store of LLM replies; see the module docstring.

    The index (key -> entry) is read once, lazily, and later ``refresh()`` calls read only bytes appended since
    (by this or any other process).  Thread-safe; safe across processes through per-shard file locks.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else paths.store_dir()
        self._lock = threading.RLock()
        self._index: dict[str, dict[str, Any]] = {}
        self._offsets: dict[Path, int] = {}
        self._loaded = False
        self._prepared: set[Path] = set()  # shard folders known to exist (see _prepare_dirs)
        self._file_locks: dict[Path, FileLock] = {}
        #: Lines that did not parse (torn writes, hand edits), as (shard, byte offset).
        self.skipped_lines: list[tuple[Path, int]] = []

    def __repr__(self) -> str:
        return f"ResponseStore({str(self.root)!r})"

    # ----------------------------------------------------------------------------------------------- reading
    def shard_path(self, provider: str, model: str, key: str) -> Path:
        return self.root / model_slug(provider) / model_slug(model) / f"{key[0]}{_SHARD_SUFFIX}"

    def shards(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.rglob(f"*{_SHARD_SUFFIX}") if _LOCK_DIR not in p.parts)

    def refresh(self, provider: str | None = None, model: str | None = None) -> int:
        """Read entries appended since the last read (by anyone). Returns the number of new lines read.

        With provider and model, only that model's shards are read (what a run needs; the committed store may
        hold many models); ``get`` and friends still load everything on first use.
        """
        with self._lock:
            if provider is not None and model is not None:
                folder = self.root / model_slug(provider) / model_slug(model)
                shards = sorted(folder.glob(f"*{_SHARD_SUFFIX}")) if folder.is_dir() else []
            else:
                shards = self.shards()
            new = 0
            for shard in shards:
                new += self._read_tail(shard)
            if provider is None or model is None:
                self._loaded = True
            return new

    def peek(self, key: str) -> dict[str, Any] | None:
        """Like ``get_record`` but only among entries already read (no loading); pair with ``refresh``."""
        return self._index.get(key)

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.refresh()

    def _read_tail(self, shard: Path) -> int:
        start = self._offsets.get(shard, 0)
        try:
            size = shard.stat().st_size
        except FileNotFoundError:
            return 0
        if size < start:  # rewritten by compact() elsewhere: read it again from the start
            start = 0
        if size == start:
            return 0
        with open(shard, "rb") as fh:
            fh.seek(start)
            data = fh.read(size - start)
        # Only complete lines count; an unterminated tail may still be being written (or is torn) - retry later.
        end = data.rfind(b"\n") + 1
        count = self._index_lines_fast(data[:end])
        if count is None:
            count = self._index_lines(shard, data[:end], start)
        self._offsets[shard] = start + end
        return count

    def _index_lines_fast(self, chunk: bytes) -> int | None:
        """Index a chunk of complete lines that are all valid entries; None (nothing indexed) if any is not.

        Decoding the chunk once and parsing each line as ``str`` skips ``json.loads``'s per-line encoding
        detection and bytes decoding (about a fifth of the load time).  Any doubt (bad UTF-8, a line that does not parse,
        a non-object or keyless entry) returns None so ``_index_lines`` redoes the chunk line by line and records
        the skipped lines with their byte offsets; re-indexing the same lines in the same order is harmless.
        """
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
        decode = _DECODER.decode
        parsed: dict[str, dict[str, Any]] = {}
        count = 0
        try:
            for line in text.split("\n")[:-1]:
                if line:
                    record = decode(line)
                    parsed[record["key"]] = record  # in file order: the last line of a repeated key wins
                    count += 1
        except (ValueError, KeyError, TypeError):
            return None
        self._index.update(parsed)
        return count

    def _index_lines(self, shard: Path, chunk: bytes, start: int) -> int:
        """Index a chunk of complete lines one by one, recording lines that do not parse as skipped."""
        count = 0
        offset = start
        loads = json.loads
        index = self._index
        for raw in chunk.split(b"\n")[:-1]:
            if raw:
                try:
                    record = loads(raw)
                    index[record["key"]] = record
                    count += 1
                except (ValueError, KeyError, TypeError):
                    self.skipped_lines.append((shard, offset))
            offset += len(raw) + 1
        return count

    def get(self, key: str) -> StoredReply | None:
        """The reply stored under ``key``, or None."""
        record = self.get_record(key)
        return None if record is None else StoredReply.from_json(record)

    def get_record(self, key: str) -> dict[str, Any] | None:
        """The raw JSON record stored under ``key`` (fast path; do not mutate it), or None."""
        self._ensure_loaded()
        return self._index.get(key)

    def __contains__(self, key: object) -> bool:
        self._ensure_loaded()
        return key in self._index

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._index)

    def __iter__(self) -> Iterator[StoredReply]:
        self._ensure_loaded()
        for record in list(self._index.values()):
            yield StoredReply.from_json(record)

    # ----------------------------------------------------------------------------------------------- writing
    def put(self, reply: StoredReply) -> None:
        """Append one entry durably-enough: one write() of one complete line under an exclusive lock."""
        self.put_many((reply,))

    def put_many(self, replies: Iterable[StoredReply]) -> int:
        """Append many entries: one lock per shard, still one write() per complete line. Returns the count."""
        by_shard: dict[Path, list[StoredReply]] = {}
        for reply in replies:
            by_shard.setdefault(self.shard_path(reply.provider, reply.model, reply.key), []).append(reply)
        with self._lock:
            for shard, group in by_shard.items():
                self._prepare_dirs(shard)
                with self._file_lock(shard):
                    fd = _open_shard(shard)
                    try:
                        if _ends_torn(fd):
                            os.write(fd, b"\n")
                        for reply in group:
                            record = reply.to_json()
                            _write_all(fd, (_entry_line(record) + "\n").encode("utf-8"))
                            self._index[reply.key] = record
                    finally:
                        os.close(fd)
        return sum(len(group) for group in by_shard.values())

    def _prepare_dirs(self, shard: Path) -> None:
        # Called on every put, under the store lock: once a folder is known to exist, skip the system calls
        # (if it is removed meanwhile, _open_shard recreates it).
        if shard.parent in self._prepared:
            return
        shard.parent.mkdir(parents=True, exist_ok=True)
        locks = self.root / _LOCK_DIR
        if not locks.is_dir():
            locks.mkdir(parents=True, exist_ok=True)
            ignore = self.root / ".gitignore"
            if not ignore.exists():
                ignore.write_text(f"{_LOCK_DIR}/\n", encoding="utf-8")
        self._prepared.add(shard.parent)

    def _file_lock(self, shard: Path) -> FileLock:
        # One FileLock object per shard, reused: building one costs about as much as taking it.  Always used
        # under self._lock, so sharing it between threads is safe.
        lock = self._file_locks.get(shard)
        if lock is None:
            relative = shard.relative_to(self.root).as_posix().replace("/", "__")
            lock = self._file_locks[shard] = FileLock(str(self.root / _LOCK_DIR / f"{relative}.lock"))
        return lock

    def compact(self) -> dict[str, int]:
        """Rewrite every shard sorted by key, last entry per key kept, unparsable lines dropped.

        For stable, reviewable diffs before committing.  Takes each shard's lock; safe while others append.
        Returns counts (entries kept, lines dropped).
        """
        kept = dropped = 0
        with self._lock:
            for shard in self.shards():
                with self._file_lock(shard):
                    records: dict[str, str] = {}
                    with open(shard, "rb") as fh:
                        for raw in fh.read().split(b"\n"):
                            if not raw.strip():
                                continue
                            try:
                                record = json.loads(raw)
                                records[record["key"]] = _entry_line(record)
                            except (ValueError, KeyError, TypeError):
                                dropped += 1
                    body = "".join(records[k] + "\n" for k in sorted(records)).encode("utf-8")
                    tmp = shard.with_suffix(".tmp")
                    with open(tmp, "wb") as fh:
                        fh.write(body)
                        fh.flush()
                        os.fsync(fh.fileno())
                    os.replace(tmp, shard)
                    kept += len(records)
            self._index.clear()
            self._offsets.clear()
            self._loaded = False
            self.skipped_lines.clear()
        return {"entries": kept, "dropped_lines": dropped}


def _entry_line(record: Mapping[str, Any]) -> str:
    """One store line: fields in their fixed order (key first, for readable diffs), no whitespace, UTF-8."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _open_shard(shard: Path) -> int:
    """Open a shard for appending (read access too, for ``_ends_torn``), creating it and its folder if needed."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
    try:
        return os.open(shard, flags, 0o644)
    except FileNotFoundError:  # the folder was removed after this store created it
        shard.parent.mkdir(parents=True, exist_ok=True)
        return os.open(shard, flags, 0o644)


def _ends_torn(fd: int) -> bool:
    """Whether the open shard is non-empty and does not end with a newline (a torn last line)."""
    size = os.fstat(fd).st_size
    return bool(size) and os.pread(fd, 1, size - 1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
