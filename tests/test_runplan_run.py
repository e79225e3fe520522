"""What a run of the plan is (``runplan.run``): its executed notebook's place, and a run as a value."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from recjudge.compendium.runplan import OUTPUT_DIR, Run


def test_a_runs_executed_notebook_is_named_after_the_run_not_its_source(tmp_path: Path) -> None:
    copy = Run("copy", "notebooks/original.md")
    assert copy.output_path(tmp_path) == tmp_path / "book" / "notebooks" / "copy.ipynb"
    assert copy.output_path(tmp_path).parent == tmp_path / OUTPUT_DIR


def test_a_run_is_a_value_that_cannot_be_changed_after_reading() -> None:
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 1})
    assert run == Run("tiny", "notebooks/tiny.ipynb", {"value": 1})
    assert run != dataclasses.replace(run, timeout=60)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.name = "other"  # type: ignore[misc]
