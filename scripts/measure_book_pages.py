"""Prints, for every chapter page of the built book, what a reader meets at a 1280 px wide window: the page height,
the width of the text column, the widest table (and whether it is a paper-beside-ours table), and the number of
tables and figures.

    python scripts/measure_book_pages.py            # after `make book`
"""

from __future__ import annotations

import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from recjudge.paths import project_root

PAGE_SCRIPT = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main');
const tables = [...article.querySelectorAll('table')];
const widest = tables.reduce((best, t) => (t.scrollWidth > (best ? best.scrollWidth : 0) ? t : best), null);
return {
  height: document.documentElement.scrollHeight,
  column: Math.round(article.getBoundingClientRect().width),
  tables: tables.length,
  figures: article.querySelectorAll('figure').length,
  widest: widest ? widest.scrollWidth : 0,
  paper_tables_over_column: [...article.querySelectorAll('table.paper-beside-ours')]
      .filter((t) => t.scrollWidth > article.clientWidth).length,
};
"""


def main() -> None:
    pages = sorted((project_root() / "_build" / "html" / "book" / "notebooks").glob("*.html"))
    if not pages:
        raise SystemExit("no built book: run `make book` first")
    options = Options()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,1000"):
        options.add_argument(flag)
    with tempfile.TemporaryDirectory() as profile:
        options.add_argument(f"--user-data-dir={profile}")
        options.binary_location = "/usr/bin/chromium"
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            print(f"{'page':26} {'height px':>9} {'column px':>9} {'tables':>6} {'figures':>7} {'widest px':>9}  "
                  "paper tables over the column")
            for page in pages:
                driver.get(page.as_uri())
                facts = driver.execute_script(PAGE_SCRIPT)
                print(f"{page.stem:26} {facts['height']:9,} {facts['column']:9,} {facts['tables']:6} "
                      f"{facts['figures']:7} {facts['widest']:9,}  {facts['paper_tables_over_column']}")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
