"""``recjudge data fetch [NAME|all]`` and ``recjudge data list``."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="data_command", required=True)
    fetch_parser = actions.add_parser("fetch", help="take datasets from the mirror folder or download them")
    fetch_parser.add_argument("names", nargs="*", default=["all"], metavar="NAME|all",
                              help="dataset names (see `recjudge data list`) or 'all' (default)")
    fetch_parser.add_argument("--no-download", action="store_true", help="use only the mirror, data/raw and sample")
    actions.add_parser("list", help="list the registered datasets and where each is available")


def run_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from recjudge.data.errors import DataError
    from recjudge.data.fetch import availability, fetch
    from recjudge.data.registry import REGISTRY

    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        if args.data_command == "list":
            table = availability()
            table["title"] = [REGISTRY[name].title for name in table["dataset"]]
            print(table[["dataset", "status", "origin", "redistributable", "title", "note"]].to_string(index=False))
            return 0
        explicit = [name for name in args.names if name != "all"]
        unknown = [name for name in explicit if name not in REGISTRY]
        if unknown:
            print(f"unknown dataset(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}", file=sys.stderr)
            return 2
        names = list(REGISTRY) if "all" in args.names else explicit
        failed = []
        for name in names:
            try:
                fetch(name, download=not args.no_download)
            except DataError as error:
                print(f"{name}: {error}", file=sys.stderr)
                if name in explicit:
                    failed.append(name)
        table = availability(names)
        print(table[["dataset", "status", "origin", "path", "note"]].to_string(index=False))
        if failed:
            print(f"not available: {', '.join(failed)}", file=sys.stderr)
            return 1
        return 0
