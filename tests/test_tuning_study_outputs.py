"""A practitioner's tuning study (scripts/recsys_lists.py) writes its lists, lists.json and storage into its own
folder, never over the committed lists unless asked, and lists.json records the study it really ran: the trials
asked, completed and failed, the storage's kind (never its URL), the workers, the seeds and Optuna's version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import optuna
import pandas as pd
import pytest

from recjudge.recsys import lists as recsys_lists
from recjudge.recsys import split, tuning

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "recsys_lists.py"


def tiny_fold() -> split.Fold:
    """Synthetic: 30 users in two taste groups over 20 items; two users' next items are the validation targets."""
    rows = [(user, (user % 2) * 10 + (user + step) % 10, user * 6 + step) for user in range(30) for step in range(6)]
    train = pd.DataFrame(rows, columns=["user_id", "item_id", "timestamp"])
    valid = pd.DataFrame({"user_id": [0, 1], "item_id": [9, 19], "timestamp": [999, 999]})
    return split.Fold(0, train, valid, valid.assign(timestamp=1000))


def committed_bytes() -> dict[str, bytes]:
    return {str(p.relative_to(ROOT)): p.read_bytes() for p in sorted((ROOT / "data" / "recsys").rglob("*"))
            if p.is_file()}


def run_script(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=600)


def test_a_resumed_shared_study_records_the_trials_it_holds_not_the_budget_asked(tmp_path):
    fold, url = tiny_fold(), f"sqlite:///{tmp_path / 'study.db'}"
    recsys_lists.tune_and_produce([fold], {"ItemKNN": 3}, k=5, storage=url, dataset="synthetic")
    _, config = recsys_lists.tune_and_produce([fold], {"ItemKNN": 2, "Popularity": 0}, k=5, storage=url,
                                              dataset="synthetic")
    assert config["tuning"]["0"]["ItemKNN"] == {
        "trials_asked": 2, "trials_complete": 3, "trials_failed": 0, "storage": "sqlite", "workers": 1,
        "sampler_seed": None, "model_seed": 0, "optuna": optuna.__version__}
    assert config["tuning"]["0"]["Popularity"]["trials_complete"] == 0
    assert config["tuning"]["0"]["Popularity"]["storage"] == "none"
    assert str(tmp_path) not in json.dumps(config)                     # no path, hence equal runs write equal files


def test_an_in_memory_study_records_its_seeded_sampler_and_merging_keeps_every_record():
    fold = tiny_fold()
    first = recsys_lists.tune_and_produce([fold], {"ItemKNN": 2}, k=5)
    assert first[1]["tuning"]["0"]["ItemKNN"] == {
        "trials_asked": 2, "trials_complete": 2, "trials_failed": 0, "storage": "memory", "workers": 1,
        "sampler_seed": 0, "model_seed": 0, "optuna": optuna.__version__}
    redo = recsys_lists.tune_and_produce([fold], {"KFN": 1}, k=5)
    _, merged = recsys_lists.merge(first, redo)
    assert set(merged["tuning"]["0"]) == {"ItemKNN", "KFN"}
    # lists committed before the record existed: the redone recommender gets its record, the others none
    older = (first[0], {key: value for key, value in first[1].items() if key != "tuning"})
    _, onto_older = recsys_lists.merge(older, redo)
    assert set(onto_older["tuning"]["0"]) == {"KFN"} and set(onto_older["params"]["0"]) == {"ItemKNN", "KFN"}


@pytest.mark.parametrize("url", ["postgresql://alice:s3cret@db.example.org:5432/optuna",
                                 "postgresql+psycopg2://alice:s3cret@db.example.org/optuna"])
def test_the_storage_is_recorded_by_its_kind_never_its_credentials(url):
    assert tuning.storage_kind(url) == "postgresql"
    assert tuning.storage_kind("sqlite:////srv/tuning.db") == "sqlite"
    assert tuning.storage_kind("/srv/tuning.log") == "journal" and tuning.storage_kind(None) == "memory"


def test_a_study_writes_into_its_folder_and_leaves_the_committed_lists_untouched(tmp_path):
    """On the embedded ml-latest-small: two ItemKNN trials on fold 0 in a relative SQLite file."""
    before = committed_bytes()
    cwd, out = tmp_path / "cwd", tmp_path / "study"
    cwd.mkdir()
    run = run_script("latest-small", "--only", "ItemKNN", "--fold", "0", "--trials", "2",
                     "--storage", "sqlite:///tuning.db", "--out", str(out), cwd=cwd)
    assert run.returncode == 0, run.stderr
    assert committed_bytes() == before                                 # byte for byte
    assert sorted(p.name for p in out.iterdir()) == ["lists.csv.gz", "lists.json", "tuning.db"]
    assert list(cwd.iterdir()) == []                                   # nothing lands where the command ran
    lists, config = recsys_lists.load_lists(out)
    assert set(lists["recommender"]) == {"ItemKNN"} and set(lists["fold"]) == {0}   # not merged with the committed
    assert config["trials"] == {"ItemKNN": 2}
    record = config["tuning"]["0"]["ItemKNN"]
    assert (record["trials_asked"], record["trials_complete"], record["storage"], record["workers"]) == \
        (2, 2, "sqlite", 1)
    assert str(tmp_path) not in (out / "lists.json").read_text()


def test_the_committed_lists_are_written_only_when_asked_and_never_with_out_too(tmp_path):
    run = run_script("latest-small", "--out", str(tmp_path), "--write-committed", cwd=tmp_path)
    assert run.returncode == 2 and "not allowed with argument" in run.stderr
    assert "--write-committed" in run_script("latest-small", "--help", cwd=tmp_path).stdout


def test_the_chapter_tabulates_the_trials_a_study_completed():
    fold, url = tiny_fold(), None
    lists, config = recsys_lists.tune_and_produce([fold], {"ItemKNN": 2, "KFN": 1}, k=5, storage=url)
    config["tuning"]["0"]["ItemKNN"]["trials_complete"] = 5            # as a resumed shared study records it
    table = tuning.tuned_values(config, pd.Series(dtype=float), ["ItemKNN", "KFN"])
    assert table.set_index("recommender")["trials"].to_dict() == {"ItemKNN": 5, "KFN": 1}
    del config["tuning"]                                               # lists committed before the record: budgets
    table = tuning.tuned_values(config, pd.Series(dtype=float), ["ItemKNN", "KFN"])
    assert table.set_index("recommender")["trials"].to_dict() == {"ItemKNN": 2, "KFN": 1}
