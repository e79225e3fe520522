"""A variant's own book (`recjudge book --variant NAME`): staged and built under _build/variants/NAME from the
variant's executed notebooks, the committed book's for the chapters it did not run, and nothing tracked written
(a tiny project of fake chapters; the Jupyter Book build itself is replaced by a stand-in that writes index.html)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from recjudge.cli import main
from recjudge.compendium import book as book_module
from recjudge.compendium.variant_book import (
    COMMITTED_NUMBERS_MARK,
    NOTE_CELL_ID,
    Variant,
    VariantBookError,
    intro_note,
    load_variant,
    stage_variant_book,
    variant_from_arguments,
    with_note,
)

NAME = "openai-gpt-4o-mini-smoke"
TOC = """format: jb-book
root: book/intro
chapters:
  - file: book/notebooks/judged
  - file: book/notebooks/plain
  - file: book/own_judge
"""
CONFIG = """title: "recjudge"
only_build_toc_files: true
sphinx:
  config:
    html_static_path: [vendor, book/_static]
"""


def executed(path: Path, title: str, output: str) -> Path:
    """An executed notebook as `recjudge run` leaves it: a title cell and a code cell with its output."""
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(answer)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
    notebook.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nWhat the chapter is about."), cell]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def stand_in_jupyter_book(monkeypatch: pytest.MonkeyPatch) -> list:
    """Jupyter Book replaced by a writer of one index page: returns the source folders it was asked to build."""
    built = []

    def fake_build(root: Path, *, all_pages: bool = False, source: Path | None = None) -> None:
        built.append(source)
        (source / "_build" / "html").mkdir(parents=True, exist_ok=True)
        (source / "_build" / "html" / "index.html").write_text("<html>variant</html>")

    monkeypatch.setattr(book_module, "build_html", fake_build)
    monkeypatch.setattr(book_module, "ensure_mathjax", lambda root: root / "vendor" / "mathjax")
    return built


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A built committed book (results/, book/notebooks/, _build/html) and one variant that ran one chapter."""
    root = tmp_path / "project"
    (root / "book" / "_static").mkdir(parents=True)
    (root / "book" / "_static" / "recjudge.css").write_text("body {}\n")
    (root / "book" / "intro.md").write_text("# The book\n\nWhat it is.\n")
    (root / "book" / "own_judge.md").write_text("# Use your own judge\n")
    (root / "_toc.yml").write_text(TOC)
    (root / "_config.yml").write_text(CONFIG)
    (root / "notebooks").mkdir()
    (root / "notebooks" / "judged.md").write_text("# Judged chapter (source)\n")
    executed(root / "book" / "notebooks" / "judged.ipynb", "Judged chapter", "book's judge: 0.1")
    executed(root / "book" / "notebooks" / "plain.ipynb", "Plain chapter", "no judge: 7")
    for chapter, text in (("judged", "judge,r\nbook,0.1\n"), ("plain", "x\n7\n")):
        (root / "results" / chapter).mkdir(parents=True)
        (root / "results" / chapter / "table.csv").write_text(text)
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text("<html>the committed book</html>")
    variant = root / "variants" / NAME
    executed(variant / "notebooks" / "judged.ipynb", "Judged chapter", "your judge: 0.4")
    (variant / "results" / "judged").mkdir(parents=True)
    (variant / "results" / "judged" / "table.csv").write_text("judge,r\ngpt-4o-mini,0.4\n")
    # a prose page includes markdown a run wrote beside its tables (the landing page's findings)
    (root / "results" / "plain" / "findings_first.md").write_text("- a finding\n")
    # ... and the figure that markdown shows
    (root / "results" / "plain" / "judges.svg").write_text("<svg/>")
    (root / "results" / "judged" / "committed_only.csv").write_text("y\n1\n")
    (variant / "variant.json").write_text(json.dumps({
        "profile": "smoke", "judges": [{"label": "gpt-4o-mini", "model": "gpt-4o-mini", "provider": "openai"}],
        "runs": ["judged"], "llm_runs_without_judges_parameter": ["not_yet"]}))
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.delenv("RECJUDGE_RESULTS", raising=False)
    monkeypatch.chdir(root)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the project outside _build/variants (the committed book, its build and the variant's run)."""
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and not path.relative_to(root).is_relative_to(Path("_build") / "variants")}


def staged_text(notebook: Path) -> str:
    return "\n".join(cell.source + "".join(o.get("text", "") for o in cell.get("outputs", []))
                     for cell in nbformat.read(notebook, as_version=4).cells)


def test_the_variant_book_is_staged_from_its_notebooks_and_the_committed_ones_marked(project: Path) -> None:
    before = snapshot(project)
    variant = load_variant(project, NAME)
    source = stage_variant_book(project, variant)
    assert source == project / "_build" / "variants" / NAME / "source"
    judged = staged_text(source / "book" / "notebooks" / "judged.ipynb")
    plain = staged_text(source / "book" / "notebooks" / "plain.ipynb")
    assert "your judge: 0.4" in judged and "book's judge" not in judged
    assert f"Run in variant {NAME}" in judged and "Run with judges **openai:gpt-4o-mini**, profile **smoke**" in judged
    assert "no judge: 7" in plain and f"Not run in variant {NAME}" in plain and "committed book's" in plain
    # The mark follows the title, so the page keeps it
    cells = nbformat.read(source / "book" / "notebooks" / "plain.ipynb", as_version=4).cells
    assert cells[0].source.startswith("# Plain chapter") and cells[1]["id"] == NOTE_CELL_ID
    intro = (source / "book" / "intro.md").read_text()
    assert intro.startswith("# The book\n")
    assert f"This is variant {NAME}" in intro and "judges **openai:gpt-4o-mini** and profile **smoke**" in intro
    assert "(not_yet) are the committed book's" in intro
    # Each chapter's tables come from where its page comes from
    assert (source / "results" / "judged" / "table.csv").read_text() == "judge,r\ngpt-4o-mini,0.4\n"
    assert (source / "results" / "plain" / "table.csv").read_text() == "x\n7\n"
    assert (source / "results" / "plain" / "findings_first.md").read_text() == "- a finding\n"
    assert (source / "results" / "plain" / "judges.svg").read_text() == "<svg/>"
    # a table the variant's run did not write (no data mirror) is the committed one, which the pages that read the
    # committed book's tables link to; a table it wrote is its own
    assert (source / "results" / "judged" / "committed_only.csv").read_text() == "y\n1\n"
    config = (source / "_config.yml").read_text()
    assert f"variant {NAME}" in config and str(project / "vendor") in config
    assert (source / "book" / "own_judge.md").is_file() and (source / "_toc.yml").read_text() == TOC
    assert (source / "notebooks" / "judged.md").read_text() == "# Judged chapter (source)\n"  # offered for download
    assert variant.html_dir(project).is_symlink()
    assert variant.html_dir(project).resolve() == (source / "_build" / "html").resolve()
    assert snapshot(project) == before, "nothing outside _build/variants/NAME was written"
    # Staged again unchanged, no file is rewritten (Jupyter Book then rebuilds nothing)
    times = {path: path.stat().st_mtime_ns for path in source.rglob("*") if path.is_file()}
    stage_variant_book(project, variant)
    assert {path: path.stat().st_mtime_ns for path in source.rglob("*") if path.is_file()} == times


def test_recjudge_book_variant_builds_under_build_variants_and_leaves_the_book_alone(
        project: Path, stand_in_jupyter_book: list, capsys: pytest.CaptureFixture) -> None:
    built = stand_in_jupyter_book
    before = snapshot(project)
    assert main(["book", "--variant", NAME]) == 0
    assert built == [project / "_build" / "variants" / NAME / "source"]
    html = project / "_build" / "variants" / NAME / "html"
    assert (html / "index.html").read_text() == "<html>variant</html>"
    assert f"built the book of variant {NAME}: {html / 'index.html'}" in capsys.readouterr().out
    assert snapshot(project) == before, "the committed results, notebooks and _build/html are byte-identical"
    # The same variant, named by the run's options
    assert main(["book", "--judge", "openai:gpt-4o-mini", "--profile", "smoke"]) == 0
    assert len(built) == 2 and built[1] == built[0]


def test_a_chapter_neither_the_variant_nor_the_book_has_is_marked_not_run(project: Path) -> None:
    (project / "book" / "notebooks" / "plain.ipynb").unlink()
    (project / "notebooks" / "plain.md").write_text("# Plain chapter\n")
    (project / "runplan.yaml").write_text("runs:\n  - {name: plain, notebook: notebooks/plain.md}\n")
    source = stage_variant_book(project, load_variant(project, NAME))
    cells = nbformat.read(source / "book" / "notebooks" / "plain.ipynb", as_version=4).cells
    assert cells[0].source == "# Plain chapter" and cells[1]["id"] == NOTE_CELL_ID  # titled from its source
    assert "Not run in this build" in cells[1].source and "--with-book-chapters" in cells[1].source
    assert "RECJUDGE_LLM_MODE=replay recjudge run --only plain" in cells[1].source
    assert "your judge: 0.4" in staged_text(source / "book" / "notebooks" / "judged.ipynb")


@pytest.mark.parametrize(("argv", "expected"), [
    (["--variant", "nobody-smoke"],
     f"error: --variant 'nobody-smoke': no folder variants/nobody-smoke/ (known variants: no-record, {NAME})"),
    (["--variant", "no-record"], "error: variants/no-record/ has no variant.json, so what built it is unknown"),
    (["--judge", "openai:gpt-4o-mini"], "error: --variant 'openai-gpt-4o-mini-default': no folder"),
    (["--variant", NAME, "--profile", "smoke"], "error: --variant names the variant; give it without"),
    (["--variant", "../results"], "error: --variant '../results': a variant is named by its folder under variants/"),
])
def test_unknown_or_undescribed_variants_are_clear_errors(project: Path, capsys: pytest.CaptureFixture,
                                                          argv: list[str], expected: str) -> None:
    (project / "variants" / "no-record" / "notebooks").mkdir(parents=True)
    assert main(["book", *argv]) == 2
    assert expected in capsys.readouterr().err
    assert not (project / "_build" / "variants").exists()


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("llm_runs_without_judges_parameter", 5, "field 'llm_runs_without_judges_parameter' must be a list of run names"),
    ("llm_runs_without_judges_parameter", [1], "field 'llm_runs_without_judges_parameter' must be a list of run"),
    ("runs", "judged", "field 'runs' must be a list of run names"),
    ("judges", [{"provider": "openai"}], "field 'judges', judge 1: 'model' missing or not a string"),
    ("judges", [{"provider": "openai", "model": ["x"]}], "field 'judges', judge 1: 'model' missing or not a string"),
])
def test_a_malformed_field_of_variant_json_is_named(project: Path, capsys: pytest.CaptureFixture, field: str,
                                                    value: object, expected: str) -> None:
    path = project / "variants" / NAME / "variant.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), field: value}))
    assert main(["book", "--variant", NAME]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}: {expected}" in err and len(err.strip().splitlines()) == 1
    assert not (project / "_build" / "variants").exists()


def test_no_variant_option_is_the_committed_book(project: Path) -> None:
    assert variant_from_arguments(project, None, [], None) is None
    assert variant_from_arguments(project, None, [], "default") is None
    assert variant_from_arguments(project, None, ["openai:gpt-4o-mini"], "smoke").name == NAME


def test_the_intro_says_whose_numbers_the_at_a_glance_page_sets_beside_the_books(tmp_path: Path) -> None:
    judged = Variant(NAME, tmp_path, "smoke", ({"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"},))
    scaled = Variant("default-paper", tmp_path, "paper", ())
    assert "the committed book's and your judges' side by side" in intro_note(judged)
    assert "the committed book's and this variant's side by side" in intro_note(scaled)
    assert "side by side" not in intro_note(judged, at_a_glance=False)


HOSTILE = "m\n:::\n```{raw} html\n<script>alert(1)</script>\n```\n:::{note}\n[x](javascript:alert(1)) *b* {sub}`2`"


def test_a_judges_names_cannot_close_the_notice_box_or_emit_markup(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    from recjudge.compendium.variant_book import chapter_note
    from recjudge.llm.judge_spec import JudgeSpecError, parse_judge

    # Refused where a judge is given: a name is one line of printable text.
    for text in (f"provider: openai\nmodel: gpt-4o-mini\nlabel: {json.dumps(HOSTILE)}\n",
                 f"provider: openai\nmodel: {json.dumps(HOSTILE)}\n", "provider: openai\nmodel: \"a\\u2028b\"\n"):
        path = tmp_path / "judge.yaml"
        path.write_text(text)
        with pytest.raises(JudgeSpecError, match="control character") as caught:
            parse_judge(str(path))
        assert "\n" not in str(caught.value)
    with pytest.raises(JudgeSpecError, match="control character") as caught:
        parse_judge(f"openai:{HOSTILE}")
    assert "\n" not in str(caught.value)
    # A hand-edited variant.json is refused where it is read, naming the file, the judge and the field.
    folder = tmp_path / "variants" / NAME
    folder.mkdir(parents=True)
    for judge in ({"label": "Qwen <script>alert(1)</script>", "provider": "openai", "model": "gpt-4o-mini"},
                  {"label": "Qwen", "provider": "openai", "model": HOSTILE}):
        (folder / "variant.json").write_text(json.dumps({"profile": "smoke", "judges": [judge]}))
        with pytest.raises(VariantBookError, match=r"variant\.json: field 'judges', judge 1: .*field '(label|model)'"):
            load_variant(tmp_path, NAME)
    # A variant's own names (its folder, its profile) are written as text inside the one notice box.
    variant = Variant(NAME, tmp_path, "smoke<b>", ({"label": "Qwen", "provider": "openai", "model": "gpt-4o-mini"},))
    for note in (intro_note(variant), chapter_note(variant, True), chapter_note(variant, False)):
        lines = note.splitlines()
        assert lines[0].startswith(":::{admonition}") and lines[-1] == ":::"
        assert not any(line.startswith((":::", "```")) for line in lines[1:-1])
        tokens = MarkdownIt("commonmark").parse(note)
        inline = [child for token in tokens for child in (token.children or [])]
        assert not [token for token in [*tokens, *inline] if token.type.startswith(("html", "link", "em"))]


def test_a_second_note_replaces_the_first() -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("1")]
    with_note(with_note(notebook, "first"), "second")
    assert [cell.source for cell in notebook.cells] == ["# Title", "second", "1"]


def test_the_variant_book_reads_the_variant_tables_and_falls_back_to_the_committed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recjudge.compendium.results import in_variant, load_committed_table, load_table_or_committed

    assert not in_variant()
    with pytest.raises(FileNotFoundError, match="absent"):
        load_table_or_committed("judged", "absent")
    monkeypatch.setenv("RECJUDGE_RESULTS", str(project / "variants" / NAME / "results"))
    assert in_variant()
    assert load_table_or_committed("judged", "table")["judge"].tolist() == ["gpt-4o-mini"]
    assert load_table_or_committed("plain", "table")["x"].tolist() == [7]  # the variant did not run it
    assert load_committed_table("judged", "table")["judge"].tolist() == ["book"]



def test_a_book_judged_by_a_readers_model_does_not_say_no_capable_llm_judged_anything(tmp_path: Path) -> None:
    from recjudge.compendium.variant_book import intro_text
    from recjudge.paths import project_root

    intro = (project_root() / "book" / "intro.md").read_text(encoding="utf-8")
    judged = Variant(NAME, tmp_path, "smoke", ({"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"},))
    scaled = Variant("default-paper", tmp_path, "paper", ())
    assert "No capable LLM judged anything here" in intro
    assert "No capable LLM judged anything here" not in intro_text(intro, judged)
    assert "No capable LLM runs offline" in intro and "No capable LLM" not in intro_text(intro, judged)
    assert "verdicts say whose numbers they read" in intro_text(intro, judged)
    assert "- **What is checked**" in intro_text(intro, judged)
    assert intro_text(intro, scaled).replace(f"{COMMITTED_NUMBERS_MARK}\n\n", "") == intro  # a profile alone


def test_the_intro_sentence_a_readers_judge_replaces_ends_at_its_full_stop_not_at_a_dot_in_a_model_name(
        tmp_path: Path) -> None:
    from recjudge.compendium.variant_book import CLAIMS_BESIDE_YOUR_JUDGE, intro_text
    from recjudge.paths import project_root

    judged = Variant(NAME, tmp_path, "smoke", ({"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"},))
    intro = intro_text((project_root() / "book" / "intro.md").read_text(encoding="utf-8"), judged)
    assert "5-turbo scores" not in intro  # the committed sentence's tail ("... recorded gpt-3.5-turbo scores.")
    assert CLAIMS_BESIDE_YOUR_JUDGE + "\n- **Appendix" in intro
    text = ("Intro. No capable LLM runs offline, so no LLM-judge claim of the\npapers is tested in this build: judges "
            "are v1.5 models and gpt-3.5-turbo scores. Next sentence.")
    assert intro_text(text, judged) == f"Intro. {CLAIMS_BESIDE_YOUR_JUDGE} Next sentence."


def test_a_caption_names_the_judges_its_table_holds() -> None:
    from recjudge.compendium.pages import judges_in

    judges = {"SmolLM2-135M": ["SmolLM2-135M zero-shot", "SmolLM2-135M few-shot (5)"],
              "gemma-3-270m": ["gemma-3-270m zero-shot"], "gpt-4o-mini": ["gpt-4o-mini zero-shot"]}
    assert judges_in(["SOG", "gemma-3-270m zero-shot", "SmolLM2-135M zero-shot"], judges) == \
        "SmolLM2-135M and gemma-3-270m"
    assert judges_in(["gemma-3-270m zero-shot"], judges) == "gemma-3-270m", "no judge the table lacks"
    assert judges_in(["SOG"], judges) == "no LLM judge"
    assert judges_in([*judges["SmolLM2-135M"], *judges["gemma-3-270m"], *judges["gpt-4o-mini"]], judges) == \
        "SmolLM2-135M, gemma-3-270m and gpt-4o-mini"


@pytest.mark.parametrize(("chapter", "caption"), [
    ("proxy_vs_llm", "Pearson (%) under each ground-truth definition"),
    ("judge_robustness", "Metamorphic robustness of the judges"),
])
def test_captions_of_tables_that_hold_a_readers_judge_are_glued_from_the_judges_in_them(chapter: str,
                                                                                       caption: str) -> None:
    from recjudge.compendium.prose import Prose
    from recjudge.paths import project_root

    # The caption is written in the chapter's notebook, or in its prose file and filled in by its page module
    # (recjudge.chapters.<chapter>): then the judges are a slot the module fills from the table
    notebook = project_root() / "notebooks" / f"{chapter}.md"
    if caption in notebook.read_text(encoding="utf-8"):
        text = notebook.read_text(encoding="utf-8")
        assert "pages.judges_in(" in text[text.index(caption):][:200], f"{chapter}: the caption names no judges"
        return
    passages = {name: passage for name, passage in Prose(chapter).passages().items() if caption in passage.text}
    assert passages, f"{chapter}: no caption {caption!r} in the notebook or its prose file"
    module = (project_root() / "src" / "recjudge" / "chapters" / f"{chapter}.py").read_text(encoding="utf-8")
    # (a caption of rows without judges, such as the proxies' alone, has a form without that slot)
    given = [name for name, passage in passages.items()
             if any(f"{slot}=pages.judges_in(" in module[module.index(f'PROSE("{name}"'):][:300]
                    for slot in passage.slots)]
    assert given, f"{chapter}: no form of the caption {caption!r} is given the judges in its table"


def test_a_chapters_caveat_under_a_readers_judge_does_not_say_every_judge_is_tiny() -> None:
    from recjudge.compendium.pages import capable_judge_advice

    assert "`recjudge run --judge SPEC`" in capable_judge_advice([])
    yours = capable_judge_advice([{"label": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini"}])
    assert "gpt-4o-mini" in yours and "Run the book with a capable judge" not in yours


def test_a_chapter_page_names_the_book_judges_judgments_the_variant_left_out(project: Path) -> None:
    from recjudge.compendium.runplan import CACHE_DIR, job_log_path

    log = job_log_path(project / "variants" / NAME / CACHE_DIR, "judged")
    log.parent.mkdir(parents=True)
    counts = {"n_asked": 0, "n_failed": 0, "n_unparsable": 0, "n_shape_violations": 0, "n_planned": 0}
    log.write_text("".join(json.dumps(line) + "\n" for line in (
        {"judge": "SmolLM2", "provider": "local", "model": "smollm2-135m-instruct-q4_1", "n_replies_wanted": 40,
         "n_from_store": 10, "n_left_out": 30, **counts},
        {"judge": "SmolLM2 free", "provider": "local", "model": "smollm2-135m-instruct-q4_1",
         "n_replies_wanted": 20, "n_from_store": 15, "n_left_out": 5, **counts},
        {"judge": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini", "n_replies_wanted": 40,
         "n_from_store": 0, "n_left_out": 0, **{**counts, "n_asked": 40}})))
    source = stage_variant_book(project, load_variant(project, NAME))
    judged = staged_text(source / "book" / "notebooks" / "judged.ipynb")
    assert "local:smollm2-135m-instruct-q4_1: 35 of 60" in judged and "--with-book-judges" in judged
    assert "openai:gpt-4o-mini:" not in judged  # the reader's judge left nothing out
    assert "--with-book-judges" not in staged_text(source / "book" / "notebooks" / "plain.ipynb")


def fresh_clone(project: Path) -> None:
    """The project as a fresh clone has it: the variant's run, but no executed notebook of the committed book
    (``book/notebooks/`` is built, not committed), and a run plan whose chapter ``plain`` could be executed."""
    source = nbformat.v4.new_notebook()
    source.cells = [nbformat.v4.new_markdown_cell("# Plain chapter"), nbformat.v4.new_code_cell("print('no judge: 7')")]
    nbformat.write(source, project / "notebooks" / "plain.ipynb")
    (project / "runplan.yaml").write_text("runs:\n  - {name: judged, notebook: notebooks/judged.md}\n"
                                          "  - {name: plain, notebook: notebooks/plain.ipynb}\n")
    for chapter in ("judged", "plain"):
        (project / "book" / "notebooks" / f"{chapter}.ipynb").unlink()


def test_a_fresh_clone_builds_the_variant_book_from_the_variant_alone_executing_nothing(
        project: Path, stand_in_jupyter_book: list, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a fresh clone ``recjudge book --variant`` shows the variant's pages at once: the chapters it did not run
    are marked "Not run in this build", and no notebook is executed (no silent replay of the whole book)."""
    from recjudge.compendium import runplan
    from recjudge.compendium.runplan import execution

    fresh_clone(project)

    def no_execution(*args: object, **kwargs: object) -> None:
        raise AssertionError("the variant's book executed a notebook")

    for module in (runplan, execution):
        monkeypatch.setattr(module, "execute_plan", no_execution)
    monkeypatch.setattr("papermill.execute_notebook", no_execution)
    built = stand_in_jupyter_book
    assert main(["book", "--variant", NAME]) == 0
    out = capsys.readouterr().out
    assert "marked 'Not run in this build': plain" in out and "--with-book-chapters" in out
    staged = built[0] / "book" / "notebooks"
    assert "your judge: 0.4" in staged_text(staged / "judged.ipynb")
    plain = staged_text(staged / "plain.ipynb")
    assert plain.startswith("# Plain chapter") and "Not run in this build" in plain and "no judge: 7" not in plain
    assert not (project / "book" / "notebooks" / "plain.ipynb").exists()


def test_with_book_chapters_executes_the_committed_chapters_after_saying_what_it_costs(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--with-book-chapters`` keeps the old way (the committed chapters replayed from the store), saying how many
    chapters and what they cost before it starts."""
    from recjudge.compendium.variant_book import chapters_to_run, run_committed_chapters

    fresh_clone(project)
    (project / "runplan.yaml").write_text("runs:\n  - {name: plain, notebook: notebooks/plain.ipynb}\n")
    monkeypatch.setenv("RECJUDGE_STORE", str(project / "data" / "llm"))
    variant = load_variant(project, NAME)
    assert chapters_to_run(project, variant) == ["plain"]
    assert run_committed_chapters(project, variant) == ["plain"]
    out = capsys.readouterr().out
    said = out.index("--with-book-chapters: executing 1 chapter(s)")
    assert "minutes" in out[said:out.index("\n", said)] and said < out.index("[run] plain")
    staged = staged_text(stage_variant_book(project, variant) / "book" / "notebooks" / "plain.ipynb")
    assert "no judge: 7" in staged and f"Not run in variant {NAME}" in staged
    assert run_committed_chapters(project, variant) == []  # nothing left to run


def test_with_book_chapters_without_a_variant_is_a_clear_error(project: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["book", "--with-book-chapters"]) == 2
    assert "error: --with-book-chapters fills a variant's book" in capsys.readouterr().err


def commit_all(project: Path) -> None:
    """The project as a git checkout (a build records its commit), every file committed."""
    import subprocess

    for command in (["init", "--quiet"], ["config", "user.name", "Reader"], ["config", "user.email", "r@example.org"],
                    ["add", "."], ["commit", "--quiet", "-m", "The project"]):
        subprocess.run(["git", *command], cwd=project, check=True, capture_output=True)


def test_an_unchanged_variant_book_is_neither_restaged_nor_built_again(
        project: Path, stand_in_jupyter_book: list, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A chapter marked "Not run in this build" got a new random cell id at every staging, so Jupyter Book rebuilt
    every page of an unchanged variant (33-56 s) and `make publish` rebuilt it again; an unchanged build is reused."""
    from recjudge.compendium import publish

    fresh_clone(project)
    (project / ".gitignore").write_text("_build/\n")
    commit_all(project)
    monkeypatch.setattr(publish, "dataset_statuses", lambda root: {})
    source = stage_variant_book(project, load_variant(project, NAME))
    times = {path: path.stat().st_mtime_ns for path in source.rglob("*") if path.is_file()}
    stage_variant_book(project, load_variant(project, NAME))
    assert {path: path.stat().st_mtime_ns for path in source.rglob("*") if path.is_file()} == times
    built = stand_in_jupyter_book
    assert main(["book", "--variant", NAME]) == 0
    assert main(["book", "--variant", NAME]) == 0
    assert len(built) == 1, "the unchanged build is reused"
    assert "reused the build" in capsys.readouterr().out
    # A change of what the book shows builds it again; --all always does
    executed(project / "variants" / NAME / "notebooks" / "judged.ipynb", "Judged chapter", "your judge: 0.5")
    assert main(["book", "--variant", NAME]) == 0 and len(built) == 2
    assert main(["book", "--variant", NAME, "--all"]) == 0 and len(built) == 3


def test_the_variants_intro_marks_the_answer_and_findings_as_the_committed_books(project: Path) -> None:
    """A variant's intro showed the committed book's answer and findings unmarked (SOG 9.3% [4.2, 14.2] there,
    [2.8, 14.2] in the variant's own chapter): they are the committed book's, and the page says so where they are."""
    committed_intro = Path(__file__).resolve().parents[1] / "book" / "intro.md"
    (project / "book" / "intro.md").write_text(committed_intro.read_text(encoding="utf-8"))
    intro = (stage_variant_book(project, load_variant(project, NAME)) / "book" / "intro.md").read_text()
    answer = intro.index("{include} ../results/at_a_glance/answer_first.md")
    findings = intro.index("{include} ../results/at_a_glance/findings_first.md")
    marks = [index for index in range(len(intro)) if intro.startswith(COMMITTED_NUMBERS_MARK, index)]
    assert len(marks) == 2 and marks[0] < answer < marks[1] < findings, marks
    assert "profile default" in COMMITTED_NUMBERS_MARK and "not this variant's" in COMMITTED_NUMBERS_MARK
