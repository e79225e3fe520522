"""Prints how many scored replies of the committed response store a change of the parsing rules moved: every reply
reader of ``recjudge.chapters.reply_readings`` applied to every stored reply, by the package at REVISION (default
``main``) and by the package of this checkout, counted per reader and model, with the chapters that use the reader.

    python scripts/parser_changes.py [REVISION]

The older package is taken with ``git archive`` into a temporary folder and run in a child process; nothing of the
checkout changes. A reader is applied to every reply, including replies to prompts no chapter reads with it, so a
count is an upper bound on what moves in a chapter.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

from recjudge.chapters import reply_readings
from recjudge.paths import project_root


def readings_at(revision: str, store: Path, folder: Path) -> pd.DataFrame:
    """The readings of the package at ``revision`` (``git archive`` of its ``src``, run in a child process)."""
    root = project_root()
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", revision, "--", "src"], cwd=root, check=True,
                                 capture_output=True).stdout
    except subprocess.CalledProcessError as exc:
        sys.exit(f"parser_changes: git cannot archive {revision!r}: {exc.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    out = folder / "readings.csv"
    env = {**os.environ, "PYTHONPATH": str(folder / "src")}
    subprocess.run([sys.executable, reply_readings.__file__, str(store), str(out)], check=True, env=env)
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def main(argv: list[str]) -> int:
    revision = argv[0] if argv else "main"
    store = project_root() / "data" / "llm"
    with tempfile.TemporaryDirectory(prefix="recjudge-parser-changes-") as tmp:
        before = readings_at(revision, store, Path(tmp))
    after = reply_readings.readings(store)
    table = reply_readings.changed_readings(before, after)
    moved = table[table["changed"] > 0]
    with pd.option_context("display.width", 200, "display.max_colwidth", 90, "display.max_rows", 500):
        print(f"Stored replies read differently from {revision} to this checkout, per reader and model "
              "(changed: stored replies; changed_texts: distinct reply texts):")
        print(moved.to_string(index=False) if len(moved) else "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
