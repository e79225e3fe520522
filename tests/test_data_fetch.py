"""Registry, fetch (mirror → data/raw → download → sample), checksums, safe archive extraction, CLI."""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import importlib
import io
import os
import re
import tarfile
import threading
import urllib.error
import zipfile
from pathlib import Path

import pytest

import recjudge.data as data
from recjudge.data import REGISTRY, ArchiveSpec, ChecksumError, DatasetSpec, FileSpec, MissingDataError
from recjudge.data.errors import DataError, UnsafeArchiveError

# `recjudge.data.fetch` is the function; the module is reached through importlib.
fetch_module = importlib.import_module("recjudge.data.fetch")
data_cli = importlib.import_module("recjudge.data.cli")

BRIEF_NAMES = {"serendipity-2018", "taobao-serendipity", "movielens-100k", "movielens-1m", "movielens-latest-small",
               "movielens-latest-2018-movies", "llm-explanation-eval-lu2023", "amazon-beauty-5core-s3rec"}
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "movielens-latest-small"


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


# ------------------------------------------------------------------------------------------------- registry
def test_registry_lists_every_dataset_with_provenance() -> None:
    assert set(REGISTRY) == BRIEF_NAMES
    for spec in REGISTRY.values():
        assert spec.page_url.startswith("https://"), spec.name
        assert spec.licence and spec.citation, spec.name
        assert spec.core_files, spec.name
        for file_spec in spec.files:
            assert file_spec.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", file_spec.sha256), file_spec.path
            assert (file_spec.sha256 is None) == (file_spec.checksum == "none"), file_spec.path
        assert spec.downloadable or spec.no_download_reason, spec.name
    assert [name for name, spec in REGISTRY.items() if spec.redistributable] == ["movielens-latest-small"]


def test_registry_matches_mirror_index() -> None:
    mirror = os.environ.get("RECJUDGE_DATA_MIRROR")
    if not mirror or not (Path(mirror) / "INDEX.md").is_file():
        pytest.skip("RECJUDGE_DATA_MIRROR unset or without INDEX.md")
    index = (Path(mirror) / "INDEX.md").read_text(encoding="utf-8")
    names = set(re.findall(r"^\| ([a-z0-9-]+) \|", index, flags=re.MULTILINE)) - {"folder"}
    assert names == set(REGISTRY)


def test_committed_sample_matches_registry_checksums() -> None:
    spec = REGISTRY["movielens-latest-small"]
    for file_spec in spec.files:
        assert fetch_module.sha256_file(SAMPLE / file_spec.path) == file_spec.sha256, file_spec.path
    assert "redistribute" in (SAMPLE / "README.txt").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------------------- toy dataset
TOY_FILES = {"a.csv": b"x,y\r\n1,2\r\n", "sub/b.txt": b"hello\n"}


def toy_spec(url: str | None = None, *, archive_root: str = "toy/", file_urls: dict[str, str] | None = None,
             archive_sha: str | None = None, sample: bool = False) -> DatasetSpec:
    file_urls = file_urls or {}
    files = tuple(FileSpec(path, sha(content), url=file_urls.get(path)) for path, content in TOY_FILES.items())
    files += (FileSpec("never-obtained.csv", role="core"),)
    archive = ArchiveSpec(url=url, root=archive_root, sha256=archive_sha, checksum="publisher") if url else None
    return DatasetSpec(name="toy", title="Toy", page_url="https://example.org/toy", files=files, licence="test",
                       redistributable=False, citation="none", archive=archive, has_sample=sample)


@pytest.fixture()
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mirror unset, data/raw and data/sample under tmp_path."""
    monkeypatch.delenv("RECJUDGE_DATA_MIRROR", raising=False)
    monkeypatch.setattr(fetch_module, "raw_data_dir", lambda: tmp_path / "raw")
    monkeypatch.setattr(fetch_module, "sample_data_dir", lambda: tmp_path / "sample")
    monkeypatch.setattr(fetch_module, "_FAILED_DOWNLOADS", {})
    return tmp_path


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)


def make_zip(path: Path, members: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)
    return path.read_bytes()


def test_mirror_is_used_and_verified(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "toy", toy_spec())
    mirror = isolated / "mirror"
    write_files(mirror / "toy", TOY_FILES)
    monkeypatch.setenv("RECJUDGE_DATA_MIRROR", str(mirror))
    assert data.fetch("toy") == mirror / "toy"
    assert data.dataset_dir("toy") == mirror / "toy"
    found = data.describe("toy")
    assert found.status == "partial" and found.missing_core == ("never-obtained.csv",)
    row = data.availability(["toy"]).iloc[0]
    assert row["status"] == "partial" and "never-obtained.csv" in row["note"]


def test_checksum_mismatch_names_file_expected_and_actual(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "toy", toy_spec())
    mirror = isolated / "mirror"
    write_files(mirror / "toy", {**TOY_FILES, "a.csv": b"x,y\r\n1,3\r\n"})
    monkeypatch.setenv("RECJUDGE_DATA_MIRROR", str(mirror))
    with pytest.raises(ChecksumError) as caught:
        data.dataset_dir("toy")
    message = str(caught.value)
    assert str(mirror / "toy" / "a.csv") in message
    assert sha(TOY_FILES["a.csv"]) in message and sha(b"x,y\r\n1,3\r\n") in message
    assert data.availability(["toy"]).iloc[0]["status"] == "invalid"


def test_missing_everywhere_raises_missing_data_error(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "toy", toy_spec())
    with pytest.raises(MissingDataError, match="toy"):
        data.dataset_dir("toy")
    with pytest.raises(MissingDataError, match="https://example.org/toy"):
        data.fetch("toy")
    assert data.availability(["toy"]).iloc[0]["status"] == "missing"


def test_download_zip_from_file_url(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = isolated / "toy.zip"
    content = make_zip(archive, {f"toy/{path}": body for path, body in TOY_FILES.items()})
    monkeypatch.setitem(REGISTRY, "toy", toy_spec(archive.as_uri(), archive_sha=sha(content)))
    folder = data.fetch("toy", quiet=True)
    assert folder == isolated / "raw" / "toy"
    assert (folder / "sub" / "b.txt").read_bytes() == TOY_FILES["sub/b.txt"]
    assert [p.name for p in (isolated / "raw").iterdir()] == ["toy"]  # no temporary folder left behind
    assert data.describe("toy").origin == "raw"
    # a second call takes data/raw without downloading again
    archive.unlink()
    assert data.fetch("toy", quiet=True) == folder


def test_download_archive_checksum_mismatch_keeps_nothing(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = isolated / "toy.zip"
    make_zip(archive, {f"toy/{path}": body for path, body in TOY_FILES.items()})
    monkeypatch.setitem(REGISTRY, "toy", toy_spec(archive.as_uri(), archive_sha="0" * 64))
    with pytest.raises(ChecksumError, match=re.escape(archive.as_uri())):
        data.fetch("toy", quiet=True)
    assert list((isolated / "raw").iterdir()) == []


def test_downloaded_member_with_wrong_checksum_is_rejected(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = isolated / "toy.zip"
    make_zip(archive, {"toy/a.csv": b"tampered\n", "toy/sub/b.txt": TOY_FILES["sub/b.txt"]})
    monkeypatch.setitem(REGISTRY, "toy", toy_spec(archive.as_uri()))
    with pytest.raises(ChecksumError, match="a.csv"):
        data.fetch("toy", quiet=True)
    assert list((isolated / "raw").iterdir()) == []


@pytest.mark.parametrize("member", ["../evil.txt", "toy/../../evil.txt", "/tmp/evil-absolute.txt"])
def test_malicious_zip_is_rejected(isolated: Path, monkeypatch: pytest.MonkeyPatch, member: str) -> None:
    archive = isolated / "evil.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("toy/a.csv", TOY_FILES["a.csv"])
        bundle.writestr(zipfile.ZipInfo(member), b"pwned")  # ZipInfo keeps the name as given
    monkeypatch.setitem(REGISTRY, "toy", toy_spec(archive.as_uri()))
    with pytest.raises(UnsafeArchiveError, match=re.escape(repr(member))):
        data.fetch("toy", quiet=True)
    assert not (isolated / "evil.txt").exists() and not (isolated / "raw" / "evil.txt").exists()
    assert not Path("/tmp/evil-absolute.txt").exists()
    assert list((isolated / "raw").iterdir()) == []


def test_zip_symlink_is_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    info = zipfile.ZipInfo("toy/link")
    info.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(info, "/etc/passwd")
    with pytest.raises(UnsafeArchiveError, match="symbolic link"):
        fetch_module.extract_archive(archive, tmp_path / "out")


def _tar(path: Path, members: list[tarfile.TarInfo], payload: bytes = b"data") -> None:
    with tarfile.open(path, "w:gz") as bundle:
        for info in members:
            if info.isfile():
                info.size = len(payload)
                bundle.addfile(info, io.BytesIO(payload))
            else:
                bundle.addfile(info)


def test_tar_extraction_safe_and_unsafe(tmp_path: Path) -> None:
    good = tmp_path / "good.tar.gz"
    inner = tarfile.TarInfo("toy/inner-link")
    inner.type, inner.linkname = tarfile.SYMTYPE, "a.csv"
    _tar(good, [tarfile.TarInfo("toy/a.csv"), inner])
    fetch_module.extract_archive(good, tmp_path / "ok")
    assert (tmp_path / "ok" / "toy" / "a.csv").read_bytes() == b"data"

    dotdot = tmp_path / "dotdot.tar.gz"
    _tar(dotdot, [tarfile.TarInfo("../escape.txt")])
    with pytest.raises(UnsafeArchiveError, match="escape.txt"):
        fetch_module.extract_archive(dotdot, tmp_path / "out1")

    outside = tmp_path / "link.tar.gz"
    link = tarfile.TarInfo("toy/passwd")
    link.type, link.linkname = tarfile.SYMTYPE, "../../../etc/passwd"
    _tar(outside, [link])
    with pytest.raises(UnsafeArchiveError, match="points outside"):
        fetch_module.extract_archive(outside, tmp_path / "out2")
    assert not (tmp_path / "escape.txt").exists()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output clean
        pass


def test_download_single_files_over_loopback_http(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = isolated / "served"
    write_files(served, {"a.csv": TOY_FILES["a.csv"], "b.txt": TOY_FILES["sub/b.txt"]})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        spec = toy_spec(file_urls={"a.csv": f"{base}/a.csv", "sub/b.txt": f"{base}/b.txt"})
        monkeypatch.setitem(REGISTRY, "toy", spec)
        folder = data.fetch("toy", quiet=True)
        assert (folder / "a.csv").read_bytes() == TOY_FILES["a.csv"]
        assert (folder / "sub" / "b.txt").read_bytes() == TOY_FILES["sub/b.txt"]
        # a 404 on a core file is a download failure, reported as missing data
        (isolated / "raw" / "toy" / "a.csv").unlink()
        (isolated / "raw" / "toy" / "sub" / "b.txt").unlink()
        monkeypatch.setitem(REGISTRY, "toy", toy_spec(file_urls={"a.csv": f"{base}/absent.csv"}))
        with pytest.raises(MissingDataError, match="Download failed"):
            data.fetch("toy", quiet=True)
    finally:
        server.shutdown()
        server.server_close()


def test_sample_is_the_last_resort(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(isolated / "sample" / "movielens-latest-small",
                {path.name: path.read_bytes() for path in SAMPLE.iterdir()})

    calls: list[str] = []

    def offline(url: str, target: Path, *, quiet: bool) -> tuple[str, str]:
        calls.append(url)
        raise urllib.error.URLError("no network in this test")

    monkeypatch.setattr(fetch_module, "_download_to", offline)
    folder = data.fetch("movielens-latest-small", quiet=True)
    assert folder == isolated / "sample" / "movielens-latest-small"
    assert data.fetch("movielens-latest-small", quiet=True) == folder
    assert len(calls) == 1  # a failed download is not retried within the process
    assert data.describe("movielens-latest-small").status == "sample"
    table = data.availability()
    assert table.set_index("dataset").loc["movielens-latest-small", "status"] == "sample"
    assert set(table["status"]) == {"sample", "missing"}


def test_cli_fetch_all_reports_and_explicit_missing_fails(isolated: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    write_files(isolated / "sample" / "movielens-latest-small",
                {path.name: path.read_bytes() for path in SAMPLE.iterdir()})
    parser = argparse.ArgumentParser()
    data_cli.add_arguments(parser)
    assert data_cli.run_command(parser.parse_args(["fetch", "all", "--no-download"])) == 0
    out = capsys.readouterr().out
    assert re.search(r"movielens-latest-small\s+sample", out) and re.search(r"serendipity-2018\s+missing", out)
    assert data_cli.run_command(parser.parse_args(["fetch", "serendipity-2018", "--no-download"])) == 1
    assert "not available: serendipity-2018" in capsys.readouterr().err
    assert data_cli.run_command(parser.parse_args(["fetch", "no-such-dataset"])) == 2
    assert data_cli.run_command(parser.parse_args(["list"])) == 0
    assert "Serendipity-2018" in capsys.readouterr().out


def test_mirror_availability_matches_index() -> None:
    if not os.environ.get("RECJUDGE_DATA_MIRROR"):
        pytest.skip("RECJUDGE_DATA_MIRROR unset (CI sets it to ../shared/data)")
    table = data.availability().set_index("dataset")
    assert table.loc["serendipity-2018", "status"] == "partial"
    assert "training.csv" in table.loc["serendipity-2018", "missing"]
    assert table.loc["movielens-1m", "status"] == "partial"
    assert table.loc["movielens-1m", "missing"] == "ratings.dat"
    for name in ("taobao-serendipity", "movielens-100k", "movielens-latest-small", "movielens-latest-2018-movies",
                 "llm-explanation-eval-lu2023"):
        assert table.loc[name, "status"] == "complete", name


def test_errors_share_a_base() -> None:
    for error in (data.MissingDataError, data.DataSchemaError, data.ChecksumError, UnsafeArchiveError):
        assert issubclass(error, DataError)
