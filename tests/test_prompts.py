"""Prompt templates: file format, rendering, and the errors a malformed template or a wrong field gives."""

from __future__ import annotations

import os

import pytest

import recjudge.prompts as prompts
from recjudge.prompts import TemplateError, parse_template, render


@pytest.fixture
def template_dir(tmp_path, monkeypatch):
    """An empty template folder standing in for the package's own."""
    monkeypatch.setattr(prompts, "TEMPLATE_DIR", tmp_path)
    return tmp_path


def write(folder, name, text):
    path = folder / f"{name}.txt"
    path.write_text(text, encoding="utf-8")
    return path


FEW_SHOT = """\
Toy few-shot template written for this test.

### system
You rate {aspect}.
### user
Item: Heat
### assistant
4
### user
Item: {item}
"""


def test_render_builds_messages_in_order_with_fields_filled(template_dir):
    write(template_dir, "toy", FEW_SHOT)
    messages = render("toy", aspect="novelty", item="Alien (1979)")
    assert messages == [
        {"role": "system", "content": "You rate novelty."},
        {"role": "user", "content": "Item: Heat"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "Item: Alien (1979)"},
    ]


def test_description_before_first_header_is_not_sent(template_dir):
    write(template_dir, "toy", FEW_SHOT)
    template = prompts.load_template("toy")
    assert template.description == "Toy few-shot template written for this test."
    assert all("Toy few-shot" not in m["content"] for m in render("toy", aspect="a", item="b"))


def test_inner_blank_lines_and_other_markdown_headings_are_kept_as_text(template_dir):
    write(template_dir, "toy", "### user\n\n## Task\nRate it.\n\n### Instruction (not a role)\n{item}\n\n\n")
    (message,) = render("toy", item="X")
    assert message["content"] == "## Task\nRate it.\n\n### Instruction (not a role)\nX"


def test_literal_braces_are_escaped_as_in_str_format(template_dir):
    write(template_dir, "toy", '### user\nReply as JSON: {{"score": <1-5>}} for {item}.')
    assert render("toy", item="Heat")[0]["content"] == 'Reply as JSON: {"score": <1-5>} for Heat.'


def test_field_values_are_inserted_verbatim_even_with_braces(template_dir):
    write(template_dir, "toy", "### user\n{item}")
    assert render("toy", item="{weird} title {0}")[0]["content"] == "{weird} title {0}"


def test_format_spec_is_applied_and_a_bad_value_is_a_clear_error(template_dir):
    write(template_dir, "toy", "### user\nMean rating {mean:.1f}")
    assert render("toy", mean=3.14159)[0]["content"] == "Mean rating 3.1"
    with pytest.raises(TemplateError, match=r"'toy'.*user message"):
        render("toy", mean="high")


def test_a_field_called_name_does_not_clash_with_the_template_name(template_dir):
    write(template_dir, "toy", "### user\nHello {name}")
    assert render("toy", name="Ada")[0]["content"] == "Hello Ada"


def test_missing_field_error_names_template_and_field(template_dir):
    write(template_dir, "toy", FEW_SHOT)
    with pytest.raises(TemplateError, match=r"template 'toy': missing field\(s\) item \(it uses: aspect, item\)"):
        render("toy", aspect="novelty")


def test_unknown_field_error_names_template_and_field(template_dir):
    write(template_dir, "toy", FEW_SHOT)
    with pytest.raises(TemplateError, match=r"template 'toy': unknown field\(s\) itme"):
        render("toy", aspect="novelty", item="X", itme="typo")


def test_unknown_template_lists_the_available_ones(template_dir):
    write(template_dir, "alpha", "### user\nhi")
    write(template_dir, "beta", "### user\nhi")
    assert prompts.list_templates() == ["alpha", "beta"]
    with pytest.raises(TemplateError, match=r"unknown prompt template 'gamma'.*available: alpha, beta"):
        render("gamma")


@pytest.mark.parametrize("bad_name", ["../secrets", "a/b", "", "x.txt"])
def test_template_names_cannot_leave_the_template_folder(template_dir, bad_name):
    with pytest.raises(TemplateError, match="invalid template name"):
        prompts.template_text(bad_name)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just text, no header", r"'t': no '### system'"),
        ("### system\n\n\n### user\nhi", r"'t': the system section at line 1 is empty"),
        ("### system\nok\n### user\nscore {", r"'t': user section at line 3: .*literal braces"),
        ("### user\nclosing } alone", r"'t': user section at line 1: .*literal braces"),
        ("### user\n{item.title}", r"'t': user section at line 1: field \{item.title\} is not a plain name"),
        ("### user\n{0}", r"field \{0\} is not a plain name"),
        ("### user\n{}", r"field \{\} is not a plain name"),
        ("### user\n{x:{width}}", r"field \{x\} has a nested field"),
    ],
)
def test_malformed_templates_are_rejected_with_template_and_line(text, message):
    with pytest.raises(TemplateError, match=message):
        parse_template(text, name="t")


def test_windows_line_endings_are_read_like_unix_ones():
    template = parse_template("### system\r\nBe brief.\r\n### user\r\nRate {item}\r\n", name="t")
    assert template.sections == (("system", "Be brief."), ("user", "Rate {item}"))
    assert template.fields == {"item"}


def test_template_text_is_the_file_verbatim(template_dir):
    path = write(template_dir, "toy", FEW_SHOT)
    assert prompts.template_text("toy") == path.read_text(encoding="utf-8") == FEW_SHOT


def test_an_edited_template_is_read_again(template_dir):
    path = write(template_dir, "toy", "### user\nfirst {a}")
    assert render("toy", a=1)[0]["content"] == "first 1"
    path.write_text("### user\nsecond {b}", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # coarse file-system clocks
    assert render("toy", b=2)[0]["content"] == "second 2"


def test_generic_likert_template_renders_a_rating_request():
    assert "likert_generic" in prompts.list_templates()
    messages = render(
        "likert_generic",
        aspect="serendipity",
        aspect_definition="A serendipitous item is relevant and unexpected.",
        history="Toy Story (1995); Up (2009)",
        item="Alien (1979)",
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Recommended item: Alien (1979)" in messages[1]["content"]
    assert "from 1 to 5" in messages[1]["content"]


def test_every_shipped_template_parses():
    names = prompts.list_templates()
    assert names, "no templates shipped"
    for name in names:
        template = prompts.load_template(name)
        assert template.sections, name
        assert all(role in prompts.ROLES and text.strip() for role, text in template.sections), name
