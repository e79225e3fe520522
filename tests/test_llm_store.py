"""The response store: content addressing, durability under torn writes, concurrent writers, compaction."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import time

import pytest

from recjudge.llm.store import (
    ResponseStore,
    StoredReply,
    StoreNotWritable,
    compact_logprobs,
    entry_problem,
    max_stored_chars,
    model_slug,
    sanitise_record,
    store_key,
)

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
    assert counts["entries"] == 2 and counts["dropped_lines"] == 1
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


def test_a_writer_waits_for_a_shard_lock_held_through_filelock(tmp_path):
    """A shard's lock is the same lock whether a process takes it through ``filelock`` (as earlier versions of this
    store did) or directly: a write waits while another process holds it."""
    store = ResponseStore(tmp_path)
    store.put(reply("a" + "0" * 63))  # the folders and the lock file exist
    lock_file = next((tmp_path / ".locks").glob("*a.jsonl.lock"))
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from filelock import FileLock\n"
                               "with FileLock(sys.argv[1]):\n print('held', flush=True); time.sleep(1.5)",
                               str(lock_file)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        store.put(reply("a" + "1" * 63))
        assert time.monotonic() - started > 0.5
    finally:
        holder.wait(timeout=30)
    assert len(ResponseStore(tmp_path)) == 2


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


def test_fast_keyer_matches_reference_key_on_awkward_messages():
    from recjudge.llm.store import StoreKeyer

    args = {**BASE_KEY_ARGS, "options": {"stop": ["\n", "é"], "top_p": 0.1 + 0.2}, "temperature": 0.7}
    keyer = StoreKeyer(**{k: v for k, v in args.items() if k not in ("messages", "sample")})
    every_char = "".join(chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF)  # all controls, quotes, ...
    texts = [every_char, "", "\"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u2029\ufeff", "😀 𝄞 \U0010ffff", "ünï cödé ‹›",
             "".join(chr(c) for c in range(0xE000, 0x10000))]
    class Text(str):
        pass

    cases = [[{"role": "user", "content": t}] for t in texts]
    cases += [
        [{"role": "system", "content": texts[2]}, {"role": "user", "content": texts[3]}],
        ({"role": "user", "content": "a tuple of messages"},),
        [{"role": "user", "content": "extra fields", "name": "n", "weight": 1e16, "x": [0.1, -0.0, 5e-324, None]}],
        [{"content": "keys in another order", "role": "user"}],
        [{"role": "user", "content": {"nested": [1, 2.5, {"é": True}]}}],
        [{"role": Text("user"), "content": Text("a str subclass")}],
        [],
    ]
    for messages in cases:
        for sample in (0, 12):
            assert keyer.key(messages, sample) == store_key(**{**args, "messages": messages, "sample": sample})
        assert keyer.key(keyer.messages_json(messages), 3) == store_key(**{**args, "messages": messages, "sample": 3})
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate cannot be keyed, as before
        keyer.key([{"role": "user", "content": "half an emoji \ud83d"}], 0)


def test_refresh_one_model_reads_only_its_shards(tmp_path):
    writer = ResponseStore(tmp_path)
    writer.put(reply("a" * 64))
    writer.put(reply("b" * 64, model="other"))
    reader = ResponseStore(tmp_path)
    assert reader.refresh("openai", "m") == 1
    assert reader.peek("a" * 64) is not None and reader.peek("b" * 64) is None
    assert reader.get("b" * 64) is not None  # full load on first general lookup


# ------------------------------------------------------------------------------------------- odd and bad entries
def test_odd_replies_are_normalised_before_they_are_written(tmp_path):
    store = ResponseStore(tmp_path)
    odd = [
        dict(reply("a1" * 32).to_json(), text="Score: 4 \ud83d"),  # half an emoji
        dict(reply("a2" * 32).to_json(), input_tokens=float("nan"), output_tokens="3"),
        dict(reply("a3" * 32).to_json(), text=[{"type": "text", "text": "Score: "}, {"type": "text", "text": "2"}]),
        dict(reply("a4" * 32).to_json(), text={"type": "text", "text": "Score: 5"}),
        dict(reply("a5" * 32).to_json(), input_tokens=10**30, output_tokens=2.5, latency_s=float("inf")),
    ]
    written = store.put_records(odd)
    texts = [r["text"] for r in written]
    assert texts == ["Score: 4 \ufffd", "Score: 3", "Score: 2", "Score: 5", "Score: 3"]
    assert written[1]["input_tokens"] is None and written[1]["output_tokens"] == 3
    assert written[4]["input_tokens"] is None and written[4]["output_tokens"] is None
    assert written[4]["latency_s"] is None
    assert all(r["repairs"] for r in written)
    again = ResponseStore(tmp_path)
    assert len(again) == 5 and not again.skipped_lines
    assert {r.text for r in again} == set(texts)
    # A reply far longer than max_tokens allows is cut and marked.
    limit = max_stored_chars(256)
    big = sanitise_record(dict(reply("a6" * 32).to_json(), text="Score: 1 " + "x" * (limit * 3)), max_chars=limit)
    assert len(big["text"]) == limit and big["truncated_from_chars"] == limit * 3 + 9


BAD_LINES = [
    b'{"key":"b1","provider":"openai","model":"m","sample":0}',                           # no text
    b'{"key":"b2","provider":"openai","model":"m","text":["Score: ","3"]}',              # text is a list
    b'{"key":"b3","provider":"openai","model":"m","text":"3","input_tokens":"12"}',      # count is a string
    b'{"key":"b4","provider":"openai","model":"m","text":"3","output_tokens":1e30}',     # count is a huge float
    b'["not", "an", "object"]',
    b'{"key":"b5","provider":"openai","model":"m","text":"caf\xe9"}',                   # not UTF-8
    b'{"key":"b6","provider":"openai","model":"m","text":"3","logprobs":{"3":-0.1}}',   # logprobs not a list
]


def test_malformed_lines_are_skipped_and_named_never_raised(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("b0" * 32))
    shard = tmp_path / "openai" / "m" / "b.jsonl"
    with open(shard, "ab") as fh:
        fh.write(b"\n".join(BAD_LINES) + b"\n")
    store.put(reply("b9" * 32))
    reader = ResponseStore(tmp_path)
    assert {r.key for r in reader} == {"b0" * 32, "b9" * 32}  # iterating never raises
    assert [line.line for line in reader.skipped_lines] == [2, 3, 4, 5, 6, 7, 8]
    assert all(line.shard == shard for line in reader.skipped_lines)
    reasons = [line.reason for line in reader.skipped_lines]
    assert "field 'text' missing" in reasons[0] and "'text' is a list" in reasons[1]
    assert "input_tokens" in reasons[2] and "output_tokens" in reasons[3] and "UTF-8" in reasons[5]
    assert str(reader.skipped_lines[0]).startswith(f"{shard}:2: ")
    assert entry_problem(json.loads(shard.read_text(encoding="utf-8", errors="replace").splitlines()[0])) is None


def _awkward_lines() -> list[str]:
    base = '{"key":"ab","provider":"p","model":"m","text":"t"'
    fields = [
        '', ',"sample":0', ',"sample":-1', ',"sample":true', ',"sample":null', ',"sample":1.0', ',"sample":1e400',
        ',"sample":99999999999999999999999', ',"input_tokens":100000000', ',"input_tokens":100000001',
        ',"output_tokens":-1', ',"latency_s":1', ',"latency_s":-0.0', ',"latency_s":1e400', ',"latency_s":NaN',
        ',"latency_s":"1"', ',"logprobs":[{"a":-1,"b":-0.5}]', ',"logprobs":[{"a":true}]', ',"logprobs":[]',
        ',"logprobs":{}', ',"logprobs":[[1]]', ',"logprobs":[{"a":-1,"a":-2}]', ',"logprobs":[{"a":null}]',
        ',"provenance":[]', ',"provenance":{"x":[1,{"y":99999999999999999999999}]}', ',"repairs":123456789012345678901',
        ',"repairs":[1.5e300,"\\ud800"]', ',"extra":1', ',"text":"again"', ',"created":null,"request_key":null',
        ',"finish_reason":3', ',"created":1', ',"truncated_from_chars":null,"repairs":null,"provenance":null',
        ' , "sample" : 3 ', ',"text":"\\ud800 \\u0000 \\u2028 \\u00e9 \\" \\n"', ',"key":""', ',"key":null',
    ]
    lines = [base + extra + "}" for extra in fields]
    lines += ['{"key":"a","provider":"p","model":"m"}', '[1]', '"x"', "{}", base + "}" + base + "}"]
    rnd = random.Random(7)
    for _ in range(2000):  # float spellings: the C decoder must round exactly as json.loads does
        x = rnd.choice([rnd.uniform(-30, 0), round(rnd.uniform(-20, 0), 4),
                        rnd.random() * 10.0 ** rnd.randint(-320, 300)])
        lines.append(base + f',"logprobs":[{{"t":{json.dumps(x)},"u":{x:.17g}}}],"latency_s":{x!r}}}')
    return lines


def test_typed_fast_decoding_agrees_with_json_loads_and_entry_problem():
    import msgspec

    from recjudge.llm.store import _ENTRY_DECODER

    accepted = 0
    for line in _awkward_lines():
        try:
            reference = json.loads(line)
            problem = entry_problem(reference)
        except ValueError:
            reference, problem = None, "not JSON"
        try:
                entry = _ENTRY_DECODER.decode(line.encode("utf-8", "surrogatepass"))
        except msgspec.DecodeError:
            continue  # the slow path decides (and names the reason)
        got = entry.to_dict()
        accepted += 1
        assert problem is None, line
        assert got == reference and json.dumps(got, sort_keys=True) == json.dumps(reference, sort_keys=True), line
        assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in reference.items()}, line
        # Read by field name (as the runner reads a replay), the entry answers as the dict does.
        for name in (*reference, "provenance", "repairs", "logprobs", "sample", "created", "to_dict", "get", "x"):
            assert (name in entry) == (name in reference), (name, line)
            assert entry.get(name, "absent") == reference.get(name, "absent"), (name, line)
            if name in reference:
                assert entry[name] == reference[name]
            else:
                with pytest.raises(KeyError):
                    entry[name]
    assert accepted > 2000


def test_bulk_reads_answer_as_the_records_and_the_collector_is_left_as_found(tmp_path):
    import gc

    writer = ResponseStore(tmp_path)
    written = writer.put_records([reply(f"{i:02x}" * 32, text=f"Score: {1 + i % 5}", provenance={"server": "s"} if i % 2
                                        else None).to_json() for i in range(40)])
    for collector_on in (True, False):
        (gc.enable if collector_on else gc.disable)()
        try:
            reader = ResponseStore(tmp_path)
            reader.refresh()
            assert gc.isenabled() == collector_on
        finally:
            gc.enable()
        keys = [record["key"] for record in written]
        views = reader.peek_many(keys + ["f" * 64])
        assert list(views) == keys
        for record in written:
            view, copy = views[record["key"]], reader.get_record(record["key"])
            assert type(copy) is dict and copy == record and reader.peek(record["key"]) == record
            assert {name: view[name] for name in record} == record
            assert view.get("provenance") == record.get("provenance")
        assert sorted(map(json.dumps, reader.records())) == sorted(map(json.dumps, written))


def test_store_load_skips_the_same_lines_as_the_line_by_line_reader(tmp_path):
    lines = _awkward_lines()[:60]
    shard = tmp_path / "p" / "m" / "a.jsonl"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    reader = ResponseStore(tmp_path)
    reader.refresh()
    expected_bad = []
    for number, line in enumerate(lines, start=1):
        try:
            problem = entry_problem(json.loads(line))
        except ValueError:
            problem = "not JSON"
        if problem is not None:
            expected_bad.append(number)
    assert [s.line for s in reader.skipped_lines] == expected_bad
    good = [json.loads(line) for number, line in enumerate(lines, start=1) if number not in expected_bad]
    assert len(reader) == len({r["key"] for r in good}) and reader.peek("ab") == good[-1]  # the last line wins
    two_objects = next(number for number, line in enumerate(lines, start=1) if "}{" in line)
    assert two_objects in expected_bad and len(expected_bad) >= 20


def test_compact_moves_malformed_lines_to_quarantine(tmp_path):
    store = ResponseStore(tmp_path)
    store.put(reply("b0" * 32))
    shard = tmp_path / "openai" / "m" / "b.jsonl"
    with open(shard, "ab") as fh:
        fh.write(b"\n".join(BAD_LINES) + b"\n")
    counts = store.compact()
    quarantine = tmp_path / ".quarantine" / "openai" / "m" / "b.jsonl"
    assert counts["entries"] == 1 and counts["dropped_lines"] == len(BAD_LINES)
    assert counts["quarantined"] == [str(quarantine)]
    moved = [json.loads(line) for line in quarantine.read_text(encoding="utf-8").splitlines()]
    assert [m["line"] for m in moved] == list(range(2, 2 + len(BAD_LINES)))
    assert moved[0]["shard"] == "openai/m/b.jsonl" and '"key":"b1"' in moved[0]["raw"]
    fresh = ResponseStore(tmp_path)
    assert len(fresh) == 1 and not fresh.skipped_lines  # the quarantine folder is not read as a shard
    assert len(shard.read_text().splitlines()) == 1


def test_shard_replaced_by_a_longer_resorted_copy_is_read_again(tmp_path):
    import os

    writer = ResponseStore(tmp_path)
    keys = [f"c{i:063x}" for i in range(200)]
    # This clone holds the later 120 keys; the pulled copy sorts 80 new ones before them.
    writer.put_many(reply(k, text=f"Score: {i % 5 + 1}") for i, k in enumerate(keys) if i >= 80)
    reader = ResponseStore(tmp_path)
    assert len(reader) == 120
    # Elsewhere the store grew and was compacted (sorted by key); a `git pull` replaces the shard whole.
    other = tmp_path.parent / "other-clone"
    clone = ResponseStore(other)
    clone.put_many(reply(k, text=f"Score: {i % 5 + 1}") for i, k in reversed(list(enumerate(keys))))
    clone.compact()
    shard = tmp_path / "openai" / "m" / "c.jsonl"
    replacement = other / "openai" / "m" / "c.jsonl"
    assert replacement.stat().st_size > shard.stat().st_size
    tmp = shard.with_suffix(".pulled")
    tmp.write_bytes(replacement.read_bytes())
    os.replace(tmp, shard)
    reader.refresh()
    assert all(reader.peek(k) is not None for k in keys), "entries on disk were missed after the replacement"
    assert not reader.skipped_lines
    assert reader.peek(keys[7])["text"] == "Score: 3"


def test_unwritable_store_is_reported_before_anything_is_asked(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreNotWritable, match="cannot be written"):
        ResponseStore(blocker / "store").check_writable("openai", "m")
    ResponseStore(tmp_path / "ok").check_writable("openai", "m")  # a writable one passes and leaves no probe
    assert not [p for p in (tmp_path / "ok").rglob("*") if "probe" in p.name]


def test_claims_are_exclusive_and_stale_ones_are_taken_over(tmp_path):
    store = ResponseStore(tmp_path)
    assert store.claim("k1") and not store.claim("k1")  # held by a live process (this one)
    store.release("k1")
    assert store.claim("k1")
    # A claim left by a process that died is stale.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import socket

    store.claim_path("k2").parent.mkdir(parents=True, exist_ok=True)
    store.claim_path("k2").write_text(f"{dead.pid} {socket.gethostname()}\n")
    assert not store.claim_owner_alive("k2") and store.claim("k2")
    assert store.claim_path("k2").read_text().split()[0] == str(__import__("os").getpid())


def test_committed_store_reads_without_a_skipped_line():
    from pathlib import Path

    committed = ResponseStore(Path(__file__).resolve().parents[1] / "data" / "llm")
    records = committed.records()
    assert records and not committed.skipped_lines
    assert all(entry_problem(r) is None for r in records)
    assert sum(1 for _ in committed) == len(records)


def test_store_info_summarises_providers_models_provenance_and_bad_lines(tmp_path, capsys):
    from recjudge.cli import main

    store = ResponseStore(tmp_path)
    store.put(reply("d1" * 32))  # an older-style entry: no provenance
    store.put(reply("d2" * 32, provenance={"reported_model": "m-2024", "system_fingerprint": "fp_1"}))
    store.put(reply("d3" * 32, provider="local", model="tiny",
                    provenance={"llama_cpp_python": "0.3.36", "backend": "CPU: AVX2", "gguf_sha256": "ab" * 32}))
    with open(tmp_path / "openai" / "m" / "d.jsonl", "ab") as fh:
        fh.write(b'{"key":"d4","provider":"openai","model":"m"}\n')
    assert main(["store", "info", "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 entries" in out and "1 unusable line(s)" in out
    assert "openai / m: 2 entries" in out and "local / tiny: 1 entries" in out
    assert "(not recorded)" in out and "reported model m-2024; fingerprint fp_1" in out
    assert "llama-cpp-python 0.3.36; CPU: AVX2; gguf sha256 abababababababab" in out
    assert "openai/m/d.jsonl:3: field 'text' missing" in out
    assert main(["store", "info", "--store", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["entries"] == 3 and summary["unusable_lines"][0]["line"] == 3


def test_records_of_one_model_are_the_records_of_that_model_in_every_layer(tmp_path):
    """A judge's measured rate reads only its model's records (a plan reads the store once per judge run), as views:
    the same records as filtering every record, from a decoded store and from a layered one."""
    from recjudge.llm.store import LayeredStore

    below, top = ResponseStore(tmp_path / "below"), ResponseStore(tmp_path / "top")
    below.put_records([reply(f"{i:02x}" * 32, model="m" if i % 3 else "other").to_json() for i in range(30)])
    top.put_records([reply(f"{i:02x}" * 32, model="m", provider="local" if i % 2 else "openai").to_json()
                     for i in range(20, 40)])
    for store in (ResponseStore(tmp_path / "below"), LayeredStore(tmp_path / "top", [tmp_path / "below"])):
        for provider, model in (("openai", "m"), ("openai", "other"), ("local", "m"), ("local", "none")):
            expected = [r for r in store.records() if r["provider"] == provider and r["model"] == model]
            views = {view["key"]: view for view in store.records_of(provider, model)}
            assert sorted(views) == sorted(record["key"] for record in expected)
            for record in expected:  # each view reads as the record does
                assert {name: views[record["key"]][name] for name in record} == record
        assert store.records_of("openai", "m") and not store.records_of("local", "none")
