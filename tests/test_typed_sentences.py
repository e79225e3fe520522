"""Sentences that outlive their numbers: a distance named as what it is, and process notes (how long a run took) on
the reproducibility page, not in the chapters a reader reads for findings."""

from __future__ import annotations

import re
from pathlib import Path

from recjudge.compendium import claims
from recjudge.compendium.results import load_table

ROOT = Path(__file__).resolve().parents[1]
#: Wording of a run's duration: "12.1 s per judgment", "six minutes per fit".
PROCESS_NOTE = re.compile(r"\b(s|seconds?|minutes?) per (judgment|fit)\b|\bon one CPU thread\b")


def test_a_distance_between_histograms_is_named_as_one_not_as_answers():
    key = next(c for c in claims.CLAIMS if c.claim.startswith("The ground truth g has")).evidence(load_table).key
    assert "L1 distance" in key and "answers" not in key


def test_process_notes_are_on_the_reproducibility_page_not_in_the_chapters():
    sources = [*(ROOT / "notebooks").glob("*.md"), *(ROOT / "src" / "recjudge" / "chapters").glob("*.py")]
    found = [f"{path.name}: {match.group(0)}" for path in sources
             for match in PROCESS_NOTE.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found
    assert PROCESS_NOTE.search((ROOT / "book" / "reproducibility.md").read_text(encoding="utf-8"))
