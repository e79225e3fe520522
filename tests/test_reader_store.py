"""A reader's replies never land in the committed store: the default store reads data/llm and writes variants/store."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from mock_openai_server import MockOpenAIServer

from recjudge import paths
from recjudge.compendium.runplan import Run, fingerprint
from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge
from recjudge.llm.runner import open_store
from recjudge.llm.store import LayeredStore, StoredReply, default_store
from recjudge.llm.store_cli import run_command as store_command


def requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(f"k{i}", [{"role": "user", "content": f"rate item {i}"}]) for i in range(n)]


def reply(key: str, text: str) -> StoredReply:
    return StoredReply(key=key, provider="openai", model="m", sample=0, text=text, logprobs=None, input_tokens=5,
                       output_tokens=2, latency_s=0.1, finish_reason="stop", created="2026-01-01T00:00:00Z")


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "data" / "llm").mkdir(parents=True)
    monkeypatch.setenv(paths.HOME_ENV, str(root))
    monkeypatch.delenv(paths.STORE_ENV, raising=False)
    monkeypatch.delenv(paths.RESULTS_ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    return root


def test_a_judged_run_reads_the_committed_replies_and_writes_only_the_readers_store(project: Path) -> None:
    committed = project / "data" / "llm"
    with MockOpenAIServer() as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url)
        run_judge(config, requests(3), store=committed, progress=False)  # the book's committed replies
        before = tree_bytes(committed)
        run = run_judge(config, requests(5), progress=False)
        assert server.total_requests == 5  # three for the committed store, then only the two it lacks
    assert run.report.n_from_store == 3 and run.report.n_provider_calls == 2
    assert tree_bytes(committed) == before
    assert len(ResponseStore(project / "variants" / "store")) == 2
    assert run_judge(config, requests(5), mode="replay", progress=False).table["from_store"].all()


def test_the_readers_reply_is_served_over_the_committed_one_and_writes_go_on_top(tmp_path: Path) -> None:
    ResponseStore(tmp_path / "committed").put(reply("a1" * 32, "Score: 1"))
    ResponseStore(tmp_path / "committed").put(reply("b2" * 32, "Score: 2"))
    ResponseStore(tmp_path / "reader").put(reply("a1" * 32, "Score: 5"))
    store = LayeredStore(tmp_path / "reader", [tmp_path / "committed"])
    assert store.get("a1" * 32).text == "Score: 5" and store.get("b2" * 32).text == "Score: 2"
    assert len(store) == 2 and "b2" * 32 in store
    assert set(store.peek_many(["a1" * 32, "b2" * 32])) == {"a1" * 32, "b2" * 32}
    store.put(reply("c3" * 32, "Score: 3"))
    assert len(ResponseStore(tmp_path / "committed")) == 2 and len(ResponseStore(tmp_path / "reader")) == 2


def test_an_explicit_store_is_read_and_written_alone(project: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ResponseStore(project / "data" / "llm").put(reply("a1" * 32, "Score: 1"))
    monkeypatch.setenv(paths.STORE_ENV, str(project / "data" / "llm"))  # a maintainer regenerating the book's
    store = default_store()
    assert type(store) is ResponseStore and store.root == (project / "data" / "llm").resolve()
    store.put(reply("b2" * 32, "Score: 2"))
    assert len(ResponseStore(project / "data" / "llm")) == 2 and not (project / "variants").exists()
    monkeypatch.delenv(paths.STORE_ENV)
    assert isinstance(open_store(), LayeredStore) and open_store().root == (project / "variants" / "store").resolve()


def test_store_import_goes_to_the_readers_store_by_default(project: Path, tmp_path: Path) -> None:
    source = ResponseStore(tmp_path / "shared")
    source.put(reply("a1" * 32, "Score: 1"))
    exported = tmp_path / "shared.jsonl"
    assert store_command(argparse.Namespace(store_command="export", store=source.root, out=exported,
                                            provider=None, model=None)) == 0
    assert store_command(argparse.Namespace(store_command="import", store=None, file=exported)) == 0
    assert tree_bytes(project / "data" / "llm") == {}
    assert len(ResponseStore(project / "variants" / "store")) == 1


def test_the_books_runs_are_not_made_stale_by_the_readers_replies(project: Path) -> None:
    (project / "notebooks").mkdir()
    (project / "notebooks" / "chapter.md").write_text("# a chapter\n")
    run = Run("chapter", "notebooks/chapter.md", {}, (), 60)
    ResponseStore(project / "data" / "llm").put(reply("a1" * 32, "Score: 1"))
    book = fingerprint(run, project)["store"]
    ResponseStore(paths.reader_store_dir()).put(reply("b2" * 32, "Score: 2"))
    assert fingerprint(run, project)["store"] == book
    ResponseStore(project / "data" / "llm").put(reply("c3" * 32, "Score: 3"))
    assert fingerprint(run, project)["store"] != book


def test_a_variants_runs_see_the_readers_replies(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "notebooks").mkdir()
    (project / "notebooks" / "chapter.md").write_text("# a chapter\n")
    monkeypatch.setenv(paths.RESULTS_ENV, str(project / "variants" / "v" / "results"))
    run = Run("chapter", "notebooks/chapter.md", {}, (), 60)
    before = fingerprint(run, project)["store"]
    ResponseStore(paths.reader_store_dir()).put(reply("b2" * 32, "Score: 2"))
    assert fingerprint(run, project)["store"] != before


def test_recjudge_help_says_where_replies_go(capsys: pytest.CaptureFixture[str]) -> None:
    from recjudge.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "variants/store" in shown and "RECJUDGE_STORE=data/llm" in shown


def test_recjudge_judge_on_a_readers_lists_leaves_the_committed_store_as_it_was(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    from recjudge.cli import main

    files = {"lists": pd.DataFrame({"user_id": ["u1", "u1"], "rank": [1, 2], "item_id": ["i1", "i2"]}),
             "items": pd.DataFrame({"item_id": ["i1", "i2", "i3"], "name": ["Alpha", "Beta", "Gamma"],
                                    "categories": ["Drama", "", "Horror"]}),
             "history": pd.DataFrame({"user_id": ["u1"], "item_id": ["i3"], "timestamp": [1]})}
    for name, frame in files.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    ResponseStore(project / "data" / "llm").put(reply("a1" * 32, "Score: 1"))
    before = tree_bytes(project / "data" / "llm")
    monkeypatch.chdir(tmp_path)  # outside the checkout
    with MockOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["judge", "lists.csv", "--items", "items.csv", "--history", "history.csv",
                     "--judge", "openai:mock-judge", "--mode", "auto", "--out", str(tmp_path / "out")])
    assert code == 0
    assert tree_bytes(project / "data" / "llm") == before
    assert len(ResponseStore(project / "variants" / "store")) == 2


def test_store_info_names_every_folder_it_counts(project: Path) -> None:
    from recjudge.llm.store_cli import store_summary

    ResponseStore(project / "data" / "llm").put(reply("a1" * 32, "Score: 1"))
    ResponseStore(paths.reader_store_dir()).put(reply("b2" * 32, "Score: 2"))
    summary = store_summary(default_store())
    assert summary["entries"] == 2
    assert summary["store"] == f"{(project / 'data' / 'llm').resolve()} + {paths.reader_store_dir().resolve()}"


def test_the_trust_judges_script_writes_the_books_replies_to_the_committed_store(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys
    from types import SimpleNamespace

    import pandas as pd

    script = Path(__file__).resolve().parents[1] / "scripts" / "ask_trust_judges.py"
    spec = importlib.util.spec_from_file_location("ask_trust_judges", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written_to = []

    def run(judge, study, covered, **options):
        written_to.append(open_store().root)
        report = SimpleNamespace(n_prompts=0, n_from_store=0, n_provider_calls=0)
        return SimpleNamespace(report=report, scores=lambda: pd.Series(dtype=float))

    monkeypatch.setattr(module, "prepare_serendipity2018",
                        lambda *a, **k: SimpleNamespace(answers=None, examples=None))
    monkeypatch.setattr(module.judges, "coverage", lambda *a: None)
    monkeypatch.setattr(module.judges, "by_name", lambda name: name)
    monkeypatch.setattr(module.judges, "run", run)
    monkeypatch.setattr(sys, "argv", ["ask_trust_judges.py", "SmolLM2-135M zero-shot"])
    monkeypatch.delenv("RECJUDGE_LOCAL_THREADS", raising=False)
    monkeypatch.setenv(paths.STORE_ENV, "")  # so that what the script sets is undone after the test
    monkeypatch.delenv(paths.STORE_ENV)
    module.main()
    assert written_to == [(project / "data" / "llm").resolve()]
