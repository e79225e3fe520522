"""How to ask (AskOptions): the run options outside the store key, their checks and their environment defaults."""

import dataclasses

import pytest

from recjudge.llm import AskOptions, JudgeConfig, JudgeRequest, MissingReplies, run_judge
from recjudge.llm.ask_options import DEFAULT_ADAPTIVE_CAP, DEFAULT_CONCURRENCY, resolve_mode

REQUESTS = [JudgeRequest("k0", [{"role": "user", "content": "rate this"}])]


def test_an_unknown_run_option_is_named_with_the_valid_ones():
    with pytest.raises(TypeError, match=r"'concurency'.*valid: mode, concurrency"):
        run_judge(JudgeConfig(provider="openai", model="m"), REQUESTS, concurency=4)
    with pytest.raises(TypeError, match="ask must be an AskOptions"):
        AskOptions.of({"mode": "replay"})


def test_keywords_replace_the_fields_of_the_options_given():
    base = AskOptions(mode="live", concurrency=3, progress=False)
    changed = AskOptions.of(base, mode="replay")
    assert (changed.mode, changed.concurrency, changed.progress) == ("replay", 3, False)
    assert base.mode == "live"  # frozen: the options given are not changed
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.mode = "auto"  # type: ignore[misc]


def test_options_given_as_one_object_reach_the_runner(tmp_path):
    with pytest.raises(MissingReplies):
        run_judge(JudgeConfig(provider="openai", model="m"), REQUESTS, store=tmp_path,
                  ask=AskOptions(mode="replay", progress=False))


def test_environment_defaults_are_read_when_needed_and_named_when_unusable(monkeypatch):
    for name in ("RECJUDGE_LLM_MODE", "RECJUDGE_LLM_CONCURRENCY", "RECJUDGE_LLM_ADAPTIVE", "RECJUDGE_LLM_RPM"):
        monkeypatch.delenv(name, raising=False)
    options = AskOptions()
    assert options.resolved_mode() == "auto" and options.uses_adaptive() is True
    assert options.concurrency_cap("openai", adaptive=True) == DEFAULT_ADAPTIVE_CAP["openai"]
    assert options.concurrency_cap("openai", adaptive=False) == DEFAULT_CONCURRENCY["openai"]
    assert options.concurrency_cap("unknown", adaptive=False) == 4
    assert options.requests_per_minute() is None
    monkeypatch.setenv("RECJUDGE_LLM_MODE", " Replay ")
    monkeypatch.setenv("RECJUDGE_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RECJUDGE_LLM_RPM", "30")
    assert resolve_mode(None) == "replay" and resolve_mode("live") == "live"
    assert options.concurrency_cap("openai", adaptive=True) == 2 and options.requests_per_minute() == 30
    assert AskOptions(concurrency=5).concurrency_cap("openai", adaptive=True) == 5  # the argument wins
    monkeypatch.setenv("RECJUDGE_LLM_RPM", "fast")
    with pytest.raises(ValueError, match="RECJUDGE_LLM_RPM"):
        options.requests_per_minute()
    with pytest.raises(ValueError, match="RECJUDGE_LLM_MODE"):
        resolve_mode("sometimes")
