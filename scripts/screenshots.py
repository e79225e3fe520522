"""Saves a full-page screenshot (PNG) of every page of a built book at a laptop's and a phone's width, so that two
builds (before and after a change) can be compared page by page.

    python scripts/screenshots.py --html _build/html/book --out _build/screenshots/after
    python scripts/screenshots.py --html _build/html/book --out /tmp/shot --page notebooks/proxy_vs_llm.html --width 390

Every ``DIR/**/*.html`` is taken (but ``genindex.html``, ``search.html`` and what is under ``_static/`` or
``_sources/``), or only the ``--page`` ones (paths relative to ``--html``). Each is saved once per ``--width`` (1280 and
390 px unless told) as ``<page path, "/" as "__", without ".html">-<width>.png`` in ``--out``, e.g.
``notebooks__proxy_vs_llm-1280.png``, and one line is printed per file.

The browser is the one of the book's browser test (``tests/test_book_render.py``): Debian's headless Chromium driven by
Selenium through Debian's chromedriver, with a throw-away profile, pages opened as ``file://`` URLs, and a width
narrower than Chromium makes a window (a phone's) emulated as DevTools' device toolbar does. A page is screenshot whole:
once it is loaded and MathJax has typeset it, the window (or the emulated screen) is made as tall as the document
(at most ``--max-height`` px, 32,000 unless told).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")
#: The widths taken unless told: a laptop's and a phone's (the common 390 px phones).
DEFAULT_WIDTHS = (1280, 390)
#: The window height a page is first laid out in, by width: a laptop's window and a phone's screen (as the test).
LAPTOP_HEIGHT, PHONE_HEIGHT = 1600, 844
#: Headless Chromium makes no window narrower than this: a narrower screen is emulated (DevTools' device metrics).
NARROWEST_WINDOW = 500
#: The tallest screenshot taken unless told, in px: a longer page is cut there. (Chromium saves 25,000 px tall pages
#: whole; the book's longest page, a chapter at the phone's width, is about 25,000 px.)
DEFAULT_MAX_HEIGHT = 32_000
#: Pages of a Sphinx build that are not the book's content.
SKIPPED_PAGES = {"genindex.html", "search.html"}
SKIPPED_FOLDERS = {"_static", "_sources"}
#: Seconds to wait for MathJax to typeset a page, and for its images and fonts to load.
TYPESET_TIMEOUT = 60

# Resolves when MathJax (version 3) has typeset the page, at once on a page without MathJax.
WAIT_FOR_MATHJAX_SCRIPT = r"""
const done = arguments[arguments.length - 1];
const startup = window.MathJax && window.MathJax.startup;
if (!startup || !startup.promise) { done(true); return; }
startup.promise.then(() => done(true), () => done(false));
"""

# Resolves when the page's fonts and every image have loaded (an image that failed counts as done).
WAIT_FOR_IMAGES_SCRIPT = r"""
const done = arguments[arguments.length - 1];
const images = [...document.images].filter((image) => !image.complete)
    .map((image) => new Promise((resolve) => { image.onload = image.onerror = resolve; }));
Promise.all([document.fonts ? document.fonts.ready : null, ...images]).then(() => done(true));
"""

DOCUMENT_HEIGHT_SCRIPT = "return Math.ceil(Math.max(document.documentElement.scrollHeight, document.body.scrollHeight))"


def book_pages(html_dir: Path) -> list[Path]:
    """Every content page of a built book, as paths relative to its folder."""
    pages = []
    for page in sorted(html_dir.rglob("*.html")):
        relative = page.relative_to(html_dir)
        if relative.name in SKIPPED_PAGES and len(relative.parts) == 1:
            continue
        if SKIPPED_FOLDERS & set(relative.parts[:-1]):
            continue
        pages.append(relative)
    return pages


def screenshot_name(page: Path, width: int) -> str:
    """``notebooks/proxy_vs_llm.html`` at 1280 px -> ``notebooks__proxy_vs_llm-1280.png``."""
    return f"{page.with_suffix('').as_posix().replace('/', '__')}-{width}.png"


@contextmanager
def chromium(width: int) -> Iterator:
    """A headless Chromium driven by Selenium, laid out at ``width`` px, with a throw-away profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        raise SystemExit("Debian's chromium and chromium-driver are not installed (apt-get install chromium "
                         "chromium-driver)")
    height = PHONE_HEIGHT if width < NARROWEST_WINDOW else LAPTOP_HEIGHT
    profile = tempfile.mkdtemp(prefix="recjudge-screenshots-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager look for drivers online
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(TYPESET_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def set_screen(driver, width: int, height: int) -> None:
    """Lays the page out in a screen ``width`` x ``height`` px: the window itself, or below the narrowest window
    Chromium makes, an emulated screen of that size (as DevTools' device toolbar)."""
    if width < NARROWEST_WINDOW:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    else:
        driver.set_window_size(width, height)
        # The window is the window's outer size: the page's viewport must be exactly the width asked for.
        viewport_width, viewport_height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        if (viewport_width, viewport_height) != (width, height):
            driver.set_window_size(2 * width - viewport_width, 2 * height - viewport_height)


def wait_until_drawn(driver) -> None:
    """Waits for MathJax to typeset the page and for its images and fonts to load."""
    if not driver.execute_async_script(WAIT_FOR_MATHJAX_SCRIPT):
        print("  (MathJax reported an error on this page)")
    driver.execute_async_script(WAIT_FOR_IMAGES_SCRIPT)


def save_full_page(driver, page_url: str, width: int, target: Path, max_height: int) -> tuple[int, bool]:
    """Screenshots the whole page at ``page_url`` into ``target``, at most ``max_height`` px of it; returns the
    screenshot's height and whether the page was cut."""
    set_screen(driver, width, PHONE_HEIGHT if width < NARROWEST_WINDOW else LAPTOP_HEIGHT)
    driver.get(page_url)
    wait_until_drawn(driver)
    height = 0
    # The document can grow once the screen is taller (content laid out to the screen's height): measure again.
    for _attempt in range(3):
        document_height = min(driver.execute_script(DOCUMENT_HEIGHT_SCRIPT), max_height)
        if document_height <= height:
            break
        height = document_height
        set_screen(driver, width, height)
        wait_until_drawn(driver)
        time.sleep(0.3)  # let the resized page be laid out and painted
    driver.execute_script("window.scrollTo(0, 0)")
    if not driver.save_screenshot(str(target)):
        raise RuntimeError(f"Chromium saved no screenshot of {page_url}")
    return height, driver.execute_script(DOCUMENT_HEIGHT_SCRIPT) > max_height


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html", type=Path, required=True, help="the built book's folder (holds intro.html)")
    parser.add_argument("--out", type=Path, required=True, help="the folder the screenshots are saved in")
    parser.add_argument("--page", action="append", default=[], metavar="PATH",
                        help="a page relative to --html, e.g. notebooks/proxy_vs_llm.html (repeatable; default: all)")
    parser.add_argument("--width", action="append", type=int, default=[], metavar="PX",
                        help=f"a window width in px (repeatable; default: {' and '.join(map(str, DEFAULT_WIDTHS))})")
    parser.add_argument("--max-height", type=int, default=DEFAULT_MAX_HEIGHT, metavar="PX",
                        help=f"the tallest screenshot; a longer page is cut (default: {DEFAULT_MAX_HEIGHT})")
    arguments = parser.parse_args(argv)

    html_dir = arguments.html.resolve()
    pages = [Path(page) for page in arguments.page] or book_pages(html_dir)
    missing = [str(page) for page in pages if not (html_dir / page).is_file()]
    if missing:
        raise SystemExit(f"no such page in {html_dir}: {', '.join(missing)}")
    if not pages:
        raise SystemExit(f"no HTML page in {html_dir}: is the book built?")
    arguments.out.mkdir(parents=True, exist_ok=True)
    for width in arguments.width or DEFAULT_WIDTHS:
        with chromium(width) as driver:
            for page in pages:
                target = arguments.out / screenshot_name(page, width)
                height, cut = save_full_page(driver, (html_dir / page).as_uri(), width, target, arguments.max_height)
                print(f"{target}  {width} x {height} px{'  (cut: the page is longer)' if cut else ''}  {page}",
                      flush=True)


if __name__ == "__main__":
    main()
