"""Sharing replies between stores (`recjudge store export` / `recjudge store import`): a round trip gives the same
entries, an import adds nothing twice and never overwrites, and every bad line is named by file and line."""

from __future__ import annotations

import gzip
import json

import pytest

from recjudge.cli import main
from recjudge.llm.store import ResponseStore, StoredReply
from recjudge.llm.store_share import HEADER_FIELD, ShareError, export_entries, import_entries


def reply(key: str, text: str = "Score: 3", **extra) -> StoredReply:
    fields = dict(key=key, provider="openai", model="m", sample=0, text=text, logprobs=None, input_tokens=5,
                  output_tokens=2, latency_s=0.1, finish_reason="stop", created="2026-01-01T00:00:00Z")
    fields.update(extra)
    return StoredReply(**fields)


@pytest.fixture
def source(tmp_path):
    store = ResponseStore(tmp_path / "source")
    store.put_many([
        reply("f1" * 32, logprobs=[{"3": -0.1, "4": -2.5}], provenance={"reported_model": "m-2024"}),
        reply("a2" * 32, text="Score: 5", sample=1),
        reply("c3" * 32, model="other", text="Score: 1"),
        reply("b4" * 32, provider="anthropic", model="claude", text="4", request_key="u1:i2"),
    ])
    return store


def by_key(store: ResponseStore) -> dict[str, dict]:
    return {record["key"]: record for record in ResponseStore(store.root).records()}


def lines_of(path) -> list[str]:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8").splitlines()


@pytest.mark.parametrize("name", ["replies.jsonl", "replies.jsonl.gz"])
def test_export_then_import_into_an_empty_store_gives_the_same_entries(source, tmp_path, name):
    out = tmp_path / name
    header = export_entries(source, out)
    assert (out.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    lines = lines_of(out)
    assert json.loads(lines[0]) == header and header[HEADER_FIELD] == 1 and header["key_version"] == 1
    assert header["entries"] == 4 and header["models"] == [
        {"provider": "anthropic", "model": "claude", "entries": 1}, {"provider": "openai", "model": "m", "entries": 2},
        {"provider": "openai", "model": "other", "entries": 1}]
    keys = [json.loads(line)["key"] for line in lines[1:]]
    assert keys == sorted(keys)  # by key
    target = ResponseStore(tmp_path / "target")
    report = import_entries(target, out)
    assert (report.added, report.present, report.conflicts, report.malformed) == (4, 0, [], [])
    assert by_key(target) == by_key(source)


def test_export_is_byte_identical_whatever_the_writing_order(source, tmp_path):
    export_entries(source, tmp_path / "one.jsonl.gz")
    again = ResponseStore(tmp_path / "again")
    again.put_records(reversed(source.records()))
    export_entries(again, tmp_path / "two.jsonl.gz")
    assert (tmp_path / "one.jsonl.gz").read_bytes() == (tmp_path / "two.jsonl.gz").read_bytes()
    export_entries(source, tmp_path / "one.jsonl")
    export_entries(source, tmp_path / "one.jsonl")
    assert lines_of(tmp_path / "one.jsonl") == lines_of(tmp_path / "one.jsonl.gz")


def test_export_filters_by_provider_and_model(source, tmp_path):
    header = export_entries(source, tmp_path / "m.jsonl", provider="openai", model="m")
    assert header["entries"] == 2 and (header["provider"], header["model"]) == ("openai", "m")
    assert {json.loads(line)["model"] for line in lines_of(tmp_path / "m.jsonl")[1:]} == {"m"}
    assert export_entries(source, tmp_path / "o.jsonl", provider="openai")["entries"] == 3
    assert export_entries(source, tmp_path / "c.jsonl", model="claude")["entries"] == 1
    with pytest.raises(ShareError, match="--provider openai --model m"):  # says what the store holds
        export_entries(source, tmp_path / "none.jsonl", model="typo")
    assert not (tmp_path / "none.jsonl").exists()


def test_export_writes_no_credential(tmp_path, monkeypatch):
    store = ResponseStore(tmp_path / "s")
    store.put(reply("d1" * 32))
    # An entry written by older code, with a credential in its endpoint and a field outside the schema.
    shard = store.shard_path("openai", "m", "e" * 64)
    shard.write_text(json.dumps(dict(reply("e" * 64).to_json(), provenance={
        "endpoint": "http://me:pw-123@127.0.0.1:8000/v1"}, note="x")) + "\n")
    export_entries(store, tmp_path / "out.jsonl")
    text = (tmp_path / "out.jsonl").read_text()
    assert "pw-123" not in text and '"note"' not in text and "http://127.0.0.1:8000/v1" in text
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "k" * 30)
    store.put(reply("d2" * 32, text="my key is sk-" + "k" * 30))
    with pytest.raises(ShareError, match="OPENAI_API_KEY"):
        export_entries(store, tmp_path / "leak.jsonl")
    assert not (tmp_path / "leak.jsonl").exists()


def test_import_twice_adds_nothing_the_second_time(source, tmp_path):
    export_entries(source, tmp_path / "all.jsonl.gz")
    target = ResponseStore(tmp_path / "target")
    assert import_entries(target, tmp_path / "all.jsonl.gz").added == 4
    shards = {path: path.read_bytes() for path in target.shards()}
    second = import_entries(ResponseStore(target.root), tmp_path / "all.jsonl.gz")
    assert (second.added, second.present, second.ok) == (0, 4, True)
    assert {path: path.read_bytes() for path in target.shards()} == shards


def test_a_conflicting_entry_is_reported_and_never_overwritten(source, tmp_path, capsys):
    export_entries(source, tmp_path / "all.jsonl")
    target = ResponseStore(tmp_path / "target")
    target.put(reply("a2" * 32, text="Score: 2", sample=1))  # the same key, another reply
    target.put(reply("f1" * 32, logprobs=[{"3": -0.1, "4": -2.5}], created="2026-02-02T00:00:00Z", latency_s=9.0))
    code = main(["store", "import", str(tmp_path / "all.jsonl"), "--store", str(target.root)])
    assert code == 1
    out, err = capsys.readouterr()
    assert "2 added, 1 already present, 1 conflicting, 0 malformed" in out  # another time or latency is no conflict
    line = 1 + sorted(source.records(), key=lambda r: r["key"]).index(source.get_record("a2" * 32)) + 1
    assert f"all.jsonl:{line}: conflict: key {'a2' * 32} (openai / m)" in err and "text differ" in err
    assert ResponseStore(target.root).get("a2" * 32).text == "Score: 2"


def test_malformed_lines_are_named_and_the_valid_lines_imported(source, tmp_path, capsys):
    export_entries(source, tmp_path / "all.jsonl")
    lines = lines_of(tmp_path / "all.jsonl")
    missing_text = json.loads(lines[2])
    del missing_text["text"]
    lines[2] = json.dumps(missing_text)
    lines[3] = lines[3][:40]  # bad JSON
    lines.insert(4, json.dumps(dict(json.loads(lines[4]), key="9" * 64, api_key="x")))  # a field outside the schema
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    target = ResponseStore(tmp_path / "target")
    code = main(["store", "import", str(tmp_path / "bad.jsonl"), "--store", str(target.root)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "2 added, 0 already present, 0 conflicting, 4 malformed" in out
    assert "bad.jsonl:3: malformed: field 'text' missing" in err
    assert "bad.jsonl:4: malformed: not valid JSON" in err
    assert "bad.jsonl:5: malformed: field 'api_key' is not an entry field" in err
    assert "bad.jsonl:1: malformed: the header announces 4 entries but 5 entry line(s) follow it" in err
    assert len(ResponseStore(target.root)) == 2


@pytest.mark.parametrize("key", ["/" + "a" * 63, "." + "a" * 63, "..", "ab\ncd" + "a" * 59, "A" * 64, "k1"])
def test_a_key_that_is_not_a_sha256_is_named_by_line_and_skipped(source, tmp_path, capsys, key):
    export_entries(source, tmp_path / "all.jsonl")
    lines = lines_of(tmp_path / "all.jsonl")
    lines[2] = json.dumps(dict(json.loads(lines[2]), key=key))
    (tmp_path / "keys.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "target"
    code = main(["store", "import", str(tmp_path / "keys.jsonl"), "--store", str(target)])
    out, err = capsys.readouterr()
    assert code == 1 and "3 added, 0 already present, 0 conflicting, 1 malformed" in out
    assert "keys.jsonl:3: malformed: field 'key' is" in err and "not a store key" in err
    assert len(ResponseStore(target)) == 3
    shards = [path.relative_to(target) for path in target.rglob("*.jsonl")]
    assert all(len(path.name) == len("0.jsonl") and "\n" not in str(path) for path in shards), shards


def test_a_gzip_file_cut_short_keeps_the_lines_before(source, tmp_path):
    export_entries(source, tmp_path / "all.jsonl.gz")
    data = (tmp_path / "all.jsonl.gz").read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(data[:len(data) - 30])
    report = import_entries(ResponseStore(tmp_path / "target"), tmp_path / "cut.jsonl.gz")
    assert not report.ok and any("cut short" in reason for _, reason in report.malformed)


def test_exports_joined_import_as_one(source, tmp_path):
    export_entries(source, tmp_path / "openai.jsonl.gz", provider="openai")
    export_entries(source, tmp_path / "anthropic.jsonl.gz", provider="anthropic")
    joined = tmp_path / "both.jsonl.gz"  # `cat a.gz b.gz`: one gzip stream of two members
    joined.write_bytes((tmp_path / "openai.jsonl.gz").read_bytes() + (tmp_path / "anthropic.jsonl.gz").read_bytes())
    target = ResponseStore(tmp_path / "target")
    report = import_entries(target, joined)
    assert (report.added, report.ok) == (4, True)
    assert by_key(target) == by_key(source)


def test_a_store_shard_imports_too(source, tmp_path):
    shard = source.shard_path("openai", "m", "f1" * 32)
    report = import_entries(ResponseStore(tmp_path / "target"), shard)
    assert (report.added, report.ok) == (1, True)


def test_a_header_of_another_key_version_imports_nothing(source, tmp_path, capsys):
    export_entries(source, tmp_path / "all.jsonl")
    lines = lines_of(tmp_path / "all.jsonl")
    lines[0] = json.dumps(dict(json.loads(lines[0]), key_version=2))
    (tmp_path / "v2.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "target"
    assert main(["store", "import", str(tmp_path / "v2.jsonl"), "--store", str(target)]) == 2
    assert "v2.jsonl:1: the entries' keys are of version 2" in capsys.readouterr().err
    assert len(ResponseStore(target)) == 0
    assert main(["store", "import", str(tmp_path / "absent.jsonl"), "--store", str(target)]) == 2


def test_the_export_command(source, tmp_path, capsys):
    out = tmp_path / "judge.jsonl.gz"
    assert main(["store", "export", str(out), "--provider", "openai", "--model", "m", "--store", str(source.root)]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert main(["store", "export", str(source.root / "inside.jsonl"), "--store", str(source.root)]) == 2
    assert "inside the store folder" in capsys.readouterr().err
    assert main(["store", "export", str(out), "--store", str(tmp_path / "nowhere")]) == 2


def test_entries_the_header_does_not_announce_are_refused(source, tmp_path, capsys):
    export_entries(source, tmp_path / "m.jsonl", provider="openai", model="m")
    lines = lines_of(tmp_path / "m.jsonl")
    smuggled = reply("d5" * 32, provider="local", model="smollm2-135m-instruct-q4_1", text="Score: 1",
                     provenance={"gguf_sha256": "0" * 64}).to_json()
    lines.append(json.dumps(smuggled))
    lines[0] = json.dumps(dict(json.loads(lines[0]), entries=3))  # the count is right: only the model is not
    (tmp_path / "smuggled.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "target"
    code = main(["store", "import", str(tmp_path / "smuggled.jsonl"), "--store", str(target)])
    out, err = capsys.readouterr()
    assert code == 1 and "2 added, 0 already present, 0 conflicting, 0 malformed, 1 refused" in out
    assert ("smuggled.jsonl:4: refused: an entry of local / smollm2-135m-instruct-q4_1, which the header on line 1 "
            "does not announce (it announces openai / m)") in err
    assert {record["provider"] for record in ResponseStore(target).records()} == {"openai"}


def test_a_local_models_replies_of_other_weights_are_refused(tmp_path, capsys, monkeypatch):
    # The store's own replies of a local model name its weights; an imported reply of other weights under that name
    # would stop the local judge from adding replies (the runner refuses to mix two files' replies under one name).
    monkeypatch.delenv("RECJUDGE_LOCAL_GGUF", raising=False)  # no file for the name here: the store's replies tell
    model = "my-local-judge"
    store = ResponseStore(tmp_path / "store")
    store.put_many([reply("e1" * 32, provider="local", model=model, provenance={"gguf_sha256": "a" * 64})])
    shared = ResponseStore(tmp_path / "shared")
    shared.put_many([reply("e2" * 32, provider="local", model=model, provenance={"gguf_sha256": "b" * 64}),
                     reply("e3" * 32, provider="local", model=model, provenance={"gguf_sha256": "a" * 64})])
    export_entries(shared, tmp_path / "local.jsonl")
    code = main(["store", "import", str(tmp_path / "local.jsonl"), "--store", str(store.root)])
    out, err = capsys.readouterr()
    assert code == 1 and "1 added, 0 already present, 0 conflicting, 0 malformed, 1 refused" in out
    assert "refused: an entry of local / my-local-judge made with weights of sha256 bbbbbbbbbbbbbbbb" in err
    assert {record["key"] for record in ResponseStore(store.root).records()} == {"e1" * 32, "e3" * 32}


def test_disk_and_path_problems_end_in_one_line_naming_the_path(source, tmp_path, capsys):
    def one_line_error(argv) -> str:
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder\n")
    store = str(source.root)
    assert f"{a_file / 'out.jsonl'}: cannot write the export file" in one_line_error(
        ["store", "export", str(a_file / "out.jsonl"), "--store", store])
    assert f"{tmp_path}: is a folder" in one_line_error(["store", "export", str(tmp_path), "--store", store])
    export_entries(source, tmp_path / "all.jsonl")
    err = one_line_error(["store", "import", str(tmp_path / "all.jsonl"), "--store", str(a_file / "store")])
    assert f"the response store at {a_file / 'store'} cannot be written" in err


def test_an_over_long_line_is_named_and_never_read_whole(source, tmp_path, monkeypatch):
    import tracemalloc

    from recjudge.llm import store_share

    monkeypatch.setattr(store_share, "MAX_LINE_BYTES", 64 * 1024, raising=False)
    valid = source.shard_path("openai", "m", "f1" * 32).read_bytes().splitlines(keepends=True)[0]
    huge = b'{"key": "' + b"x" * (24 * 1024 * 1024) + b'"}\n'  # a gzip of a few KB holding 24 MB on one line
    packed = tmp_path / "huge.jsonl.gz"
    packed.write_bytes(gzip.compress(valid + huge + valid, compresslevel=1))
    del huge
    target = ResponseStore(tmp_path / "target")
    tracemalloc.start()
    try:
        report = import_entries(target, packed)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    assert report.added == 1 and [line for line, _ in report.malformed] == [2]
    assert "longer than 65,536 bytes" in report.malformed[0][1]
