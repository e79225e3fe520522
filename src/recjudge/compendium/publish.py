"""Publishing the built book for readers: ``recjudge book --publish DEST`` (``make publish``).

A build of the book (``recjudge book``) leaves ``build-info.json`` in its site folder: the commit it was built from,
whether the checkout was clean, the profile, the judges and the status of each of the run plan's datasets (complete,
partial, sample, missing: ``recjudge.data.availability``). Publishing
takes a site folder and a destination, and refuses a partial book, one line per reason, unless told
``allow_partial``:

- a page with a "Data needed" box (a chapter whose data were absent: ``compendium.cell_selection``);
- a chapter not run (the at-a-glance page says "not run in this build" where a chapter's tables are missing);
- a checkout that is not clean (``git status`` lists a change or an untracked file);
- a build older than the last commit (``build-info.json`` names another commit, or a dirty checkout, or is absent:
  a build removes it first, so a failed build has none);
- a chapter executed from other sources than the build's commit, or that reads other data now than when it was
  executed (the record's ``chapters``: each one's input fingerprint at the build, the one its executed notebook came
  from and which inputs differ, ``runplan.executed_from``; the record also keeps the build's data setting,
  ``RECJUDGE_DATA_MIRROR``, which a later build from a shell without it uses, and which is not published);
- a results table that differs from what its chapter wrote when it ran (a table edited by hand: the record keeps
  each table's hash as written, and which differ at the build).

What it publishes is a copy of the site with ``.nojekyll`` (GitHub Pages serves ``_static/`` as it is), the
``build-info.json`` (its ``gaps``: what, if anything, makes the book partial, one line each; its ``data``: each
dataset's status, where ``partial`` means a partial copy of that dataset) and, on the landing page, one line saying
"built from commit X with the data the data tour lists (2 partial: ...)", each dataset's status as the data layer
reports it. The committed sources are not touched: the line and the record exist only in the published copy and the
build folder.

Destinations: a git remote and branch (``origin`` and ``gh-pages`` by default), committed with ``ghp-import`` and
pushed; or ``folder:PATH``, a folder for any static host, mirrored. Both are validated in one place,
:meth:`Destination.parse`, before any git command runs (a remote is never an option nor a remote helper; a branch is
a name ``git check-ref-format --branch`` accepts, not ``HEAD``). Only a published book of this project is replaced: a
branch or folder whose ``build-info.json`` names the project, or a new branch, or an empty or new folder; ghp-import
commits on a scratch branch, and a local branch of the published one is created or fast-forwarded, never rewritten.
A variant's book goes to ``variants/<NAME>/`` of the same destination, beside the book, and publishing the book keeps
``variants/``; a symbolic link on the way there is refused (writing through it would put the book elsewhere), and one
inside the book's folder is replaced, never followed. A folder being published into holds ``.recjudge-publishing``
until the publication ends, so one stopped half-way is completed by the next. Publishing an unchanged book again
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
#: What a folder holds while a book is being published into it (removed when done): a publication stopped half-way
#: leaves a folder that the next one recognises as this project's and completes.
PUBLISHING = ".recjudge-publishing"
#: Where a variant's book goes in a destination: ``variants/<NAME>/``.
VARIANTS_FOLDER = "variants"
DEFAULT_REMOTE = "origin"
#: The published build record's field listing what makes the book partial, one line each (empty: a full book).
#: A dataset's status, in the field ``data``, has words of its own (``partial``: a partial copy of that dataset).
GAPS = "gaps"
#: The build record's field holding the data setting the build was made with (``RECJUDGE_DATA_MIRROR``, or None):
#: a later build or publication from a shell that sets none uses it (``book``); it is not published.
DATA_SETTING = "data_mirror"
#: What a build record names as its project: a destination whose record says so holds this project's book, the only
#: thing publishing may replace.
PROJECT = "recjudge"
DEFAULT_BRANCH = "gh-pages"
FOLDER_PREFIX = "folder:"
ALLOW_HINT = "--allow-partial publishes it anyway"

_DATA_NEEDED = re.compile(r'class="admonition-title"[^>]*>\s*Data needed', re.IGNORECASE)
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
    return commit, not changed_paths(root)


def changed_paths(root: Path) -> list[str]:
    """The paths ``git status`` lists in the checkout ``root``: changed, staged, deleted or untracked (not ignored)."""
    listed = _git(root, "status", "--porcelain", "-z").stdout
    paths, entries = [], iter(listed.split("\0"))
    for entry in entries:
        if entry:
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its source path follows, and is not listed again
                next(entries, None)
    return paths


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
                     data: Mapping[str, str], variant: str | None = None,
                     chapters: Mapping[str, Mapping[str, str | None]] | None = None,
                     inputs: str | None = None) -> dict[str, Any]:
    """Record in ``site/build-info.json`` what a build was made from; returns the record. ``data``: each dataset's
    status (``dataset_statuses``). ``chapters``: each chapter's input fingerprint at the build and the one its
    executed notebook was made from (``runplan.executed_from``), which publishing compares. ``inputs``: the digest
    of every file the build read (``book.build_inputs``)."""
    from recjudge.paths import data_mirror

    commit, clean = checkout_state(root)
    mirror = data_mirror()
    record = {"project": PROJECT, "commit": commit, "clean_checkout": clean, "profile": profile, "variant": variant,
              "judges": list(judges), "data": dict(sorted(data.items())),
              DATA_SETTING: str(mirror) if mirror is not None else None}
    if chapters is not None:
        record["chapters"] = {name: dict(state) for name, state in sorted(chapters.items())}
    if inputs is not None:
        record["inputs"] = inputs
    (Path(site) / BUILD_INFO).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def read_build_info(site: Path) -> dict[str, Any] | None:
    try:
        return parse_build_info((Path(site) / BUILD_INFO).read_text(encoding="utf-8"))
    except OSError:
        return None


def parse_build_info(text: str) -> dict[str, Any] | None:
    """The build record in ``text``, or None when it is not one."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) and isinstance(record.get("commit"), str) else None


def is_this_book(record: Mapping[str, Any] | None) -> bool:
    """Whether a destination's build record says it holds this project's book (records written before the record
    named its project are recognised by their fields)."""
    if not record:
        return False
    if "project" in record:
        return record["project"] == PROJECT
    return {"commit", "profile", "judges", "data"} <= set(record)


# ---------------------------------------------------------------------------------------------------- the refusals
def partial_pages(site: Path) -> list[str]:
    """One line per kind of gap in the built pages: "Data needed" boxes and chapters not run."""
    from recjudge.compendium.claim_evidence import NOT_RUN  # the registry's word, read where it is needed

    # A table cell or status that says so (the at-a-glance page); the page's prose that explains the word is not a
    # match.
    not_run_mark = re.compile(r">\s*" + re.escape(NOT_RUN), re.IGNORECASE)
    site = Path(site)
    boxes, not_run = [], []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        name = page.relative_to(site).as_posix()
        if _DATA_NEEDED.search(text):
            boxes.append(name)
        if not_run_mark.search(text):
            not_run.append(name)
    reasons = []
    if boxes:
        reasons.append(f"a partial book: {len(boxes)} page(s) open with a Data needed box ({_some(boxes)})")
    if not_run:
        reasons.append(f"a partial book: {_some(not_run)} shows chapters {NOT_RUN}")
    return reasons


def _some(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def not_clean_reason(paths: list[str]) -> str:
    """The refusal of a checkout whose ``git status`` lists ``paths``."""
    return f"the checkout is not clean (`git status` lists {_some(paths)}): commit or stash them, then rebuild"


def stale_chapters(record: Mapping[str, Any]) -> list[str]:
    """One line per way the build's chapters are stale (its record's ``chapters``, ``runplan.executed_from``), or
    one when the record does not say: chapters that read other data than when they were executed (the only input
    that differs is their datasets' files: the data setting, not the sources), chapters executed from other sources
    than the build's commit (naming the inputs that differ), and result tables that differ from what their chapter
    wrote (a table edited by hand: its page and its download would disagree)."""
    chapters = record.get("chapters")
    if not isinstance(chapters, dict):
        return ["the build record does not say which sources its chapters were executed from: rebuild it "
                "(`make book`)"]
    other_data: list[str] = []
    other_sources: dict[str, list[str]] = {}
    unrecorded: list[str] = []
    for name, state in sorted(chapters.items()):
        state = state if isinstance(state, dict) else {}
        if not state.get("executed") or state.get("executed") != state.get("fingerprint"):
            differs = [str(part) for part in state.get("differs") or []]
            if differs == ["datasets"]:
                other_data.append(name)
            else:
                other_sources[name] = differs
        if state.get("tables_changed") is None:
            unrecorded.append(name)
    reasons = []
    if other_data:
        setting = record.get("data_mirror")
        read = (f"this build's RECJUDGE_DATA_MIRROR={setting}" if setting else
                "this build was made without RECJUDGE_DATA_MIRROR" if "data_mirror" in record else
                "RECJUDGE_DATA_MIRROR")
        reasons.append(f"a stale build: chapter(s) {_some(other_data)} read other data now than when they were "
                       f"executed (the sources are the same; their datasets' files differ, so the data setting, "
                       f"{read}, is not the one they ran with): build with that setting, or run them again with this "
                       "one (`make run`), then rebuild (`make book`)")
    if other_sources:
        differing = sorted({part for parts in other_sources.values() for part in parts})
        reasons.append(f"a stale build: chapter(s) {_some(list(other_sources))} were not executed from the sources of "
                       f"commit {str(record['commit'])[:12]}" + (f" (what differs: {', '.join(differing)})"
                                                                 if differing else "")
                       + ": run them (`make run`), then rebuild (`make book`)")
    if unrecorded:
        reasons.append(f"chapter(s) {_some(unrecorded)} recorded no hashes of the tables they wrote (executed before "
                       "runs recorded them): run them (`make run`), then rebuild (`make book`)")
    edited = edited_tables(chapters)
    return reasons + ([edited] if edited else [])


def edited_tables(chapters: Mapping[str, Any]) -> str | None:
    """The line that names the result tables differing from what their chapter wrote when it ran (``chapters``: a
    build record's, ``runplan.executed_from``), or None: a table edited by hand is not what the chapter computed,
    and its page (the chapter's numbers) and its download (the table) would disagree."""
    edited = [f"results/{name}/{table}" for name, state in sorted(chapters.items()) if isinstance(state, dict)
              for table in (state.get("tables_changed") or [])]
    if not edited:
        return None
    return (f"{_some(edited)} differ(s) from what its chapter wrote when it ran (edited by hand?): the page shows the "
            "chapter's numbers, the download would not; `make run` executes the chapter again and writes its tables, "
            "then rebuild (`make book`)")


def not_clean(root: Path) -> str | None:
    """Why the checkout ``root`` is not clean (naming what ``git status`` lists), or None when it is."""
    paths = changed_paths(root)
    return not_clean_reason(paths) if paths else None


def refusals(site: Path, root: Path) -> list[str]:
    """Every reason not to publish ``site`` from the checkout ``root``, one line each (empty: a full book)."""
    commit = checkout_state(root)[0]
    dirty = not_clean(root)
    reasons = [dirty] if dirty else []
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
    if record is not None and not record.get("variant"):  # a variant's chapters are the reader's judge's runs
        reasons += stale_chapters(record)
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
    gaps = record.get(GAPS) or []
    partial = " A partial book: " + html.escape("; ".join(gaps)) + "." if gaps else ""
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


def scrub_sources(target: Path, root: Path | None = None) -> None:
    """The chapters' sources a reader downloads (``_sources/``) without what records their execution on this
    machine: papermill's and the kernel's timings and file names (``runplan.executed_content``) and the machine's
    folders (the project's, the Python environment's and the home folder) in any text."""
    from recjudge.compendium.runplan import executed_content

    folders = {str(Path(sys.prefix).resolve()): "<python>", str(Path(sys.prefix)): "<python>",
               str(Path.home()): "~"}
    if root is not None:
        folders.update({str(Path(root).resolve()): ".", str(Path(root)): "."})
    ordered = sorted((folder for folder in folders if len(folder) > 1), key=len, reverse=True)
    for path in sorted(Path(target).glob("_sources/**/*")):
        if not path.is_file() or path.suffix not in (".ipynb", ".md", ".txt", ".py"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = executed_content(path)
            except Exception:  # noqa: BLE001 (not a notebook nbformat reads: its text is scrubbed as it is)
                pass
        for folder in ordered:
            text = text.replace(folder, folders[folder])
        path.write_text(text, encoding="utf-8")


def published_source_traces(staged: Path, root: Path) -> list[str]:
    """What the staged copy's chapter sources (``_sources/``, scrubbed by ``scrub_sources``) still show of the
    machine that built them: a folder of it, or a warning printed into a chapter (``html_checks.machine_traces``)."""
    from recjudge.compendium.html_checks import machine_folders, machine_traces

    files = [path for path in Path(staged).glob("_sources/**/*") if path.is_file()]
    return machine_traces(files, Path(staged), machine_folders(root))


def stage(site: Path, record: Mapping[str, Any], target: Path, root: Path | None = None) -> Path:
    """A copy of ``site`` in ``target`` with ``.nojekyll``, ``build-info.json`` (``record``) and the landing
    page's build line, its sources scrubbed of this machine's folders and timings (``scrub_sources``); returns
    ``target``."""
    site, target = Path(site), Path(target)
    if not (site / "index.html").is_file():
        raise PublishError(f"{site / 'index.html'} does not exist: build the book first (`make book`)")
    shutil.copytree(site, target, symlinks=False)
    scrub_sources(target, root)
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
# A remote helper (``ext::sh -c ...``, ``fd::``) runs or reaches what its text names: never a destination here.
_REMOTE_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def unprintable_characters(text: str) -> list[str]:
    """The characters of ``text`` that print as nothing or move the text around them, named ("U+202E RIGHT-TO-LEFT
    OVERRIDE"): a control character (a newline would add lines to ghp-import's fast-import stream), a format
    character such as the right-to-left override (a branch would read as another name) or a zero-width space, a
    line or paragraph separator."""
    import unicodedata

    return [f"U+{ord(character):04X} " + unicodedata.name(character, "(a control character)")
            for character in dict.fromkeys(text) if not character.isprintable()]


def check_branch_name(branch: str) -> str:
    """``branch`` when git accepts it as a new branch's name (``git check-ref-format --branch``) and it is not
    ``HEAD``; PublishError otherwise. Checked before any git call that reads or writes a repository: a name with a
    newline would add lines to ghp-import's fast-import stream, one starting with ``-`` would be an option."""
    hidden = unprintable_characters(branch)
    if hidden:
        raise PublishError(f"--branch {branch!r} holds {', '.join(hidden)}, which a reader of the branch's name does "
                           "not see: give a name of visible characters (e.g. gh-pages)")
    if not branch or branch.startswith("-") or "@{" in branch or branch in ("HEAD", "@") \
            or branch.startswith("refs/"):
        raise PublishError(f"--branch {branch!r} is not a branch name git accepts (e.g. gh-pages)")
    checked = subprocess.run(["git", "check-ref-format", "--branch", branch], capture_output=True, text=True,
                             cwd=tempfile.gettempdir())
    if checked.returncode != 0 or checked.stdout.strip() != branch:
        raise PublishError(f"--branch {branch!r} is not a branch name git accepts (e.g. gh-pages)")
    return branch


def check_remote(remote: str) -> str:
    """``remote`` when it is a git remote's name, a URL or a repository's path, never an option (``--upload-pack=``)
    nor a remote helper (``ext::``); PublishError otherwise."""
    if not remote or remote.startswith("-") or unprintable_characters(remote) or _REMOTE_HELPER.match(remote):
        raise PublishError(f"--publish {remote!r}: give a git remote (a name of `git remote`, a URL or a "
                           "repository's path) or folder:PATH")
    return remote


@dataclass(frozen=True)
class Destination:
    """A git remote (a name of ``git remote``, a URL or a repository's path) and branch, or a folder. Made only by
    :meth:`parse`, which validates both before any git call."""

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
            if branch is not None:
                raise PublishError("--branch is for a git remote, not for a folder")
            folder = Path(path).expanduser().resolve()
            if folder.exists() and not folder.is_dir():
                raise PublishError(f"--publish {text!r}: {folder} is a file, not a folder")
            return cls(folder=folder)
        if not text:
            raise PublishError("--publish: give a git remote (e.g. origin) or folder:PATH")
        return cls(remote=check_remote(text), branch=check_branch_name(DEFAULT_BRANCH if branch is None else branch))

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
    record.pop(DATA_SETTING, None)  # a folder of the machine that built it; the statuses in "data" say what it held
    record[GAPS] = reasons
    record["project"] = PROJECT  # what lets the next publication replace this one (and nothing else)
    subfolder = Path(VARIANTS_FOLDER, variant) if variant else Path()
    with tempfile.TemporaryDirectory(prefix="recjudge-publish-") as work:
        staged = stage(site, record, Path(work) / "site", root)
        traces = published_source_traces(staged, root)
        if traces:  # never published, partial or not: it belongs to the machine, not to the book
            raise PublishError("not published: the chapters' sources would publish what belongs to this machine: "
                               + "; ".join(traces[:5]) + (f" and {len(traces) - 5} more" if len(traces) > 5 else ""))
        if destination.folder is not None:
            outcome = _publish_folder(staged, destination.folder, subfolder, site)
        else:
            outcome = _publish_git(staged, root, destination, subfolder, record, Path(work))
    where = f"{destination}" + (f", {subfolder.as_posix()}/" if variant else "")
    log(f"[publish] {where}: " + ("already up to date, nothing changed" if outcome == "unchanged" else
                                  f"published the book built from {record['commit'][:12]}"
                                  + (" (partial)" if reasons else "")))
    return outcome


def _holds_this_book(folder: Path) -> bool:
    """Whether publishing may replace what ``folder`` holds: nothing, or this project's book (its
    ``build-info.json`` says so, or the mark of a publication stopped half-way, ``PUBLISHING``), or only variants'
    books of it (``variants/<NAME>/``, with ``.nojekyll``)."""
    if not folder.exists() or not any(folder.iterdir()):
        return True
    if is_this_book(read_build_info(folder)) or _publishing_here(folder):
        return True
    names = {path.name for path in folder.iterdir()}
    variants = folder / VARIANTS_FOLDER
    return (names <= {NOJEKYLL, VARIANTS_FOLDER} and (not variants.exists() or variants.is_dir())
            and all(path.is_dir() and _holds_this_book(path) for path in (variants.iterdir() if variants.is_dir()
                                                                          else ())))


def _publishing_here(folder: Path) -> bool:
    try:
        return json.loads((folder / PUBLISHING).read_text(encoding="utf-8")).get("project") == PROJECT
    except (OSError, ValueError, AttributeError):
        return False


def _symlinks_on_the_way(folder: Path, subfolder: Path) -> list[Path]:
    """The folders between ``folder`` and ``folder/subfolder`` (a variant's ``variants/<NAME>``) that are symbolic
    links: writing through one would put the book outside the destination."""
    return [folder.joinpath(*subfolder.parts[:depth]) for depth in range(1, len(subfolder.parts) + 1)
            if folder.joinpath(*subfolder.parts[:depth]).is_symlink()]


def _publish_folder(staged: Path, folder: Path, subfolder: Path, site: Path) -> str:
    if folder == site.resolve() or folder in site.resolve().parents or site.resolve() in folder.parents:
        raise PublishError(f"{folder}: publish to a folder outside the built site")
    if folder.exists() and not folder.is_dir():
        raise PublishError(f"{folder} is a file, not a folder: give an empty or new folder")
    for link in _symlinks_on_the_way(folder, subfolder):
        raise PublishError(f"{link} is a symbolic link (to {os.readlink(link)}): the book is written only inside "
                           f"{folder}; replace the link by a folder, or remove it")
    for where in dict.fromkeys((folder, folder / subfolder)):
        if not _holds_this_book(where):
            raise PublishError(f"{where} holds files that are not a published book of {PROJECT} (its {BUILD_INFO} "
                               "would say so): give an empty or new folder")
    target = folder / subfolder
    try:
        target.mkdir(parents=True, exist_ok=True)
        # Marked first, unmarked last: a publication stopped in between leaves a folder the next one completes.
        (target / PUBLISHING).write_text(json.dumps({"project": PROJECT}) + "\n", encoding="utf-8")
        changes = mirror(staged, target, keep=(PUBLISHING,) if subfolder.parts else (VARIANTS_FOLDER, PUBLISHING))
        if not (folder / NOJEKYLL).exists():
            (folder / NOJEKYLL).write_bytes(b"")
            changes += 1
        (target / PUBLISHING).unlink()
    except OSError as error:
        raise PublishError(f"cannot write the book into {folder}: {error.strerror or error} "
                           f"({error.filename or folder})") from None
    return "published" if changes else "unchanged"


def _remote_tip(root: Path, destination: Destination) -> str | None:
    listed = _git(root, "ls-remote", "--heads", "--", destination.remote, f"refs/heads/{destination.branch}",
                  check=False)
    if listed.returncode != 0:
        raise PublishError(f"cannot read git remote {destination.remote!r}: {listed.stderr.strip()}")
    return listed.stdout.split()[0] if listed.stdout.strip() else None


def _commit_holds_this_book(root: Path, commit: str) -> bool:
    """Whether ``commit``'s tree is a published book of this project: its ``build-info.json``, or a variant's
    (``variants/<NAME>/build-info.json``), says so."""
    names = _git(root, "ls-tree", "-r", "--name-only", commit, check=False).stdout.splitlines()
    records = [name for name in names if name == BUILD_INFO
               or (name.startswith(f"{VARIANTS_FOLDER}/") and name.count("/") == 2 and name.endswith(f"/{BUILD_INFO}"))]
    return any(is_this_book(parse_build_info(_git(root, "show", f"{commit}:{name}", check=False).stdout))
               for name in records)


def _local_branch(root: Path, branch: str) -> str | None:
    return _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}",
                check=False).stdout.strip() or None


def _follow(root: Path, branch: str, commit: str) -> None:
    """Let the local branch ``branch`` follow the published ``commit``: created when absent, moved when that is a
    fast-forward and the branch is not checked out; otherwise left as it is (nothing of the user's is rewritten)."""
    local = _local_branch(root, branch)
    if local == commit:
        return
    checked_out = _git(root, "symbolic-ref", "--quiet", "HEAD", check=False).stdout.strip() == f"refs/heads/{branch}"
    if local is None:
        _git(root, "update-ref", f"refs/heads/{branch}", commit, "")
    elif not checked_out and _git(root, "merge-base", "--is-ancestor", local, commit, check=False).returncode == 0:
        _git(root, "update-ref", f"refs/heads/{branch}", commit, local)


def _publish_git(staged: Path, root: Path, destination: Destination, subfolder: Path, record: Mapping[str, Any],
                 work: Path) -> str:
    """Commit the branch's new tree with ghp-import on top of the remote's tip and push it (a fast-forward);
    nothing is committed or pushed when the tree is the remote's. A branch that holds anything but a published book
    of this project is refused, and ghp-import writes to a scratch branch, never to one of the user's."""
    remote, branch = destination.remote, destination.branch
    tip = _remote_tip(root, destination)
    if tip:  # the tip's objects, without writing any branch
        _git(root, "fetch", "--quiet", "--no-write-fetch-head", "--", remote, f"refs/heads/{branch}")
        if not _commit_holds_this_book(root, tip):
            raise PublishError(f"branch {branch} of {remote} holds no published book of {PROJECT} (no {BUILD_INFO} "
                               "of it): publishing would replace its files; give a new branch or the book's own")
    local = _local_branch(root, branch)
    if local and local != tip and not _commit_holds_this_book(root, local):
        raise PublishError(f"the local branch {branch} holds no published book of {PROJECT} (no {BUILD_INFO} of "
                           "it): publishing would replace its work; give a new branch or the book's own")
    tree = work / "branch"
    tree.mkdir()
    if tip:
        archive = subprocess.run(["git", "archive", "--format=tar", tip], cwd=root, capture_output=True)
        if archive.returncode != 0:
            raise PublishError(f"`git archive {tip}` failed: {archive.stderr.decode(errors='replace').strip()}")
        try:
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as files:
                files.extractall(tree, filter="data")
        except tarfile.FilterError as error:  # e.g. a symlink leading out of the branch's tree
            raise PublishError(f"branch {branch} of {remote} holds {error.tarinfo.name!r}, which git archive "
                               f"cannot give back safely ({error}): remove it from the branch") from None
    for link in _symlinks_on_the_way(tree, subfolder):
        raise PublishError(f"{link.relative_to(tree).as_posix()} on branch {branch} of {remote} is a symbolic link "
                           f"(to {os.readlink(link)}): the variant's book is written only into a folder of its own; "
                           "replace the link by a folder, or remove it")
    mirror(staged, tree / subfolder, keep=() if subfolder.parts else (VARIANTS_FOLDER,))
    (tree / NOJEKYLL).write_bytes(b"")
    what = f"variant {subfolder.name}" if subfolder.parts else "the book"
    message = f"Publish {what} built from {record['commit'][:12]} (profile {record.get('profile', '?')})"
    # ghp-import commits to refs/heads/<its branch> and first resets it to <remote>/<its branch>: a scratch branch
    # that starts at the remote's tip keeps it away from every branch of the user's.
    scratch = f"recjudge-publish-{os.getpid()}-{Path(work).name.rsplit('-', 1)[-1]}"
    try:
        if tip:
            _git(root, "update-ref", f"refs/heads/{scratch}", tip, "")
        result = subprocess.run([sys.executable, "-m", "ghp_import", str(tree), "--branch", scratch,
                                 "--remote", remote, "--message", message], cwd=root, capture_output=True, text=True)
        after = _local_branch(root, scratch)
    finally:
        _git(root, "update-ref", "-d", f"refs/heads/{scratch}", check=False)
    if result.returncode != 0 or not after or after == tip:
        raise PublishError(f"ghp-import did not commit the book (exit {result.returncode}): "
                           f"{(result.stderr or result.stdout).strip()}")
    if tip and _tree(root, after) == _tree(root, tip):
        _follow(root, branch, tip)
        return "unchanged"
    _git(root, "push", "--quiet", "--", remote, f"{after}:refs/heads/{branch}")
    if remote in _git(root, "remote").stdout.split():
        _git(root, "update-ref", f"refs/remotes/{remote}/{branch}", after)
    _follow(root, branch, after)
    return "published"


def _tree(root: Path, commit: str) -> str:
    return _git(root, "rev-parse", f"{commit}^{{tree}}").stdout.strip()


__all__ = ["BUILD_INFO", "DEFAULT_BRANCH", "Destination", "PublishError", "checkout_state", "data_phrase",
           "dataset_statuses", "edited_tables", "landing_line", "landing_page", "mirror", "not_clean", "partial_pages",
           "publish", "read_build_info", "refusals", "stage", "unprintable_characters", "write_build_info"]
