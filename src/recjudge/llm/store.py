"""The response store: every LLM reply the project has ever received, content-addressed and never expiring.

Layers.  By default (``default_store``) a run reads two stores and writes one: the book's committed replies
(``data/llm``) beneath, the reader's own (``variants/store``, git-ignored) on top, where new replies go
(``LayeredStore``; ``recjudge.paths.store_layers``).  ``RECJUDGE_STORE`` names one store used alone for reads and
writes (how the book's own replies are regenerated into ``data/llm``).

Layout (a folder)::

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

The endpoint URL is deliberately not part of the key: the same model served from another port is the same judge
(and the committed keys stay valid).  So that two servers serving different weights under one name cannot share
entries unnoticed, a model name must identify the judge at a non-default endpoint (generic names need an explicit
identity, ``JudgeConfig(model=<identity>, served_model=<name the server knows>)``; listed models are checked; the
model id the server reports is recorded): see ``recjudge.llm.providers.openai_compat``.
The prompt template name is not part either: the rendered messages are.

Entry fields, and how an entry is built, normalised and checked: ``recjudge.llm.entry`` (the one home of the
schema).

Validation.  Every entry is normalised by ``sanitise_record`` before it is written, so a stored line is always
readable; on reading, a line that does not parse or whose fields have the wrong types (``entry_problem``) is
skipped and reported in ``skipped_lines`` with its shard and line number, never raised.  ``compact()`` moves such
lines to ``<root>/.quarantine/<provider>/<model>/<h>.jsonl`` (one JSON object per line: shard, line, reason and the
raw line) instead of dropping them silently.

Replacement.  A reader remembers, per shard, the inode, size and first bytes it read; a shard replaced on disk (a
``git pull`` of a compacted store, another process's ``compact()``) is noticed and read again from the start, even
when the new file is longer than the old one.

Claims.  ``claim(key)`` creates ``<root>/.locks/claims/<key>.claim`` (exclusive create) holding the owner's pid,
host, process start time and the claim's time, so two processes running the same job do not both pay for a prompt:
the second waits for the first's reply. A claim is stale, and taken over, when its pid is dead on this host, when
that pid now belongs to another process (another start time), when it is empty or unreadable for more than
``CLAIM_WRITE_GRACE_S`` (a writer that died or a full disk), or when it is older than ``CLAIM_MAX_AGE_S`` (the only
test that applies to a claim written on another host). A claim that cannot be written (a full disk) removes what it
wrote and raises ``StoreNotWritable`` naming the folder.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import hashlib
import json
import os
import re
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

import msgspec

from .. import paths
from .entry import (  # noqa: F401  (the schema's names, re-exported where the store's readers look for them)
    _ENTRY_DECODER,
    PROVENANCE_MAX_CHARS,
    StoredReply,
    _as_dict,
    _Record,
    compact_logprobs,
    entry_problem,
    max_stored_chars,
    now_utc,
    sanitise_record,
)

KEY_VERSION = 1
_SHARD_SUFFIX = ".jsonl"
_LOCK_DIR = ".locks"
QUARANTINE_DIR = ".quarantine"
_CLAIM_DIR = "claims"
#: Bytes of a shard's beginning remembered to notice a replaced shard.
_HEAD_BYTES = 256


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
        self._head = f'{{"logprobs":{enc(bool(logprobs))},"max_tokens":{enc(int(max_tokens))},"messages":'.encode()
        self._middle = f',"model":{enc(model)},"options":{enc(opts)},"provider":{enc(provider)},"sample":'.encode()
        self._tail = (f',"seed":{enc(None if seed is None else int(seed))},"temperature":{enc(float(temperature))},'
                      f'"v":{KEY_VERSION}}}').encode()

    def messages_json(self, messages: Sequence[Mapping[str, str]]) -> bytes:
        """The messages' canonical JSON, UTF-8 encoded (what the key hashes)."""
        plain = self.plain_messages_json(messages)
        return plain if plain is not None else canonical_json([dict(m) for m in messages]).encode("utf-8")

    @staticmethod
    def plain_messages_json(messages: Sequence[Mapping[str, str]]) -> bytes | None:
        """``messages_json`` for the usual messages, exactly {"role", "content"} dicts of plain strings, fast;
        None for any other messages."""
        for message in messages:
            if not (type(message) is dict and len(message) == 2 and type(message.get("role")) is str
                    and type(message.get("content")) is str):
                return None
        # msgspec writes exactly canonical_json's bytes for these (the same escapes for every code point, tested),
        # several times faster.
        return _SORTED_ENCODER.encode(messages if type(messages) in (list, tuple) else list(messages))

    def key(self, messages: Sequence[Mapping[str, str]] | bytes | str, sample: int) -> str:
        """Key for ``messages`` (or their ``messages_json``, to reuse across samples) and a sample index."""
        if isinstance(messages, str):
            text = messages.encode("utf-8")
        elif isinstance(messages, bytes):
            text = messages
        else:
            text = self.messages_json(messages)
        return hashlib.sha256(b"%b%b%b%d%b" % (self._head, text, self._middle, int(sample), self._tail)).hexdigest()


_SORTED_ENCODER = msgspec.json.Encoder(order="sorted")


@functools.lru_cache(maxsize=1024)  # asked twice for every entry written; a job has one provider and model
def model_slug(model: str) -> str:
    """A folder name for a model: a GGUF path or 'org/name' becomes a safe single path component."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip()).strip("._") or "model"
    if len(slug) > 80 or slug != model:
        # Keep it readable but unique: two different model strings must never share a folder by accident.
        slug = f"{slug[:60]}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}"
    return slug




@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while many containers are created at once (reading a shard): decoding
    creates no reference cycles, and the collector's passes over a growing heap cost a third of the decoding."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class SkippedLine(NamedTuple):
    """A shard line that is not a usable entry: where it is (1-based line, byte offset) and why."""

    shard: Path
    line: int
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"{self.shard}:{self.line}: {self.reason}"


#: A claim older than this is stale whoever holds it: one prompt is asked well within it (requests have deadlines).
CLAIM_MAX_AGE_S = 1800.0
#: How long an empty or unreadable claim file may be "being written" before it counts as left behind.
CLAIM_WRITE_GRACE_S = 10.0


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat``, field 22), which tells a pid's
    owner from a later process given the same pid; None where /proc is not there."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


_OWNER: dict[int, str] = {}


def _claim_owner() -> str:
    """This process as a claim names it: pid, host and start time (read once per process, not once per prompt)."""
    pid = os.getpid()
    if pid not in _OWNER:  # (a forked child has a pid of its own, so it never reuses its parent's line)
        _OWNER[pid] = f"{pid} {socket.gethostname()} {_process_start(pid) or '-'}"
    return _OWNER[pid]


def _unwritable(folder: Path, error: OSError) -> "StoreNotWritable":
    full = " (the disk is full)" if error.errno == errno.ENOSPC else ""
    return StoreNotWritable(f"{folder}: cannot write a claim file{full}: {error.strerror or error}; every reply "
                            "received so far is stored")


class StoreNotWritable(OSError):
    """The store folder cannot be written; raised before anything is asked, so no paid reply is lost."""


@dataclass
class _ShardState:
    """What a reader has read of one shard: byte offset and line count of the complete lines read, and the file's
    identity (device, inode, first bytes) and (size, mtime) when it was read."""

    offset: int = 0
    lines: int = 0
    ident: tuple[int, int] = (0, 0)
    head: bytes = b""
    seen: tuple[int, int] = (-1, -1)


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
    (by this or any other process), or the whole shard again when it was replaced.  Thread-safe; safe across
    processes through per-shard file locks.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else paths.store_dir()
        self._lock = threading.RLock()
        self._index: dict[str, _Record] = {}
        self._shards: dict[Path, _ShardState] = {}
        self._loaded = False
        self._prepared: set[Path] = set()  # shard folders known to exist (see _prepare_dirs)
        self._file_locks: dict[Path, _ShardLock] = {}
        self._shard_paths: dict[tuple[str, str, str], Path] = {}
        self._skipped: list[SkippedLine] = []

    def __repr__(self) -> str:
        return f"ResponseStore({str(self.root)!r})"

    @property
    def skipped_lines(self) -> list[SkippedLine]:
        """Lines that are not usable entries (torn writes, hand edits, wrong field types), with shard and line."""
        return self._skipped

    # ----------------------------------------------------------------------------------------------- reading
    def shard_path(self, provider: str, model: str, key: str) -> Path:
        # Asked several times for every reply stored: the 16 paths of a model are built once.
        held = self._shard_paths.get((provider, model, key[0]))
        if held is None:
            held = self._shard_paths[provider, model, key[0]] = (
                self.root / model_slug(provider) / model_slug(model) / f"{key[0]}{_SHARD_SUFFIX}")
        return held

    def shards(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        # Hidden folders hold locks, claims and quarantined lines, never entries.
        return sorted(p for p in self.root.rglob(f"*{_SHARD_SUFFIX}")
                      if not any(part.startswith(".") for part in p.relative_to(self.root).parts))

    def refresh(self, provider: str | None = None, model: str | None = None) -> int:
        """Read entries appended since the last read (by anyone). Returns the number of new lines read.

        With provider and model, only that model's shards are read (what a run needs; the committed store may
        hold many models); ``get`` and friends still load everything on first use.
        """
        with self._lock:
            if provider is not None and model is not None:
                folder = self.root / model_slug(provider) / model_slug(model)
                shards = sorted(folder.glob(f"*{_SHARD_SUFFIX}")) if folder.is_dir() else []
                known = [shard for shard in self._shards if shard.parent == folder]
            else:
                shards = self.shards()
                known = list(self._shards)
            for gone in set(known) - set(shards):  # removed on disk: its replies are no longer served
                self._forget(gone)
            new = 0
            for shard in shards:
                new += self._read_tail(shard)
            if provider is None or model is None:
                self._loaded = True
            return new

    def refresh_key(self, provider: str, model: str, key: str) -> int:
        """``refresh`` of the one shard that holds ``key``'s entries (what a worker reads before asking a prompt it
        has claimed: has another process stored its reply meanwhile?). Returns the number of new lines read."""
        with self._lock:
            return self._read_tail(self.shard_path(provider, model, key))

    def peek(self, key: str) -> dict[str, Any] | None:
        """Like ``get_record`` but only among entries already read (no loading); pair with ``refresh``."""
        record = self._index.get(key)
        return None if record is None else _as_dict(record)

    def peek_many(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        """``{key: record}`` for those of ``keys`` already read (see ``peek``); keys not found are left out.

        For bulk reading (a replay): each record is a read-only view of its line, read by field name like the
        dict ``get_record`` gives (``record["text"]``, ``record.get("logprobs")``), without copying it."""
        index = self._index
        return {key: index[key] for key in keys if key in index}

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.refresh()

    def _read_tail(self, shard: Path) -> int:
        try:
            stat = shard.stat()
        except FileNotFoundError:
            return 0
        state = self._shards.get(shard)
        if state is None:
            state = self._shards[shard] = _ShardState()
        size = stat.st_size
        if (size, stat.st_mtime_ns) == state.seen and (stat.st_dev, stat.st_ino) == state.ident:
            return 0
        if state.offset and self._replaced(shard, state, stat):
            # Replaced (compacted, pulled, rewritten): the remembered offset means nothing in the new file, and
            # what the old file held is only served again if the new one holds it.
            self._forget(shard)
            state = self._shards[shard] = _ShardState()
        start = state.offset
        with open(shard, "rb") as fh:
            if state.offset == 0:
                state.ident = (stat.st_dev, stat.st_ino)
                state.head = fh.read(_HEAD_BYTES)
            fh.seek(start)
            data = fh.read(size - start)
        # Only complete lines count; an unterminated tail may still be being written (or is torn) - retry later.
        end = data.rfind(b"\n") + 1
        chunk = data[:end]
        count = self._index_lines_fast(chunk)
        if count is None:
            count = self._index_lines(shard, chunk, start, state.lines)
        state.offset = start + end
        state.lines += chunk.count(b"\n")
        # Remember (size, mtime) only when everything up to the end was read, so a torn tail is looked at again.
        state.seen = (size, stat.st_mtime_ns) if end == len(data) else (-1, -1)
        return count

    def _forget(self, shard: Path) -> None:
        """Drop what was read from ``shard`` (entries, skipped lines, position): it was removed or replaced."""
        self._shards.pop(shard, None)
        self._skipped = [line for line in self._skipped if line.shard != shard]
        stale = [key for key, entry in self._index.items()
                 if self.shard_path(entry["provider"], entry["model"], key) == shard]
        for key in stale:
            del self._index[key]

    @staticmethod
    def _replaced(shard: Path, state: _ShardState, stat: os.stat_result) -> bool:
        if (stat.st_dev, stat.st_ino) != state.ident or stat.st_size < state.offset:
            return True
        with open(shard, "rb") as fh:
            return fh.read(len(state.head)) != state.head

    def _index_lines_fast(self, chunk: bytes) -> int | None:
        """Index a chunk of complete lines that are all valid entries; None (nothing indexed) if any is not.

        The chunk is decoded in C against ``_Entry``, which checks every line as ``entry_problem`` does (about a
        fifth of the time of ``json.loads`` plus ``entry_problem``).  Any doubt (bad UTF-8, a line that does not
        parse or fails a check, an unknown field) returns None so ``_index_lines`` redoes the chunk line by line
        and records the skipped lines with their reasons; re-indexing the same lines in the same order is harmless.
        """
        # One decode() per line, not decode_lines(): that would also accept two objects on one line.
        try:
            with _gc_paused():
                entries = list(map(_ENTRY_DECODER.decode, filter(None, chunk.split(b"\n"))))
        except (msgspec.DecodeError, RecursionError):  # also raised for a line failing a type or range check
            return None
        # Kept as decoded (read by field name like a dict; ``_as_dict`` copies one out for the public readers).
        # In file order: the last line of a repeated key wins.
        self._index.update({entry.key: entry for entry in entries})
        return len(entries)

    def _index_lines(self, shard: Path, chunk: bytes, start: int, lines_before: int) -> int:
        """Index a chunk of complete lines one by one, recording lines that are not usable entries as skipped."""
        count = 0
        offset = start
        index = self._index
        for number, raw in enumerate(chunk.split(b"\n")[:-1], start=lines_before + 1):
            if raw.strip():
                record, problem = parse_line(raw)
                if problem is None:
                    index[record["key"]] = record
                    count += 1
                else:
                    self._skipped.append(SkippedLine(shard, number, offset, problem))
            offset += len(raw) + 1
        return count

    def get(self, key: str) -> StoredReply | None:
        """The reply stored under ``key``, or None."""
        record = self.get_record(key)
        return None if record is None else StoredReply.from_json(record)

    def get_record(self, key: str) -> dict[str, Any] | None:
        """The raw JSON record stored under ``key`` (fast path; do not mutate it), or None."""
        self._ensure_loaded()
        record = self._index.get(key)
        return None if record is None else _as_dict(record)

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

    def records(self) -> list[dict[str, Any]]:
        """Every entry's raw record."""
        return list(map(_as_dict, self._held()))

    def records_of(self, provider: str, model: str) -> list[Mapping[str, Any]]:
        """The records of one provider's model as read-only views (read by field name, like ``peek_many``'s), not
        copies: a store holds tens of thousands of a local model's replies, and copying them all into dicts took
        seconds per judge run of a plan."""
        return [record for record in self._held()
                if record.get("provider") == provider and record.get("model") == model]

    def _held(self) -> list[_Record]:
        """Every entry as the index holds it (a dict or a decoded entry; read it, never change it)."""
        self._ensure_loaded()
        return list(self._index.values())

    # ----------------------------------------------------------------------------------------------- writing
    def put(self, reply: StoredReply) -> dict[str, Any]:
        """Append one entry durably-enough: one write() of one complete line under an exclusive lock.
        Returns the record as written (after ``sanitise_record``)."""
        return self.put_records((reply.to_json(),))[0]

    def put_many(self, replies: Iterable[StoredReply]) -> int:
        """Append many entries: one lock per shard, still one write() per complete line. Returns the count."""
        return len(self.put_records(reply.to_json() for reply in replies))

    def put_records(self, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append entries given as records; each is passed through ``sanitise_record`` first, so what is written
        always reads back.  Returns the records as written, in the order given."""
        written: list[dict[str, Any]] = []
        by_shard: dict[Path, list[dict[str, Any]]] = {}
        for given in records:
            record = sanitise_record(given)
            problem = entry_problem(record)
            if problem is not None:
                raise ValueError(f"not a storable entry ({problem}): {str(given)[:200]}")
            written.append(record)
            by_shard.setdefault(self.shard_path(record["provider"], record["model"], record["key"]), []).append(record)
        with self._lock:
            for shard, group in by_shard.items():
                self._prepare_dirs(shard)
                with self._file_lock(shard):
                    fd = _open_shard(shard)
                    try:
                        before = os.fstat(fd)
                        torn = bool(before.st_size) and os.pread(fd, 1, before.st_size - 1) != b"\n"
                        if torn:
                            os.write(fd, b"\n")
                        lines = [(entry_line(record) + "\n").encode("utf-8") for record in group]
                        for record, line in zip(group, lines):
                            _write_all(fd, line)
                            self._index[record["key"]] = record
                        if not torn:
                            self._advance_past_own_lines(shard, fd, before, lines)
                    finally:
                        os.close(fd)
        return written

    def _advance_past_own_lines(self, shard: Path, fd: int, before: os.stat_result, lines: list[bytes]) -> None:
        """After appending ``lines`` (indexed already) to a shard this reader had read to its end (``before``: the
        shard as it was when the lock was taken), move the read position past them, so that the next ``refresh``
        does not read this process's own replies back. Anything else (a shard not read yet, or read only in part)
        is left to ``refresh``, which reads whatever it has not read."""
        state = self._shards.get(shard)
        after = os.fstat(fd)
        if after.st_size != before.st_size + sum(map(len, lines)):
            return  # someone else wrote too (the lock is advisory): read it all again
        if state is None and before.st_size == 0:  # a new shard: what this reader knows of it is what it wrote
            state = self._shards[shard] = _ShardState(ident=(after.st_dev, after.st_ino),
                                                      head=b"".join(lines)[:_HEAD_BYTES])
        elif (state is None or state.offset != before.st_size or state.seen != (before.st_size, before.st_mtime_ns)
              or state.ident != (before.st_dev, before.st_ino)):
            return
        state.offset = after.st_size
        state.lines += len(lines)
        state.seen = (after.st_size, after.st_mtime_ns)

    def check_writable(self, provider: str, model: str) -> None:
        """Raise ``StoreNotWritable`` unless entries for (provider, model) can be written: creates the folders and
        the lock folder and writes (then removes) a probe file there.  Run before asking anything, so a store that
        cannot be written is found before replies are paid for."""
        folder = self.root / model_slug(provider) / model_slug(model)
        probe = folder / f".write-probe-{os.getpid()}-{threading.get_ident()}"
        try:
            with self._lock:
                self._prepared.clear()  # folders seen before may have been removed since (a deleted store)
                self._prepare_dirs(folder / "probe")
            with self._file_lock(folder / f"0{_SHARD_SUFFIX}"):
                probe.write_bytes(b"")
                probe.unlink()
        except OSError as exc:
            raise StoreNotWritable(
                f"the response store cannot be written at {folder} ({type(exc).__name__}: {exc}); nothing was asked. "
                "Choose a writable folder (argument store=, or env RECJUDGE_STORE) or use mode 'replay'"
            ) from exc

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

    def _file_lock(self, shard: Path) -> "_ShardLock":
        lock = self._file_locks.get(shard)
        if lock is None:
            relative = shard.relative_to(self.root).as_posix().replace("/", "__")
            lock = self._file_locks[shard] = _ShardLock(self.root / _LOCK_DIR / f"{relative}.lock")
        return lock

    def quarantine_path(self, shard: Path) -> Path:
        """Where ``compact()`` puts the unusable lines of ``shard``."""
        return self.root / QUARANTINE_DIR / shard.relative_to(self.root)

    def compact(self) -> dict[str, Any]:
        """Rewrite every shard sorted by key, last entry per key kept; lines that are not usable entries are moved
        to ``quarantine_path(shard)`` (appended, with shard, line and reason), never dropped silently.

        For stable, reviewable diffs before committing.  Takes each shard's lock; safe while others append.
        Returns counts (entries kept, lines dropped) and the quarantine files written.
        """
        kept = dropped = 0
        quarantined: list[str] = []
        with self._lock:
            for shard in self.shards():
                with self._file_lock(shard):
                    records: dict[str, str] = {}
                    bad: list[dict[str, Any]] = []
                    with open(shard, "rb") as fh:
                        for number, raw in enumerate(fh.read().split(b"\n"), start=1):
                            if not raw.strip():
                                continue
                            record, problem = parse_line(raw)
                            if problem is None:
                                records[record["key"]] = entry_line(record)
                            else:
                                bad.append({"shard": shard.relative_to(self.root).as_posix(), "line": number,
                                            "reason": problem, "raw": raw.decode("utf-8", "replace")})
                    if bad:
                        target = self.quarantine_path(shard)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        with open(target, "a", encoding="utf-8") as fh:
                            fh.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in bad)
                        quarantined.append(str(target))
                        dropped += len(bad)
                    body = "".join(records[k] + "\n" for k in sorted(records)).encode("utf-8")
                    tmp = shard.with_suffix(".tmp")
                    with open(tmp, "wb") as fh:
                        fh.write(body)
                        fh.flush()
                        os.fsync(fh.fileno())
                    os.replace(tmp, shard)
                    kept += len(records)
            self._index.clear()
            self._shards.clear()
            self._loaded = False
            self._skipped.clear()
        return {"entries": kept, "dropped_lines": dropped, "quarantined": quarantined}

    # ------------------------------------------------------------------------------------------------ claims
    def claim_path(self, key: str) -> Path:
        return self._claims / f"{key}.claim"

    @functools.cached_property
    def _claims(self) -> Path:
        return self.root / _LOCK_DIR / _CLAIM_DIR

    def claim(self, key: str) -> bool:
        """Try to become the one process asking for ``key``: True when claimed (release with ``release``), False
        when a live process holds the claim.  A stale claim (see the module docstring) is taken over."""
        path = self.claim_path(key)
        owner = f"{_claim_owner()} {time.time():.0f}\n".encode()
        for _ in range(3):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    raise _unwritable(path.parent, error) from error
                continue
            except FileExistsError:
                if self.claim_owner_alive(key):
                    return False
                with contextlib.suppress(FileNotFoundError):  # stale: taken over
                    path.unlink()
                continue
            except OSError as error:
                raise _unwritable(path.parent, error) from error
            try:
                if os.write(fd, owner) != len(owner):
                    raise OSError(errno.ENOSPC, "short write")
            except OSError as error:
                os.close(fd)
                with contextlib.suppress(OSError):  # never leave an empty claim for others to wait on
                    path.unlink()
                raise _unwritable(path.parent, error) from error
            os.close(fd)
            return True
        return False

    def claim_owner_alive(self, key: str) -> bool:
        """Whether the claim on ``key`` exists and is not stale (module docstring): its owner may still be asking."""
        path = self.claim_path(key)
        try:
            age = time.time() - path.stat().st_mtime
            fields = path.read_text(encoding="utf-8", errors="replace").split()
        except FileNotFoundError:
            return False
        if age > CLAIM_MAX_AGE_S:
            return False
        if len(fields) < 2 or not fields[0].isdigit():
            return age <= CLAIM_WRITE_GRACE_S  # being written right now, or left empty by a writer that failed
        pid, host = int(fields[0]), fields[1]
        if host != socket.gethostname():
            return True  # another host's pid cannot be checked from here: only the age tells
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        recorded_start = fields[2] if len(fields) > 2 else "-"
        return recorded_start == "-" or _process_start(pid) in (None, recorded_start)

    def release(self, key: str) -> None:
        """Give up a claim this process holds."""
        try:
            self.claim_path(key).unlink()
        except FileNotFoundError:
            pass


class LayeredStore(ResponseStore):
    """A store read through several folders and written to one: the book's committed replies beneath, a reader's
    own replies on top (``recjudge.paths.store_layers``).  Reads see every layer (a key in two layers is served from
    the upper one, the newer reply); writes, claims, locks, batch ledgers and ``compact`` touch the top layer
    (``root``) only, so the folders beneath are never written."""

    def __init__(self, root: str | os.PathLike[str], beneath: Sequence[str | os.PathLike[str]]):
        super().__init__(root)
        top = self.root.resolve()
        self.beneath = [ResponseStore(folder) for folder in beneath if Path(folder).resolve() != top]

    def __repr__(self) -> str:
        return f"LayeredStore({str(self.root)!r}, beneath={[str(layer.root) for layer in self.beneath]!r})"

    @property
    def layers(self) -> list[ResponseStore]:
        """Every layer read, lowest first (this store's own folder last)."""
        return [*self.beneath, _Top(self)]

    @property
    def skipped_lines(self) -> list[SkippedLine]:
        return [line for layer in self.beneath for line in layer.skipped_lines] + self._skipped

    def shards(self) -> list[Path]:
        return [shard for layer in self.beneath for shard in layer.shards()] + super().shards()

    def refresh(self, provider: str | None = None, model: str | None = None) -> int:
        return sum(layer.refresh(provider, model) for layer in self.beneath) + super().refresh(provider, model)

    def refresh_key(self, provider: str, model: str, key: str) -> int:
        return (sum(layer.refresh_key(provider, model, key) for layer in self.beneath)
                + super().refresh_key(provider, model, key))

    def _ensure_loaded(self) -> None:
        for layer in self.beneath:
            layer._ensure_loaded()
        super()._ensure_loaded()

    def peek(self, key: str) -> dict[str, Any] | None:
        for layer in (_Top(self), *reversed(self.beneath)):
            record = layer.peek(key)
            if record is not None:
                return record
        return None

    def peek_many(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        keys = list(keys)
        found: dict[str, Mapping[str, Any]] = {}
        for layer in self.layers:  # lowest first, so an upper layer's reply replaces a lower one's
            found.update(layer.peek_many(keys))
        return found

    def _merged(self) -> dict[str, Any]:
        self._ensure_loaded()
        merged: dict[str, Any] = {}
        for layer in self.beneath:
            merged.update(layer._index)
        merged.update(self._index)
        return merged

    def get_record(self, key: str) -> dict[str, Any] | None:
        self._ensure_loaded()
        return self.peek(key)

    def __contains__(self, key: object) -> bool:
        self._ensure_loaded()
        return any(key in layer._index for layer in (*self.beneath, _Top(self)))

    def __len__(self) -> int:
        return len(self._merged())

    def __iter__(self) -> Iterator[StoredReply]:
        for record in list(self._merged().values()):
            yield StoredReply.from_json(record)

    def _held(self) -> list[Any]:
        return list(self._merged().values())


class _Top:
    """The own folder of a ``LayeredStore`` read as a plain ``ResponseStore`` (its index and peeks only)."""

    def __init__(self, store: LayeredStore):
        self._index = store._index
        self._store = store

    def peek(self, key: str) -> dict[str, Any] | None:
        return ResponseStore.peek(self._store, key)

    def peek_many(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        return ResponseStore.peek_many(self._store, keys)


def default_store() -> ResponseStore:
    """The store a run uses when given none: ``recjudge.paths.store_layers`` read, ``recjudge.paths.store_dir``
    written (the committed ``data/llm`` is read, never written, unless ``RECJUDGE_STORE`` names it)."""
    *beneath, top = paths.store_layers()
    return LayeredStore(top, beneath) if beneath else ResponseStore(top)


_open_stores: dict[Path | tuple[Path, ...], ResponseStore] = {}
_open_stores_lock = threading.Lock()


def open_store(root: str | os.PathLike[str] | None = None) -> ResponseStore:
    """The process-wide ResponseStore for a folder, so that a notebook calling ``run_judge`` many times reads each
    shard once and afterwards only what was appended.  Default: the layered store (``default_store``: the
    committed replies read, the reader's store written; ``$RECJUDGE_STORE`` alone when set)."""
    if root is None:
        layers = tuple(folder.resolve() for folder in paths.store_layers())
        with _open_stores_lock:
            if layers not in _open_stores:
                _open_stores[layers] = default_store()
            return _open_stores[layers]
    path = Path(root).resolve()
    with _open_stores_lock:
        if path not in _open_stores:
            _open_stores[path] = ResponseStore(path)
        return _open_stores[path]


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a usable store line, else (None, why not)."""
    try:
        record = json.loads(raw)
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    except ValueError as exc:
        return None, f"not valid JSON ({exc.args[0][:80] if exc.args else exc})"
    except RecursionError:  # a line of a few KB of brackets: no entry is nested like that
        return None, "JSON nested too deeply"
    problem = entry_problem(record)
    return (record, None) if problem is None else (None, problem)


def entry_line(record: Mapping[str, Any]) -> str:
    """One store line: fields in their fixed order (key first, for readable diffs), no whitespace, UTF-8."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class _ShardLock:
    """The exclusive lock of one shard, between threads and between processes: ``flock`` on the shard's lock file
    under ``<root>/.locks/`` (the file and the kind of lock ``filelock.FileLock`` takes there, so processes of
    either kind exclude each other). The lock file stays open for the process's life: opening it and taking the
    lock through filelock for every reply cost more CPU than the reply's request. A lock file removed meanwhile is
    opened anew; so is one inherited across a fork (a child must not share its parent's lock)."""

    def __init__(self, path: Path):
        self.path = path
        self._threads = threading.Lock()
        self._fd: int | None = None
        self._pid = 0

    def __enter__(self) -> "_ShardLock":
        import fcntl

        self._threads.acquire()
        try:
            while True:
                if self._fd is None or self._pid != os.getpid():
                    self._fd = self._open()
                fcntl.flock(self._fd, fcntl.LOCK_EX)
                if os.fstat(self._fd).st_nlink:
                    return self
                os.close(self._fd)  # its file was removed while the lock was waited for: lock the current one
                self._fd = None
        except BaseException:
            self._threads.release()
            raise

    def __exit__(self, *exc: Any) -> None:
        import fcntl

        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def _open(self) -> int:
        self._pid = os.getpid()
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # the lock folder was removed after this store created it
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)


def _open_shard(shard: Path) -> int:
    """Open a shard for appending (read access too, to see a torn last line), creating it and its folder if needed."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
    try:
        return os.open(shard, flags, 0o644)
    except FileNotFoundError:  # the folder was removed after this store created it
        shard.parent.mkdir(parents=True, exist_ok=True)
        return os.open(shard, flags, 0o644)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
