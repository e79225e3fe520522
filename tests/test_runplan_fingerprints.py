"""What a run's outputs depend on, hashed (``runplan.fingerprints``): each input changes the fingerprint, and the file
hasher's memo follows file changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runplan_project import make_project, write_notebook

from recjudge.compendium import runplan
from recjudge.compendium.runplan import (
    Run,
    fingerprint,
    fingerprint_hash,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def test_each_input_changes_the_fingerprint(project: Path) -> None:
    run = Run("tiny", "notebooks/tiny.ipynb", {"value": 1})

    def current(of: Run = run) -> str:
        return fingerprint_hash(fingerprint(of, project))

    base = current()
    assert current() == base, "an unchanged run must keep its fingerprint"
    assert current(Run("tiny", "notebooks/tiny.ipynb", {"value": 2})) != base

    changes = [
        lambda: write_notebook(project / "notebooks" / "tiny.ipynb", "print('result', value * 3)"),
        lambda: (project / "src" / "recjudge" / "module.py").write_text("ANSWER = 2\n"),
        lambda: (project / "src" / "recjudge" / "templates.txt").write_text("### user\n{question}\n"),
        lambda: (project / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "4"}\n'),
        lambda: (project / "data" / "llm" / "more.jsonl").write_text('{"key": "b", "reply": "1"}\n'),
    ]
    ignored = [  # lock files and caches are not inputs
        lambda: (project / "data" / "llm" / ".locks").mkdir(),
        lambda: (project / "data" / "llm" / ".locks" / "more.jsonl.lock").write_text(""),
        lambda: (project / "src" / "recjudge" / "__pycache__").mkdir(),
        lambda: (project / "src" / "recjudge" / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\0"),
    ]
    seen = {base}
    for change in changes:
        change()
        value = current()
        assert value not in seen
        seen.add(value)
    settled = current()
    for change in ignored:
        change()
    assert current() == settled


def test_dataset_files_enter_the_fingerprint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import recjudge.data as data

    name = "movielens-latest-small"
    first_file = data.REGISTRY[name].files[0].path
    folder = tmp_path / name
    (folder / first_file).parent.mkdir(parents=True, exist_ok=True)
    (folder / first_file).write_text("a,b\n1,2\n")
    monkeypatch.setattr(data, "dataset_dir", lambda dataset: folder)
    hasher = runplan.FileHasher()
    before = runplan.dataset_fingerprint(name, hasher)
    assert before[first_file] != "absent"
    assert all(value == "absent" for path, value in before.items() if path != first_file)
    (folder / first_file).write_text("a,b\n1,3\n")
    assert runplan.dataset_fingerprint(name, runplan.FileHasher())[first_file] != before[first_file]

    def unavailable(dataset: str) -> Path:
        raise data.MissingDataError(f"{dataset} is not available")

    monkeypatch.setattr(data, "dataset_dir", unavailable)
    assert runplan.dataset_fingerprint(name, hasher) == "missing"


def test_file_hasher_memo_follows_file_changes(tmp_path: Path) -> None:
    memo = tmp_path / "memo.json"
    target = tmp_path / "file.bin"
    target.write_bytes(b"one")
    hasher = runplan.FileHasher(memo)
    first = hasher(target)
    hasher.save()
    target.write_bytes(b"two, longer")
    assert runplan.FileHasher(memo)(target) != first
    assert json.loads(memo.read_text())  # the memo was written and is readable


def test_a_summary_run_re_runs_when_the_tables_it_reads_change(project: Path) -> None:
    summary = Run("summary", "notebooks/tiny.ipynb", {"value": 1}, results_of=("tiny",))
    plain = Run("summary", "notebooks/tiny.ipynb", {"value": 1})
    before = fingerprint_hash(fingerprint(summary, project))
    before_plain = fingerprint_hash(fingerprint(plain, project))
    (project / "results" / "tiny").mkdir(parents=True)
    (project / "results" / "tiny" / "table.csv").write_text("method,pearson\nSOG,9.3\n")
    after = fingerprint_hash(fingerprint(summary, project))
    assert after != before
    assert fingerprint_hash(fingerprint(plain, project)) == before_plain  # runs that read no results ignore them
    (project / "results" / "tiny" / "table.csv").write_text("method,pearson\nSOG,9.4\n")
    assert fingerprint_hash(fingerprint(summary, project)) != after
