"""Finding, verifying and downloading datasets.

Where a dataset is looked for, in order (:func:`fetch`):

1. the mirror folder ``$RECJUDGE_DATA_MIRROR/<name>`` when it holds any registered file of the dataset;
2. ``data/raw/<name>`` (git-ignored) when an earlier download put the files there;
3. the official URLs (archive and/or single files): downloaded to a temporary file, checked against the registry's
   sha256/md5, safely extracted (absolute paths, ``..`` and links leaving the target are rejected), then moved to
   ``data/raw/<name>`` in one step, so an interrupted download leaves nothing half-written behind;
4. the committed sample ``data/sample/<name>`` (only ``movielens-latest-small``).

Every registered file that is present is checked against its sha256 where one is known; a mismatch raises
:class:`ChecksumError` naming the file, the expected and the actual digest. :func:`dataset_dir` does the same without
downloading. :func:`availability` reports, for every dataset, whether it is complete, partial, a sample or missing.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

import pandas as pd

from recjudge.data.errors import ChecksumError, DataError, MissingDataError, UnsafeArchiveError
from recjudge.data.registry import REGISTRY, DatasetSpec, get_spec
from recjudge.paths import DATA_MIRROR_ENV, data_mirror, raw_data_dir, sample_data_dir

Origin = Literal["mirror", "raw", "sample"]
Status = Literal["complete", "partial", "sample", "missing", "invalid"]

#: Seconds to wait for a server before giving up (no network → the failure comes at once from name resolution).
DOWNLOAD_TIMEOUT = 60
_CHUNK = 1 << 20

# (path, size, mtime_ns) -> sha256, so that repeated loads in one process hash each file once.
_DIGEST_CACHE: dict[tuple[str, int, int], str] = {}
# dataset -> reason, for downloads that failed with a network error in this process
_FAILED_DOWNLOADS: dict[str, str] = {}


@dataclass(frozen=True)
class Located:
    """Where a dataset was found and what it holds."""

    name: str
    path: Path
    origin: Origin
    present: tuple[str, ...]
    missing_core: tuple[str, ...]

    @property
    def status(self) -> Status:
        if self.origin == "sample":
            return "sample"
        return "partial" if self.missing_core else "complete"


# ----------------------------------------------------------------------------------------------------- checksums
def sha256_file(path: Path) -> str:
    """Hex sha256 of a file (cached per path, size and modification time)."""
    info = path.stat()
    key = (str(path.resolve()), info.st_size, info.st_mtime_ns)
    if key not in _DIGEST_CACHE:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
        _DIGEST_CACHE[key] = digest.hexdigest()
    return _DIGEST_CACHE[key]


def present_files(spec: DatasetSpec, folder: Path) -> tuple[str, ...]:
    """Registered files of ``spec`` that exist in ``folder``."""
    return tuple(f.path for f in spec.files if (folder / f.path).is_file())


def verify_folder(spec: DatasetSpec, folder: Path) -> tuple[str, ...]:
    """Check every present registered file with a known sha256; return the present files.

    Raises ChecksumError on the first mismatch."""
    present = present_files(spec, folder)
    for file_spec in spec.files:
        if file_spec.path in present and file_spec.sha256:
            got = sha256_file(folder / file_spec.path)
            if got != file_spec.sha256:
                source = ("publisher's checksum" if file_spec.checksum == "publisher"
                          else "sha256 of the verified copy recorded in the registry")
                raise ChecksumError(folder / file_spec.path, file_spec.sha256, got, source=source)
    return present


def _located(spec: DatasetSpec, folder: Path, origin: Origin) -> Located | None:
    if not folder.is_dir():
        return None
    present = verify_folder(spec, folder)
    if not present:
        return None
    missing = tuple(f.path for f in spec.core_files if f.path not in present)
    return Located(spec.name, folder, origin, present, missing)


def candidate_folders(name: str) -> list[tuple[Origin, Path]]:
    """Folders searched for ``name``, in order (mirror, data/raw, data/sample)."""
    spec = get_spec(name)
    folders: list[tuple[Origin, Path]] = []
    mirror = data_mirror()
    if mirror is not None:
        folders.append(("mirror", mirror / name))
    folders.append(("raw", raw_data_dir() / name))
    if spec.has_sample:
        folders.append(("sample", sample_data_dir() / name))
    return folders


def locate(name: str, *, include_sample: bool = True) -> Located | None:
    """The first folder holding files of ``name`` (checksums verified), or None. No download."""
    for origin, folder in candidate_folders(name):
        if origin == "sample" and not include_sample:
            continue
        found = _located(get_spec(name), folder, origin)
        if found is not None:
            return found
    return None


def _missing_message(spec: DatasetSpec, extra: str = "") -> str:
    mirror = data_mirror()
    where = f"{mirror / spec.name}" if mirror else f"${DATA_MIRROR_ENV} (unset)"
    lines = [f"dataset {spec.name!r} is not available: nothing in {where} or {raw_data_dir() / spec.name}."]
    if extra:
        lines.append(extra)
    lines.append(f"Get it from {spec.page_url} and place its files in <mirror>/{spec.name}/, or run "
                 f"`recjudge data fetch {spec.name}` with network access.")
    return " ".join(lines)


def dataset_dir(name: str) -> Path:
    """Folder holding ``name`` (mirror, data/raw or the committed sample), verified, without downloading.

    Raises MissingDataError when no folder holds any of its files, ChecksumError on a corrupt file."""
    spec = get_spec(name)
    found = locate(name)
    if found is None:
        raise MissingDataError(_missing_message(spec))
    return found.path


def describe(name: str) -> Located:
    """Like :func:`dataset_dir` but returns where the data came from and which files are present."""
    found = locate(name)
    if found is None:
        raise MissingDataError(_missing_message(get_spec(name)))
    return found


def fetch(name: str, *, download: bool = True, quiet: bool = False) -> Path:
    """Folder holding dataset ``name``: mirror, else data/raw, else a fresh verified download, else the sample.

    Raises MissingDataError when none of these works (the message says what was tried)."""
    spec = get_spec(name)
    found = locate(name, include_sample=False)
    if found is not None:
        return found.path
    failure = ""
    if download and spec.downloadable and not spec.no_download_reason:
        if name in _FAILED_DOWNLOADS:  # tried in this process already: do not wait for the network again
            failure = _FAILED_DOWNLOADS[name]
        else:
            try:
                return download_dataset(spec, quiet=quiet)
            except (OSError, urllib.error.URLError) as error:
                failure = _FAILED_DOWNLOADS[name] = f"Download failed: {error}."
    elif spec.no_download_reason:
        failure = f"No automatic download: {spec.no_download_reason}."
    if spec.has_sample:
        found = _located(spec, sample_data_dir() / name, "sample")
        if found is not None:
            if failure and not quiet:
                print(f"{name}: {failure} Using the committed sample {found.path}.", file=sys.stderr)
            return found.path
    raise MissingDataError(_missing_message(spec, failure))


# ------------------------------------------------------------------------------------------------------ download
def _download_to(url: str, target: Path, *, quiet: bool) -> tuple[str, str]:
    """Stream ``url`` to ``target``; return (sha256, md5)."""
    sha256, md5 = hashlib.sha256(), hashlib.md5()  # md5 only because some publishers give nothing else
    if not quiet:
        print(f"downloading {url}", file=sys.stderr)
    with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response, target.open("wb") as out:  # noqa: S310
        for chunk in iter(lambda: response.read(_CHUNK), b""):
            sha256.update(chunk)
            md5.update(chunk)
            out.write(chunk)
    return sha256.hexdigest(), md5.hexdigest()


def download_dataset(spec: DatasetSpec, *, quiet: bool = False) -> Path:
    """Download ``spec`` from its official URLs into data/raw/<name> (verified, extracted, moved in one step)."""
    raw = raw_data_dir()
    raw.mkdir(parents=True, exist_ok=True)
    final = raw / spec.name
    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}.download-", dir=raw))
    try:
        staging = work / "files"
        staging.mkdir()
        if spec.archive is not None:
            archive_file = work / "archive"
            sha256, md5 = _download_to(spec.archive.url, archive_file, quiet=quiet)
            if spec.archive.sha256 and sha256 != spec.archive.sha256:
                raise ChecksumError(spec.archive.url, spec.archive.sha256, sha256, source=spec.archive.checksum)
            if spec.archive.md5 and md5 != spec.archive.md5:
                raise ChecksumError(spec.archive.url, f"md5 {spec.archive.md5}", f"md5 {md5}",
                                    source=spec.archive.checksum)
            extracted = work / "extracted"
            extract_archive(archive_file, extracted)
            root = extracted / spec.archive.root if spec.archive.root else extracted
            if not root.is_dir():
                raise DataError(f"{spec.archive.url}: the archive has no folder {spec.archive.root!r}")
            for item in root.iterdir():
                shutil.move(str(item), staging / item.name)
        for file_spec in spec.files:
            if file_spec.url and not (staging / file_spec.path).exists():
                target = staging / file_spec.path
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    _download_to(file_spec.url, target, quiet=quiet)
                except (OSError, urllib.error.URLError):
                    target.unlink(missing_ok=True)
                    if file_spec.role == "core":
                        raise
                    if not quiet:
                        print(f"{spec.name}: optional file {file_spec.path} could not be downloaded",
                              file=sys.stderr)
        if not present_files(spec, staging):
            raise DataError(f"{spec.name}: the download holds none of the registered files")
        verify_folder(spec, staging)
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------- safe extraction
_DRIVE = re.compile(r"^[A-Za-z]:")


def _check_member_name(archive: Path, name: str) -> None:
    posix = name.replace("\\", "/")
    if posix.startswith("/") or _DRIVE.match(posix):
        raise UnsafeArchiveError(f"{archive}: member {name!r} has an absolute path")
    if ".." in PurePosixPath(posix).parts:
        raise UnsafeArchiveError(f"{archive}: member {name!r} leaves the target folder ('..')")


def _inside(target: Path, candidate: Path) -> bool:
    target, candidate = target.resolve(), candidate.resolve()
    return candidate == target or target in candidate.parents


def extract_archive(archive: Path, target: Path) -> None:
    """Extract a zip or tar archive into ``target`` after checking every member.

    Rejected (UnsafeArchiveError, nothing extracted): absolute member paths, '..' components, symbolic links in
    zip files, tar links or devices pointing outside ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            for info in members:
                _check_member_name(archive, info.filename)
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise UnsafeArchiveError(f"{archive}: member {info.filename!r} is a symbolic link")
                if not _inside(target, target / info.filename):
                    raise UnsafeArchiveError(f"{archive}: member {info.filename!r} leaves the target folder")
            bundle.extractall(target, members)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            for member in bundle.getmembers():
                _check_member_name(archive, member.name)
                destination = target / member.name
                if not _inside(target, destination):
                    raise UnsafeArchiveError(f"{archive}: member {member.name!r} leaves the target folder")
                if member.issym() or member.islnk():
                    base = destination.parent if member.issym() else target
                    if PurePosixPath(member.linkname).is_absolute() or not _inside(target, base / member.linkname):
                        raise UnsafeArchiveError(
                            f"{archive}: link {member.name!r} -> {member.linkname!r} points outside the target")
                if member.isdev():
                    raise UnsafeArchiveError(f"{archive}: member {member.name!r} is a device file")
            # The standard library's "data" filter re-checks all of the above during extraction.
            bundle.extractall(target, filter="data")
    else:
        raise DataError(f"{archive}: neither a zip nor a tar archive")


# ------------------------------------------------------------------------------------------------ availability
def availability(names: list[str] | None = None) -> pd.DataFrame:
    """One row per dataset: dataset, status (complete/partial/sample/missing/invalid), origin, path, files
    (present registered files), missing (absent core files), redistributable, note. Never downloads."""
    rows = []
    for name in names or list(REGISTRY):
        spec = get_spec(name)
        row = {"dataset": name, "status": "missing", "origin": "", "path": "", "files": "",
               "missing": ", ".join(f.path for f in spec.core_files), "redistributable": spec.redistributable,
               "note": ""}
        try:
            found = locate(name)
        except ChecksumError as error:
            row.update(status="invalid", note=str(error))
        else:
            if found is None:
                row["note"] = spec.no_download_reason or "not in the mirror, not fetched"
            else:
                row.update(status=found.status, origin=found.origin, path=str(found.path),
                           files=", ".join(found.present), missing=", ".join(found.missing_core))
                if found.status == "partial":
                    row["note"] = "partial copy: " + ", ".join(found.missing_core) + " missing"
                elif found.status == "sample":
                    row["note"] = "committed sample (redistributable)"
        rows.append(row)
    return pd.DataFrame(rows)


def fetch_all(names: list[str] | None = None, *, quiet: bool = False) -> pd.DataFrame:
    """Fetch every dataset that can be fetched and return :func:`availability`.

    Missing datasets are reported, not raised; a checksum mismatch is reported as status 'invalid'."""
    for name in names or list(REGISTRY):
        try:
            fetch(name, quiet=quiet)
        except DataError as error:
            if not quiet:
                print(f"{name}: {error}", file=sys.stderr)
    return availability(names)
