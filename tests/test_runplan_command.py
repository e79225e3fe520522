"""``recjudge run`` (``runplan.command``): its command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from runplan_project import make_project, write_plan

from recjudge.compendium import runplan


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def test_cli_rejects_unknown_only_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_plan(project, "runs:\n  - {name: tiny, notebook: notebooks/tiny.ipynb}\n")
    parser = __import__("argparse").ArgumentParser()
    runplan.add_arguments(parser)
    assert runplan.run_command(parser.parse_args(["--only", "nope"])) == 2
    assert "--only ['nope']: no such run" in capsys.readouterr().err
    assert runplan.run_command(parser.parse_args(["--list"])) == 0
    assert "will run (no previous run)" in capsys.readouterr().out
