"""API keys never leave the process: not in the store, the results, executed notebooks, reprs or error texts."""

from __future__ import annotations

import secrets
from pathlib import Path

import pandas as pd
from mock_openai_server import FaultPlan, MockOpenAIServer

from recjudge.compendium.results import save_table
from recjudge.llm import JudgeConfig, JudgeRequest, RetryPolicy, run_judge
from recjudge.llm.providers import get_provider
from recjudge.paths import project_root

# A fresh random value each run: it cannot be present in any file unless this run wrote it there.
FAKE_KEY = "sk-recjudge-test-" + secrets.token_hex(16)


def _files_containing(folder: Path, needle: bytes) -> list[Path]:
    if not folder.exists():
        return []
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_key_value_appears_nowhere(tmp_path, monkeypatch):
    store, results = tmp_path / "store", tmp_path / "results"
    monkeypatch.setenv("RECJUDGE_SERVER_API_KEY", FAKE_KEY)  # the key of the (local) server
    monkeypatch.setenv("RECJUDGE_STORE", str(store))
    monkeypatch.setenv("RECJUDGE_RESULTS", str(results))
    requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"prompt {i}"}]) for i in range(30)]
    plan = FaultPlan(rate_limit=0.2, server_error=0.2, max_faults_per_prompt=1)
    with MockOpenAIServer(faults=plan, expected_key=FAKE_KEY) as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url)
        run = run_judge(config, requests, concurrency=4, retry=RetryPolicy(base_delay_s=0.01), progress=False)
        assert server.unauthorised == 0  # the key really was sent to the server...
        provider = get_provider(config)
    monkeypatch.setenv("RECJUDGE_SERVER_API_KEY", "sk-some-other-key")  # a refused key: its error text must not leak
    with MockOpenAIServer(expected_key=FAKE_KEY) as server:
        refused = run_judge(JudgeConfig(provider="openai", model="mock-judge-2", base_url=server.base_url),
                            requests[:2], progress=False)
    assert refused.report.n_failed == 2
    timings = ["latency_s", "seconds"]  # save_table refuses run timings (they would drift between builds)
    save_table(run.table.drop(columns=timings, errors="ignore"), "secret_scan", "judgments")
    save_table(pd.DataFrame([run.report.to_dict()]).drop(columns=timings, errors="ignore"), "secret_scan", "report")
    save_table(refused.table.drop(columns=timings, errors="ignore"), "secret_scan", "refused")

    needle = FAKE_KEY.encode()
    assert (store / "openai").is_dir() and (results / "secret_scan").is_dir()  # ...and things were written
    assert _files_containing(store, needle) == []
    assert _files_containing(results, needle) == []
    for text in (repr(provider), str(run.report), run.table.to_csv(), repr(config), refused.table.to_csv()):
        assert FAKE_KEY not in text and "sk-some-other-key" not in text


def test_committed_folders_hold_no_key_from_the_environment(monkeypatch):
    # The repository's own store, results and executed notebooks: scanned for the test key and for any real key
    # configured in this environment.
    root = project_root()
    needles = [FAKE_KEY.encode()]
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RECJUDGE_SERVER_API_KEY"):
        import os

        value = os.environ.get(name)
        if value and len(value) >= 8:
            needles.append(value.encode())
    for folder in (root / "data" / "llm", root / "results", root / "book", root / "notebooks"):
        for needle in needles:
            assert _files_containing(folder, needle) == [], f"a key value appears under {folder}"


def test_an_openai_key_in_the_environment_never_reaches_another_server(tmp_path, monkeypatch):
    """A reader with a real OpenAI key exported judges with a local server: the key must not leave for it."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.delenv("RECJUDGE_SERVER_API_KEY", raising=False)
    requests = [JudgeRequest("k0", [{"role": "user", "content": "prompt 0"}])]
    with MockOpenAIServer(expected_key=FAKE_KEY) as server:  # it would accept the OpenAI key if it were sent
        refused = run_judge(JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url), requests,
                            store=tmp_path, progress=False, mode="live")
        assert server.unauthorised == 1 and refused.report.n_failed == 1
    monkeypatch.setenv("RECJUDGE_SERVER_API_KEY", "sk-for-this-server")
    with MockOpenAIServer(expected_key="sk-for-this-server") as server:
        run = run_judge(JudgeConfig(provider="openai", model="mock-judge-b", base_url=server.base_url), requests,
                        store=tmp_path, progress=False, mode="live")
        assert server.unauthorised == 0 and run.report.n_replies == 1


def test_a_key_with_surrounding_whitespace_is_redacted_in_both_forms(monkeypatch):
    from recjudge.llm.providers._common import redact

    monkeypatch.setenv("OPENAI_API_KEY", f"  {FAKE_KEY} \n")
    assert redact(f"error: bad key {FAKE_KEY}; raw '  {FAKE_KEY} \n'") == "error: bad key ***; raw '***'"
