"""A variant's own book: ``recjudge book --variant NAME`` builds ``_build/variants/<NAME>/html`` from what
``recjudge run --judge ... --profile ...`` executed into ``variants/<NAME>/`` (``compendium.variants``).

The committed book is built from the project root; a variant's book from a staged copy of its sources in
``_build/variants/<NAME>/source/`` (git-ignored, like everything under ``_build/``), with the same ``_config.yml``,
``_toc.yml`` and prose, and:

- ``book/notebooks/<run>.ipynb``: the variant's executed notebook where the variant ran the chapter, marked with the
  judges and profile that made it; otherwise the committed book's executed notebook (``book/notebooks/``), marked
  as not run in the variant; a chapter neither has (every chapter the variant did not run, on a fresh clone, since
  ``book/notebooks/`` is built, not committed) is a page holding its title and a "Not run in this build" box, as in
  a preview (``preview_book``). Nothing is executed to fill it unless asked: ``recjudge book --variant NAME
  --with-book-chapters`` executes those chapters from the committed store first (``run_committed_chapters``),
  saying what that costs before it starts;
- ``results/<chapter>/``: the variant's tables of the chapters it ran, the committed ones of the others (and the
  committed tables a chapter's variant run did not write, which the pages reading the committed book link to), so
  every "Full table" link of a page reaches the CSV its numbers came from;
- ``book/intro.md``: opens with a box saying which judges and profile built this book (``variant.json``);
- ``notebooks/``: the source notebooks, which the chapters offer for download.

``recjudge.compendium.book`` builds the staged folder with the committed book's steps and checks; its HTML is at
``_build/variants/<NAME>/html`` (a link to the staged folder's ``_build/html``). Nothing tracked is written: the
committed ``results/``, ``book/`` and ``_build/html`` are read, never written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from recjudge.compendium.claim_evidence import NOT_RUN_TITLE
from recjudge.compendium.pages import myst_text
from recjudge.compendium.toc import TOC_FILE, chapter_title, toc_files
from recjudge.compendium.variants import VARIANTS_DIR, variant_folder, variant_name
from recjudge.llm.judge_spec import JudgeSpec, JudgeSpecError

VARIANT_FILE = "variant.json"
BUILD_DIR = Path("_build") / "variants"
NOTEBOOKS = Path("book") / "notebooks"
#: The id of the cell that marks a chapter's origin (a fixed id: the staged notebook is rewritten only when it
#: changes, so Jupyter Book rebuilds only changed pages).
NOTE_CELL_ID = "variant-origin"
#: The id of an empty page's title cell, fixed for the same reason.
TITLE_CELL_ID = "chapter-title"


class VariantBookError(ValueError):
    """A variant's book cannot be staged; the message names the option, folder or file."""


@dataclass(frozen=True)
class Variant:
    """What ``variants/<name>/variant.json`` says produced the variant."""

    name: str
    folder: Path
    profile: str
    judges: tuple[dict[str, Any], ...]
    left_out: tuple[str, ...] = ()

    def judges_text(self) -> str:
        """``judges **openai:gpt-4o-mini**`` (each judge's provider and model), or the chapters' own judges."""
        if not self.judges:
            return "the chapters' own judges"
        return "judges **" + ", ".join(myst_text(f"{judge.get('provider')}:{judge.get('model')}")
                                       for judge in self.judges) + "**"

    def build_dir(self, root: Path) -> Path:
        return Path(root) / BUILD_DIR / self.name

    def source_dir(self, root: Path) -> Path:
        return self.build_dir(root) / "source"

    def html_dir(self, root: Path) -> Path:
        return self.build_dir(root) / "html"


def known_variants(root: Path) -> list[str]:
    folder = Path(root) / VARIANTS_DIR
    return sorted(path.name for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []


def load_variant(root: Path, name: str) -> Variant:
    """The variant ``variants/<name>/`` as its ``variant.json`` describes it; a clear error for an unknown name
    (listing the known ones) and for a folder without (or with a damaged) ``variant.json``."""
    root = Path(root)
    if not name or name in (".", "..") or Path(name).name != name:
        raise VariantBookError(f"--variant {name!r}: a variant is named by its folder under {VARIANTS_DIR}/")
    folder = variant_folder(root, name)
    if not folder.is_dir():
        known = known_variants(root)
        listing = (f"known variants: {', '.join(known)}" if known else
                   "there is none yet: `recjudge run --judge SPEC --profile P` makes one")
        raise VariantBookError(f"--variant {name!r}: no folder {VARIANTS_DIR}/{name}/ ({listing})")
    path = folder / VARIANT_FILE
    if not path.is_file():
        raise VariantBookError(f"{VARIANTS_DIR}/{name}/ has no {VARIANT_FILE}, so what built it is unknown: "
                               "`recjudge run` writes it before executing anything; run it again with the variant's "
                               "--judge and --profile")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise VariantBookError(f"{path}: not JSON ({error})") from None
    if not isinstance(record, dict) or not isinstance(record.get("profile"), str):
        raise VariantBookError(f"{path}: field 'profile' missing or not a string")
    judges = record.get("judges", [])
    if not isinstance(judges, list) or not all(isinstance(judge, dict) for judge in judges):
        raise VariantBookError(f"{path}: field 'judges' must be a list of judge mappings")
    for number, judge in enumerate(judges, start=1):
        for field_name in ("provider", "model"):
            if not isinstance(judge.get(field_name), str):
                raise VariantBookError(f"{path}: field 'judges', judge {number}: '{field_name}' missing or not a "
                                       "string")
        try:  # a shared variant's record enters here: its names are checked as a judge's are
            JudgeSpec.from_parameter(judge)
        except JudgeSpecError as error:
            raise VariantBookError(f"{path}: field 'judges', judge {number}: {error}") from None
    for field_name in ("runs", "llm_runs_without_judges_parameter"):
        value = record.get(field_name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise VariantBookError(f"{path}: field '{field_name}' must be a list of run names, got "
                                   f"{json.dumps(value)[:60]}")
    left_out = record.get("llm_runs_without_judges_parameter", [])
    return Variant(name, folder, record["profile"], tuple(judges), tuple(left_out))


def variant_from_arguments(root: Path, name: str | None, judges: Sequence[str], profile: str | None) -> Variant | None:
    """The variant ``recjudge book`` is asked for: by ``--variant NAME``, or by the run's ``--judge``/``--profile``
    (named as ``recjudge run`` names it); None for the committed book (no option, or ``--profile default`` alone)."""
    from recjudge.compendium.runplan import DEFAULT_PROFILE
    from recjudge.llm.judge_spec import JudgeSpecError, parse_judges

    if name is not None:
        if judges or profile is not None:
            raise VariantBookError("--variant names the variant; give it without --judge/--profile")
        return load_variant(root, name)
    profile = profile or DEFAULT_PROFILE
    if not judges and profile == DEFAULT_PROFILE:
        return None
    try:
        specs = parse_judges(judges)
    except JudgeSpecError as error:
        raise VariantBookError(str(error)) from None
    return load_variant(root, variant_name(specs, profile))


# --------------------------------------------------------------------------------------------------------- staging
def intro_note(variant: Variant, *, at_a_glance: bool = True) -> str:
    """The box that opens the variant's book (``at_a_glance``: the variant ran the at-a-glance page, which then
    shows its numbers beside the book's)."""
    left_out = (" Chapters that ask an LLM but do not take a reader's judge yet "
                f"({myst_text(', '.join(variant.left_out))}) are the committed book's." if variant.left_out else "")
    return (f":::{{admonition}} This is variant {myst_text(variant.name)}, not the committed book\n:class: important\n"
            f"Built by `recjudge run` with {variant.judges_text()} and profile **{myst_text(variant.profile)}**. "
            "Each chapter says whether this variant ran it; a chapter it did not run is the committed book's "
            "(the book's own judges, profile default), or, where this checkout has not executed it, a page marked "
            f"\"{NOT_RUN_TITLE}\"."
            + (" {doc}`notebooks/at_a_glance` puts the papers' headline numbers, the committed book's and "
               + ("your judges'" if variant.judges else "this variant's") + " side by side." if at_a_glance else "")
            + f"{left_out}\n:::\n")


def left_out_judgments(variant: Variant, chapter: str) -> dict[str, tuple[int, int]]:
    """Judge (``provider:model``) -> (judgments left out, judgments wanted) in the variant's last execution of
    ``chapter``: the book's own judges, not asked at the variant's scale (``recjudge run`` without
    ``--with-book-judges``), from the chapter's job log (``recjudge.llm.report.log_job``)."""
    from recjudge.compendium.runplan import CACHE_DIR, job_log_path
    from recjudge.llm.report import read_job_log

    counts: dict[str, tuple[int, int]] = {}
    for line in read_job_log(job_log_path(variant.folder / CACHE_DIR, chapter)):
        judge = f"{line['provider']}:{line['model']}"
        left, wanted = counts.get(judge, (0, 0))
        counts[judge] = (left + line["n_left_out"], wanted + line["n_replies_wanted"])
    return {judge: pair for judge, pair in counts.items() if pair[0]}


def chapter_note(variant: Variant, ran: bool, left_out: dict[str, tuple[int, int]] | None = None) -> str:
    """The box that says where a chapter of the variant's book comes from, and which of the book's own judges'
    judgments it left out (``left_out_judgments``)."""
    if ran:
        omitted = ""
        if left_out:
            omitted = (" Only the reader's judges were asked at this scale: the book's own judges replayed the "
                       "response store, and the judgments it lacks are left out of this page's tables ("
                       + "; ".join(f"{myst_text(judge)}: {left:,} of {wanted:,}"
                                   for judge, (left, wanted) in left_out.items())
                       + "). `recjudge run ... --with-book-judges` asks them too.")
        return (f":::{{admonition}} Run in variant {myst_text(variant.name)}\n:class: important\n"
                f"Run with {variant.judges_text()}, profile **{myst_text(variant.profile)}**: the numbers of this page "
                "are the variant's, not the committed book's, except where the page says it shows the committed "
                f"book's beside them.{omitted}\n:::\n")
    return (f":::{{admonition}} Not run in variant {myst_text(variant.name)}\n:class: warning\n"
            "This page is the committed book's (the book's own judges, profile default): the variant did not run "
            "it (with `--judge`, a chapter that asks no LLM, or does not take the judges parameter yet, is not run; "
            "`--only` runs only the chapters it names).\n:::\n")


def not_executed_note(variant: Variant, chapter: str) -> str:
    """The box of a chapter neither the variant nor this checkout's committed book has executed: its page is empty,
    and the box says the two ways to fill it and what each costs."""
    return (f":::{{admonition}} {NOT_RUN_TITLE}\n:class: warning\n"
            f"Variant {myst_text(variant.name)} did not run this chapter, and this checkout has no executed notebook "
            "of the committed book's to show instead (`book/notebooks/` is built, not committed), so its page is "
            f"empty here. `RECJUDGE_LLM_MODE=replay recjudge run --only {myst_text(chapter)}` executes it from the "
            "committed store (nothing is asked); `recjudge book --variant "
            f"{myst_text(variant.name)} --with-book-chapters` executes every such chapter before building "
            f"({COMMITTED_CHAPTERS_COST}).\n:::\n")


def title_page(title: str, note: str) -> Any:
    """An empty chapter page (nbformat): its title and ``note``, for a chapter a build did not execute."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    heading = nbformat.v4.new_markdown_cell(f"# {title}")
    heading["id"] = TITLE_CELL_ID
    notebook.cells = [heading]
    return with_note(notebook, note)


def with_note(notebook: Any, note: str) -> Any:
    """``notebook`` (nbformat) with ``note`` as a markdown cell after the cell holding its title (the first
    ``# `` heading), so the page keeps its title; a previous note is replaced."""
    import nbformat

    cells = [cell for cell in notebook.cells if cell.get("id") != NOTE_CELL_ID]
    title = next((index for index, cell in enumerate(cells) if cell.cell_type == "markdown"
                  and any(line.startswith("# ") for line in cell.source.splitlines())), -1)
    marker = nbformat.v4.new_markdown_cell(note)
    marker["id"] = NOTE_CELL_ID
    notebook.cells = cells[:title + 1] + [marker] + cells[title + 1:]
    return notebook


def chapters_to_run(root: Path, variant: Variant) -> list[str]:
    """The chapters of the table of contents that neither the variant nor the committed book has executed (on a
    fresh clone: every chapter the variant did not run, since ``book/notebooks/`` is not committed): the variant's
    book marks them "Not run in this build", or executes them first with ``--with-book-chapters``."""
    chapters = [Path(entry).name.removesuffix(".ipynb") for entry in toc_files(Path(root) / TOC_FILE)
                if entry.startswith(f"{NOTEBOOKS.as_posix()}/")]
    return [chapter for chapter in chapters if not (variant.folder / "notebooks" / f"{chapter}.ipynb").is_file()
            and not (Path(root) / NOTEBOOKS / f"{chapter}.ipynb").is_file()]


#: What executing the committed book's chapters costs, said before it starts: measured on a fresh clone of a two-core
#: machine shared with other work (17 chapters, 17.6 minutes), since a chapter records no expected duration.
COMMITTED_CHAPTERS_COST = ("from the committed store, so nothing is asked or paid, but the whole book's 17 chapters "
                           "took about 18 minutes on two busy cores")


def committed_chapters_command(chapters: Sequence[str]) -> str:
    """The command that executes ``chapters`` of the committed book from the committed store."""
    return "RECJUDGE_LLM_MODE=replay recjudge run " + " ".join(f"--only {name}" for name in chapters)


def run_committed_chapters(root: Path, variant: Variant, log: Any = print) -> list[str]:
    """Execute the committed book's chapters that the variant's book would otherwise mark "Not run in this build"
    (``chapters_to_run``), from the committed response store (replay mode: nothing is asked), as
    ``RECJUDGE_LLM_MODE=replay recjudge run --only NAME ...`` would, after saying how many and what that costs;
    returns their names. ``recjudge book --variant NAME --with-book-chapters`` calls it. A failure is a
    ``VariantBookError`` that names that command."""
    from recjudge.compendium.runplan import MODE_ENV, RunFailedError, RunPlanError, execute_plan, load_runplan
    from recjudge.compendium.runplan.execution import _environment
    from recjudge.paths import RESULTS_ENV

    needed = chapters_to_run(root, variant)
    if not needed:
        return []
    command = committed_chapters_command(needed)
    log(f"[book] --with-book-chapters: executing {len(needed)} chapter(s) of the committed book not executed here yet "
        f"({', '.join(needed)}) before building: {COMMITTED_CHAPTERS_COST} (`{command}`; Ctrl-C stops it, and the "
        "chapters already executed are kept)")
    try:
        runs = [run for run in load_runplan(root=root) if run.name in set(needed)]
        with _environment({MODE_ENV: "replay", RESULTS_ENV: str(Path(root) / "results")}):
            execute_plan(runs, root, log=log)
    except (RunPlanError, RunFailedError) as error:
        raise VariantBookError(f"{error}\n(the variant's book needs these chapters; run `{command}` to see why "
                               "they fail)") from None
    return needed


def stage_variant_book(root: Path, variant: Variant) -> Path:
    """Write the variant's book sources to ``_build/variants/<name>/source`` (see the module docstring) and link
    ``_build/variants/<name>/html`` to where Jupyter Book writes them; returns the source folder. Unchanged files
    are not rewritten, so a second build redoes only what changed."""
    import nbformat

    root = Path(root)
    source = variant.source_dir(root)
    # The prose, the table of contents and the configuration, as committed (the intro opens with the variant's box)
    for path in sorted((root / "book").rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not relative.is_relative_to(NOTEBOOKS):
            text = path.read_bytes()
            if relative == Path("book") / "intro.md":
                summary = (variant.folder / "notebooks" / "at_a_glance.ipynb").is_file()
                text = _after_title(intro_text(text.decode("utf-8"), variant),
                                    intro_note(variant, at_a_glance=summary)).encode("utf-8")
            _write_if_changed(source / relative, text)
    # The source notebooks, which each chapter offers for download
    for path in sorted((root / "notebooks").rglob("*")) if (root / "notebooks").is_dir() else []:
        if path.is_file():
            _write_if_changed(source / path.relative_to(root), path.read_bytes())
    _write_if_changed(source / TOC_FILE, (root / TOC_FILE).read_bytes())
    _write_if_changed(source / "_config.yml", _config(root, variant).encode("utf-8"))
    # The chapters: the variant's where it ran them, else the committed book's
    chapters = [Path(entry).name.removesuffix(".ipynb") for entry in toc_files(root / TOC_FILE)
                if entry.startswith(f"{NOTEBOOKS.as_posix()}/")]
    titles = None
    for chapter in chapters:
        ran = variant.folder / "notebooks" / f"{chapter}.ipynb"
        committed = root / NOTEBOOKS / f"{chapter}.ipynb"
        if ran.is_file() or committed.is_file():
            found = ran if ran.is_file() else committed
            note = chapter_note(variant, found == ran, left_out_judgments(variant, chapter) if found == ran else None)
            notebook = with_note(nbformat.read(found, as_version=4), note)
        else:  # executed nowhere here: an empty page that says so, never a silent execution
            titles = _chapter_titles(root) if titles is None else titles
            notebook = title_page(titles.get(chapter, chapter), not_executed_note(variant, chapter))
        _write_if_changed(source / NOTEBOOKS / f"{chapter}.ipynb", nbformat.writes(notebook).encode("utf-8"))
    _stage_results(root, variant, source / "results")
    link = variant.html_dir(root)
    if not link.is_symlink():
        if link.exists():
            shutil.rmtree(link)
        link.symlink_to(Path("source") / "_build" / "html", target_is_directory=True)
    return source


def _chapter_titles(root: Path) -> dict[str, str]:
    """Run name -> the title of the chapter it makes (``toc.chapter_title``); empty without a run plan."""
    from recjudge.compendium.runplan import RunPlanError, load_runplan

    try:
        runs = load_runplan(root=root)
    except (RunPlanError, OSError):
        return {}
    return {run.name: chapter_title(run, root) for run in runs}


#: The intro's bullet saying that no capable LLM judged anything: true of the committed book, not of a book a
#: reader's judge ran (it ends where the next bullet of its box begins).
OFFLINE_JUDGES_BULLET = re.compile(r"^- \*\*No capable LLM judged anything here\.\*\*.*?(?=^- \*\*)",
                                   re.MULTILINE | re.DOTALL)
#: The intro's sentence saying that no LLM-judge claim is tested because no capable LLM runs (a sentence that may
#: wrap over lines), and what a book a reader's judge ran says instead. The sentence ends at a full stop followed by
#: a space, a line end or the text's end: a full stop inside a word ("gpt-3.5-turbo") does not end it.
OFFLINE_CLAIMS_SENTENCE = re.compile(r"No capable LLM runs offline, so no LLM-judge claim of the\s+papers is tested "
                                     r"in this build:.*?\.(?=\s|$)", re.DOTALL)
CLAIMS_BESIDE_YOUR_JUDGE = ("In this variant each chapter's verdicts say whose numbers they read and what share of "
                            "your judge's replies held no answer.")


#: Where the intro includes what the at-a-glance run wrote: the book's answer and its findings, which a variant's
#: at-a-glance page reads from the committed book's tables (its own numbers go to its last table).
SUMMARY_INCLUDE = re.compile(r"^```\{include\} \.\./results/at_a_glance/", re.MULTILINE)
#: What a variant's intro says before each of them.
COMMITTED_NUMBERS_MARK = ("*From the committed book (its own judges, profile default), not this variant's: this "
                          "variant's numbers are in its chapters.*")


def intro_text(text: str, variant: Variant) -> str:
    """The committed intro as a variant's book shows it: the book's answer and findings marked as the committed
    book's (``COMMITTED_NUMBERS_MARK``); when the variant ran a reader's judge, without the bullet and the sentence
    saying that no capable LLM judged anything here."""
    text = SUMMARY_INCLUDE.sub(lambda found: f"{COMMITTED_NUMBERS_MARK}\n\n{found.group(0)}", text)
    if not variant.judges:
        return text
    return OFFLINE_CLAIMS_SENTENCE.sub(CLAIMS_BESIDE_YOUR_JUDGE, OFFLINE_JUDGES_BULLET.sub("", text))


def _after_title(text: str, note: str) -> str:
    lines = text.splitlines(keepends=True)
    title = next((index for index, line in enumerate(lines) if line.startswith("# ")), -1)
    return "".join(lines[:title + 1]) + "\n" + note + "".join(lines[title + 1:])


def _config(root: Path, variant: Variant) -> str:
    """The committed ``_config.yml`` with the variant in its title; the vendored MathJax is read where it is."""
    return _config_with_title(root, f"variant {variant.name}")


def _config_with_title(root: Path, what: str) -> str:
    """The committed ``_config.yml`` of a book staged elsewhere, its title saying ``what`` it is; the vendored
    MathJax is read where it is."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config.get('title', 'recjudge')} — {what}"
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["html_static_path"] = [str((root / entry).resolve()) if entry == "vendor" else entry
                                         for entry in sphinx_config.get("html_static_path", [])]
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


#: What a chapter's results folder holds that the book reads: its tables, the markdown a run writes for a prose
#: page to include (the landing page's findings, ``claims.LANDING_FILE``) and the figures that markdown shows (the
#: landing page's figure of every judge, ``trust_judges/judges.svg``).
STAGED_RESULTS = ("*.csv", "*.md", "*.svg")


def _stage_results(root: Path, variant: Variant, target: Path) -> None:
    """Per chapter, the variant's result tables (and included markdown and figures) where it wrote them, and the
    committed ones it did not write: a variant run without the data mirror writes fewer tables than the committed
    book holds, and the pages that read the committed book's tables (the at-a-glance page, the landing page's figure)
    link to them."""
    own = variant.folder / "results"
    committed = root / "results"
    chapters = sorted({path.name for folder in (own, committed) if folder.is_dir()
                       for path in folder.iterdir() if path.is_dir()})
    wanted = set()
    for chapter in chapters:
        for origin in (own / chapter, committed / chapter):  # the variant's own first
            for path in sorted(path for pattern in STAGED_RESULTS for path in origin.rglob(pattern)):
                relative = Path(chapter) / path.relative_to(origin)
                if relative in wanted:
                    continue
                wanted.add(relative)
                _write_if_changed(target / relative, path.read_bytes())
    for path in sorted(path for pattern in STAGED_RESULTS for path in target.rglob(pattern)) if target.is_dir() \
            else []:
        if path.relative_to(target) not in wanted:
            path.unlink()


def _write_if_changed(path: Path, content: bytes) -> None:
    if path.is_file() and path.read_bytes() == content:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)


__all__ = ["COMMITTED_NUMBERS_MARK", "Variant", "VariantBookError", "chapter_note", "chapters_to_run",
           "committed_chapters_command", "intro_note", "known_variants", "load_variant", "not_executed_note",
           "run_committed_chapters", "stage_variant_book", "title_page", "variant_from_arguments", "with_note"]
