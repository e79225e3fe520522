"""The built book: it renders in a real browser (headless Debian Chromium) and loads nothing from other hosts.

The tests on the built book skip when Chromium or the build (``make book``) is missing, unless
``RECJUDGE_REQUIRE_BOOK=1`` (set by ``.ci/run``), in which case they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
import yaml

from recjudge.compendium import book, html_checks, vendored_assets
from recjudge.compendium.book import SHOWN_CODE_COLUMNS
from recjudge.compendium.toc import TOC_FILE, toc_files
from recjudge.paths import project_root

DATA_TOUR = "data_tour"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")
#: A laptop window, and a phone's (the width of the common 390 px phones).
LAPTOP, PHONE = (1280, 1600), (390, 844)
#: Headless Chromium makes no window narrower than this: a narrower screen is emulated (DevTools' device metrics).
NARROWEST_WINDOW = 500
# Requests that leave the machine (the browser's own chrome:// pages are not the book's).
NETWORK_SCHEMES = {"http", "https", "ws", "wss", "ftp"}


def skip_or_fail(reason: str) -> None:
    if os.environ.get("RECJUDGE_REQUIRE_BOOK") == "1":
        pytest.fail(f"{reason} (RECJUDGE_REQUIRE_BOOK=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def html_dir() -> Path:
    folder = project_root() / html_checks.HTML_DIR
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


@contextlib.contextmanager
def chromium(monkeypatch: pytest.MonkeyPatch, window: tuple[int, int] = LAPTOP):
    """A headless Chromium driven by Selenium (a 1280 px wide window unless told), with a throw-away profile. A window
    narrower than Chromium makes one (a phone's) is the page's viewport set to that size, as DevTools' device toolbar
    does: a window of 390 px would otherwise lay the page out at 500."""
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        skip_or_fail("Debian chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="recjudge-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--window-size={window[0]},{window[1]}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium Manager look for drivers online
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    if window[0] < NARROWEST_WINDOW:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": window[0], "height": window[1], "deviceScaleFactor": 1, "mobile": False})
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch):
    with chromium(monkeypatch) as driver:
        yield driver


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
    assert html_checks.external_resource_urls(html_dir) == []
    assert (html_dir / "_static" / "mathjax" / vendored_assets.MATHJAX_ENTRY).is_file()


def built_books() -> list[Path]:
    """The committed book's build and every variant's book built in this checkout."""
    root = project_root()
    return [root / html_checks.HTML_DIR, *sorted((root / "_build" / "variants").glob("*/html"))]


@pytest.mark.parametrize("site", built_books(), ids=lambda site: site.parent.name)
def test_no_built_page_or_published_source_holds_a_machine_path_or_a_warning(site: Path, tmp_path: Path) -> None:
    """A matplotlib UserWarning with the builder's source path was on a variant's page and in its published
    `_sources/`: neither a page nor a chapter's published source names a folder of this machine or shows a warning."""
    from recjudge.compendium import publish

    if not (site / "index.html").is_file():
        skip_or_fail(f"no built book at {site}: run `make book`")
    root = project_root()
    assert html_checks.machine_traces(site.rglob("*.html"), site, html_checks.machine_folders(root)) == []
    staged = publish.stage(site, publish.read_build_info(site) or {"commit": "unknown"}, tmp_path / "site", root)
    assert publish.published_source_traces(staged, root) == []


# ---------------------------------------------------------------------------------------------------------------
# Every chapter page reads as the design asks: reproduced tables fit the text column, no traceback or stderr output,
# figures with alt text and a caption, the verdict in the first screen and an admonition saying what the run is.

#: Chapters that do not yet open with an admonition, close with a verdict and caption their figures: their figure
#: and structure checks are expected to fail. Remove a chapter from the set once it is converted.
NOT_YET_CONVERTED: set[str] = set()
CHAPTER_DIR = Path("book") / "notebooks"
#: Pages executed like chapters that answer no paper's question of their own (the findings of all chapters on one
#: page): they open with an admonition but have no verdict.
SUMMARY_PAGES = {"at_a_glance", "what_we_learned"}
#: Height of a laptop's first screen at 1280 px wide: a chapter's verdict must begin within it.
FIRST_SCREEN_PX = 900
#: The class tables.paper_beside_ours gives its tables.
PAPER_TABLE_CLASS = "paper-beside-ours"


def chapter_pages() -> list[str]:
    """Every chapter the book should have (the notebooks of _toc.yml) and every chapter page it has."""
    root = project_root()
    names = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            entry = node.get("file")
            if isinstance(entry, str) and Path(entry).parent == CHAPTER_DIR:
                names.add(Path(entry).stem)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    toc = root / "_toc.yml"
    if toc.is_file():
        walk(yaml.safe_load(toc.read_text(encoding="utf-8")))
    names.update(page.stem for page in (root / html_checks.HTML_DIR / CHAPTER_DIR).glob("*.html"))
    return sorted(names)


def pages(*, expect_failure_if_not_converted: bool = False) -> list:
    params = []
    for name in chapter_pages():
        marks = [pytest.mark.xfail(strict=False, reason="chapters not yet converted")] \
            if expect_failure_if_not_converted and name in NOT_YET_CONVERTED else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


# One script collects what the checks need from a page, in the browser at the 1280 px window width.
PAGE_FACTS_SCRIPT = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main article')
    || document.querySelector('main');
const describe = (el) => {
  let text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 80);
  const classes = (el.getAttribute('class') || '').trim().replace(/\s+/g, '.');
  const cell = el.closest('.cell');
  const cellIndex = cell ? [...article.querySelectorAll('.cell')].indexOf(cell) : -1;
  return `<${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${classes ? '.' + classes : ''}>`
      + (cellIndex >= 0 ? ` in code cell ${cellIndex + 1}` : '') + (text ? ` "${text}"` : '');
};
const style = getComputedStyle(article);
const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
const tables = [...article.querySelectorAll('table.PAPER_TABLE_CLASS')].map((table) => ({
  element: describe(table).slice(0, 160),
  width: Math.ceil(Math.max(table.scrollWidth, table.getBoundingClientRect().width)),
}));
const errors = [...article.querySelectorAll('.output.stderr, .output.traceback, .output.error')]
    .map((el) => describe(el).slice(0, 240));
const images = [...article.querySelectorAll('img, svg')]
    .filter((el) => !(el.tagName.toLowerCase() === 'svg' && el.parentElement.closest('svg')))
    .filter((el) => !el.closest('mjx-container, .MathJax, button, a.headerlink, .headerlink, nav'))
    .map((el) => {
      const title = el.tagName.toLowerCase() === 'svg' ? el.querySelector(':scope > title') : null;
      const figure = el.closest('figure');
      const caption = figure ? figure.querySelector('figcaption') : null;
      return {
        element: describe(el).slice(0, 160),
        src: el.getAttribute('src') || '',
        alt: (el.getAttribute('alt') || el.getAttribute('aria-label') || (title ? title.textContent : '')).trim(),
        figure: !!figure,
        caption: caption ? caption.textContent.replace(/\s+/g, ' ').trim() : '',
      };
    });
const admonition = article.querySelector('.admonition');
const firstH2 = article.querySelector('h2');
const headings = [...article.querySelectorAll('h2')].map((h) => h.textContent.replace(/[#¶]/g, '').trim());
const verdict = article.querySelector('[id^="verdict"], .verdict')
    || [...article.querySelectorAll('h2')].find((h) => /^(\d+(\.\d+)*\.?\s*)?verdict/i.test(h.textContent.trim()));
return {
  column: column,
  tables: tables,
  errors: errors,
  images: images,
  admonition: admonition ? describe(admonition).slice(0, 120) : null,
  first_h2: firstH2 ? firstH2.textContent.replace(/[#¶]/g, '').trim() : null,
  admonition_before_h2: !!admonition
      && (!firstH2 || !!(admonition.compareDocumentPosition(firstH2) & Node.DOCUMENT_POSITION_FOLLOWING)),
  headings: headings,
  verdict: !!verdict,
  verdict_top: verdict ? Math.round(verdict.getBoundingClientRect().top + window.scrollY) : null,
};
""".replace("PAPER_TABLE_CLASS", PAPER_TABLE_CLASS)


@pytest.fixture(scope="module")
def page_facts(html_dir: Path):
    """facts(name): what PAGE_FACTS_SCRIPT finds on the chapter page ``name`` (one browser for the module, each page
    loaded once)."""
    cache: dict[str, dict] = {}
    with pytest.MonkeyPatch.context() as monkeypatch, chromium(monkeypatch) as driver:
        def facts(name: str) -> dict:
            if name not in cache:
                page = html_dir / CHAPTER_DIR / f"{name}.html"
                if not page.is_file():
                    skip_or_fail(f"{page} missing: is {name} in runplan.yaml and was the book rebuilt?")
                driver.get(page.as_uri())
                cache[name] = driver.execute_script(PAGE_FACTS_SCRIPT)
            return cache[name]

        yield facts


def image_is_described(image: dict) -> bool:
    """Alt text that says something: docutils puts an image's own path there when none was given."""
    alt = image["alt"]
    if not alt:
        return False
    if alt == image["src"] or Path(alt).name == Path(image["src"]).name:
        return False
    return not re.fullmatch(r"\S+\.(png|svg|jpe?g|gif|pdf)", alt, flags=re.IGNORECASE)


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_reproduced_tables_fit_the_text_column(page_facts, page: str) -> None:
    facts = page_facts(page)
    column = facts["column"]
    assert column > 400, f"{page}: the text column is {column} px wide at a 1280 px window: is the page laid out?"
    too_wide = [f"{table['element']} is {table['width']} px" for table in facts["tables"] if table["width"] > column]
    assert not too_wide, f"{page}: paper-beside-ours table(s) wider than the {column} px text column: {too_wide}"


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_no_traceback_or_stderr_output(page_facts, page: str) -> None:
    errors = page_facts(page)["errors"]
    assert not errors, f"{page} shows tracebacks or warnings (stderr) in its outputs: {errors}"


@pytest.mark.browser
@pytest.mark.parametrize("page", pages(expect_failure_if_not_converted=True))
def test_figures_have_alt_text_and_a_caption(page_facts, page: str) -> None:
    images = page_facts(page)["images"]
    def name(image: dict) -> str:
        source = image["src"]
        return f"{image['element']} {source[:40] if source.startswith('data:') else Path(source).name}".strip()

    no_alt = [name(image) for image in images if not image_is_described(image)]
    no_caption = [name(image) for image in images if not (image["figure"] and image["caption"])]
    # A chapter's figures are numbered (Fig. 2.1), an appendix page's lettered (Fig. A.1).
    unnumbered = [name(image) for image in images
                  if image["figure"] and not re.match(r"Fig\. ([A-Z]\.)?\d+", image["caption"])]
    assert not no_alt, f"{page}: figure(s) without alt text (or aria-label / <title>): {no_alt}"
    assert not no_caption, f"{page}: figure(s) not in a <figure> with a non-empty <figcaption>: {no_caption}"
    assert not unnumbered, f"{page}: figure(s) without a number (glue:figure with :name:): {unnumbered}"


@pytest.mark.browser
@pytest.mark.parametrize("page", pages(expect_failure_if_not_converted=True))
def test_chapter_opens_with_its_findings_and_a_box_saying_what_the_run_is(page_facts, page: str) -> None:
    facts = page_facts(page)
    assert facts["admonition"], f"{page}: no admonition (data, judges, sample, what is real) opens the chapter"
    assert facts["admonition_before_h2"], \
        f"{page}: the first admonition {facts['admonition']} comes after the first section {facts['first_h2']!r}"
    if page in SUMMARY_PAGES:
        return
    assert facts["verdict"], (f"{page}: no verdict (an element with id or class 'verdict', or a section "
                              f"'Verdict ...'); its sections are {facts['headings']}")
    assert facts["verdict_top"] < FIRST_SCREEN_PX, (
        f"{page}: the verdict starts {facts['verdict_top']} px down, below the first screen of a 1280 x "
        f"{FIRST_SCREEN_PX} px window: a chapter's findings come first")


#: A laptop's first screen: the landing page's short answer and its caveat are read without scrolling.
LANDING_WINDOW = (1280, 800)
# Where the landing page's short answer box and its caveat start, in px from the top of the first screen.
LANDING_SCRIPT = r"""
const [title, caveat] = arguments;
const box = [...document.querySelectorAll('.admonition')].find((el) => {
  const heading = el.querySelector('.admonition-title');
  return heading && heading.textContent.trim() === title;
});
if (!box) return {box_top: null, caveat_top: null};
const start = [...box.querySelectorAll('strong')].find((el) => el.textContent.trim() === caveat);
return {box_top: box.getBoundingClientRect().top, caveat_top: start ? start.getBoundingClientRect().top : null};
"""


def caveat_heading() -> str:
    """The bold words that open the caveat (``answer.CAVEAT``), as the page shows them."""
    from recjudge.compendium import answer

    return re.match(r"\*\*(.+?)\*\*", answer.CAVEAT).group(1)


def landing_positions(driver, page: Path) -> dict:
    from recjudge.compendium import answer

    driver.get(page.as_uri())
    return driver.execute_script(LANDING_SCRIPT, answer.ANSWER_TITLE, caveat_heading())


@pytest.fixture(scope="module")
def landing_page() -> Path:
    """The built landing page: the book's, or else a preview's (``recjudge book --only NAME``), whose landing page
    is the same prose with the same committed short answer."""
    root_page = Path(yaml.safe_load((project_root() / "_toc.yml").read_text(encoding="utf-8"))["root"])
    for html in (book.HTML_DIR, Path("_build") / "preview" / "html"):
        page = project_root() / html / root_page.with_suffix(".html")
        if page.is_file():
            return page
    skip_or_fail(f"no built book at {project_root() / book.HTML_DIR}: run `make book` (or `recjudge book --only "
                 "data_tour` for a preview)")


@pytest.mark.browser
def test_the_landing_pages_first_screen_holds_the_short_answer_and_its_caveat(landing_page, monkeypatch):
    with chromium(monkeypatch, LANDING_WINDOW) as driver:
        found = landing_positions(driver, landing_page)
    first_screen = LANDING_WINDOW[1]
    assert found["box_top"] is not None, f"{landing_page.name}: no admonition titled 'The short answer'"
    assert found["caveat_top"] is not None, f"{landing_page.name}: the short answer has no {caveat_heading()!r}"
    assert found["box_top"] < first_screen, (
        f"the short answer starts {found['box_top']:.0f} px down, below a {LANDING_WINDOW[0]} x {first_screen} screen")
    assert found["caveat_top"] < first_screen, (
        f"the caveat {caveat_heading()!r} starts {found['caveat_top']:.0f} px down, below a {LANDING_WINDOW[0]} x "
        f"{first_screen} screen")


@pytest.mark.browser
def test_the_first_screen_measure_sees_a_caveat_pushed_below_the_fold(tmp_path, monkeypatch):
    from recjudge.compendium import answer

    page = tmp_path / "landing.html"
    page.write_text(f"""<html><body style="margin:0"><div class="admonition"><p class="admonition-title">
{answer.ANSWER_TITLE}</p><div style="height:900px">The papers' numbers.</div><ul><li><strong>{caveat_heading()}
</strong> tiny models only.</li></ul></div></body></html>""", encoding="utf-8")
    with chromium(monkeypatch, LANDING_WINDOW) as driver:
        found = landing_positions(driver, page)
    assert found["box_top"] < 50 and found["caveat_top"] >= LANDING_WINDOW[1]


def test_every_full_table_note_links_to_its_csv(html_dir: Path) -> None:
    """A table's "Full table: results/<chapter>/<name>.csv" note is a link, and the CSV is published with the book."""
    note = re.compile(r'<p class="recjudge-table-note">(.*?)</p>', re.S)
    unlinked, broken, notes = [], [], 0
    for page in sorted((html_dir / CHAPTER_DIR).glob("*.html")):
        for text in note.findall(page.read_text(encoding="utf-8")):
            if "Full table:" not in text:
                continue
            notes += 1
            link = re.search(r'<a href="([^"]+)">', text)
            if not link:
                unlinked.append(f"{page.name}: {text[:80]}")
            elif not (page.parent / link.group(1)).resolve().is_file():
                broken.append(f"{page.name}: {link.group(1)}")
    assert notes, "no chapter shows a 'Full table' note: has the note's markup changed?"
    assert not unlinked, f"'Full table' notes without a link: {unlinked}"
    assert not broken, f"'Full table' links to CSVs the book does not publish: {broken}"


# Reading a page on a phone and in dark mode: what overflows the screen, and text that is too faint to read.
READING_SCRIPT = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main');
const rgba = (text) => (text.match(/[\d.]+/g) || []).map(Number).concat([1]).slice(0, 4);
const background = (el) => {
  for (let node = el; node; node = node.parentElement) {
    const [r, g, b, a] = rgba(getComputedStyle(node).backgroundColor);
    if (a > 0.5) return [r, g, b];
  }
  return rgba(getComputedStyle(document.body).backgroundColor).slice(0, 3);
};
const opacity = (el) => {
  let value = 1;
  for (let node = el; node; node = node.parentElement) value *= parseFloat(getComputedStyle(node).opacity);
  return value;
};
const luminance = ([r, g, b]) => {
  const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
};
const contrast = (el) => {
  const back = background(el);
  const [r, g, b, a] = rgba(getComputedStyle(el).color);
  const alpha = a * opacity(el);
  const fore = [r, g, b].map((c, i) => alpha * c + (1 - alpha) * back[i]);
  const [light, dark] = [luminance(fore), luminance(back)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
};
// Text a reader sees: not inside a collapsed dropdown (hidden until opened) or a closed <details>.
const shown = (el) => el.textContent.trim() && el.offsetParent !== null
  && getComputedStyle(el).visibility !== 'hidden' && !el.closest('details:not([open])');
const faint = [...article.querySelectorAll('p, li, figcaption, caption, td, th, .admonition-title')]
  .filter(shown)
  .map((el) => ({text: el.textContent.replace(/\s+/g, ' ').trim().slice(0, 60), ratio: contrast(el)}))
  .filter((item) => item.ratio < 4.5);
// Cut off: a table, caption or code line running past the screen's edge with no box of its own to scroll it into view.
const scrolls = (el) => {
  for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
    const overflowX = getComputedStyle(node).overflowX;
    if ((overflowX === 'auto' || overflowX === 'scroll') && node.scrollWidth > node.clientWidth) return true;
  }
  return false;
};
const clipped = [...article.querySelectorAll('table, caption, pre, figcaption')]
  .filter((el) => el.offsetParent !== null && el.getBoundingClientRect().right > window.innerWidth + 1)
  .filter((el) => !(getComputedStyle(el).overflowX === 'auto' && el.scrollWidth > el.clientWidth) && !scrolls(el))
  .map((el) => `<${el.tagName.toLowerCase()}> "${el.textContent.replace(/\s+/g, ' ').trim().slice(0, 60)}"`);
return {
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  faint: faint.slice(0, 5),
  n_faint: faint.length,
  clipped: clipped.slice(0, 5),
  n_clipped: clipped.length,
};
"""


@pytest.fixture(scope="module")
def reading(html_dir: Path):
    """reading(name, window, dark): what READING_SCRIPT finds on the chapter page ``name``."""
    drivers: dict[tuple[int, int], object] = {}
    cache: dict[tuple, dict] = {}  # each page is loaded once per window and mode, whatever the checks that read it
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.ExitStack() as stack:
        def facts(name: str, window: tuple[int, int], dark: bool = False) -> dict:
            if (name, window, dark) in cache:
                return cache[(name, window, dark)]
            if window not in drivers:
                drivers[window] = stack.enter_context(chromium(monkeypatch, window))
            driver = drivers[window]
            page = html_dir / CHAPTER_DIR / f"{name}.html"
            if not page.is_file():
                skip_or_fail(f"{page} missing: is {name} in runplan.yaml and was the book rebuilt?")
            driver.get(page.as_uri())
            # The theme's own switch: it stores the choice and sets data-theme on <html>.
            driver.execute_script(f"localStorage.setItem('theme', '{'dark' if dark else 'light'}');"
                                  f"document.documentElement.dataset.theme = '{'dark' if dark else 'light'}';"
                                  f"document.documentElement.dataset.mode = '{'dark' if dark else 'light'}';")
            cache[(name, window, dark)] = driver.execute_script(READING_SCRIPT)
            return cache[(name, window, dark)]

        yield facts


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_a_phone_reads_the_page_without_scrolling_sideways(reading, page: str) -> None:
    facts = reading(page, PHONE)
    assert facts["overflow"] <= 1, (f"{page}: at {PHONE[0]} px wide the page is {facts['overflow']} px wider than "
                                    "the screen (wide tables and figures scroll in their own box)")


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_a_phone_sees_every_table_and_command_whole_or_in_a_box_that_scrolls(reading, page: str) -> None:
    facts = reading(page, PHONE)
    assert not facts["n_clipped"], (f"{page}: at {PHONE[0]} px wide {facts['n_clipped']} table(s), caption(s) or "
                                    f"code block(s) run past the screen's edge with nothing to scroll them: "
                                    f"{facts['clipped']}")


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_text_and_captions_are_readable_in_light_mode(reading, page: str) -> None:
    facts = reading(page, LAPTOP)
    assert not facts["n_faint"], (f"{page}: {facts['n_faint']} text element(s) below a 4.5:1 contrast, "
                                  f"e.g. {facts['faint']}")


@pytest.mark.browser
@pytest.mark.parametrize("page", pages())
def test_text_stays_readable_in_dark_mode(reading, page: str) -> None:
    facts = reading(page, LAPTOP, dark=True)
    assert not facts["n_faint"], (f"{page}: {facts['n_faint']} text element(s) below a 4.5:1 contrast in dark mode, "
                                  f"e.g. {facts['faint']}")


def test_no_page_prints_a_missing_number_as_nan(html_dir: Path) -> None:
    """A statistic that is undefined is said in words ("undefined (every score the same)"), never typeset as nan%."""
    found = {page.name: re.findall(r".{0,60}\b(?:nan|NaN)%.{0,20}", page.read_text(encoding="utf-8"))
             for page in sorted((html_dir / CHAPTER_DIR).glob("*.html"))}
    assert not {name: hits for name, hits in found.items() if hits}


def test_undescribed_images_are_recognised() -> None:
    assert not image_is_described({"alt": "", "src": "a.png"})
    assert not image_is_described({"alt": "../../_images/4457.png", "src": "../../_images/4457.png"})
    assert not image_is_described({"alt": "figure.svg", "src": "data:image/svg+xml;base64,AAAA"})
    assert image_is_described({"alt": "Six lines falling from left to right.", "src": "../../_images/4457.svg"})


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
    found = html_checks.external_resource_urls(tmp_path)
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


# ---------------------------------------------------------------------------------------------------------------
# Every page of the book, at a laptop's and a phone's width: nothing wider than the text column unless it scrolls in
# its own box, headings in order, images described, and no serious accessibility violation found by axe-core.

#: The two screens every page is read at (width, height).
SCREENS = {"laptop": (1280, 900), "phone": PHONE}
#: axe-core, pinned in package-lock.json and installed by `make setup` (npm ci), read offline from node_modules.
AXE_SCRIPT = Path("node_modules") / "axe-core" / "axe.min.js"
#: The screens axe-core runs at: both (a table that scrolls at one width may fit at the other, and a scroll box must be
#: reachable by keyboard wherever it scrolls).
AXE_SCREENS = tuple(SCREENS)
#: axe-core's impacts that fail the test (the others, "minor" and "moderate", are reported by axe but tolerated).
FAILING_IMPACTS = ("serious", "critical")
SCREENSHOT_DIR = Path("_build") / "screenshots"
#: The pages photographed at both widths for review: the landing page and one chapter.
SCREENSHOT_PAGES = {"landing": "book/intro", "chapter": f"book/notebooks/{DATA_TOUR}"}


def book_pages() -> list:
    """Every page of the book, as _toc.yml lists it (its root and every file), as ids such as book/notebooks/x."""
    return [pytest.param(entry, id=entry.removeprefix("book/")) for entry in toc_files(project_root() / TOC_FILE)]


# Display maths is typeset by MathJax after the page loads: the geometry is measured once it has finished.
WAIT_FOR_MATHJAX_SCRIPT = r"""
const done = arguments[arguments.length - 1];
if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(() => done(true), () => done(false));
} else { done(true); }
"""

LAYOUT_SCRIPT = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main article')
    || document.querySelector('main');
const describe = (el) => {
  const classes = (el.getAttribute('class') || '').trim().split(/\s+/).slice(0, 3).join('.');
  const text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const caption = el.closest('table') && el.closest('table').querySelector('caption');
  const section = el.closest('section[id]');
  return `<${el.tagName.toLowerCase()}${classes ? '.' + classes : ''}>`
      + (caption ? ` captioned "${caption.textContent.replace(/\s+/g, ' ').trim().slice(0, 60)}"` : '')
      + (section ? ` in #${section.id}` : '') + (text && !caption ? ` "${text}"` : '');
};
const style = getComputedStyle(article);
const box = article.getBoundingClientRect();
const columnLeft = box.left + parseFloat(style.paddingLeft), columnRight = box.right - parseFloat(style.paddingRight);
const scrollsItself = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
    && el.scrollWidth > el.clientWidth;
// The element, or an ancestor inside the article, that scrolls sideways (null if none).
const scrollBox = (el) => {
  for (let node = el; node && node !== article; node = node.parentElement) if (scrollsItself(node)) return node;
  return null;
};
const fitsColumn = (el) => {
  const rect = el.getBoundingClientRect();
  return rect.left >= columnLeft - 1 && rect.right <= columnRight + 1;
};
const shown = (el) => el.getClientRects().length > 0 && !el.closest('details:not([open])');
const blocks = [...article.querySelectorAll('table, pre, div.highlight, mjx-container[display="true"], div.math')]
    .filter(shown);
const overflowing = blocks.filter((el) => {
  const wider = el.scrollWidth > el.clientWidth + 1 || !fitsColumn(el);
  if (!wider) return false;
  const scroller = scrollBox(el);
  return !(scroller && fitsColumn(scroller));
}).map((el) => {
  const rect = el.getBoundingClientRect();
  return `${describe(el)}: ${Math.ceil(Math.max(rect.width, el.scrollWidth))} px in a `
      + `${Math.round(columnRight - columnLeft)} px column`;
});
const headings = [...document.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6')]
    .filter((h) => !h.closest('nav, .bd-sidebar, .bd-header-article'))
    .map((h) => ({level: Number(h.tagName[1]), text: h.textContent.replace(/[#¶]/g, '').replace(/\s+/g, ' ').trim()
                  .slice(0, 60)}));
const images = [...document.querySelectorAll('img')].map((img) => ({
  element: describe(img).slice(0, 120), src: img.getAttribute('src') || '',
  alt: img.hasAttribute('alt') ? img.getAttribute('alt').trim() : null,
  decorative: img.getAttribute('role') === 'presentation' || img.getAttribute('aria-hidden') === 'true',
}));
// Text drawn over other text: the boxes of the article's text blocks (a block's box is where its text is drawn, which
// may run past its element, as a long row label printing over the next cell does), compared with the blocks just below
// or beside them, never with a block they contain or sit in.
const textBox = (el) => {
  const range = document.createRange();
  range.selectNodeContents(el);
  const rects = [el.getBoundingClientRect(), range.getBoundingClientRect()].filter((r) => r.width > 0 && r.height > 0);
  if (!rects.length) return null;
  return {left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
          top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom))};
};
const TOLERANCE = 1;
// A folded box (sphinx-togglebutton's .toggle-hidden) lays its text out in a box clipped to nothing: not seen.
const clippedAway = (el) => {
  for (let node = el.parentElement; node && node !== article; node = node.parentElement) {
    const style = getComputedStyle(node), rect = node.getBoundingClientRect();
    if ((style.overflowX !== 'visible' || style.overflowY !== 'visible') && (rect.width < 1 || rect.height < 1)) {
      return true;
    }
  }
  return false;
};
const texts = [...article.querySelectorAll('p, li, th, td, figcaption, h1, h2, h3, h4, h5, h6')]
    .filter((el) => shown(el) && el.textContent.trim() && !el.closest('.toggle-hidden') && !clippedAway(el))
    .map((el) => ({el: el, box: textBox(el)})).filter((item) => item.box)
    .sort((a, b) => a.box.top - b.box.top);
const overlaps = [];
for (let i = 0; i < texts.length && overlaps.length < 20; i++) {
  const a = texts[i];
  for (let j = i + 1; j < texts.length && texts[j].box.top < a.box.bottom - TOLERANCE; j++) {
    const b = texts[j];
    if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
    const wide = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
    const high = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
    if (wide > TOLERANCE && high > TOLERANCE) {
      const said = (el) => `${describe(el)}${el.closest('table') ? ` "${el.textContent.trim().slice(0, 40)}"` : ''}`;
      overlaps.push(`${said(a.el)} overlaps ${said(b.el)} by ${Math.round(wide)} x ${Math.round(high)} px`);
    }
  }
}
// How many characters a line of shown code may have before it wraps: the narrowest shown code box, in its font.
const codeBoxes = [...article.querySelectorAll('div.cell_input pre')].filter(shown);
const codeColumns = codeBoxes.length ? Math.min(...codeBoxes.map((pre) => {
  const style = getComputedStyle(pre);
  const probe = document.createElement('span');
  probe.textContent = 'x'.repeat(100);
  pre.appendChild(probe);
  const character = probe.getBoundingClientRect().width / 100;
  probe.remove();
  return Math.floor((pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)) / character);
})) : null;
// What a reader sees when the page opens: not folded into a closed <details> or a collapsed dropdown (whose content
// the theme hides or clips to nothing), not hidden, not a visually-hidden label of one pixel.
const seen = (el) => shown(el) && !clippedAway(el) && getComputedStyle(el).visibility !== 'hidden'
    && el.getBoundingClientRect().width > 1 && el.getBoundingClientRect().height > 1;
// Tables (a table inside another is part of it), as the page shows them and as it folds them.
const tables = [...article.querySelectorAll('table')].filter((table) => !table.parentElement.closest('table'));
const tablesShown = tables.filter(seen).length;
// Wider than the screen: an element, or a run of text (a long unbroken word, inline maths), reaching past the
// viewport's edge, unless a box that fits the screen scrolls it sideways. The whole page is read, the theme's own
// bars included.
const viewport = document.documentElement.clientWidth;
const pastTheEdge = (rect) => rect.width > 0 && (rect.right > viewport + 1 || rect.left < -1);
const inScrollBox = (el) => {
  for (let node = el; node && node !== document.body; node = node.parentElement) {
    const rect = node.getBoundingClientRect();
    if (scrollsItself(node) && rect.left >= -1 && rect.right <= viewport + 1) return true;
  }
  return false;
};
const runsOfText = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.textContent.trim()) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  if (pastTheEdge(range.getBoundingClientRect())) runsOfText.push(node.parentElement);
}
const overViewport = [...new Set([...document.body.querySelectorAll('*')]
    .filter((el) => pastTheEdge(el.getBoundingClientRect())).concat(runsOfText))]
    .filter((el) => seen(el) && !el.closest('script, style, noscript') && !inScrollBox(el))
    .filter((el, _, all) => !all.some((other) => other !== el && other.contains(el)))
    .map((el) => {
      const rect = el.getBoundingClientRect();
      return `${describe(el)}: ${Math.round(rect.left)} to ${Math.round(rect.right)} px on a ${viewport} px screen`;
    });
// Figures: where each image comes from, its alt text and caption, and how wide it is shown against the column.
const figures = [...article.querySelectorAll('figure')].filter(seen).map((figure) => {
  const image = figure.querySelector('img');
  const caption = figure.querySelector('figcaption');
  return {src: image ? image.getAttribute('src') || '' : '', alt: image ? (image.getAttribute('alt') || '').trim() : '',
          loaded: !!image && image.complete && image.naturalWidth > 0,
          width: image ? Math.round(image.getBoundingClientRect().width) : 0,
          caption: caption ? caption.textContent.replace(/\s+/g, ' ').trim() : ''};
});
return {column: Math.round(columnRight - columnLeft), overflowing: overflowing, headings: headings, images: images,
        overlaps: overlaps, code_columns: codeColumns,
        page_overflow: document.documentElement.scrollWidth - window.innerWidth,
        viewport: viewport, window_width: window.innerWidth,
        tables_shown: tablesShown, tables_folded: tables.length - tablesShown,
        over_viewport: overViewport, figures: figures};
"""

RUN_AXE_SCRIPT = r"""
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then((results) => done(results.violations.map((v) => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
})))).catch((error) => done({error: String(error)}));
"""


def save_full_page_screenshot(driver, path: Path) -> None:
    """The whole page (not only the first screen), at the window's width, as a PNG."""
    import base64

    width, height = driver.execute_script(
        "return [document.documentElement.clientWidth, document.documentElement.scrollHeight]")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 16000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


def layout_facts(driver, page: Path) -> dict:
    """LAYOUT_SCRIPT's facts on ``page``, once its display maths is typeset."""
    driver.get(page.as_uri())
    driver.execute_async_script(WAIT_FOR_MATHJAX_SCRIPT)
    return driver.execute_script(LAYOUT_SCRIPT)


@pytest.fixture(scope="module")
def page_audit(html_dir: Path):
    """audit(entry, screen): LAYOUT_SCRIPT's facts and axe-core's violations (None without axe-core) on the book
    page ``entry`` (a _toc.yml file) in a window of that screen; each page is loaded once per screen. Screenshots of
    SCREENSHOT_PAGES go to _build/screenshots/ as they are loaded. The seconds axe takes are printed at the end."""
    import time

    axe_path = project_root() / AXE_SCRIPT
    axe_source = axe_path.read_text(encoding="utf-8") if axe_path.is_file() else None
    screenshots = project_root() / SCREENSHOT_DIR
    screenshots.mkdir(parents=True, exist_ok=True)
    drivers: dict[str, object] = {}
    cache: dict[tuple[str, str], dict] = {}
    seconds = {"load": 0.0, "axe": 0.0}
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.ExitStack() as stack:
        def audit(entry: str, screen: str) -> dict:
            if (entry, screen) in cache:
                return cache[(entry, screen)]
            if screen not in drivers:
                drivers[screen] = stack.enter_context(chromium(monkeypatch, SCREENS[screen]))
                drivers[screen].set_script_timeout(60)
            driver = drivers[screen]
            page = html_dir / f"{entry}.html"
            if not page.is_file():
                skip_or_fail(f"{page} missing: is {entry} in _toc.yml and was the book rebuilt?")
            started = time.perf_counter()
            facts = layout_facts(driver, page)
            seconds["load"] += time.perf_counter() - started
            for label, shown_entry in SCREENSHOT_PAGES.items():
                if shown_entry == entry:
                    name = f"{label}-{Path(entry).name}-{SCREENS[screen][0]}.png"
                    save_full_page_screenshot(driver, screenshots / name)
            facts["axe"] = None
            if axe_source is not None and screen in AXE_SCREENS:
                started = time.perf_counter()
                driver.execute_script(axe_source)
                facts["axe"] = driver.execute_async_script(RUN_AXE_SCRIPT)
                seconds["axe"] += time.perf_counter() - started
            cache[(entry, screen)] = facts
            return facts

        yield audit
    print(f"\n[book audit] {len(cache)} page loads: {seconds['load']:.1f} s loading and measuring, "
          f"{seconds['axe']:.1f} s in axe-core")


@pytest.mark.browser
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("entry", book_pages())
def test_tables_code_and_maths_fit_the_column_or_scroll_in_their_own_box(page_audit, entry: str,
                                                                         screen: str) -> None:
    facts = page_audit(entry, screen)
    width = SCREENS[screen][0]
    assert not facts["overflowing"], (
        f"{entry} at {width} px: {len(facts['overflowing'])} table(s), code block(s) or display maths wider than the "
        f"{facts['column']} px text column with no box of their own that scrolls: {facts['overflowing'][:6]}")
    assert facts["page_overflow"] <= 1, f"{entry} at {width} px: scrolls sideways by {facts['page_overflow']} px"


@pytest.mark.browser
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("entry", book_pages())
def test_no_text_is_drawn_over_other_text(page_audit, entry: str, screen: str) -> None:
    facts = page_audit(entry, screen)
    assert not facts["overlaps"], (f"{entry} at {SCREENS[screen][0]} px: text blocks drawn over each other: "
                                   f"{facts['overlaps'][:6]}")


@pytest.mark.browser
@pytest.mark.parametrize("entry", book_pages())
def test_shown_code_fits_its_box_at_a_laptops_width(page_audit, entry: str) -> None:
    """The shown cells are formatted at ``SHOWN_CODE_COLUMNS`` (test_shown_code.py): the code box holds that many."""
    columns = page_audit(entry, "laptop")["code_columns"]
    assert columns is None or columns >= SHOWN_CODE_COLUMNS, (
        f"{entry} at {SCREENS['laptop'][0]} px: the code box holds {columns} characters a line, fewer than the "
        f"{SHOWN_CODE_COLUMNS} its cells are formatted to: they wrap mid-call")


# The checks themselves, on hand-made pages at a phone's width: what they must find, and what they must let pass.
PLANTED_PAGE = """<html><head><style>body {{ margin: 0; }} td {{ white-space: nowrap; padding: 2px; }}</style></head>
<body><main><article style="width: 360px">{body}</article></main></body></html>"""
WIDE_TABLE = "<table><caption>Wide</caption><tr>" + "".join(
    f"<td>column number {i} of a wide table</td>" for i in range(8)) + "</tr></table>"


def planted_layout(tmp_path: Path, monkeypatch, body: str) -> dict:
    page = tmp_path / "planted.html"
    page.write_text(PLANTED_PAGE.format(body=body), encoding="utf-8")
    with chromium(monkeypatch, PHONE) as driver:
        return layout_facts(driver, page)


@pytest.mark.browser
def test_the_geometry_check_finds_a_table_that_overflows_with_no_scroll_box(tmp_path, monkeypatch) -> None:
    facts = planted_layout(tmp_path, monkeypatch, f"<p>Before.</p>{WIDE_TABLE}")
    assert len(facts["overflowing"]) == 1 and facts["overflowing"][0].startswith('<table> captioned "Wide"')
    facts = planted_layout(tmp_path, monkeypatch, f'<p>Before.</p><div style="overflow-x: auto">{WIDE_TABLE}</div>')
    assert facts["overflowing"] == [] and facts["page_overflow"] <= 1


@pytest.mark.browser
def test_the_overlap_check_finds_text_drawn_over_other_text(tmp_path, monkeypatch) -> None:
    # A row label too long for its fixed-width cell prints over the next cell, as an identifier did over a number.
    label = ('<table style="table-layout: fixed; width: 300px"><tr><td style="width: 60px">'
             'novelty_unexpectedness_s1_s4_s5_s6</td><td>9.9</td></tr></table>')
    moved = '<p>First paragraph.</p><p style="margin-top: -1.2em">Second paragraph.</p>'
    facts = planted_layout(tmp_path, monkeypatch, label + moved)
    assert len(facts["overlaps"]) == 2, facts["overlaps"]
    assert "novelty_unexpectedness" in facts["overlaps"][0] and '"9.9"' in facts["overlaps"][0]
    assert '"First paragraph."' in facts["overlaps"][1] and '"Second paragraph."' in facts["overlaps"][1]
    spaced = label.replace("width: 60px", "width: 260px") + moved.replace("-1.2em", "0")
    assert planted_layout(tmp_path, monkeypatch, spaced)["overlaps"] == []


@pytest.mark.browser
def test_the_phone_screen_is_as_narrow_as_a_phone(tmp_path, monkeypatch) -> None:
    facts = planted_layout(tmp_path, monkeypatch, "<p>A line.</p>")
    assert facts["window_width"] == PHONE[0], f"the phone's page is laid out {facts['window_width']} px wide"


@pytest.mark.browser
def test_the_screen_check_finds_what_runs_past_a_phones_edge_and_lets_a_scroll_box_pass(tmp_path, monkeypatch) -> None:
    long_word = "<p>commit d17d5ddd0b84e89f379d971eadb54e2a9b722e4d17d5ddd0b84e89f379d971eadb54e2a9b722e4</p>"
    wide_box = '<div style="width: 600px">A box wider than the phone.</div>'
    facts = planted_layout(tmp_path, monkeypatch, long_word + wide_box)
    assert len(facts["over_viewport"]) == 2, facts["over_viewport"]
    assert sorted("d17d5ddd" in found for found in facts["over_viewport"]) == [False, True]
    assert any("A box wider" in found for found in facts["over_viewport"])
    scrolled = f'<div style="overflow-x: auto">{long_word}{wide_box}</div>'
    assert planted_layout(tmp_path, monkeypatch, scrolled)["over_viewport"] == []


@pytest.mark.browser
def test_the_table_count_tells_shown_tables_from_folded_ones(tmp_path, monkeypatch) -> None:
    table = "<table><tr><td>1</td></tr></table>"
    body = (f"<p>Shown:</p>{table}<details><summary>Audit</summary>{table}</details>"
            f'<div style="height: 0; overflow: hidden">{table}</div>'
            f"<details open><summary>Open</summary>{table}</details>")
    facts = planted_layout(tmp_path, monkeypatch, body)
    assert (facts["tables_shown"], facts["tables_folded"]) == (2, 2)


#: The book shows at most this many tables (summed over its pages); the others are folded or linked from results/.
MAX_SHOWN_TABLES = 60
#: The book's headline figure, every judge on one scale (``recjudge.trust.judge_table``), and the pages it opens.
HEADLINE_FIGURE = "judges"
HEADLINE_PAGES = ("book/intro", "book/notebooks/trust_judges")
#: The headline figure is drawn at the text column's width: not shrunk below this share of it.
COLUMN_SHARE = 0.9


@pytest.mark.browser
@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_book_shows_at_most_60_tables(page_audit, screen: str) -> None:
    counts = {entry: page_audit(entry, screen) for entry in toc_files(project_root() / TOC_FILE)}
    shown = {entry: facts["tables_shown"] for entry, facts in counts.items()}
    folded = sum(facts["tables_folded"] for facts in counts.values())
    per_page = ", ".join(f"{Path(entry).name} {n}" for entry, n in sorted(shown.items(), key=lambda i: -i[1]) if n)
    assert sum(shown.values()) <= MAX_SHOWN_TABLES, (
        f"at {SCREENS[screen][0]} px the book shows {sum(shown.values())} tables ({folded} folded), more than "
        f"{MAX_SHOWN_TABLES}: {per_page}")


@pytest.mark.browser
@pytest.mark.parametrize("page", [name for name in chapter_pages() if name not in SUMMARY_PAGES])
def test_a_chapter_shows_a_key_table_and_a_figure(page_audit, page: str) -> None:
    facts = page_audit(f"{CHAPTER_DIR.as_posix()}/{page}", "laptop")
    assert facts["tables_shown"] >= 1 and facts["figures"], (
        f"{page}: {facts['tables_shown']} table(s) and {len(facts['figures'])} figure(s) shown; a chapter leads with "
        "one key table and one figure")


def headline_alt() -> str:
    """The headline figure's alt text as the committed judge table makes it."""
    from recjudge.compendium.results import load_committed_table
    from recjudge.trust import judge_table

    return judge_table.figure_alt(load_committed_table("trust_judges", "judge_table"))


@pytest.mark.browser
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("entry", HEADLINE_PAGES)
def test_the_headline_figure_opens_the_landing_page_and_part_v(page_audit, entry: str, screen: str) -> None:
    facts = page_audit(entry, screen)
    found = [figure for figure in facts["figures"] if Path(figure["src"]).stem.startswith(HEADLINE_FIGURE)]
    assert len(found) == 1, f"{entry} at {SCREENS[screen][0]} px: {len(found)} headline figures in {facts['figures']}"
    figure = found[0]
    assert figure["loaded"], f"{entry}: the headline figure {figure['src']} does not load"
    assert re.match(r"Fig\. \d+", figure["caption"]), f"{entry}: the headline figure has no number: {figure['caption']}"
    assert figure["alt"] == headline_alt(), f"{entry}: its alt text is not the finding the judge table gives"
    assert COLUMN_SHARE * facts["column"] <= figure["width"] <= facts["column"] + 1, (
        f"{entry} at {SCREENS[screen][0]} px: the headline figure is {figure['width']} px wide in a "
        f"{facts['column']} px column")


@pytest.mark.browser
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("entry", book_pages())
def test_nothing_runs_past_the_screens_edge_outside_a_box_that_scrolls(page_audit, entry: str, screen: str) -> None:
    facts = page_audit(entry, screen)
    assert not facts["over_viewport"], (
        f"{entry} at {SCREENS[screen][0]} px: {len(facts['over_viewport'])} element(s) or text wider than the "
        f"{facts['viewport']} px screen with no box that scrolls them: {facts['over_viewport'][:6]}")


def heading_skips(headings: list[dict]) -> list[str]:
    """Headings that skip a level on the way down (an h2 followed by an h4), or a page that does not open with h1."""
    skips, previous = [], 0
    for heading in headings:
        if heading["level"] > previous + 1:
            skips.append(f"h{heading['level']} {heading['text']!r} after "
                         f"{'h' + str(previous) if previous else 'the page start'}")
        previous = heading["level"]
    return skips


@pytest.mark.browser
@pytest.mark.parametrize("entry", book_pages())
def test_headings_are_in_order_and_images_described(page_audit, entry: str) -> None:
    facts = page_audit(entry, "laptop")
    assert not heading_skips(facts["headings"]), f"{entry}: headings skip a level: {heading_skips(facts['headings'])}"
    undescribed = [f"{image['element']} {Path(image['src']).name[:40]}" for image in facts["images"]
                   if not (image["decorative"] or (image["alt"] and image_is_described(image)))]
    assert not undescribed, f"{entry}: image(s) without alt text: {undescribed}"


@pytest.mark.browser
@pytest.mark.parametrize("screen", AXE_SCREENS)
@pytest.mark.parametrize("entry", book_pages())
def test_axe_core_finds_no_serious_accessibility_violation(page_audit, entry: str, screen: str) -> None:
    facts = page_audit(entry, screen)
    if facts["axe"] is None:
        skip_or_fail(f"{AXE_SCRIPT} is missing: run `make setup` (it installs axe-core, pinned in package-lock.json, "
                     "with npm)")
    assert not isinstance(facts["axe"], dict), f"{entry}: axe-core failed: {facts['axe']}"
    serious = [violation for violation in facts["axe"] if violation["impact"] in FAILING_IMPACTS]
    assert not serious, f"{entry} at {SCREENS[screen][0]} px: axe-core finds {len(serious)} serious violation(s): " \
        + "; ".join(f"{v['id']} ({v['impact']}, {v['nodes']} element(s), e.g. {v['targets']}): {v['help']}"
                    for v in serious)


def test_heading_skips_are_found() -> None:
    levels = [{"level": level, "text": f"h{level}"} for level in (1, 2, 3, 2, 4, 1)]
    assert heading_skips(levels) == ["h4 'h4' after h2"]
    assert heading_skips([{"level": 2, "text": "x"}]) == ["h2 'x' after the page start"]
