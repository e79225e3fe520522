"""Which local judges reuse the shared prompt prefix (``recjudge.llm.prefix_reuse``): every configuration without
committed replies, while the committed chapters keep the store keys the book replays."""

from __future__ import annotations

import pytest

from recjudge.compendium.runplan import Target, load_runplan, rescaled_runs
from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge
from recjudge.llm.job import store_keyer
from recjudge.llm.judge_spec import JudgeSpec, judge_configs, parse_judge
from recjudge.llm.prefix_reuse import (
    COMMITTED_PROFILES,
    DEFAULT_BATCH_RUNS,
    PREFIX_BATCH,
    PREFIX_REUSE_ENV,
    local_judge_config,
    reuses_prefix,
)
from recjudge.llm.providers.base import Completion
from recjudge.paths import committed_store_dir, project_root

LOCAL = JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1", prompt="kang_fewshot", scoring="expected",
                    max_tokens=1)


def test_a_local_judge_without_a_batch_size_gets_the_prefix_batch_only_when_it_reuses():
    reusing = local_judge_config(LOCAL, reuse=True)
    assert dict(reusing.options) == {"n_batch": PREFIX_BATCH}
    assert reusing.with_(options=()) == LOCAL  # nothing else changes
    assert local_judge_config(LOCAL, reuse=False) == LOCAL
    own = LOCAL.with_(options=(("n_batch", 16),))
    assert local_judge_config(own, reuse=True) == own  # a batch size the configuration sets is kept
    hosted = JudgeConfig(provider="openai", model="gpt-4o-mini")
    assert local_judge_config(hosted, reuse=True) == hosted


def test_the_decision_follows_the_environment_recjudge_run_sets(monkeypatch):
    monkeypatch.delenv(PREFIX_REUSE_ENV, raising=False)
    assert local_judge_config(LOCAL) == LOCAL  # outside `recjudge run`: as given
    monkeypatch.setenv(PREFIX_REUSE_ENV, "1")
    assert dict(local_judge_config(LOCAL).options) == {"n_batch": PREFIX_BATCH}
    monkeypatch.setenv(PREFIX_REUSE_ENV, "0")
    assert local_judge_config(LOCAL) == LOCAL


@pytest.mark.parametrize(("run", "profile", "rescaled", "reuses"), [
    ("proxy_vs_llm", "default", False, False),  # the committed book
    ("proxy_vs_llm", "smoke", True, False),  # CI replays the smoke profile's committed replies
    ("proxy_vs_llm", "paper", True, True),  # the papers' populations: not committed
    ("judge_robustness", "paper", False, False),  # a profile that leaves a run alone asks what the book asks
    ("my_new_chapter", "default", False, True),  # a new chapter
    ("my_new_chapter", "smoke", True, True),
])
def test_which_runs_reuse_the_prefix(run, profile, rescaled, reuses):
    assert reuses_prefix(run, profile, rescaled=rescaled) is reuses


def test_every_default_batch_run_is_a_chapter_of_the_run_plan_that_asks_an_llm():
    runs = {run.name: run for run in load_runplan(root=project_root())}
    assert DEFAULT_BATCH_RUNS <= set(runs)
    assert all(runs[name].asks_llm for name in DEFAULT_BATCH_RUNS)
    assert {name for name, run in runs.items() if run.asks_llm} == DEFAULT_BATCH_RUNS


def environment_of(profile: str, name: str, *, default_target: bool = False) -> str:
    root = project_root()
    runs = load_runplan(root=root, profile=profile)
    rescaled = rescaled_runs(runs, load_runplan(root=root))
    target = Target.book(root) if default_target else Target(root / "n", root / "c", profile=profile,
                                                                 rescaled=rescaled)
    run = next(run for run in runs if run.name == name)
    return target.run_environment(run)[PREFIX_REUSE_ENV]


def test_recjudge_run_tells_each_kernel_whether_its_local_judges_reuse_the_prefix():
    assert environment_of("default", "proxy_vs_llm", default_target=True) == "0"
    assert environment_of("smoke", "proxy_vs_llm") == "0"
    assert environment_of("paper", "proxy_vs_llm") == "1"  # the paper profile rescales it
    assert environment_of("paper", "judge_robustness") == "0"  # no paper override: the committed replies
    assert environment_of("paper", "proxy_vs_llm_synthetic") == "0"


def test_the_committed_chapters_keep_the_keys_of_the_committed_store():
    """The book's own SmolLM2 judge of proxy_vs_llm_synthetic (kang_basic on the synthetic survey's 40 answers), as
    `recjudge run` asks it at the default profile: every key is in data/llm."""
    from recjudge.serendipity.ground_truth import prepare_serendipity2018, rq1_judge

    study = prepare_serendipity2018("synthetic", history_k=10, sample_size=40, seed=0)
    requests = study.requests("kang_basic")
    reuse = reuses_prefix("proxy_vs_llm_synthetic", "default", rescaled=False)
    config = local_judge_config(rq1_judge("kang_basic"), reuse=reuse)
    assert "n_batch" not in dict(config.options)
    store = ResponseStore(committed_store_dir())
    keyer = store_keyer(config)
    assert len(requests) == 40 and all(keyer.key(request.messages, 0) in store for request in requests)


def test_a_readers_local_judge_reuses_the_prefix_in_every_role():
    role = {"prompt": "kang_fewshot", "scoring": "expected", "max_tokens": 1}
    local = parse_judge("local:smollm2-135m-instruct-q4_1")
    assert dict(local.to_config(**role).options) == {"n_batch": PREFIX_BATCH}
    ((_, config),) = judge_configs([local.to_parameter()], **role)
    assert dict(config.options) == {"n_batch": PREFIX_BATCH}
    own_batch = JudgeSpec("local", "smollm2-135m-instruct-q4_1", options=(("n_batch", 128),))
    assert dict(own_batch.to_config(**role).options) == {"n_batch": 128}
    assert parse_judge("openai:gpt-4o-mini").to_config(**role).options == ()


class OptionsSeen:
    name = "local"

    def __init__(self):
        self.options: list[dict] = []

    def complete(self, messages, *, options=None, **kwargs):
        self.options.append(dict(options or {}))
        return Completion(text="4")


@pytest.mark.parametrize("profile", COMMITTED_PROFILES)
def test_run_judge_asks_and_keys_a_local_judge_at_the_batch_size_decided(tmp_path, monkeypatch, profile):
    requests = [JudgeRequest("a", [{"role": "user", "content": "Rate 1-5."}])]
    generating = LOCAL.with_(scoring="generate")
    monkeypatch.setenv(PREFIX_REUSE_ENV, "1" if reuses_prefix("new", profile, rescaled=False) else "0")
    provider = OptionsSeen()
    run = run_judge(generating, requests, store=tmp_path, provider=provider, progress=False)
    assert provider.options == [{"n_batch": PREFIX_BATCH}]
    assert dict(run.config.options) == {"n_batch": PREFIX_BATCH}
    assert run.table["store_key"].iloc[0] == store_keyer(run.config).key(requests[0].messages, 0)
    monkeypatch.setenv(PREFIX_REUSE_ENV, "0")
    committed = run_judge(generating, requests, store=tmp_path / "b", provider=provider, progress=False)
    assert provider.options[-1] == {} and committed.config == generating
