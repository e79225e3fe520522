"""The prompt manifest: what each chapter that asks an LLM would send at a profile, so that a plan is a lookup.

A plan (``recjudge run --judge SPEC --profile P --plan``) used to execute every chapter up to its last judge call to
count its prompts, although what it counts depends only on the chapters' prompts at that profile, never on the judge
priced. The manifest records those counts once, per profile, in ``prompt_manifest/<profile>.json`` (committed for
the profiles of ``MANIFEST_PROFILES``)::

    {"profile": "paper", "version": 1, "chapters": {"proxy_vs_llm": {
        "key": "<sha256 of the chapter's prompt fingerprint>",
        "datasets": {"serendipity-2018": "complete", ...},          # each dataset's status when it was recorded
        "reader": [{"prompt": "kang_basic", "jobs": 1, "n_requests": 1000, "n_judgments": 1000,
                    "input_tokens": 480000, "output_tokens": 8000}, ...],   # a reader's judge, per prompt
        "book": [{"provider": "local", "model": "...", "prompt": "kang_basic", "jobs": 2, "n_requests": ...,
                  "n_judgments": ..., "n_missing": ..., "input_tokens": ..., "output_tokens": ...,
                  "reply_seconds": ..., "rate_basis": "..."}, ...]}}}  # the chapter's own judges, per prompt

``reader`` holds what one reader's judge is asked in the chapter (every judgment of each prompt's role, tokens counted
from characters as the engine's estimate counts them: ``recjudge.llm.estimate``); ``book`` what the chapter's own
judges lack in the committed store (``n_missing`` of ``n_judgments``, the tokens of the missing ones, and
``reply_seconds``, the time they would take one at a time). Nothing in it is a time of day, a path or a measure of
this machine, so a plan pass that records the same sources writes the same bytes.

The key.  An entry stands for the sources it was recorded from: ``prompt_fingerprint`` hashes the chapter's notebook,
its parameters at the profile (the reader's ``judges`` aside), its cell variant, the package source, the names of
the datasets it reads (their files' checksums are in the package's data registry), the committed response store (the
book's judges' missing replies) and the tables of earlier runs it reads. A chapter whose key is not the manifest's
is executed by the plan pass, as before, and its entry recorded again; so is every chapter when the response store
holds replies of the judge priced (which of its judgments are missing then is not a count the manifest can give).

Data.  The key does not depend on the data mirror being set: an entry records which datasets were present, with
their status (``recjudge.data.fetch``), when it was recorded. A plan on a machine without them prices the chapter
from the entry all the same, and says which datasets are absent here; an entry is never replaced by one recorded
with less of its data, whatever its key. A chapter that must be executed while its data are absent is priced
without them, and the plan says so beside its total.

Recording.  A plan pass with a reader's judge records the entries of the chapters it executed (a judge of a remote
provider, whose jobs cannot be mistaken for the book's own local judges'), for the profiles of
``MANIFEST_PROFILES``; ``make manifest`` records both with the data mirror set.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recjudge.compendium.runplan.fingerprints import _PACKAGE_SUFFIXES, FileHasher, _tree_digest
from recjudge.compendium.runplan.run import JUDGES_PARAMETER, Run
from recjudge.paths import book_store_dir

MANIFEST_DIR = "prompt_manifest"
#: The profiles whose manifest is recorded and committed.
MANIFEST_PROFILES = ("default", "paper")
#: Bumped when the key's composition or an entry's fields change, so old entries stop matching.
MANIFEST_VERSION = 1
#: The providers of a reader's judge whose jobs a plan pass records as the reader's role (the chapters' own judges
#: are local models and recorded judgments, so a remote provider's jobs are never theirs).
READER_PROVIDERS = ("openai", "anthropic")
#: Statuses of a dataset with which a chapter asks less than it would with the whole of it.
UNPRICED_STATUSES = ("missing", "invalid", "sample")
#: A dataset's status, best first (``recjudge.data.fetch``): an entry recorded with more of its data is kept.
_STATUS_RANK = {"complete": 0, "partial": 1, "sample": 2, "invalid": 3, "missing": 4}
_READER_COUNTS = ("jobs", "n_requests", "n_judgments", "input_tokens", "output_tokens")
_BOOK_COUNTS = ("jobs", "n_requests", "n_judgments", "n_missing", "input_tokens", "output_tokens")


class ManifestError(ValueError):
    """A manifest file that cannot be read; the message names the file and what is wrong."""


def manifest_path(root: Path, profile: str) -> Path:
    return Path(root) / MANIFEST_DIR / f"{profile}.json"


def prompt_fingerprint(run: Run, root: Path, hasher: FileHasher) -> dict[str, Any]:
    """What a chapter's prompts at its profile depend on (the module docstring): no judge, no data mirror."""
    parameters = {name: value for name, value in run.parameters.items() if name != JUDGES_PARAMETER}
    return {
        "version": MANIFEST_VERSION,
        "notebook": hasher(root / run.notebook),
        "parameters": json.loads(json.dumps(parameters, sort_keys=True, default=str)),
        "variant": run.variant,
        "package": _tree_digest(root / "src" / "recjudge", hasher, _PACKAGE_SUFFIXES),
        "datasets": sorted(run.datasets),
        "store": _tree_digest(book_store_dir(), hasher),
        "results": {name: _tree_digest(root / "results" / name, hasher) for name in sorted(run.results_of)},
    }


def prompt_key(run: Run, root: Path, hasher: FileHasher) -> str:
    return hashlib.sha256(json.dumps(prompt_fingerprint(run, root, hasher), sort_keys=True).encode()).hexdigest()


def dataset_statuses(names: Iterable[str]) -> dict[str, str]:
    """Each dataset's status here, as the data layer reports it: complete, partial, sample, missing or invalid."""
    from recjudge.data.errors import DataError
    from recjudge.data.fetch import locate

    statuses = {}
    for name in sorted(names):
        try:
            found = locate(name)
        except DataError:  # a file that fails its checksum, an unknown name
            statuses[name] = "invalid"
        else:
            statuses[name] = "missing" if found is None else found.status
    return statuses


def absent_here(recorded: Mapping[str, str], here: Mapping[str, str]) -> dict[str, str]:
    """The datasets an entry was recorded with that this machine has less of: name -> its status here."""
    return {name: status for name, status in here.items()
            if _STATUS_RANK.get(status, 9) > _STATUS_RANK.get(recorded.get(name, "missing"), 9)}


def not_complete(statuses: Mapping[str, str]) -> dict[str, str]:
    return {name: status for name, status in statuses.items() if status != "complete"}


# ------------------------------------------------------------------------------------------------ the file
def load_manifest(root: Path, profile: str) -> dict[str, dict[str, Any]]:
    """The chapters' entries of a profile's manifest (none when it has no manifest); ManifestError naming the file
    for one that cannot be read."""
    path = manifest_path(root, profile)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ManifestError(f"{path}: not readable as JSON ({error})") from None
    chapters = data.get("chapters") if isinstance(data, dict) else None
    if not isinstance(chapters, dict) or data.get("profile") != profile:
        raise ManifestError(f"{path}: not a prompt manifest of profile {profile!r} (fields 'profile', 'chapters')")
    if data.get("version") != MANIFEST_VERSION:
        return {}  # recorded by another version of this format: every chapter is priced by executing it again
    for name, entry in chapters.items():
        problem = _entry_problem(entry)
        if problem:
            raise ManifestError(f"{path}: chapter {name!r}: {problem}")
    return chapters


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return "an entry must be an object with a 'key'"
    if not isinstance(entry.get("datasets"), dict):
        return "field 'datasets' missing or not an object"
    for part, counts in (("reader", _READER_COUNTS), ("book", _BOOK_COUNTS)):
        rows = entry.get(part)
        if not isinstance(rows, list):
            return f"field {part!r} missing or not a list"
        for row in rows:
            if not isinstance(row, dict) or not all(isinstance(row.get(name), int) and not isinstance(
                    row.get(name), bool) and row[name] >= 0 for name in counts):
                return f"a row of {part!r} lacks one of the counts {', '.join(counts)} (whole numbers, 0 or more)"
    return None


def record_entries(root: Path, profile: str, entries: Mapping[str, dict[str, Any]], chapters: Iterable[str]) -> bool:
    """Write ``entries`` (chapter -> entry) into the profile's manifest, keeping the other chapters' entries of
    ``chapters`` (the runs the profile has; others are dropped) and an existing entry recorded with more of its data
    (whatever its key: a machine without the data never degrades the manifest). True when the file changed. The
    bytes depend on the entries alone (sorted keys, no dates)."""
    path = manifest_path(root, profile)
    try:
        current = load_manifest(root, profile)
    except ManifestError:
        current = {}  # a damaged file is replaced by what this pass recorded
    known = set(chapters)
    merged = {name: entry for name, entry in current.items() if name in known}
    for name, entry in entries.items():
        old = merged.get(name)
        if old is not None and _data_rank(old) < _data_rank(entry):
            continue  # recorded with more of its data: kept, even for older sources (a machine without the data
            # executes the chapter each time and says it is not priced in full; one with them records it)
        merged[name] = entry
    text = manifest_text(profile, merged)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return True


def manifest_text(profile: str, chapters: Mapping[str, Mapping[str, Any]]) -> str:
    """The file's text: a chapter per block and a row per line (short diffs), keys sorted, nothing else in it."""
    def one_line(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    blocks = []
    for name in sorted(chapters):
        entry = chapters[name]
        rows = {part: "[\n" + ",\n".join(f"    {one_line(row)}" for row in entry[part]) + "\n   ]"
                if entry[part] else "[]" for part in ("book", "reader")}
        blocks.append(f"  {one_line(name)}: {{\n   \"key\": {one_line(entry['key'])},\n"
                      f"   \"datasets\": {one_line(entry['datasets'])},\n"
                      f"   \"reader\": {rows['reader']},\n   \"book\": {rows['book']}\n  }}")
    return (f"{{\"profile\": {one_line(profile)}, \"version\": {MANIFEST_VERSION}, \"chapters\": {{\n"
            + ",\n".join(blocks) + "\n}}\n")


def _data_rank(entry: Mapping[str, Any]) -> tuple[int, ...]:
    """How much of its data an entry was recorded with (lower is more): its datasets' status ranks, worst first."""
    return tuple(sorted((_STATUS_RANK.get(status, 9) for status in entry["datasets"].values()), reverse=True))


# ------------------------------------------------------------------------------------------------ recording
def entry_from_jobs(jobs: Sequence[Mapping[str, Any]], reader: tuple[str, str], key: str,
                    datasets: Mapping[str, str]) -> dict[str, Any] | None:
    """A chapter's entry from the job lines of its plan pass (``recjudge.llm.plan.plan_line``) with ``reader``
    (provider, model) the reader's judge it priced; None when the lines cannot say what a reader's judge is asked
    (a line without the tokens of every judgment while some were stored)."""
    from recjudge.compendium.variants import rate_kind

    reader_rows: dict[str, dict[str, int]] = {}
    book_rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for job in jobs:
        prompt = str(job.get("prompt") or "")
        if (job["provider"], job["model"]) == reader:
            every = _every_judgment_tokens(job)
            if every is None:
                return None
            row = reader_rows.setdefault(prompt, dict.fromkeys(_READER_COUNTS, 0))
            for name, value in (("jobs", 1), ("n_requests", int(job.get("n_requests", 0))),
                                ("n_judgments", job["_judgments"]), ("input_tokens", every[0]),
                                ("output_tokens", every[1])):
                row[name] += value
            continue
        row = book_rows.setdefault((job["provider"], job["model"], prompt),
                                   {**dict.fromkeys(_BOOK_COUNTS, 0), "reply_seconds": 0.0, "rate_basis": set()})
        for name, value in (("jobs", 1), ("n_requests", int(job.get("n_requests", 0))),
                            ("n_judgments", job["_judgments"]), ("n_missing", job["_missing"]),
                            ("input_tokens", int(job["input_tokens"])), ("output_tokens", int(job["output_tokens"]))):
            row[name] += value
        per_reply = job.get("seconds_per_reply")
        if job["_missing"] and isinstance(per_reply, (int, float)):
            row["reply_seconds"] += job["_missing"] * float(per_reply)
            row["rate_basis"].add(rate_kind(str(job.get("rate_basis") or "")))
    book = []
    for (provider, model, prompt), row in book_rows.items():
        book.append({"provider": provider, "model": model, "prompt": prompt,
                     **{name: row[name] for name in _BOOK_COUNTS},
                     "reply_seconds": round(row["reply_seconds"], 3),
                     "rate_basis": "; ".join(sorted(row["rate_basis"] - {""}))})
    return {"key": key, "datasets": dict(datasets),
            "reader": [{"prompt": prompt, **row} for prompt, row in reader_rows.items()],
            "book": sorted(book, key=lambda row: (row["provider"], row["model"], row["prompt"]))}


def _every_judgment_tokens(job: Mapping[str, Any]) -> tuple[int, int] | None:
    if isinstance(job.get("all_input_tokens"), int) and isinstance(job.get("all_output_tokens"), int):
        return int(job["all_input_tokens"]), int(job["all_output_tokens"])
    if job["_missing"] == job["_judgments"]:  # every judgment missing: its tokens are every judgment's
        return int(job["input_tokens"]), int(job["output_tokens"])
    return None


# ------------------------------------------------------------------------------------------------ pricing
def priced_jobs(entry: Mapping[str, Any], judges: Sequence[Any], ask_only: Sequence[str]) -> list[dict[str, Any]]:
    """A chapter's job lines as its plan pass would write them for ``judges`` (``JudgeSpec``), from its entry: each
    judge asked what the entry's reader is asked, every judgment missing, and the chapter's own judges what they lack
    (left out unless ``ask_only`` is empty or names them). Each line stands for ``jobs`` of the engine's jobs."""
    from recjudge.compendium.variants import checked_job
    from recjudge.llm.ask_options import AskOptions, judge_name
    from recjudge.llm.config import JudgeConfig
    from recjudge.llm.estimate import counted_estimate
    from recjudge.llm.plan import weights_present

    ask = AskOptions()
    rpm = ask.requests_per_minute()
    lines = []
    for judge in judges:
        config = JudgeConfig(provider=judge.provider, model=judge.model, served_model=judge.served_model)
        concurrency = ask.concurrency_cap(judge.provider, adaptive=False)
        present = weights_present(config)
        for row in entry["reader"]:
            estimate = counted_estimate(judge.display_label, judge.provider, judge.model, row["n_requests"],
                                        row["n_judgments"], row["n_judgments"], row["input_tokens"],
                                        row["output_tokens"], concurrency, rpm, batch=bool(judge.batch))
            lines.append(_line(judge.provider, judge.model, row, row["n_judgments"], estimate, concurrency, rpm,
                               present))
    for row in entry["book"]:
        concurrency = ask.concurrency_cap(row["provider"], adaptive=False)
        rate = ((row["reply_seconds"] / row["n_missing"], row["rate_basis"])
                if row["n_missing"] and row["rate_basis"] else None)
        estimate = counted_estimate(f"{row['provider']}:{row['model']}", row["provider"], row["model"],
                                    row["n_requests"], row["n_judgments"], row["n_missing"], row["input_tokens"],
                                    row["output_tokens"], concurrency, rpm, rate=rate)
        line = _line(row["provider"], row["model"], row, row["n_missing"], estimate, concurrency, rpm,
                     weights_present(JudgeConfig(provider=row["provider"], model=row["model"])))
        if ask_only and judge_name(row["provider"], row["model"]) not in ask_only:
            line["left_out"] = True
        lines.append(line)
    return [checked_job(line, "the prompt manifest") for line in lines]


def _line(provider: str, model: str, row: Mapping[str, Any], missing: int, estimate: Any, concurrency: int,
          rpm: float | None, present: bool | None) -> dict[str, Any]:
    import dataclasses
    import math

    line: dict[str, Any] = {"provider": provider, "model": model, "prompt": row["prompt"], "jobs": row["jobs"],
                            "n_requests": row["n_requests"], "n_judgments": row["n_judgments"], "n_missing": missing,
                            "concurrency": concurrency, "rate_limit_per_minute": rpm, "weights_present": present}
    for name, value in dataclasses.asdict(estimate).items():
        line[name] = None if isinstance(value, float) and math.isnan(value) else value
    return line


def judge_has_stored_replies(provider: str, model: str) -> bool:
    """Whether a response store read by runs holds replies of this judge (then which of its judgments are missing
    is not the manifest's count: every one)."""
    from recjudge.llm.store import model_slug
    from recjudge.paths import store_layers

    for layer in store_layers():
        folder = layer / model_slug(provider) / model_slug(model)
        if folder.is_dir() and any(shard.stat().st_size for shard in folder.glob("*.jsonl")):
            return True
    return False
