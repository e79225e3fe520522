"""The built book: it renders in a real browser (headless Debian Chromium) and loads nothing from other hosts.

The tests on the built book skip when Chromium or the build (``make book``) is missing, unless
``RECJUDGE_REQUIRE_BOOK=1`` (set by ``.ci/run``), in which case they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

from recjudge.compendium import book
from recjudge.compendium.paths import project_root

DATA_TOUR = "data_tour"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1600")
# Requests that leave the machine (the browser's own chrome:// pages are not the book's).
NETWORK_SCHEMES = {"http", "https", "ws", "wss", "ftp"}


def skip_or_fail(reason: str) -> None:
    if os.environ.get("RECJUDGE_REQUIRE_BOOK") == "1":
        pytest.fail(f"{reason} (RECJUDGE_REQUIRE_BOOK=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def html_dir() -> Path:
    folder = project_root() / book.HTML_DIR
    if not (folder / "index.html").is_file():
        skip_or_fail(f"no built book at {folder}: run `make book`")
    return folder


def chapter_title(executed_notebook: Path) -> str:
    """The notebook's first Markdown heading, i.e. the chapter title the book shows."""
    for cell in nbformat.read(executed_notebook, as_version=4).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{executed_notebook} has no '# ' title")


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch):
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        skip_or_fail("Debian chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="recjudge-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium Manager look for drivers online
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def requested_urls(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@pytest.mark.browser
def test_data_tour_chapter_renders(html_dir: Path, browser, tmp_path: Path) -> None:
    from PIL import Image
    from selenium.webdriver.common.by import By

    page = html_dir / "book" / "notebooks" / f"{DATA_TOUR}.html"
    assert page.is_file(), f"{page} missing: is {DATA_TOUR} in runplan.yaml and _toc.yml?"
    title = chapter_title(project_root() / "book" / "notebooks" / f"{DATA_TOUR}.ipynb")

    browser.get(page.as_uri())
    assert title in browser.title
    assert title in browser.find_element(By.CSS_SELECTOR, "article h1").text
    figures = browser.find_elements(By.CSS_SELECTOR, "article img")
    assert figures, "the data tour shows figures"
    assert all(browser.execute_script("return arguments[0].naturalWidth", image) > 0 for image in figures), \
        "every figure of the chapter loads"

    screenshot = tmp_path / f"{DATA_TOUR}.png"
    assert browser.save_screenshot(str(screenshot))
    assert screenshot.stat().st_size > 20_000, "a rendered chapter is more than a blank page"
    with Image.open(screenshot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 100, "the screenshot shows text and figures, not a flat page"

    remote = [url for url in requested_urls(browser) if urlparse(url).scheme in NETWORK_SCHEMES]
    assert remote == [], f"the chapter fetched from other hosts: {remote}"


@pytest.mark.browser
def test_vendored_mathjax_typesets_offline(html_dir: Path, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((html_dir / "book" / "intro.html").as_uri())
    # The introduction shows the Likert rescaling formula; MathJax replaces it by <mjx-container> elements.
    WebDriverWait(browser, 30).until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "mjx-container"))
    scripts = [element.get_attribute("src") for element in browser.find_elements(By.TAG_NAME, "script")]
    assert any(src and src.split("?")[0].endswith("_static/mathjax/tex-chtml.js") for src in scripts)
    remote = [url for url in requested_urls(browser) if urlparse(url).scheme in NETWORK_SCHEMES]
    assert remote == [], f"the page fetched from other hosts: {remote}"


def test_built_book_has_no_external_scripts_or_stylesheets(html_dir: Path) -> None:
    assert book.external_resource_urls(html_dir) == []
    assert (html_dir / "_static" / "mathjax" / book.MATHJAX_ENTRY).is_file()


# ---------------------------------------------------------------------------------------------------------------
# The checker itself, on hand-made pages (no build needed)


def test_external_resource_checker_flags_fetches_not_links(tmp_path: Path) -> None:
    (tmp_path / "_static").mkdir()
    (tmp_path / "page.html").write_text(
        "<html><head>"
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>'
        '<script src="_static/local.js"></script>'
        '<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Lato">'
        '<link rel="stylesheet" href="_static/theme.css">'
        '<script>const LOADER = "https://unpkg.com/thebe@0.8.2/lib/index.js";</script>'
        "</head><body>"
        '<p>See <a href="https://doi.org/10.1145/3640457.3688075">the paper</a> at https://example.org.</p>'
        '<img src="https://example.org/figure.png"><img src="_images/figure.png">'
        "</body></html>")
    (tmp_path / "_static" / "theme.css").write_text(
        '@import url("https://fonts.googleapis.com/css2?family=Inter");\n'
        "@font-face { src: url(fonts/inter.woff2); }\nbody { background: url('https://example.org/bg.png'); }\n")
    found = book.external_resource_urls(tmp_path)
    assert found == [
        "page.html: <script src=https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js>",
        "page.html: <link href=//fonts.googleapis.com/css?family=Lato>",
        "page.html: inline <script>: https://unpkg.com/thebe@0.8.2/lib/index.js",
        "page.html: <img src=https://example.org/figure.png>",
        "_static/theme.css: url(https://fonts.googleapis.com/css2?family=Inter)",
        "_static/theme.css: url(https://example.org/bg.png)",
    ]


def test_toc_must_match_the_run_plan(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Chapter")]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "a.ipynb")
    (tmp_path / "runplan.yaml").write_text("runs:\n  - {name: a, notebook: notebooks/a.ipynb}\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/notebooks/b\n")
    problems = book.check_toc_against_runplan(tmp_path)
    assert problems == [
        "run 'a' of runplan.yaml is not in _toc.yml (add `- file: book/notebooks/a`)",
        "_toc.yml lists book/notebooks/b but no run of runplan.yaml is named 'b'",
        "book/notebooks/a.ipynb does not exist: run `make run` (recjudge run) first",
    ]
