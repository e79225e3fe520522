"""Publishing the built book for readers: ``recjudge book --publish DEST`` (``make publish``).

A build of the book (``recjudge book``) leaves ``build-info.json`` in its site folder: the commit it was built from,
whether the checkout was clean, the profile, the judges and the status of each of the run plan's datasets (complete,
partial, sample, missing: ``recjudge.data.availability``). Publishing
takes a site folder and a destination, and refuses a partial book, one line per reason, unless told
``allow_partial``:

- a page with a "Data needed" box (a chapter whose data were absent: ``compendium.cell_selection``);
- a chapter not run (the at-a-glance page says "not run in this build" where a chapter's tables are missing);
- a checkout that is not clean (``git status`` lists a change or an untracked file);
- a build older than the last commit (``build-info.json`` names another commit, or a dirty checkout, or is absent).

What it publishes is a copy of the site with ``.nojekyll`` (GitHub Pages serves ``_static/`` as it is), the
``build-info.json`` (with what, if anything, makes the book partial) and, on the landing page, one line saying "built
from commit X with the data the data tour lists (2 partial: ...)", each dataset's status as the data layer reports
it. The committed sources are not touched: the line and the record exist only in the
published copy and the build folder.

Destinations: a git remote and branch (``origin`` and ``gh-pages`` by default), committed with ``ghp-import`` and
pushed; or ``folder:PATH``, a folder for any static host, mirrored. A variant's book goes to ``variants/<NAME>/`` of
the same destination, beside the book, and publishing the book keeps ``variants/``. Publishing an unchanged book again
changes nothing (no new commit, no file written).
"""

from __future__ import annotations

import filecmp
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

BUILD_INFO = "build-info.json"
NOJEKYLL = ".nojekyll"
#: Where a variant's book goes in a destination: ``variants/<NAME>/``.
VARIANTS_FOLDER = "variants"
DEFAULT_REMOTE = "origin"
DEFAULT_BRANCH = "gh-pages"
FOLDER_PREFIX = "folder:"
ALLOW_HINT = "--allow-partial publishes it anyway"

_DATA_NEEDED = re.compile(r'class="admonition-title"[^>]*>\s*Data needed', re.IGNORECASE)
# A table cell or status that says so (the at-a-glance page); the page's prose that explains the word is not a match.
_NOT_RUN = re.compile(r">\s*not run in this build", re.IGNORECASE)
_REFRESH = re.compile(r"""<meta[^>]*http-equiv=["']?refresh["']?[^>]*content=["']?\s*\d+\s*;\s*url=([^"'>\s]+)""",
                      re.IGNORECASE)
_INSERT_AFTER = (re.compile(r"<article\b[^>]*>", re.IGNORECASE), re.compile(r"<body\b[^>]*>", re.IGNORECASE))


class PublishError(RuntimeError):
    """The book is not published; the message has one line per reason."""


# ---------------------------------------------------------------------------------------------------- the checkout
def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise PublishError(f"`git {' '.join(args)}` failed in {root}: {result.stderr.strip() or result.returncode}")
    return result


def checkout_state(root: Path) -> tuple[str, bool]:
    """(commit of HEAD, whether the checkout is clean: no change and no untracked file)."""
    commit = _git(root, "rev-parse", "HEAD").stdout.strip()
    clean = not _git(root, "status", "--porcelain").stdout.strip()
    return commit, clean


# ------------------------------------------------------------------------------------------------ the build record
def dataset_statuses(root: Path) -> dict[str, str]:
    """Every dataset the run plan's chapters read, and its status as the data layer reports it
    (``recjudge.data.availability``: complete, partial, sample, missing or invalid), which the data tour shows too."""
    from recjudge.compendium.runplan import load_runplan
    from recjudge.data.fetch import availability

    names = sorted({name for run in load_runplan(root=root) for name in run.datasets})
    if not names:
        return {}
    table = availability(names)
    return dict(zip(table["dataset"], table["status"]))


def write_build_info(site: Path, root: Path, *, profile: str, judges: Iterable[str] = (),
                     data: Mapping[str, str], variant: str | None = None) -> dict[str, Any]:
    """Record in ``site/build-info.json`` what a build was made from (``data``: each dataset's status,
    ``dataset_statuses``); returns the record."""
    commit, clean = checkout_state(root)
    record = {"commit": commit, "clean_checkout": clean, "profile": profile, "variant": variant,
              "judges": list(judges), "data": dict(sorted(data.items()))}
    (Path(site) / BUILD_INFO).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def read_build_info(site: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((Path(site) / BUILD_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("commit"), str) else None


# ---------------------------------------------------------------------------------------------------- the refusals
def partial_pages(site: Path) -> list[str]:
    """One line per kind of gap in the built pages: "Data needed" boxes and chapters not run."""
    site = Path(site)
    boxes, not_run = [], []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        name = page.relative_to(site).as_posix()
        if _DATA_NEEDED.search(text):
            boxes.append(name)
        if _NOT_RUN.search(text):
            not_run.append(name)
    reasons = []
    if boxes:
        reasons.append(f"a partial book: {len(boxes)} page(s) open with a Data needed box ({_some(boxes)})")
    if not_run:
        reasons.append(f"a partial book: {_some(not_run)} shows chapters not run in this build")
    return reasons


def _some(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


NOT_CLEAN = "the checkout is not clean (`git status` lists changes): commit or stash them, then rebuild"


def not_clean(root: Path) -> str | None:
    """Why the checkout ``root`` is not clean, or None when it is."""
    return None if checkout_state(root)[1] else NOT_CLEAN


def refusals(site: Path, root: Path) -> list[str]:
    """Every reason not to publish ``site`` from the checkout ``root``, one line each (empty: a full book)."""
    commit, clean = checkout_state(root)
    reasons = [] if clean else [NOT_CLEAN]
    record = read_build_info(site)
    if record is None:
        reasons.append(f"{Path(site) / BUILD_INFO} is missing: the build is older than this checkout, "
                       "rebuild it (`make book`)")
    elif record["commit"] != commit:
        reasons.append(f"the build is older than the last commit (built from {record['commit'][:12]}, the checkout "
                       f"is at {commit[:12]}): rebuild it (`make book`)")
    elif not record.get("clean_checkout", False):
        reasons.append(f"the build was made from uncommitted changes to {commit[:12]}: rebuild it from the "
                       "committed sources (`make book`)")
    return reasons + partial_pages(site)


# ---------------------------------------------------------------------------------------------- the published copy
#: A dataset's status in a build record: the data layer's word; a record written before statuses were recorded
#: holds True or False (present or not).
COMPLETE = "complete"
_LEGACY_STATUS = {True: "present", False: "missing"}


def data_phrase(data: Mapping[str, Any]) -> str:
    """What the landing line says of the data (HTML): "with the data the data tour lists (all complete)", or the
    count and names of the datasets that are not complete copies, by status ("(2 partial: <code>…</code>)")."""
    by_status: dict[str, list[str]] = {}
    for name, status in sorted(data.items()):
        status = _LEGACY_STATUS.get(status, str(status)) if isinstance(status, bool) else str(status)
        if status != COMPLETE:
            by_status.setdefault(status, []).append(name)
    if not by_status:
        return "with the data the data tour lists (all complete)"
    parts = [f"{len(names)} {html.escape(status)}: " + ", ".join(f"<code>{html.escape(name)}</code>" for name in names)
             for status, names in sorted(by_status.items())]
    return "with the data the data tour lists (" + "; ".join(parts) + ")"


def landing_line(record: Mapping[str, Any], link: str) -> str:
    """The sentence the landing page shows: which commit, with which data (each dataset's status as the data layer
    reported it at the build), which profile and judges."""
    commit = html.escape(str(record.get("commit", ""))[:12])
    data = "(its data not recorded)" if "data" not in record else data_phrase(record["data"])
    judges = record.get("judges") or []
    who = ("judges " + ", ".join(f"<code>{html.escape(str(judge))}</code>" for judge in judges) if judges
           else "the chapters' own judges")
    dirty = "" if record.get("clean_checkout", True) else " with uncommitted changes"
    partial = " A partial book: " + html.escape("; ".join(record["partial"])) + "." if record.get("partial") else ""
    return (f'<p class="recjudge-build-info">Built from commit <code>{commit}</code>{dirty} {data} '
            f"(profile <code>{html.escape(str(record.get('profile', '')))}</code>, {who}; "
            f'<a href="{html.escape(link)}">build record</a>).{partial}</p>')


def landing_page(site: Path) -> Path:
    """The page a reader lands on: ``index.html``, or the page it redirects to (Jupyter Book's root page)."""
    index = Path(site) / "index.html"
    found = _REFRESH.search(index.read_text(encoding="utf-8", errors="replace"))
    if found:
        target = index.parent / found.group(1).split("#")[0].split("?")[0]
        if target.is_file():
            return target
    return index


def stage(site: Path, record: Mapping[str, Any], target: Path) -> Path:
    """A copy of ``site`` in ``target`` with ``.nojekyll``, ``build-info.json`` (``record``) and the landing
    page's build line; returns ``target``."""
    site, target = Path(site), Path(target)
    if not (site / "index.html").is_file():
        raise PublishError(f"{site / 'index.html'} does not exist: build the book first (`make book`)")
    shutil.copytree(site, target, symlinks=False)
    (target / BUILD_INFO).write_text(json.dumps(dict(record), indent=2) + "\n", encoding="utf-8")
    (target / NOJEKYLL).write_bytes(b"")
    page = landing_page(target)
    link = os.path.relpath(target / BUILD_INFO, page.parent).replace(os.sep, "/")
    text = page.read_text(encoding="utf-8")
    line = landing_line(record, link)
    for pattern in _INSERT_AFTER:
        found = pattern.search(text)
        if found:
            text = text[:found.end()] + "\n" + line + text[found.end():]
            break
    else:
        text = line + text
    page.write_text(text, encoding="utf-8")
    return target


def mirror(source: Path, target: Path, *, keep: Iterable[str] = ()) -> int:
    """Make ``target`` hold exactly the files of ``source`` (top-level names in ``keep`` are left alone); returns
    how many files were written or removed."""
    source, target, keep = Path(source), Path(target), set(keep)
    target.mkdir(parents=True, exist_ok=True)
    wanted = {path.relative_to(source) for path in source.rglob("*") if path.is_file()}
    changes = 0
    for path in sorted(target.rglob("*"), reverse=True):  # children before their folder
        relative = path.relative_to(target)
        if relative.parts[0] in keep:
            continue
        if path.is_symlink() or path.is_file():
            if relative not in wanted:
                path.unlink()
                changes += 1
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for relative in sorted(wanted):
        to = target / relative
        if to.is_file() and not to.is_symlink() and filecmp.cmp(source / relative, to, shallow=False):
            continue
        to.parent.mkdir(parents=True, exist_ok=True)
        if to.is_symlink():
            to.unlink()
        shutil.copyfile(source / relative, to)
        changes += 1
    return changes


# ---------------------------------------------------------------------------------------------------- destinations
@dataclass(frozen=True)
class Destination:
    """A git remote (a name of ``git remote``, a URL or a repository's path) and branch, or a folder."""

    remote: str | None = None
    branch: str = DEFAULT_BRANCH
    folder: Path | None = None

    @classmethod
    def parse(cls, text: str, branch: str | None = None) -> "Destination":
        """``folder:PATH`` is a folder; anything else a git remote, with ``branch`` (default gh-pages)."""
        text = text.strip()
        if text.startswith(FOLDER_PREFIX):
            path = text[len(FOLDER_PREFIX):].strip()
            if not path:
                raise PublishError(f"--publish {text!r}: give the folder, as folder:PATH")
            if branch:
                raise PublishError("--branch is for a git remote, not for a folder")
            return cls(folder=Path(path).expanduser().resolve())
        if not text:
            raise PublishError("--publish: give a git remote (e.g. origin) or folder:PATH")
        return cls(remote=text, branch=branch or DEFAULT_BRANCH)

    def __str__(self) -> str:
        return str(self.folder) if self.folder is not None else f"branch {self.branch} of {self.remote}"


def publish(site: Path, root: Path, destination: Destination, *, allow_partial: bool = False,
            variant: str | None = None, log=print) -> str:  # noqa: ANN001
    """Publish the built ``site`` of the checkout ``root`` to ``destination`` (a variant's book to
    ``variants/<variant>/`` of it). Refused, one line per reason, when the book is partial, unless
    ``allow_partial``. Returns what was done: ``"published"`` or ``"unchanged"``."""
    site, root = Path(site), Path(root)
    if not (site / "index.html").is_file():
        raise PublishError(f"{site / 'index.html'} does not exist: build the book first (`make book`)")
    reasons = refusals(site, root)
    if reasons and not allow_partial:
        raise PublishError("\n".join(f"not published: {reason} ({ALLOW_HINT})" for reason in reasons))
    record = dict(read_build_info(site) or {"commit": checkout_state(root)[0], "clean_checkout": False})
    record["partial"] = reasons
    subfolder = Path(VARIANTS_FOLDER, variant) if variant else Path()
    with tempfile.TemporaryDirectory(prefix="recjudge-publish-") as work:
        staged = stage(site, record, Path(work) / "site")
        if destination.folder is not None:
            outcome = _publish_folder(staged, destination.folder, subfolder, site)
        else:
            outcome = _publish_git(staged, root, destination, subfolder, record, Path(work))
    where = f"{destination}" + (f", {subfolder.as_posix()}/" if variant else "")
    log(f"[publish] {where}: " + ("already up to date, nothing changed" if outcome == "unchanged" else
                                  f"published the book built from {record['commit'][:12]}"
                                  + (" (partial)" if reasons else "")))
    return outcome


def _publish_folder(staged: Path, folder: Path, subfolder: Path, site: Path) -> str:
    if folder == site.resolve() or folder in site.resolve().parents or site.resolve() in folder.parents:
        raise PublishError(f"{folder}: publish to a folder outside the built site")
    if folder.is_dir() and any(folder.iterdir()) and not any((folder / name).exists()
                                                             for name in (BUILD_INFO, NOJEKYLL)):
        raise PublishError(f"{folder} holds files that are not a published book: give an empty or new folder")
    changes = mirror(staged, folder / subfolder, keep=() if subfolder.parts else (VARIANTS_FOLDER,))
    if not (folder / NOJEKYLL).exists():
        (folder / NOJEKYLL).write_bytes(b"")
        changes += 1
    return "published" if changes else "unchanged"


def _remote_tip(root: Path, destination: Destination) -> str | None:
    listed = _git(root, "ls-remote", "--heads", destination.remote, f"refs/heads/{destination.branch}", check=False)
    if listed.returncode != 0:
        raise PublishError(f"cannot read git remote {destination.remote!r}: {listed.stderr.strip()}")
    return listed.stdout.split()[0] if listed.stdout.strip() else None


def _publish_git(staged: Path, root: Path, destination: Destination, subfolder: Path, record: Mapping[str, Any],
                 work: Path) -> str:
    """Commit the branch's new tree with ghp-import (on the local branch, from the remote's tip) and push it;
    nothing is committed or pushed when the tree is the remote's."""
    remote, branch = destination.remote, destination.branch
    tip = _remote_tip(root, destination)
    tree = work / "branch"
    tree.mkdir()
    if tip:
        _git(root, "fetch", "--quiet", remote, f"+refs/heads/{branch}:refs/heads/{branch}")
        if remote in _git(root, "remote").stdout.split():  # ghp-import starts from <remote>/<branch>
            _git(root, "update-ref", f"refs/remotes/{remote}/{branch}", tip)
        archive = subprocess.run(["git", "archive", "--format=tar", tip], cwd=root, capture_output=True)
        if archive.returncode != 0:
            raise PublishError(f"`git archive {tip}` failed: {archive.stderr.decode(errors='replace').strip()}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as files:
            files.extractall(tree, filter="data")
    mirror(staged, tree / subfolder, keep=() if subfolder.parts else (VARIANTS_FOLDER,))
    (tree / NOJEKYLL).write_bytes(b"")
    before = _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).stdout.strip()
    what = f"variant {subfolder.name}" if subfolder.parts else "the book"
    message = f"Publish {what} built from {record['commit'][:12]} (profile {record.get('profile', '?')})"
    result = subprocess.run([sys.executable, "-m", "ghp_import", str(tree), "--branch", branch, "--remote", remote,
                             "--message", message], cwd=root, capture_output=True, text=True)
    after = _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).stdout.strip()
    if result.returncode != 0 or not after or after == before:
        raise PublishError(f"ghp-import did not commit to {branch} (exit {result.returncode}): "
                           f"{(result.stderr or result.stdout).strip()}")
    if tip and _tree(root, after) == _tree(root, tip):
        _git(root, "update-ref", f"refs/heads/{branch}", tip)
        return "unchanged"
    _git(root, "push", "--quiet", remote, f"refs/heads/{branch}:refs/heads/{branch}")
    return "published"


def _tree(root: Path, commit: str) -> str:
    return _git(root, "rev-parse", f"{commit}^{{tree}}").stdout.strip()


__all__ = ["BUILD_INFO", "DEFAULT_BRANCH", "Destination", "PublishError", "checkout_state", "data_phrase",
           "dataset_statuses", "landing_line", "landing_page", "mirror", "not_clean", "partial_pages", "publish",
           "read_build_info", "refusals", "stage", "write_build_info"]
