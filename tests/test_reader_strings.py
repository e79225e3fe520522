"""Names a reader chose (a judge's label, model, served name, base URL) hold no markup: each is checked where it enters
(``judge_spec.reader_text``: the command line, a judge file, a chapter's ``judges`` parameter, a variant's record), so a
role, a Jinja expression, HTML or math in a name is refused before anything runs, and every name that is accepted is
text on every page, figure and log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recjudge.compendium import pages
from recjudge.llm.judge_spec import (
    MARKUP_CHARACTERS,
    JudgeSpec,
    JudgeSpecError,
    parse_judge,
    read_judge_file,
    reader_labels,
)

ROOT = Path(__file__).resolve().parents[1]

#: Each kind of name that ran or broke something in a page before it was refused where it enters.
HOSTILE_NAMES = {
    "Jinja in a MyST substitution": "Judge {{ self.__init__.__globals__.__builtins__.__import__('os').system('id') }}",
    "a role copying a local file": "Friendly judge {download}`../../../../secret.txt`",
    "a raw HTML role": "Friendly judge {raw}`html <img src=x onerror=alert(1)>`",
    "stored HTML": "Friendly judge <img src=x onerror=alert(1)>",
    "a script tag": "Friendly judge <script>alert(1)</script>",
    "a cross-reference role": "Friendly judge {ref}`intro`",
    "a document role": "Friendly judge {doc}`../secret`",
    "matplotlib mathtext": "Friendly judge $\\frac{1}{$",
    "a link and an image": "Friendly judge [notes](../../secret.txt) ![x](../../secret.png)",
    "a table cell's end": "Friendly | judge",
    "an HTML attribute's end": 'Friendly judge" onmouseover="alert(1)',
    "emphasis": "Friendly *judge*",
    "an entity": "Friendly &lt;judge&gt;",
}
#: Every character a name may hold beside letters and digits, and a few letters of other scripts.
PLAIN_LABEL = "Reader's judge (q4_1) - 50% =+ a@b.c, d:e; f/g ~ h! i? Überprüfer 判定"


def judge_file(tmp_path: Path, **fields: str) -> Path:
    path = tmp_path / "judge.yaml"
    body = {"provider": "openai", "model": "llama-3.1-8b@vllm", "served_model": "default",
            "base_url": "http://127.0.0.1:8000/v1", **fields}
    import yaml

    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize("field", ["label", "model", "served_model"])
def test_a_name_holding_markup_is_refused_in_a_judge_file_naming_the_field(tmp_path: Path, kind: str,
                                                                        field: str) -> None:
    name = HOSTILE_NAMES[kind]
    with pytest.raises(JudgeSpecError, match=rf"judge file .*judge\.yaml: field '{field}' holds '.*', which a page, "
                                             "a figure or a table would read as markup"):
        read_judge_file(judge_file(tmp_path, **{field: name}))


@pytest.mark.parametrize("kind", sorted(HOSTILE_NAMES))
def test_a_name_holding_markup_is_refused_on_the_command_line(kind: str) -> None:
    name = HOSTILE_NAMES[kind]
    with pytest.raises(JudgeSpecError, match=r"--judge openai:.*field 'model' holds"):
        parse_judge(f"openai:{name}")
    with pytest.raises(JudgeSpecError, match="field 'served_model' holds"):
        parse_judge("openai:llama-3.1-8b@vllm", base_url="http://127.0.0.1:8000/v1", served_model=name)


@pytest.mark.parametrize("kind", sorted(HOSTILE_NAMES))
def test_a_chapters_judges_parameter_is_checked_before_any_page_names_it(kind: str) -> None:
    # A notebook run directly by papermill gets its judges as plain data; every page function that names them reads
    # their labels through the same check.
    entry = {"label": HOSTILE_NAMES[kind], "provider": "openai", "model": "gpt-4o-mini"}
    with pytest.raises(JudgeSpecError, match="a judges parameter entry: field 'label' holds"):
        reader_labels([entry])
    with pytest.raises(JudgeSpecError, match="field 'label' holds"):
        pages.capable_judge_advice([entry])


def test_every_character_a_name_may_hold_is_shown_as_written(tmp_path: Path) -> None:
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    judge = read_judge_file(judge_file(tmp_path, label=PLAIN_LABEL)).to_parameter()
    assert reader_labels([judge]) == [PLAIN_LABEL]
    box = pages.opening([("Judges", f"**{judge['label']}** and the book's own")],
                        caveat=pages.capable_judge_advice([judge])).data
    tokens = create_md_parser(MdParserConfig(), RendererHTML).parse(box)
    body = create_md_parser(MdParserConfig(), RendererHTML).parse(
        "\n".join(line for line in tokens[0].content.splitlines() if not line.startswith(":")))
    kinds = {child.type for token in body for child in [token, *(token.children or [])]}
    assert not kinds & {"myst_role", "link_open", "image", "html_inline", "html_block", "math_inline", "em_open"}
    assert PLAIN_LABEL in "".join(child.content for token in body for child in (token.children or [])
                                  if child.type == "text")


def test_an_ipv6_servers_brackets_are_the_one_place_a_name_may_hold_them() -> None:
    spec = parse_judge("openai:llama-3.1-8b@vllm", base_url="http://[::1]:8000/v1", served_model="default")
    assert spec.base_url == "http://[::1]:8000/v1"
    with pytest.raises(JudgeSpecError, match="field 'base_url' holds '<'"):
        parse_judge("openai:llama-3.1-8b@vllm", base_url="http://[::1]:8000/v1/<b>", served_model="default")


def test_a_control_character_in_a_judge_files_name_is_shown_as_its_code(tmp_path: Path) -> None:
    folder = tmp_path / "a\x1b[2Jb"
    folder.mkdir()
    path = judge_file(folder, label="<b>")
    with pytest.raises(JudgeSpecError) as caught:
        read_judge_file(path)
    assert "\x1b" not in str(caught.value) and "\\u001b" in str(caught.value)


def test_no_page_module_reads_a_readers_label_past_the_check() -> None:
    # A label is read from a chapter's judges parameter only through JudgeSpec (reader_labels, chapter_judge,
    # judge_configs), never as judge["label"] of the raw entry.
    raw = re.compile(r"""\b(j|judge|entry)\[["']label["']\]|\b(j|judge|entry)\.get\(["']label["']""")
    offenders = [f"{path.relative_to(ROOT)}:{number}" for folder in ("chapters", "compendium")
                 for path in sorted((ROOT / "src" / "recjudge" / folder).rglob("*.py"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if raw.search(line)]
    assert offenders == []


def test_no_substitution_renders_markdown_through_jinja() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "substitution" not in config["parse"]["myst_enable_extensions"]


def test_the_markup_characters_are_markup_somewhere_a_name_is_shown() -> None:
    # Each refused character opens markup in MyST, HTML, Jinja or mathtext: refusing fewer would let one through.
    assert MARKUP_CHARACTERS == set("\\`*{}[]<>#|$&^\"")
    assert JudgeSpec("openai", "gpt-4o-mini", label=PLAIN_LABEL).display_label == PLAIN_LABEL


def test_a_page_that_mangles_a_name_is_found(tmp_path: Path) -> None:
    from recjudge.compendium.html_checks import name_as_shown

    label = "Reader's judge (q4_1): 50%, ok?"
    (tmp_path / "good.html").write_text("<p>Judges: <b>Reader&#39;s judge (q4_1): 50%, ok?</b> and the book's</p>")
    (tmp_path / "escaped.html").write_text("<p>Reader's judge \\(q4_1\\): 50%, ok?</p>")
    (tmp_path / "silent.html").write_text("<p>No judge named here.</p>")
    assert name_as_shown(tmp_path, label) == (["good.html"], ["escaped.html"])
