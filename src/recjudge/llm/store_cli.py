"""``recjudge store info [--store DIR] [--json]``: what the response store holds, by provider, model and provenance,
and which of its lines are unusable (shard, line and why)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from .store import ResponseStore


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
        "store": str(store.root),
        "shards": len(store.shards()),
        "entries": sum(sum(c.values()) for c in groups.values()),
        "repaired": flags["repaired"],
        "truncated": flags["truncated"],
        "models": [{"provider": provider, "model": model, "entries": sum(counts.values()),
                    "provenance": [{"provenance": text, "entries": n} for text, n in counts.most_common()]}
                   for (provider, model), counts in sorted(groups.items())],
        "unusable_lines": [{"shard": str(line.shard.relative_to(store.root)), "line": line.line,
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="store_command", required=True)
    info = actions.add_parser("info", help="summarise the response store by provider, model and provenance")
    info.add_argument("--store", type=Path, default=None, help="store folder (default: env RECJUDGE_STORE, else "
                                                               "data/llm)")
    info.add_argument("--json", action="store_true", help="print the summary as JSON")


def run_command(args: argparse.Namespace) -> int:
    store = ResponseStore(args.store)
    if not store.root.is_dir():
        print(f"error: no response store at {store.root}", file=sys.stderr)
        return 2
    summary = store_summary(store)
    print(json.dumps(summary, indent=1, ensure_ascii=False) if args.json else format_summary(summary))
    return 0
