"""``recjudge store info|export|import``: inspect the response store, and share replies between stores.

- ``recjudge store info [--store DIR] [--json]``: what the store holds, by provider, model and provenance, and which of
  its lines are unusable (shard, line and why).
- ``recjudge store export OUT [--provider P] [--model M] [--store DIR]``: the entries (all, or one provider's or
  model's) in one file, gzip JSON Lines when OUT ends in ``.gz`` (else plain), sorted by key after a header line
  that says what it holds; exporting twice gives the same bytes; no credential is written.
- ``recjudge store import FILE [--store DIR]``: adds the file's entries whose keys the store lacks; skips those it
  holds with the same reply; reports (never overwrites) a key held with another reply, every malformed line and
  every refused entry (one its header does not announce, or a local model's reply of other weights) by file and line
  number, importing the valid lines all the same.  Prints the counts (added, already present, conflicting,
  malformed, refused); exits 1 if anything conflicted, was malformed or refused, 2 if the file could not be read.

So a reader shares a variant's replies (``export --provider P --model M``, their judge's) and anyone rebuilds the
variant with no key: ``import``, then ``RECJUDGE_LLM_MODE=replay recjudge run --judge SPEC --profile P``.  The file
format and the checks: ``recjudge.llm.store_share``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from .store import ResponseStore, default_store


def describe_provenance(record: Mapping[str, Any]) -> str:
    """One line naming what produced an entry ("(not recorded)" for entries written before provenance existed)."""
    provenance = record.get("provenance")
    if not provenance:
        return "(not recorded)"
    parts = []
    if provenance.get("llama_cpp_python"):
        parts.append(f"llama-cpp-python {provenance['llama_cpp_python']}")
    if provenance.get("backend"):
        parts.append(str(provenance["backend"]))
    if provenance.get("build_flags"):
        parts.append(f"build {provenance['build_flags']}")
    if provenance.get("gguf_sha256"):
        parts.append(f"gguf sha256 {str(provenance['gguf_sha256'])[:16]}")
    if provenance.get("reported_model"):
        parts.append(f"reported model {provenance['reported_model']}")
    if provenance.get("system_fingerprint"):
        parts.append(f"fingerprint {provenance['system_fingerprint']}")
    if provenance.get("endpoint"):
        parts.append(f"at {provenance['endpoint']}")
    return "; ".join(parts) or json.dumps(provenance, sort_keys=True)[:120]


def store_summary(store: ResponseStore) -> dict[str, Any]:
    """Counts by (provider, model) and provenance, the shard count, and the unusable lines."""
    store.refresh()
    groups: dict[tuple[str, str], Counter[str]] = {}
    flags: Counter[str] = Counter()
    for record in store.records():
        groups.setdefault((record["provider"], record["model"]), Counter())[describe_provenance(record)] += 1
        flags["repaired"] += bool(record.get("repairs"))
        flags["truncated"] += bool(record.get("truncated_from_chars"))
    return {
        "store": " + ".join(str(layer.root) for layer in [*getattr(store, "beneath", []), store]),
        "shards": len(store.shards()),
        "entries": sum(sum(c.values()) for c in groups.values()),
        "repaired": flags["repaired"],
        "truncated": flags["truncated"],
        "models": [{"provider": provider, "model": model, "entries": sum(counts.values()),
                    "provenance": [{"provenance": text, "entries": n} for text, n in counts.most_common()]}
                   for (provider, model), counts in sorted(groups.items())],
        "unusable_lines": [{"shard": str(line.shard.relative_to(store.root) if line.shard.is_relative_to(store.root)
                                      else line.shard), "line": line.line,
                            "reason": line.reason} for line in store.skipped_lines],
    }


def format_summary(summary: Mapping[str, Any]) -> str:
    lines = [f"store {summary['store']}: {summary['entries']} entries in {summary['shards']} shard(s), "
             f"{len(summary['unusable_lines'])} unusable line(s), {summary['repaired']} repaired, "
             f"{summary['truncated']} truncated"]
    for group in summary["models"]:
        lines.append(f"  {group['provider']} / {group['model']}: {group['entries']} entries")
        for item in group["provenance"]:
            lines.append(f"      {item['entries']:>7}  {item['provenance']}")
    if summary["unusable_lines"]:
        lines.append("unusable lines (skipped by readers; ResponseStore.compact() moves them to .quarantine/):")
        lines.extend(f"  {item['shard']}:{item['line']}: {item['reason']}" for item in summary["unusable_lines"])
    return "\n".join(lines)


_STORE_HELP = ("store folder (default: env RECJUDGE_STORE, else the committed data/llm and your own variants/store "
               "read together; import writes to variants/store)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="store_command", required=True)
    info = actions.add_parser("info", help="summarise the response store by provider, model and provenance")
    info.add_argument("--store", type=Path, default=None, help=_STORE_HELP)
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    export = actions.add_parser("export", help="write the store's entries (or one provider/model's) to one file")
    export.add_argument("out", type=Path, metavar="OUT", help="the file to write (gzip JSON Lines if it ends in .gz)")
    export.add_argument("--provider", default=None, help="only this provider's entries (e.g. openai)")
    export.add_argument("--model", default=None, help="only this model's entries (the model name the judge stores)")
    export.add_argument("--store", type=Path, default=None, help=_STORE_HELP)
    imports = actions.add_parser("import", help="add the entries of an exported file to the store")
    imports.add_argument("file", type=Path, metavar="FILE", help="a file written by `recjudge store export`")
    imports.add_argument("--store", type=Path, default=None, help=_STORE_HELP)


def run_command(args: argparse.Namespace) -> int:
    store = ResponseStore(args.store) if args.store is not None else default_store()
    if args.store_command == "import":
        return _import(store, args.file)
    if not any(layer.root.is_dir() for layer in getattr(store, "beneath", [])) and not store.root.is_dir():
        print(f"error: no response store at {store.root}", file=sys.stderr)
        return 2
    if args.store_command == "export":
        return _export(store, args.out, provider=args.provider, model=args.model)
    summary = store_summary(store)
    print(json.dumps(summary, indent=1, ensure_ascii=False) if args.json else format_summary(summary))
    return 0


def _export(store: ResponseStore, out: Path, *, provider: str | None, model: str | None) -> int:
    from .store_share import ShareError, export_entries

    try:
        header = export_entries(store, out, provider=provider, model=model)
    except ShareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{out}: {header['entries']} entries from store {store.root}")
    for group in header["models"]:
        print(f"  {group['provider']} / {group['model']}: {group['entries']} entries")
    if store.skipped_lines:
        print(f"warning: {len(store.skipped_lines)} unusable line(s) in the store were not exported "
              "(`recjudge store info` names them)", file=sys.stderr)
    return 0


def _import(store: ResponseStore, file: Path) -> int:
    from .store_share import ShareError, import_entries

    try:
        report = import_entries(store, file)
    except ShareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    for line in report.problems():
        print(line, file=sys.stderr)
    return 0 if report.ok else 1
