"""What the commands check first: a temporary file can be made (``recjudge.paths.temporary_folder_problem``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from recjudge.paths import temporary_folder_problem


def test_no_usable_temporary_folder_at_all_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # TMPDIR unset and none of the usual folders (/tmp, /var/tmp, /usr/tmp, the working folder) writable: Python's
    # tempfile finds no folder at all, and asking it again for one, to name it, fails the same way.
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # not the folder found earlier in this process
    monkeypatch.setattr(tempfile, "_candidate_tempdir_list", lambda: [str(tmp_path / "gone")])
    problem = temporary_folder_problem()
    assert problem is not None and problem.startswith("no usable temporary folder")
    assert "point TMPDIR at a writable folder" in problem and str(tmp_path / "gone") in problem
    from recjudge.cli import main

    assert main(["book", "--check-only"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"recjudge: {problem}"]
