"""``recjudge book``: build the Jupyter Book (1.x) from the executed notebooks, offline, and check the result.

Steps, each timed:

1. **MathJax** (``recjudge.compendium.vendored_assets``): the book serves MathJax from its own ``_static/mathjax/``
   folder, vendored once from the npm package pinned in ``package-lock.json``; later builds need no network.
2. **Table of contents**: every run of the run plan must be a chapter of ``_toc.yml`` and every notebook chapter a
   run, and each executed notebook must exist (``recjudge run`` writes them).
3. **Build**: ``jupyter-book build . --warningiserror --keep-going`` (notebook execution is off in ``_config.yml``),
   unless the last build read exactly what this one would (``build_inputs``, kept in its record): it is reused.
4. **Checks** (``recjudge.compendium.html_checks``): ``_build/html/index.html`` exists and no page or stylesheet
   loads anything from another host; the build is recorded in ``_build/html/build-info.json`` (commit, profile,
   judges, each dataset's status).
5. **Publish** (``--publish DEST``, ``make publish``): ``recjudge.compendium.publish`` puts the built site online.

``recjudge book --variant NAME`` (or the run's ``--judge``/``--profile``) takes the same steps for a variant of the
book: its sources are staged by ``recjudge.compendium.variant_book`` and built into ``_build/variants/NAME/html``;
the committed book's ``_build/html`` is not touched.

The book's Sphinx extension (Thebe loader removed, bibliography styles, repository buttons, chapter labels) is
``recjudge.compendium.sphinx_extension``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from recjudge.compendium.html_checks import HTML_DIR, check_built_book
from recjudge.compendium.toc import NOTEBOOK_CHAPTERS, TOC_FILE, BookError, toc_files
from recjudge.compendium.vendored_assets import ensure_mathjax
from recjudge.paths import project_root

#: The width, in characters, shown code cells are formatted to (``ruff format --line-length``): the book's code box is
#: about 100 characters of DejaVu Sans Mono at a 1280 px window, and about 88 of the wider Menlo or Consolas, so code
#: formatted at 88 columns never wraps mid-call. The package's own code keeps its 120 columns (pyproject.toml).
SHOWN_CODE_COLUMNS = 88

# --------------------------------------------------------------------------------------------------------------------
# Table of contents against the run plan


def check_toc_against_runplan(root: Path) -> list[str]:
    """Problems between ``_toc.yml`` and the run plan: runs missing from the toc, notebook chapters that no run
    produces, and executed notebooks not written yet. Empty when all is consistent."""
    from recjudge.compendium.runplan import load_runplan

    runs = load_runplan(root=root)
    chapters = [entry.removesuffix(".ipynb") for entry in toc_files(root / TOC_FILE)]
    notebook_chapters = {entry for entry in chapters if entry.startswith(NOTEBOOK_CHAPTERS)}
    outputs = {f"{NOTEBOOK_CHAPTERS}{run.name}": run for run in runs}
    problems = [f"run {run.name!r} of runplan.yaml is not in {TOC_FILE} (add `- file: {key}`)"
                for key, run in outputs.items() if key not in notebook_chapters]
    problems += [f"{TOC_FILE} lists {entry} but no run of runplan.yaml is named "
                 f"{entry.removeprefix(NOTEBOOK_CHAPTERS)!r}"
                 for entry in sorted(notebook_chapters - set(outputs))]
    problems += [f"{run.output_path(root).relative_to(root)} does not exist: run `make run` (recjudge run) first"
                 for run in runs if not run.output_path(root).is_file()]
    return problems



# Build


def _jupyter_book_command() -> list[str]:
    script = Path(sys.executable).parent / "jupyter-book"
    if script.is_file():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if not found:
        raise BookError("jupyter-book is not installed: run `make setup` (pip install -e '.[book]')")
    return [found]


#: What a build reads in the folder it builds (the project root, or a variant's or a preview's staged sources): its
#: configuration, table of contents, prose and executed notebooks, result tables (and the markdown pages include)
#: and the source notebooks offered for download.
BUILD_SOURCES = ("_config.yml", "_toc.yml", "book", "results", "notebooks")
#: What it reads in the project besides: the vendored static files, the package's code (the book's Sphinx
#: extensions are part of it) and the locked environment (Jupyter Book, Sphinx and the themes).
BUILD_PROJECT_INPUTS = ("vendor", "src/recjudge", "requirements/lock.txt")


def build_inputs(root: Path, source: Path | None = None) -> str:
    """One sha256 over every file a build of ``source`` (default: the committed book, at ``root``) reads
    (``BUILD_SOURCES``, ``BUILD_PROJECT_INPUTS``): the build record keeps it, and a build whose inputs are unchanged
    is reused instead of built again. Hidden files and folders (a run's temporary files) and ``__pycache__`` are no
    input."""
    import hashlib

    from recjudge.compendium.runplan import FileHasher

    source = Path(source or root)
    hasher = FileHasher(source / "_build" / ".build-input-hashes.json")  # beside the build it describes
    digest = hashlib.sha256()
    places = [(f"source/{name}", source / name) for name in BUILD_SOURCES]
    places += [(f"project/{name}", Path(root) / name) for name in BUILD_PROJECT_INPUTS]
    for label, place in places:
        files = [place] if place.is_file() else sorted(
            path for path in place.rglob("*") if path.is_file() and not any(
                part.startswith(".") or part in ("__pycache__", "_build") for part in path.relative_to(place).parts))
        for path in files:
            digest.update(f"{label}/{path.relative_to(place).as_posix()}\0{hasher(path)}\n".encode())
    hasher.save()
    return digest.hexdigest()


def reusable_build(html_dir: Path, inputs: str, *, all_pages: bool = False) -> bool:
    """Whether the build in ``html_dir`` can stand as it is: it ended (its record exists: a build removes the record
    first, so a failed one has none) and read exactly ``inputs`` (``build_inputs``); never with ``--all``."""
    from recjudge.compendium.publish import read_build_info

    if all_pages or not (Path(html_dir) / "index.html").is_file():
        return False
    record = read_build_info(html_dir)
    return record is not None and record.get("inputs") == inputs


REUSED = "[book] reused the build in {where}: nothing it reads changed since it was built (--all builds it again)"


def build_html(root: Path, *, all_pages: bool = False, source: Path | None = None) -> None:
    """``jupyter-book build`` of ``source`` (default: the project root, the committed book) into
    ``<source>/_build/html``; a variant's book is built from its own staged source folder (``variant_book``)."""
    command = [*_jupyter_book_command(), "build", str(source or root), "--builder", "html", "--warningiserror",
               "--keep-going"]
    if all_pages:
        command.append("--all")
    result = subprocess.run(command, cwd=root)
    if result.returncode != 0:
        raise BookError(f"`jupyter-book build` failed (exit {result.returncode}): see the warnings above "
                        "(warnings are errors)")


@contextmanager
def _phase(name: str, timings: dict[str, float]) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = time.perf_counter() - started


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all", action="store_true", help="rebuild every page, not only the changed ones")
    parser.add_argument("--check-only", action="store_true",
                        help="only check an existing build (_build/html) for index.html and external resources")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="a preview of a few chapters (repeatable): execute only the runs NAME of runplan.yaml "
                             "(and those whose tables they read, each skipped when unchanged) and build "
                             "_build/preview/html, every other chapter marked 'Not run in this build'; not publishable")
    variant = parser.add_argument_group(
        "a variant's book", "build the book of a variant that `recjudge run --judge ... --profile ...` executed into "
        "variants/NAME/, as _build/variants/NAME/html (the committed book and results are not touched); name it, "
        "or give the same --judge/--profile as the run")
    variant.add_argument("--variant", metavar="NAME", help="a folder of variants/ (e.g. openai-gpt-4o-mini-smoke)")
    variant.add_argument("--judge", action="append", metavar="SPEC",
                         help="the run's --judge (repeatable): the variant is named from the judges and the profile")
    variant.add_argument("--profile", default=None, metavar="NAME", help="the run's --profile")
    variant.add_argument("--with-book-chapters", action="store_true",
                         help="first execute, from the committed store, the committed book's chapters the variant did "
                              "not run and this checkout has not executed (on a fresh clone, every one: the whole "
                              "book's time); without it they are marked 'Not run in this build'")
    publish = parser.add_argument_group(
        "publishing", "after the build (or, with --check-only, an existing build), publish the book for readers "
        "(recjudge.compendium.publish): a partial book (a Data needed box, a chapter not run, a checkout that is not "
        "clean, a build older than the last commit) is refused unless --allow-partial")
    publish.add_argument("--publish", metavar="DEST",
                         help="a git remote (e.g. origin; a URL or a repository's path) whose branch --branch gets the "
                              "site through ghp-import, or folder:PATH, a folder for any static host; a variant's book "
                              "goes to variants/NAME/ of it")
    publish.add_argument("--branch", default=None, metavar="NAME", help="the branch of a git DEST (default gh-pages)")
    publish.add_argument("--allow-partial", action="store_true", help="publish a partial book anyway (it says so)")
    parser.add_argument("--vendor-only", action="store_true",
                        help="only vendor the pinned MathJax into vendor/mathjax (the one step that needs the npm "
                             "registry; `make setup` runs it so that later builds work offline)")


def run_command(args: argparse.Namespace) -> int:
    root = project_root()
    timings: dict[str, float] = {}
    try:
        from recjudge.compendium.variant_book import VariantBookError, variant_from_arguments

        variant = variant_from_arguments(root, args.variant, args.judge or [], args.profile)
    except VariantBookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if getattr(args, "with_book_chapters", False) and variant is None:
        print("error: --with-book-chapters fills a variant's book (--variant NAME, or the run's --judge/--profile); "
              "`make run` executes the committed book's chapters", file=sys.stderr)
        return 2
    if getattr(args, "only", None):
        clashing = [option for option, given in (("--variant/--judge/--profile", variant is not None),
                                                 ("--publish", getattr(args, "publish", None)),
                                                 ("--check-only", args.check_only), ("--vendor-only", args.vendor_only))
                    if given]
        if clashing:
            print(f"error: --only builds a preview of a few chapters, which {clashing[0]} does not take",
                  file=sys.stderr)
            return 2
        return _build_preview(root, args.only, args, timings)
    destination = None
    if getattr(args, "publish", None) and not args.vendor_only:
        from recjudge.compendium.publish import ALLOW_HINT, Destination, PublishError, not_clean

        try:
            destination = Destination.parse(args.publish, args.branch)
        except PublishError as error:
            print(f"recjudge book: {error}", file=sys.stderr)
            return 2
        if not args.allow_partial and not args.check_only:  # refused before a long build rather than after it
            try:
                early = not_clean(root)
            except PublishError as error:
                early = str(error)
            if early:
                print(f"recjudge book: not published: {early} ({ALLOW_HINT})", file=sys.stderr)
                return 1
    if args.vendor_only:
        try:
            ensure_mathjax(root)
        except BookError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    html_dir = variant.html_dir(root) if variant is not None else root / HTML_DIR
    from recjudge.compendium.runplan.execution import _environment

    with _environment({} if args.check_only else _data_setting(html_dir)):
        if variant is not None:
            status = _build_variant(root, variant, args, timings)
            return status or _publish(root, html_dir, destination, args, variant.name)
        return _build_book(root, destination, args, timings)


def _data_setting(html_dir: Path) -> dict[str, str]:
    """The data setting a build is made with: this shell's ``RECJUDGE_DATA_MIRROR`` when it sets one, else the one
    the last build in ``html_dir`` was made with (its record keeps it), when that folder is still there, so that
    building again or publishing a finished build does not depend on the shell it is done in. Returns the variables
    to set for the build (none: the shell's), after saying what it chose."""
    from recjudge.compendium.publish import DATA_SETTING, read_build_info
    from recjudge.paths import DATA_MIRROR_ENV

    if os.environ.get(DATA_MIRROR_ENV, "").strip():
        return {}
    remembered = (read_build_info(html_dir) or {}).get(DATA_SETTING)
    if not isinstance(remembered, str) or not remembered:
        return {}
    if not Path(remembered).is_dir():
        print(f"[book] the last build read {DATA_MIRROR_ENV}={remembered}, which is no folder now: building with this "
              "shell's data setting (none)")
        return {}
    print(f"[book] this shell sets no {DATA_MIRROR_ENV}: building with the last build's, "
          f"{DATA_MIRROR_ENV}={remembered} (kept in its build record)")
    return {DATA_MIRROR_ENV: remembered}


def _chapter_states(root: Path) -> dict | None:
    """Each chapter of the committed book as ``runplan.executed_from`` finds it (which inputs it was executed from,
    which tables it wrote); None when the run plan cannot be read (the build then records no chapters)."""
    from recjudge.compendium.runplan import RunPlanError, executed_from, load_runplan

    try:
        return executed_from(load_runplan(root=root), root)
    except (RunPlanError, OSError, ValueError) as error:
        print(f"[book] the chapters' executions are not recorded ({error})", file=sys.stderr)
        return None


def _build_book(root: Path, destination, args: argparse.Namespace,  # noqa: ANN001
                timings: dict[str, float]) -> int:
    """The committed book: built into ``_build/html`` (or an unchanged build reused), checked, recorded, published
    when asked."""
    from recjudge.compendium.publish import edited_tables

    try:
        if not args.check_only:
            with _phase("mathjax", timings):
                ensure_mathjax(root)
            with _phase("toc", timings):
                problems = check_toc_against_runplan(root)
                if problems:
                    raise BookError("the table of contents does not match the run plan:\n  " + "\n  ".join(problems))
                chapters = _chapter_states(root)
                edited = edited_tables(chapters or {})
                if edited:
                    raise BookError(edited)
            with _phase("jupyter-book build", timings):
                inputs = build_inputs(root)
                if reusable_build(root / HTML_DIR, inputs, all_pages=args.all):
                    print(REUSED.format(where=HTML_DIR))
                else:
                    _forget_build(root / HTML_DIR)
                    build_html(root, all_pages=args.all)
        with _phase("checks", timings):
            check_built_book(root)
            if not args.check_only:
                _record_build(root, root / HTML_DIR, chapters=chapters, inputs=inputs)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    done = "checked the existing build" if args.check_only else "built"
    print(f"[book] {done} {root / HTML_DIR / 'index.html'} (self-contained: no external scripts or stylesheets)")
    return _publish(root, root / HTML_DIR, destination, args)


def _forget_build(html_dir: Path) -> None:
    """Remove the last build's record before a build: a build that fails leaves none, so its pages cannot be
    published as a whole book (``recjudge book --check-only --publish``)."""
    from recjudge.compendium.publish import BUILD_INFO

    (html_dir / BUILD_INFO).unlink(missing_ok=True)


def _record_build(root: Path, html_dir: Path, profile: str | None = None, judges: tuple[str, ...] = (),
                  variant: str | None = None, *, chapters: dict | None = None, inputs: str | None = None) -> None:
    """``build-info.json`` in the built site: the commit, profile, judges and data it was built from (each dataset's
    status, and the data setting: ``RECJUDGE_DATA_MIRROR``), for the committed book which sources each chapter was
    executed from and which tables it wrote (``chapters``: ``_chapter_states``; read when the book is published),
    and the digest of what the build read (``build_inputs``: an unchanged build is reused)."""
    from recjudge.compendium.publish import PublishError, dataset_statuses, write_build_info
    from recjudge.compendium.runplan import DEFAULT_PROFILE, RunPlanError

    try:
        write_build_info(html_dir, root, profile=profile or DEFAULT_PROFILE, judges=judges,
                         data=dataset_statuses(root), variant=variant, chapters=chapters, inputs=inputs)
    except (PublishError, RunPlanError, OSError, ValueError) as error:  # e.g. no git checkout: not publishable
        print(f"[book] no build record ({error})", file=sys.stderr)


def _publish(root: Path, html_dir: Path, destination, args: argparse.Namespace,  # noqa: ANN001
             variant: str | None = None) -> int:
    """Publish the built site when ``--publish`` asked for it (``recjudge.compendium.publish``)."""
    if destination is None:
        return 0
    from recjudge.compendium.publish import PublishError, publish

    try:
        publish(html_dir, root, destination, allow_partial=args.allow_partial, variant=variant)
    except PublishError as error:
        print("\n".join(f"recjudge book: {line}" for line in str(error).splitlines()), file=sys.stderr)
        return 1
    return 0


def _print_timings(timings: dict[str, float]) -> None:
    if timings:
        print("[book] timings: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items()))


def _build_variant(root: Path, variant, args: argparse.Namespace, timings: dict[str, float]) -> int:  # noqa: ANN001
    """The book of one variant (``recjudge.compendium.variant_book``): staged under ``_build/variants/<name>/``
    and built there, with the same steps and checks as the committed book."""
    from recjudge.compendium.claim_evidence import NOT_RUN_TITLE
    from recjudge.compendium.variant_book import (
        COMMITTED_CHAPTERS_COST,
        VariantBookError,
        chapters_to_run,
        committed_chapters_command,
        run_committed_chapters,
        stage_variant_book,
    )

    html = variant.html_dir(root)
    try:
        if not args.check_only:
            with _phase("mathjax", timings):
                ensure_mathjax(root)
            if getattr(args, "with_book_chapters", False):
                with _phase("committed chapters", timings):  # says what it costs before it starts
                    run_committed_chapters(root, variant)
            elif needed := chapters_to_run(root, variant):  # a fresh clone has executed none
                print(f"[book] {len(needed)} chapter(s) neither the variant nor this checkout has executed are "
                      f"marked '{NOT_RUN_TITLE}': {', '.join(needed)} (--with-book-chapters executes them "
                      f"first, {COMMITTED_CHAPTERS_COST}; or `{committed_chapters_command(needed)}`)")
            with _phase("stage", timings):
                source = stage_variant_book(root, variant)
            with _phase("jupyter-book build", timings):
                inputs = build_inputs(root, source)
                if reusable_build(html, inputs, all_pages=args.all):
                    print(REUSED.format(where=html.relative_to(root)))
                else:
                    _forget_build(html)
                    build_html(root, all_pages=args.all, source=source)
        with _phase("checks", timings):
            check_built_book(root, html, readers_book=True)
            if not args.check_only:
                _record_build(root, html, variant.profile, tuple(f"{judge.get('provider')}:{judge.get('model')}"
                                                                 for judge in variant.judges), variant.name,
                              inputs=inputs)
    except (BookError, VariantBookError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    done = "checked the existing build of" if args.check_only else "built"
    print(f"[book] {done} the book of variant {variant.name}: {html / 'index.html'} (self-contained)")
    return 0


def _build_preview(root: Path, names: list[str], args: argparse.Namespace, timings: dict[str, float]) -> int:
    """The book of a few chapters (``recjudge.compendium.preview_book``): the named runs and what they need are
    executed (each skipped when unchanged), the others marked not run; staged and built under ``_build/preview``."""
    from recjudge.compendium.claim_evidence import NOT_RUN_TITLE
    from recjudge.compendium.preview_book import PREVIEW_DIR, PreviewBookError, runs_needed, stage_preview_book
    from recjudge.compendium.runplan import RunFailedError, RunPlanError, execute_plan, load_runplan

    html = root / PREVIEW_DIR / "html"
    try:
        with _phase("mathjax", timings):
            ensure_mathjax(root)
        runs = load_runplan(root=root)
        with _phase("chapters", timings):
            execute_plan(runs_needed(runs, names), root)
        with _phase("stage", timings):
            source = stage_preview_book(root, runs, names)
        with _phase("jupyter-book build", timings):
            build_html(root, all_pages=args.all, source=source)
        with _phase("checks", timings):
            check_built_book(root, html, readers_book=True)
    except (BookError, PreviewBookError, RunPlanError, RunFailedError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        _print_timings(timings)
    print(f"[book] built a preview of {', '.join(names)}: {html / 'index.html'} (the other chapters are marked "
          f"'{NOT_RUN_TITLE}'; `recjudge book` builds the whole book)")
    return 0
