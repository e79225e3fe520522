"""The response store: content addressing, durability under torn writes, concurrent writers, compaction."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from recjudge.llm.store import ResponseStore, StoredReply, compact_logprobs, model_slug, store_key

BASE_KEY_ARGS = dict(
    provider="openai", model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.0,
    max_tokens=16, seed=0, logprobs=False, options={}, sample=0,
)


def reply(key: str, text: str = "Score: 3", **extra) -> StoredReply:
    fields = dict(key=key, provider="openai", model="m", sample=0, text=text, logprobs=None, input_tokens=5,
                  output_tokens=2, latency_s=0.1, finish_reason="stop", created="2026-01-01T00:00:00Z")
    fields.update(extra)
    return StoredReply(**fields)


def test_key_covers_every_sampling_parameter():
    base = store_key(**BASE_KEY_ARGS)
    assert base == store_key(**BASE_KEY_ARGS)  # deterministic
    variations = [
        dict(provider="anthropic"), dict(model="m2"), dict(messages=[{"role": "user", "content": "hi!"}]),
        dict(temperature=0.7), dict(max_tokens=17), dict(seed=1), dict(seed=None), dict(logprobs=True),
        dict(options={"top_p": 0.9}), dict(sample=1),
    ]
    keys = {store_key(**{**BASE_KEY_ARGS, **change}) for change in variations}
    assert len(keys) == len(variations) and base not in keys
    # Option order and int/float spelling of the temperature do not matter.
    assert store_key(**{**BASE_KEY_ARGS, "options": {"a": 1, "b": 2}}) == store_key(
        **{**BASE_KEY_ARGS, "options": [("b", 2), ("a", 1)]})
    assert store_key(**{**BASE_KEY_ARGS, "temperature": 0}) == base


def test_key_rejects_non_json_options():
    with pytest.raises(ValueError, match="options"):
        store_key(**{**BASE_KEY_ARGS, "options": {"x": object()}})


def test_put_get_roundtrip_and_reload(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("ab" * 32, text="Score: 4 — très bien", logprobs=[{"4": -0.1}]))
    again = ResponseStore(tmp_path)
    got = again.get("ab" * 32)
    assert got is not None and got.text == "Score: 4 — très bien" and got.logprobs == [{"4": -0.1}]
    assert len(again) == 1 and again.get("cd" * 32) is None
    shard = tmp_path / "openai" / "m" / "a.jsonl"
    assert shard.is_file() and json.loads(shard.read_text(encoding="utf-8"))["key"] == "ab" * 32
    assert (tmp_path / ".gitignore").read_text() == ".locks/\n"


def test_last_write_wins(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("ab" * 32, text="old"))
    store.put(reply("ab" * 32, text="new"))
    assert ResponseStore(tmp_path).get("ab" * 32).text == "new"


def test_torn_last_line_is_skipped_and_isolated(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("a1" * 32))
    shard = tmp_path / "openai" / "m" / "a.jsonl"
    with open(shard, "ab") as fh:  # what a writer killed mid-write leaves behind
        fh.write(b'{"key":"a2a2","provider":"openai","te')
    reader = ResponseStore(tmp_path)
    assert len(reader) == 1 and reader.get("a1" * 32) is not None
    # The next writer closes the fragment before appending, so both entries stay readable.
    ResponseStore(tmp_path).put(reply("a3" * 32))
    fresh = ResponseStore(tmp_path)
    assert {r.key for r in fresh} == {"a1" * 32, "a3" * 32}
    assert len(fresh.skipped_lines) == 1
    # compact() drops the fragment and sorts by key.
    counts = fresh.compact()
    assert counts == {"entries": 2, "dropped_lines": 1}
    lines = shard.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a1" * 32, "a3" * 32]


def test_refresh_sees_other_writers(tmp_path):
    reader = ResponseStore(tmp_path)
    assert len(reader) == 0
    ResponseStore(tmp_path).put(reply("ef" * 32))
    assert reader.get("ef" * 32) is None  # index loaded once...
    assert reader.refresh() == 1  # ...and refreshed on demand by reading only the appended bytes
    assert reader.get("ef" * 32) is not None


WRITER = textwrap.dedent("""
    import sys
    from recjudge.llm.store import ResponseStore, StoredReply
    root, worker = sys.argv[1], int(sys.argv[2])
    store = ResponseStore(root)
    for i in range(300):
        key = f"{i % 16:x}{worker:02d}{i:05d}".ljust(64, "0") if i % 3 else f"{i % 16:x}shared{i:05d}".ljust(64, "0")
        text = ("x" * 5000) + f" w{worker} i{i}"  # long lines: interleaving would corrupt them
        store.put(StoredReply(key=key, provider="openai", model="m", sample=0, text=text, logprobs=None,
                              input_tokens=1, output_tokens=1, latency_s=0.0, finish_reason="stop", created="t"))
""")


def test_concurrent_processes_write_the_same_store(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(w)]) for w in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = [line for shard in tmp_path.rglob("*.jsonl") for line in shard.read_text().splitlines()]
    assert len(lines) == 4 * 300
    records = [json.loads(line) for line in lines]  # every line is whole
    store = ResponseStore(tmp_path)
    assert not store.skipped_lines
    shared = 100  # i % 3 == 0 for i in range(300)
    assert len(store) == 4 * 200 + shared
    assert all(r["text"].startswith("x" * 5000) for r in records)


def test_concurrent_threads_write_the_same_store(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    store = ResponseStore(tmp_path)
    keys = [f"{i:064x}" for i in range(400)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: store.put(reply(k, text="y" * 3000)), keys))
    fresh = ResponseStore(tmp_path)
    assert len(fresh) == 400 and not fresh.skipped_lines


def test_compact_logprobs_keeps_positions_needed_for_scores():
    positions = [{"word": -0.1, "other": -2.0}] * 30 + [{" 4": -0.2, " 5": -1.7}] + [{"x": -0.1}] * 10
    kept = compact_logprobs(positions)
    assert len(kept) == 31 and kept[-1] == {" 4": -0.2, " 5": -1.7}
    short = compact_logprobs([{"4": -0.123456789, "5": float("-inf")}] + [{"a": -1.0}] * 40)
    assert len(short) == 16 and short[0] == {"4": -0.1235}
    assert compact_logprobs(None) is None


def test_model_slug_is_safe_and_unique():
    assert model_slug("gpt-4o-mini") == "gpt-4o-mini"
    a, b = model_slug("/models/a b.gguf"), model_slug("/models/a_b.gguf")
    assert "/" not in a and a != b


def test_fast_keyer_matches_reference_key():
    from recjudge.llm.store import StoreKeyer

    for change in [{}, dict(seed=None), dict(options={"top_p": 0.5, "stop": ["\n"]}), dict(temperature=1),
                   dict(model="ünï/cödé", logprobs=True)]:
        args = {**BASE_KEY_ARGS, **change}
        keyer = StoreKeyer(**{k: v for k, v in args.items() if k not in ("messages", "sample")})
        messages = [{"role": "system", "content": "Sé \"brief\"."}, {"role": "user", "content": "x\ny"}]
        for sample in (0, 3):
            assert keyer.key(messages, sample) == store_key(**{**args, "messages": messages, "sample": sample})


def test_refresh_one_model_reads_only_its_shards(tmp_path):
    writer = ResponseStore(tmp_path)
    writer.put(reply("a" * 64))
    writer.put(reply("b" * 64, model="other"))
    reader = ResponseStore(tmp_path)
    assert reader.refresh("openai", "m") == 1
    assert reader.peek("a" * 64) is not None and reader.peek("b" * 64) is None
    assert reader.get("b" * 64) is not None  # full load on first general lookup
