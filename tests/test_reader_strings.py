"""Names a reader chose (a judge's label, model, served name, base URL) are text on every page: a role, a directive, a
link or HTML in a label shows as written and never runs (a `{download}` role would copy a local file into the site)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recjudge.compendium import pages
from recjudge.llm import judge_spec
from recjudge.llm.judge_spec import read_judge_file

HOSTILE_LABELS = [
    "Friendly judge {download}`../../../../secret.txt`",
    "Friendly judge {raw}`html <img src=x onerror=alert(1)>`",
    "Friendly judge [notes](../../../../secret.txt) ![x](../../../../secret.png)",
    "Friendly judge <script>alert(1)</script>",
]


@pytest.fixture(autouse=True)
def no_reader_names_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_spec, "_READER_NAMES", set())


def hostile_judge(tmp_path: Path, label: str) -> dict:
    """A reader's judge file with ``label``, read as `recjudge run --judge FILE` reads it, in the form a chapter
    gets."""
    path = tmp_path / "judge.yaml"
    path.write_text("provider: openai\nmodel: llama-3.1-8b@vllm\nserved_model: default\n"
                    f"base_url: http://127.0.0.1:8000/v1\nlabel: '{label}'\n")
    return read_judge_file(path).to_parameter()


def glued_markdown(key: str, value: object) -> str:
    """What the page would glue under ``key`` (the text/markdown ``myst_nb.glue`` writes into the notebook), formatted
    by an IPython shell as a chapter's kernel formats it."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from myst_nb import glue

    shell = InteractiveShell.instance()
    pages.render_reader_names_as_text(shell)
    with capture_output() as captured:
        glue(key, value, display=False)
    (output,) = captured.outputs
    return next(text for mime, text in output.data.items() if mime.endswith("text/markdown"))


def roles_links_and_html(markdown: str) -> list[str]:
    """The markup MyST would act on in ``markdown``: roles, links, images and HTML."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    found = []
    for token in create_md_parser(MdParserConfig(), RendererHTML).parse(markdown):
        if token.type == "fence" and token.info.startswith("{admonition}"):  # the box's body is MyST too
            found += roles_links_and_html("\n".join(line for line in token.content.splitlines()
                                                     if not line.startswith(":")))
            continue
        for child in [token, *(token.children or [])]:
            if child.type in ("myst_role", "link_open", "image", "html_inline", "html_block", "fence"):
                found.append(f"{child.type} {child.meta.get('name', '')}".strip())
    return found


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_a_hostile_label_is_glued_as_text(tmp_path: Path, label: str) -> None:
    judge = hostile_judge(tmp_path, label)
    # The way chapters build their boxes: the label inside their own markup (bold, code, a citation).
    opening = pages.opening([("Judges", f"**{judge['label']}** and the book's own, {{cite}}`kang2025`")],
                            caveat=pages.capable_judge_advice([judge]))
    verdict = pages.verdict([f"{judge['label']} agrees with the users at r = 0.4."])
    for key, value, chapters_own in (("opening", opening, ["myst_role cite"]), ("verdict", verdict, [])):
        markdown = glued_markdown(key, value)
        assert roles_links_and_html(markdown) == chapters_own, markdown  # the label's markup runs nowhere
        assert pages.myst_text(label) in markdown                           # it is shown, as written
    # Escaped, the label renders as written: the text MyST sees is the label itself.
    assert pages.reader_names_as_text(label) == pages.myst_text(label)


def test_only_names_of_a_readers_judge_are_escaped(tmp_path: Path) -> None:
    chapter_markup = "{cite}`kang2025` and [the data](data_tour.md)"
    assert pages.reader_names_as_text(chapter_markup) == chapter_markup     # no reader's judge read: unchanged
    hostile_judge(tmp_path, HOSTILE_LABELS[0])
    assert pages.reader_names_as_text(chapter_markup) == chapter_markup     # the chapter's markup is not a name
    assert pages.reader_names_as_text(f"- {HOSTILE_LABELS[0]}") == f"- {pages.myst_text(HOSTILE_LABELS[0])}"


def test_a_chapter_kernel_glues_a_hostile_label_as_text(tmp_path: Path) -> None:
    # As in a chapter: the kernel reads the reader's judges parameter, then glues a box naming them.
    import nbformat
    import papermill

    label = HOSTILE_LABELS[0]
    judge = hostile_judge(tmp_path, label)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("judges = []", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "from recjudge.compendium import pages\nfrom recjudge.llm.judge_spec import judge_configs\n"
            "configs = judge_configs(judges, prompt='kang_basic')\n"
            "pages.glue_text({'opening': pages.opening([('Judges', ', '.join(name for name, _ in configs))])})")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source, output = tmp_path / "chapter.ipynb", tmp_path / "executed.ipynb"
    nbformat.write(notebook, source)
    papermill.execute_notebook(str(source), str(output), parameters={"judges": [judge]}, progress_bar=False)
    (glued,) = [out for out in nbformat.read(output, as_version=4).cells[-1].outputs if out.get("data")]
    markdown = next(text for mime, text in glued["data"].items() if mime.endswith("text/markdown"))
    assert pages.myst_text(label) in markdown and roles_links_and_html(markdown) == [], markdown
