"""The judge engine starts light: importing it, building a provider and answering a run from the store import
neither pandas, NumPy nor a provider SDK (they cost seconds of CPU before anything is asked); a live run's first
request loads its provider's SDK only, through whose client it is sent; the table is built with pandas once the replies
are in. Each check runs in a fresh interpreter, as a reader's process would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "numpy", "openai", "anthropic", "scipy")
TESTS = Path(__file__).resolve().parent


def fresh_python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=TESTS, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_engine_imports_no_heavy_library():
    loaded = fresh_python(f"import json, sys, recjudge.llm; print(json.dumps([m for m in {HEAVY!r} "
                          "if m in sys.modules]))")
    assert loaded == []


SDKS = ("openai", "anthropic")
LIVE_RUN = """
import json, sys
from mock_openai_server import MockOpenAIServer
server = MockOpenAIServer().start()
at_first_request = []
note = server.note_arrival
def noted(model):
    if not at_first_request:
        at_first_request.append([m for m in {heavy!r} if m in sys.modules])
    note(model)
server.note_arrival = noted
from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.providers import get_provider
requests = [JudgeRequest(f"k{{i}}", [{{"role": "user", "content": f"item {{i}}: rate it"}}]) for i in range(5)]
config = JudgeConfig(provider={provider!r}, model="startup-judge", base_url={base_url})
get_provider(config)
built = [m for m in {heavy!r} if m in sys.modules]
run = run_judge(config, requests, store={store!r}, progress=False, mode={mode!r})
server.stop()
print(json.dumps({{"built": built, "first": at_first_request[0] if at_first_request else None,
                  "after": [m for m in {heavy!r} if m in sys.modules], "asked": run.report.n_asked,
                  "scores": run.scores().tolist()}}))
"""


def judge_run(provider: str, store: Path, mode: str) -> dict:
    base_url = "server.base_url" if provider == "openai" else "server.root_url"
    return fresh_python(LIVE_RUN.format(heavy=HEAVY, provider=provider, base_url=base_url, store=str(store),
                                        mode=mode))


@pytest.mark.parametrize("provider", SDKS)
def test_the_first_request_loads_its_providers_sdk_and_nothing_heavier(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    outcome = judge_run(provider, tmp_path / "store", "live")
    assert outcome["built"] == [], f"imported by building the provider: {outcome['built']}"
    assert outcome["first"] == [provider], f"imported before the first request: {outcome['first']}"
    assert [m for m in outcome["after"] if m in SDKS] == [provider]
    assert outcome["asked"] == 5 and len(outcome["scores"]) == 5


@pytest.mark.parametrize("provider", SDKS)
def test_a_run_answered_from_the_store_loads_no_provider_sdk(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    live = judge_run(provider, tmp_path / "store", "live")
    replayed = judge_run(provider, tmp_path / "store", "replay")
    assert replayed["first"] is None and replayed["asked"] == 0  # nothing sent
    assert replayed["scores"] == live["scores"] and len(replayed["scores"]) == 5
    assert not [m for m in replayed["after"] if m in SDKS], f"a replay imported {replayed['after']}"
