"""Prints how many scored replies of the committed response store a change of the parsing rules moved: every reply
reader of ``recjudge.chapters.reply_readings`` applied to every stored reply, by the package at REVISION (default
``main``) and by the package of this checkout, counted per reader and model, with the chapters that use the reader.

    python scripts/parser_changes.py [REVISION]                        prints the changes
    python scripts/parser_changes.py --write REVISION --rule "NAME"    records them in data/llm/reading_changes.csv

With ``--write``, the change from REVISION to this checkout's commit replaces any rows of the same two versions in
the committed record that the chapters print (``recjudge.llm.reading_changes``), under the rule's NAME, which the
pages show (they name no commit); the checkout's ``src`` must hold no uncommitted change, so that the record names
the package it read with. The record gets the upper bounds per reader
and, for every run whose last execution logged the stored replies it read (``.runplan-cache/readings/``: execute
the chapters with ``recjudge run`` first, in replay mode with the data mirror), the exact count per chapter and judge
run.

The older package is taken with ``git archive`` into a temporary folder and run in a child process; nothing of the
checkout changes. A reader is applied to every reply, including replies to prompts no chapter reads with it, so a
count is an upper bound on what moves in a chapter.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from recjudge.chapters import reply_readings
from recjudge.compendium.runplan import CACHE_DIR
from recjudge.llm import reading_changes
from recjudge.paths import project_root


def short_commit(revision: str) -> str:
    """The abbreviated commit ``revision`` names, for the record."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", f"{revision}^{{commit}}"], cwd=project_root(),
                              check=True, capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as exc:
        sys.exit(f"parser_changes: git does not know {revision!r}: {exc.stderr.strip()}")


def write_record(revision: str, before: pd.DataFrame, after: pd.DataFrame, store: Path, rule: str) -> Path:
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=project_root(), check=True,
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        sys.exit("parser_changes: src/ has uncommitted changes; commit them first, so that the record names the "
                 "package it read with")
    versions = short_commit(revision), short_commit("HEAD")
    rows = reply_readings.change_record(before, after, *versions, rule=rule)
    logs = project_root() / CACHE_DIR / "readings"
    if logs.is_dir():
        exact = reply_readings.exact_change_record(before, after, reply_readings.logged_readings(logs), store,
                                                   *versions, rule=rule)
        rows = pd.concat([rows, exact], ignore_index=True)
    path = reading_changes.record_path()
    record = reading_changes.load(path)
    same = ((record["from_version"] == rows["from_version"].iat[0])
            & (record["to_version"] == rows["to_version"].iat[0])) if len(rows) else False
    pd.concat([record[~same], rows], ignore_index=True).to_csv(path, index=False, lineterminator="\n")
    return path


def main(argv: list[str]) -> int:
    write = "--write" in argv
    argv = [arg for arg in argv if arg != "--write"]
    rule = ""
    if "--rule" in argv:
        at = argv.index("--rule")
        if at + 1 >= len(argv) or not argv[at + 1].strip():
            sys.exit("parser_changes: --rule needs the change's name (the pages show it)")
        rule = argv[at + 1].strip()
        argv = argv[:at] + argv[at + 2:]
    if write and not rule:
        sys.exit("parser_changes: --write needs --rule NAME: the pages name a change by its rule, not by a commit")
    revision = argv[0] if argv else "main"
    store = project_root() / "data" / "llm"
    with tempfile.TemporaryDirectory(prefix="recjudge-parser-changes-") as tmp:
        try:
            before = reply_readings.readings_at(revision, store, Path(tmp))
        except ValueError as exc:
            sys.exit(f"parser_changes: {exc}")
    after = reply_readings.readings(store)
    if write:
        print(f"parser_changes: recorded in {write_record(revision, before, after, store, rule)}")
    table = reply_readings.changed_readings(before, after)
    moved = table[table["changed"] > 0]
    with pd.option_context("display.width", 200, "display.max_colwidth", 90, "display.max_rows", 500):
        print(f"Stored replies read differently from {revision} to this checkout, per reader and model "
              "(changed: stored replies; changed_texts: distinct reply texts):")
        print(moved.to_string(index=False) if len(moved) else "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
