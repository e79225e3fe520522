"""``recjudge planted serve``: the planted judges' server on loopback (:mod:`recjudge.planted.server`), a way to
check the reader's path end to end before a real judge costs anything. Heavy imports wait for the command."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="planted_command", required=True)
    serve = sub.add_parser("serve", help="answer as planted judges (planted-<null|paper|number>-<seed>) on "
                                         "127.0.0.1 until stopped; prints the base URL")
    serve.add_argument("--port", type=int, default=8766, help="the port on 127.0.0.1 (0: a free one; default 8766)")


def run_command(args: argparse.Namespace) -> int:
    from recjudge.planted.server import serve

    return serve(args)
