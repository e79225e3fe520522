"""Poisoned store entries and stuck claims: what a misbehaving server, a damaged file, a full disk or a process
that died can leave in a store never stops a replay or `recjudge store info` and never makes a job wait forever;
what normalisation changed is listed in the entry's repairs."""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import subprocess
import sys
import time

import pytest

from recjudge.llm.parsing import expected_score, modal_score
from recjudge.llm.store import (
    CLAIM_MAX_AGE_S,
    CLAIM_WRITE_GRACE_S,
    PROVENANCE_MAX_CHARS,
    ResponseStore,
    StoredReply,
    StoreNotWritable,
    sanitise_record,
)


def reply(key: str, **extra) -> StoredReply:
    fields = dict(key=key, provider="openai", model="m", sample=0, text="4", logprobs=None, input_tokens=5,
                  output_tokens=1, latency_s=0.1, finish_reason="stop", created="2026-01-01T00:00:00Z")
    fields.update(extra)
    return StoredReply(**fields)


def test_a_deeply_nested_line_is_skipped_and_named_in_replay_and_store_info(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("a0" * 32))
    shard = tmp_path / "openai" / "m" / "a.jsonl"
    with open(shard, "ab") as handle:
        handle.write(b"[" * 1000 + b"]" * 1000 + b"\n")
        handle.write(b'{"key":"' + b"a1" * 32 + b'","provider":"openai","model":"m","text":"x","provenance":'
                     + b'{"a":' * 1000 + b"1" + b"}" * 1000 + b"}\n")
    store.put(reply("a2" * 32))
    reader = ResponseStore(tmp_path)
    assert {entry.key for entry in reader} == {"a0" * 32, "a2" * 32}
    assert [line.line for line in reader.skipped_lines] == [2, 3]
    assert all("nested too deeply" in line.reason for line in reader.skipped_lines)
    info = subprocess.run([sys.executable, "-m", "recjudge", "store", "info", "--store", str(tmp_path)],
                          capture_output=True, text=True, env={**os.environ, "RECJUDGE_STORE": str(tmp_path)})
    assert info.returncode == 0, info.stderr[-2000:]
    assert "Traceback" not in info.stderr and "a.jsonl:2" in info.stdout + info.stderr


def test_log_probabilities_that_are_no_probability_are_dropped_and_listed():
    record = reply("b0" * 32, logprobs=[{"4": -0.1, "5": 1e308, "3": float("nan"), "2": float("inf"),
                                         "1": float("-inf"), "x": 0.5}]).to_json()
    cleaned = sanitise_record(record)
    assert cleaned["logprobs"] == [{"4": -0.1}]
    assert any("5 value(s) not a finite log-probability" in note for note in cleaned["repairs"])
    assert expected_score(cleaned["logprobs"]) == 4.0
    json.dumps(cleaned, allow_nan=False)  # what is written is valid JSON


def test_a_poisoned_entry_already_in_a_store_still_gives_a_score_on_replay():
    """A line written before the check (or by hand) with a log-probability of 1e308 overflowed exp()."""
    poisoned = [{"4": -0.2, "5": 1e308, "2": -1.5}]
    assert math.isfinite(expected_score(poisoned)) and modal_score(poisoned) == 4.0


def test_provenance_is_capped():
    huge = {"system_fingerprint": "f" * 5_000_000, **{f"field{i}": i for i in range(100)}}
    cleaned = sanitise_record(reply("c0" * 32, provenance=huge).to_json())
    assert len(cleaned["provenance"]["system_fingerprint"]) == PROVENANCE_MAX_CHARS
    assert len(json.dumps(cleaned)) < 20_000
    assert any(note.startswith("provenance:") for note in cleaned["repairs"])
    small = sanitise_record(reply("c1" * 32, provenance={"server": "vllm", "fingerprint": "fp_1"}).to_json())
    assert small["provenance"] == {"server": "vllm", "fingerprint": "fp_1"} and "repairs" not in small


def test_credentials_in_provenance_urls_are_never_stored(tmp_path):
    provenance = {"endpoint": "http://reader:sk-secret@127.0.0.1:8000/v1", "proxy": ["https://token@proxy.example/x"],
                  "note": "served at https://u:p@host/v1 today", "contact": "me@example.org"}
    written = ResponseStore(tmp_path).put(reply("c2" * 32, provenance=provenance))
    assert "sk-secret" not in (tmp_path / "openai" / "m" / "c.jsonl").read_text()
    assert written["provenance"] == {"endpoint": "http://127.0.0.1:8000/v1", "proxy": ["https://proxy.example/x"],
                                     "note": "served at https://host/v1 today", "contact": "me@example.org"}
    assert written["repairs"] == ["provenance: credentials removed from 3 URL(s)"]
    clean = sanitise_record(reply("c3" * 32, provenance={"endpoint": "http://127.0.0.1:8000/v1"}).to_json())
    assert "repairs" not in clean


# ---------------------------------------------------------------------------------------------------------- claims

KEY = "d0" * 32


def age(path, seconds):
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_claim_on_a_full_disk_raises_a_clear_error_and_leaves_no_file(tmp_path, monkeypatch):
    store = ResponseStore(tmp_path)
    store.claim_path(KEY).parent.mkdir(parents=True)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(StoreNotWritable, match="the disk is full"):
        store.claim(KEY)
    monkeypatch.undo()
    assert not store.claim_path(KEY).exists()
    assert store.claim(KEY)  # nothing left behind to wait on


@pytest.mark.parametrize("content", ["", "garbage"])
def test_an_empty_or_unreadable_claim_is_waited_on_briefly_then_taken_over(tmp_path, content):
    store = ResponseStore(tmp_path)
    path = store.claim_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert not store.claim(KEY)  # may be being written right now
    age(path, CLAIM_WRITE_GRACE_S + 5)
    assert store.claim(KEY)


def test_a_claim_whose_pid_now_belongs_to_another_process_is_stale(tmp_path):
    store = ResponseStore(tmp_path)
    path = store.claim_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_text(f"{os.getpid()} {socket.gethostname()} 1 {time.time():.0f}\n")  # this pid, another start
    assert store.claim(KEY)
    assert not ResponseStore(tmp_path).claim(KEY)  # the claim just written names this very process: alive


def test_a_claim_from_another_host_is_trusted_until_it_is_too_old(tmp_path):
    store = ResponseStore(tmp_path)
    path = store.claim_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_text(f"123 elsewhere.example 456 {time.time():.0f}\n")
    assert not store.claim(KEY)
    age(path, CLAIM_MAX_AGE_S + 60)
    assert store.claim(KEY)


def test_a_job_meets_stale_claims_on_every_prompt_and_finishes(tmp_path):
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    from recjudge.llm.providers.base import Completion

    class Scripted:
        name = "scripted"

        def complete(self, messages, **kwargs):
            return Completion(text="4", input_tokens=3, output_tokens=1)

    requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"prompt {i}"}]) for i in range(4)]
    config = JudgeConfig(provider="openai", model="m")
    keys = run_judge(config, requests, store=tmp_path / "first", provider=Scripted(), progress=False).table["store_key"]
    store = ResponseStore(tmp_path / "second")
    for number, key in enumerate(keys):  # left by a writer that died, another host long gone, a reused pid
        path = store.claim_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(["", "1 elsewhere.example 2 0\n", f"{os.getpid()} {socket.gethostname()} 1 0\n",
                         "garbage"][number])
        age(path, CLAIM_MAX_AGE_S + 60)
    run = run_judge(config, requests, store=tmp_path / "second", provider=Scripted(), progress=False)
    assert run.report.n_replies == 4 and run.scores().notna().all()


# ------------------------------------------------------------------------------------------- what disappears on disk

def test_replies_removed_on_disk_are_no_longer_served_by_a_live_store(tmp_path):
    import shutil

    store = ResponseStore(tmp_path)
    keys = ["e0" * 32, "e1" * 32, "f0" * 32]
    for key in keys:
        store.put(reply(key))
    assert all(store.get(key) for key in keys)
    shard_e = store.shard_path("openai", "m", keys[0])
    lines = shard_e.read_text().splitlines(keepends=True)
    replacement = shard_e.with_suffix(".new")
    replacement.write_text(lines[1])  # rewritten without the first reply (a compaction, a pull)
    os.replace(replacement, shard_e)
    store.refresh("openai", "m")
    assert store.get(keys[0]) is None and store.get(keys[1]) is not None
    store.shard_path("openai", "m", keys[2]).unlink()  # a shard removed
    store.refresh()
    assert store.get(keys[2]) is None and len(store) == 1
    shutil.rmtree(tmp_path)  # the whole store folder removed
    store.refresh()
    assert len(store) == 0
    store.check_writable("openai", "m")  # recreated, not "cannot be written"
    store.put(reply(keys[0]))
    assert ResponseStore(tmp_path).get(keys[0]) is not None


@pytest.mark.local_model
def test_a_gguf_swapped_behind_a_local_model_name_is_refused_before_asking(tmp_path):
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
    from recjudge.llm.providers.base import ProviderError
    from recjudge.llm.providers.local import DEFAULT_MODEL

    store = ResponseStore(tmp_path)
    store.put(StoredReply(key="a" * 64, provider="local", model=DEFAULT_MODEL, sample=0, text="4", logprobs=None,
                          input_tokens=5, output_tokens=1, latency_s=0.1, finish_reason="stop",
                          created="2026-01-01T00:00:00Z", provenance={"gguf_sha256": "0" * 64}))
    requests = [JudgeRequest("k", [{"role": "user", "content": "Rate 1-5: 4"}])]
    with pytest.raises(ProviderError, match="sha256 0000000000000000"):
        run_judge(JudgeConfig(provider="local", model=DEFAULT_MODEL, max_tokens=1), requests, store=tmp_path,
                  mode="live", progress=False)
    assert len(ResponseStore(tmp_path)) == 1  # nothing was asked or added
