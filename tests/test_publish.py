"""Publishing the book (`recjudge book --publish DEST`, `make publish`): to a git branch through ghp-import (here a
local bare repository) or to a folder; a partial book, a dirty checkout and a stale build are refused with one line
each; publishing an unchanged book again changes nothing. The site is a tiny stand-in for `_build/html`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from recjudge.compendium.publish import (
    BUILD_INFO,
    NOJEKYLL,
    Destination,
    PublishError,
    landing_page,
    publish,
    write_build_info,
)

INTRO = """<!DOCTYPE html><html><head><title>recjudge</title></head><body>
<article class="bd-article" role="main"><h1>The book</h1><p>What it is.</p></article></body></html>
"""
DATA_NEEDED = """<html><body><article class="bd-article"><h1>A chapter</h1>
<div class="admonition warning"><p class="admonition-title">Data needed: Serendipity-2018</p></div>
</article></body></html>
"""
NOT_RUN = """<html><body><article class="bd-article"><h1>At a glance</h1>
<p>Each claim is reproduced, partly, or not run in this build.</p>
<table><tr><td><p>A claim</p></td><td><p><strong>not run in this build</strong></p></td></tr></table>
</article></body></html>
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A clean git checkout with one commit, and a remote `pages`: a local bare repository."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "--quiet", "--initial-branch", "main")
    git(root, "config", "user.name", "Maintainer")
    git(root, "config", "user.email", "maintainer@example.org")
    (root / "README.md").write_text("# The project\n")
    (root / ".gitignore").write_text("_build/\n")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "First")
    bare = tmp_path / "pages.git"
    git(tmp_path, "init", "--quiet", "--bare", str(bare))
    git(root, "remote", "add", "pages", str(bare))
    return root


def build(root: Path, pages: dict[str, str] | None = None, data: dict[str, str] | None = None,
          chapters: dict[str, dict[str, str | None]] | None = None) -> Path:
    """A built site as `recjudge book` leaves it: Jupyter Book's redirecting index.html, the pages and the build
    record of the checkout's commit."""
    site = root / "_build" / "html"
    site.mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />\n')
    (site / "_static").mkdir(exist_ok=True)
    (site / "_static" / "recjudge.css").write_text("body {}\n")
    for name, text in {"book/intro.html": INTRO, **(pages or {})}.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    write_build_info(site, root, profile="default", judges=(), data=data or {"movielens-latest-small": "complete"},
                     chapters=chapters if chapters is not None else {"proxy_vs_llm": {
                         "fingerprint": "f1", "executed": "f1", "differs": [], "results": {"table2.csv": "t"},
                         "tables_changed": []}})
    return site


def branch_files(bare: Path, branch: str = "gh-pages") -> list[str]:
    return git(bare, "ls-tree", "-r", "--name-only", branch).splitlines()


def commits(bare: Path, branch: str = "gh-pages") -> int:
    return int(git(bare, "rev-list", "--count", branch))


def refused(site: Path, root: Path, destination: Destination, variant: str | None = None) -> str:
    with pytest.raises(PublishError) as error:
        publish(site, root, destination, variant=variant, log=lambda line: None)
    return str(error.value)


def test_publishing_to_a_bare_repository_puts_the_site_on_its_branch(checkout: Path, tmp_path: Path) -> None:
    site = build(checkout)
    bare = tmp_path / "pages.git"
    assert publish(site, checkout, Destination.parse("pages"), log=lambda line: None) == "published"
    files = branch_files(bare)
    assert {"index.html", ".nojekyll", BUILD_INFO, "book/intro.html", "_static/recjudge.css"} <= set(files)
    record = json.loads(git(bare, "show", f"gh-pages:{BUILD_INFO}"))
    commit = git(checkout, "rev-parse", "HEAD")
    assert record["commit"] == commit and record["profile"] == "default" and record["gaps"] == []
    assert "partial" not in record
    assert record["data"] == {"movielens-latest-small": "complete"} and record["judges"] == []
    # The landing page (where index.html redirects) says what it was built from; the built site is not changed
    intro = git(bare, "show", "gh-pages:book/intro.html")
    assert f"Built from commit <code>{commit[:12]}</code> with the data the data tour lists (all complete)" in intro
    assert '<a href="../build-info.json">' in intro
    assert "Built from" not in (site / "book" / "intro.html").read_text()
    assert git(checkout, "status", "--porcelain") == ""


def test_publishing_twice_with_no_change_makes_no_new_commit(checkout: Path, tmp_path: Path) -> None:
    site = build(checkout)
    bare = tmp_path / "pages.git"
    publish(site, checkout, Destination.parse("pages"), log=lambda line: None)
    first = git(bare, "rev-parse", "gh-pages")
    assert publish(site, checkout, Destination.parse("pages"), log=lambda line: None) == "unchanged"
    assert git(bare, "rev-parse", "gh-pages") == first and commits(bare) == 1
    # A changed page is a second commit on top of the first
    (site / "book" / "intro.html").write_text(INTRO.replace("What it is.", "What it is, revised."))
    assert publish(site, checkout, Destination.parse(str(bare)), log=lambda line: None) == "published"
    assert commits(bare) == 2 and git(bare, "rev-parse", "gh-pages~1") == first


def test_a_partial_book_is_refused_with_one_line(checkout: Path, tmp_path: Path) -> None:
    site = build(checkout, {"book/notebooks/proxy_vs_llm.html": DATA_NEEDED}, {"serendipity-2018": "missing"})
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1
    assert "Data needed box (book/notebooks/proxy_vs_llm.html)" in message and "--allow-partial" in message
    assert git(tmp_path / "pages.git", "branch", "--list") == ""  # nothing was published


def test_a_chapter_not_run_is_refused_with_one_line(checkout: Path) -> None:
    site = build(checkout, {"book/notebooks/at_a_glance.html": NOT_RUN})
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and "not run in this build" in message


def test_the_prose_that_explains_not_run_is_not_a_chapter_not_run(checkout: Path) -> None:
    site = build(checkout, {"book/notebooks/at_a_glance.html": NOT_RUN.replace(
        "<strong>not run in this build</strong>", "<strong>reproduced</strong>")})
    assert publish(site, checkout, Destination.parse("pages"), log=lambda line: None) == "published"


def test_a_dirty_checkout_is_refused_with_one_line(checkout: Path) -> None:
    site = build(checkout)
    (checkout / "README.md").write_text("# The project, edited\n")
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and "the checkout is not clean" in message


def test_a_build_older_than_the_last_commit_is_refused_with_one_line(checkout: Path) -> None:
    site = build(checkout)
    (checkout / "README.md").write_text("# The project, edited\n")
    git(checkout, "commit", "--quiet", "-am", "Second")
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and "the build is older than the last commit" in message
    (site / BUILD_INFO).unlink()
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and f"{BUILD_INFO} is missing" in message


def test_a_partial_book_is_published_when_allowed_and_says_so(checkout: Path, tmp_path: Path) -> None:
    site = build(checkout, {"book/notebooks/proxy_vs_llm.html": DATA_NEEDED}, {"serendipity-2018": "missing"})
    publish(site, checkout, Destination.parse("pages"), allow_partial=True, log=lambda line: None)
    bare = tmp_path / "pages.git"
    record = json.loads(git(bare, "show", f"gh-pages:{BUILD_INFO}"))
    assert len(record["gaps"]) == 1 and record["data"] == {"serendipity-2018": "missing"}
    # "partial" is a dataset's status only (the data layer's word); what makes the book incomplete is "gaps"
    assert "partial" not in record
    intro = git(bare, "show", "gh-pages:book/intro.html")
    assert "(1 missing: <code>serendipity-2018</code>)" in intro and "A partial book" in intro


def test_a_variant_goes_to_its_own_folder_beside_the_book(checkout: Path, tmp_path: Path) -> None:
    bare = tmp_path / "pages.git"
    publish(build(checkout), checkout, Destination.parse("pages"), log=lambda line: None)
    variant_site = tmp_path / "variant-html"
    variant_site.mkdir()
    (variant_site / "index.html").write_text(INTRO.replace("The book", "The variant"))
    write_build_info(variant_site, checkout, profile="smoke", judges=("openai:gpt-4o-mini",), data={},
                     variant="openai-gpt-4o-mini-smoke")
    publish(variant_site, checkout, Destination.parse("pages"), variant="openai-gpt-4o-mini-smoke",
            log=lambda line: None)
    files = set(branch_files(bare))
    assert {"index.html", "book/intro.html", "variants/openai-gpt-4o-mini-smoke/index.html",
            f"variants/openai-gpt-4o-mini-smoke/{BUILD_INFO}"} <= files
    assert "judges <code>openai:gpt-4o-mini</code>" in git(bare, "show",
                                                           "gh-pages:variants/openai-gpt-4o-mini-smoke/index.html")
    # Publishing the book again keeps the variant
    publish(build(checkout), checkout, Destination.parse("pages"), log=lambda line: None)
    assert "variants/openai-gpt-4o-mini-smoke/index.html" in branch_files(bare)


def test_publishing_to_a_folder_mirrors_the_site(checkout: Path, tmp_path: Path) -> None:
    site = build(checkout)
    folder = tmp_path / "www"
    destination = Destination.parse(f"folder:{folder}")
    assert publish(site, checkout, destination, log=lambda line: None) == "published"
    assert {".nojekyll", BUILD_INFO, "index.html", "book/intro.html"} <= {
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
    assert publish(site, checkout, destination, log=lambda line: None) == "unchanged"
    (site / "book" / "intro.html").unlink()
    (site / "book" / "start.html").write_text(INTRO)
    (site / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/start.html" />\n')
    assert publish(site, checkout, destination, log=lambda line: None) == "published"
    assert not (folder / "book" / "intro.html").exists()
    assert "Built from" in (folder / "book" / "start.html").read_text()
    # A folder that holds something else is never emptied
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    assert "not a published book" in refused(site, checkout, Destination.parse(f"folder:{other}"))
    assert (other / "notes.txt").is_file()


def test_the_landing_page_is_where_index_redirects(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html><body>Home</body></html>")
    assert landing_page(tmp_path) == tmp_path / "index.html"
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text(INTRO)
    assert landing_page(tmp_path) == tmp_path / "book" / "intro.html"


def test_recjudge_book_publishes_an_existing_build(checkout: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """`recjudge book --check-only --publish DEST` (what `make publish` runs after a build) reuses the build."""
    from recjudge.cli import main
    from recjudge.compendium import book as book_module

    site = build(checkout)
    monkeypatch.setenv("RECJUDGE_HOME", str(checkout))
    monkeypatch.setattr(book_module, "check_built_book", lambda root, html_dir=None: None)
    assert main(["book", "--check-only", "--publish", "pages"]) == 0
    assert "index.html" in branch_files(tmp_path / "pages.git")
    (checkout / "README.md").write_text("# Edited\n")
    assert main(["book", "--check-only", "--publish", "pages"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recjudge book: not published: the checkout is not clean")
    assert main(["book", "--check-only", "--publish", "folder:"]) == 2
    assert site.is_dir()


def test_the_repository_and_download_buttons_follow_the_repository_url() -> None:
    import yaml

    from recjudge.compendium.sphinx_extension import repository_buttons

    committed = yaml.safe_load(Path(__file__).resolve().parents[1].joinpath("_config.yml").read_text())
    quiet = repository_buttons(committed, {"use_fullscreen_button": False})
    assert quiet == {"use_fullscreen_button": False, "use_repository_button": False, "use_download_button": False}
    named = repository_buttons({"repository": {"url": "https://example.org/recjudge", "branch": "main"}}, {})
    assert named["use_repository_button"] and named["use_download_button"]
    assert named["repository_url"] == "https://example.org/recjudge" and named["repository_branch"] == "main"


def test_recjudge_book_publish_builds_records_and_publishes(checkout: Path, stand_in_book_build: list,
                                                            tmp_path: Path, monkeypatch) -> None:
    """`recjudge book --publish DEST` (what `make publish` runs): the build writes build-info.json of the clean
    checkout's commit, and the site goes to the branch; a second run finds nothing to publish."""
    from recjudge.cli import main
    from recjudge.compendium import runplan as runplan_module

    builds = stand_in_book_build
    monkeypatch.setattr(runplan_module, "executed_from", lambda runs, root: {})
    assert main(["book", "--publish", "pages", "--branch", "pages-site"]) == 0
    record = json.loads((checkout / "_build" / "html" / BUILD_INFO).read_text())
    assert record["commit"] == git(checkout, "rev-parse", "HEAD") and record["clean_checkout"] is True
    bare = tmp_path / "pages.git"
    assert {"index.html", ".nojekyll", BUILD_INFO} <= set(branch_files(bare, "pages-site"))
    assert main(["book", "--publish", "pages", "--branch", "pages-site"]) == 0
    assert commits(bare, "pages-site") == 1
    assert len(builds) == 1, "`make publish` reuses an unchanged build (README: build or reuse an up-to-date build)"
    (checkout / "book").mkdir()
    (checkout / "book" / "intro.md").write_text("# The book, revised\n")
    git(checkout, "add", "book")
    git(checkout, "commit", "--quiet", "-m", "Revised")
    assert main(["book", "--publish", "pages", "--branch", "pages-site"]) == 0 and len(builds) == 2


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_publish_runs_recjudge_book_publish_with_the_configured_destination() -> None:
    root = Path(__file__).resolve().parents[1]

    def planned(*variables: str) -> str:
        result = subprocess.run(["make", "-n", "publish", *variables], cwd=root, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return " ".join(result.stdout.split())

    # each value one quoted shell word (tests/test_makefile.py)
    assert "-m recjudge book --publish 'origin' --branch 'gh-pages' ;" in planned()
    assert "-m recjudge book --publish 'folder:/srv/www' --allow-partial;" in planned(
        "PUBLISH_TO=folder:/srv/www", "ALLOW_PARTIAL=1")
    assert "--judge 'openai:gpt-4o-mini' --profile 'smoke' --publish 'upstream' --branch 'pages'" in planned(
        "JUDGE=openai:gpt-4o-mini", "PROFILE=smoke", "PUBLISH_TO=upstream", "PUBLISH_BRANCH=pages")


# ------------------------------------------------------------------------------------------ hostile destinations
def run_book(*arguments: str) -> int:
    from recjudge.cli import main

    return main(["book", "--check-only", *arguments])


@pytest.fixture
def cli_checkout(checkout: Path, monkeypatch) -> Path:
    """The checkout as `recjudge book --check-only` sees it, with a publishable build."""
    from recjudge.compendium import book as book_module

    build(checkout)
    monkeypatch.setenv("RECJUDGE_HOME", str(checkout))
    monkeypatch.setattr(book_module, "check_built_book", lambda root, html_dir=None: None)
    return checkout


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def test_an_option_given_as_destination_is_refused_before_git_runs(cli_checkout: Path, tmp_path: Path,
                                                                    capsys) -> None:
    """`--publish "--upload-pack=touch X;git-upload-pack"` would have git run the command: a destination is a
    remote's name, a URL or folder:PATH, never an option nor a remote helper."""
    marker = tmp_path / "ran"
    for hostile in (f"--upload-pack=touch {marker};git-upload-pack", f"ext::sh -c touch% {marker}",
                    "pages\n--upload-pack=x"):
        before = refs(cli_checkout)
        assert run_book("--publish", hostile) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "give a git remote" in lines[0], lines
        assert not marker.exists() and refs(cli_checkout) == before
    with pytest.raises(PublishError, match="give a git remote"):
        Destination.parse("-q")


@pytest.mark.parametrize("branch", ["gh-pages\nrefs/heads/extra", "HEAD", "-f", "a..b", "@{-1}", "pages.lock",
                                    "with space", "", "gh-\u202esegap", "pages\u200b", "pa\u2028ges"])
def test_a_branch_name_git_refuses_is_refused_before_any_git_call(cli_checkout: Path, branch: str, capsys) -> None:
    """A newline in `--branch` added a ref through ghp-import's fast-import stream and left crash files in .git; a
    right-to-left override (U+202E) or another invisible character makes a branch read as another name."""
    before = refs(cli_checkout)
    assert run_book("--publish", "pages", f"--branch={branch}") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    visible = branch.isprintable()
    assert len(lines) == 1 and ("is not a branch name git accepts" if visible else "which a reader of the branch's "
                                "name does not see") in lines[0], lines
    assert refs(cli_checkout) == before
    assert not list((cli_checkout / ".git").glob("fast_import_crash_*"))


def test_publishing_over_a_source_branch_is_refused_and_loses_nothing(checkout: Path, tmp_path: Path) -> None:
    """`--publish origin --branch dev` force-fetched the local dev (dropping an unpushed commit) and pushed the site
    over it: a branch that holds no published book is refused, on the remote or only here."""
    bare = tmp_path / "pages.git"
    git(checkout, "switch", "--quiet", "-c", "dev")
    git(checkout, "push", "--quiet", "pages", "dev")
    (checkout / "work.txt").write_text("unpushed work\n")
    git(checkout, "add", "work.txt")
    git(checkout, "commit", "--quiet", "-m", "Unpushed work")
    git(checkout, "switch", "--quiet", "main")
    git(checkout, "branch", "--quiet", "local-only", "dev")
    local, remote = git(checkout, "rev-parse", "dev"), git(bare, "rev-parse", "dev")
    site = build(checkout)
    for branch in ("dev", "local-only", "main"):
        message = refused(site, checkout, Destination.parse("pages", branch))
        assert "holds no published book of recjudge" in message
    assert git(checkout, "rev-parse", "dev") == local and git(bare, "rev-parse", "dev") == remote
    assert git(checkout, "rev-parse", "local-only") == local
    assert git(checkout, "status", "--porcelain") == ""
    # A new branch is fine, and its local namesake follows it; the book's own branch takes the next publication
    assert publish(site, checkout, Destination.parse("pages", "site"), log=lambda line: None) == "published"
    assert git(checkout, "rev-parse", "site") == git(bare, "rev-parse", "site")
    (site / "book" / "intro.html").write_text(INTRO.replace("What it is.", "What it is, revised."))
    assert publish(site, checkout, Destination.parse("pages", "site"), log=lambda line: None) == "published"
    assert commits(bare, "site") == 2 and git(checkout, "rev-parse", "site") == git(bare, "rev-parse", "site")
    assert [line for line in git(checkout, "branch", "--list").splitlines() if "recjudge-publish" in line] == []


def test_a_folder_is_replaced_only_when_it_holds_this_books_build_record(checkout: Path, tmp_path: Path) -> None:
    """A static site that merely holds `.nojekyll` was wiped: only a folder whose build-info.json says it is this
    project's book (or an empty or new folder) is replaced."""
    site = build(checkout)
    other_site = tmp_path / "other-site"
    other_site.mkdir()
    (other_site / NOJEKYLL).write_bytes(b"")
    (other_site / "index.html").write_text("<p>Another site</p>")
    other_book = tmp_path / "other-book"
    other_book.mkdir()
    (other_book / BUILD_INFO).write_text(json.dumps({"project": "another", "commit": "abc"}))
    (other_book / "index.html").write_text("<p>Another book</p>")
    for folder in (other_site, other_book):
        files = sorted(path.name for path in folder.iterdir())
        assert "not a published book of recjudge" in refused(site, checkout, Destination.parse(f"folder:{folder}"))
        assert sorted(path.name for path in folder.iterdir()) == files
        assert "Another" in (folder / "index.html").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert publish(site, checkout, Destination.parse(f"folder:{empty}"), log=lambda line: None) == "published"
    assert json.loads((empty / BUILD_INFO).read_text())["project"] == "recjudge"
    # Only a .nojekyll (nothing to lose), or only variants' books of this project, is replaceable too
    marker_only = tmp_path / "marker-only"
    marker_only.mkdir()
    (marker_only / NOJEKYLL).write_bytes(b"")
    assert publish(site, checkout, Destination.parse(f"folder:{marker_only}"), log=lambda line: None) == "published"
    variants_only = tmp_path / "variants-only"
    publish(site, checkout, Destination.parse(f"folder:{variants_only}"), variant="v1", log=lambda line: None)
    assert publish(site, checkout, Destination.parse(f"folder:{variants_only}"), log=lambda line: None) == "published"
    assert (variants_only / "variants" / "v1" / BUILD_INFO).is_file() and (variants_only / BUILD_INFO).is_file()


def test_a_file_as_folder_destination_is_one_line(cli_checkout: Path, tmp_path: Path, capsys) -> None:
    file = tmp_path / "a-file"
    file.write_text("mine\n")
    assert run_book("--publish", f"folder:{file}") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"{file} is a file, not a folder" in lines[0]
    assert file.read_text() == "mine\n"


def test_a_stale_chapter_is_refused_and_published_as_partial_only_when_allowed(checkout: Path,
                                                                                tmp_path: Path) -> None:
    """A chapter executed before its notebook's last change was published under "Built from <last commit>": the
    record holds each chapter's fingerprint at the build and the one its executed notebook was made from."""
    site = build(checkout, chapters={"proxy_vs_llm": {"fingerprint": "new", "executed": "old", "tables_changed": []},
                                     "trust_judges": {"fingerprint": "f", "executed": None, "tables_changed": []},
                                     "data_tour": {"fingerprint": "f", "executed": "f", "tables_changed": []}})
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and "a stale build" in message
    assert "proxy_vs_llm, trust_judges" in message and "data_tour" not in message
    publish(site, checkout, Destination.parse("pages"), allow_partial=True, log=lambda line: None)
    record = json.loads(git(tmp_path / "pages.git", "show", f"gh-pages:{BUILD_INFO}"))
    assert any("a stale build" in reason for reason in record["gaps"])
    # A record that does not say which sources its chapters came from is refused too
    record = json.loads((site / BUILD_INFO).read_text())
    del record["chapters"]
    (site / BUILD_INFO).write_text(json.dumps(record))
    assert "does not say which sources" in refused(site, checkout, Destination.parse("pages"))


def test_a_failed_build_leaves_no_record_to_publish(checkout: Path, monkeypatch, capsys) -> None:
    """A build that fails half-way keeps the last build's pages: without a record, they are never published as a
    whole book."""
    from recjudge.compendium import book as book_module
    from recjudge.compendium import runplan as runplan_module
    from recjudge.compendium.book import BookError

    build(checkout)

    def failing_build(root: Path, all_pages: bool = False, source: Path | None = None) -> None:
        raise BookError("`jupyter-book build` failed (exit 1)")

    monkeypatch.setenv("RECJUDGE_HOME", str(checkout))
    monkeypatch.setattr(book_module, "ensure_mathjax", lambda root: root)
    monkeypatch.setattr(book_module, "check_toc_against_runplan", lambda root: [])
    monkeypatch.setattr(book_module, "build_html", failing_build)
    monkeypatch.setattr(book_module, "check_built_book", lambda root, html_dir=None: None)
    monkeypatch.setattr(runplan_module, "load_runplan", lambda root: [])
    from recjudge.cli import main

    assert main(["book"]) == 1
    assert main(["book", "--check-only", "--publish", "pages"]) == 1
    assert f"{BUILD_INFO} is missing" in capsys.readouterr().err


def test_check_only_says_it_checked_not_that_it_built(cli_checkout: Path, capsys) -> None:
    assert run_book() == 0
    out = capsys.readouterr().out
    assert "[book] checked the existing build" in out and "[book] built" not in out


def test_the_published_sources_hold_no_machine_paths_or_timings(checkout: Path, tmp_path: Path) -> None:
    import nbformat

    site = build(checkout)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["papermill"] = {"input_path": str(checkout / "notebooks" / "ch.md"), "duration": 12.5,
                                      "start_time": "2026-01-01T00:00:00"}
    cell = nbformat.v4.new_code_cell("print('hello')")
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:01"}
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=f"read {checkout}/data/raw/x.csv\n")]
    notebook.cells = [cell]
    sources = site / "_sources" / "book" / "notebooks"
    sources.mkdir(parents=True)
    nbformat.write(notebook, sources / "ch.ipynb")
    folder = tmp_path / "www"
    publish(site, checkout, Destination.parse(f"folder:{folder}"), log=lambda line: None)
    published = (folder / "_sources" / "book" / "notebooks" / "ch.ipynb").read_text()
    assert str(checkout) not in published and str(tmp_path) not in published
    assert "papermill" not in published and "2026-01-01" not in published
    assert "read ./data/raw/x.csv" in published
    # A warning printed into a chapter (a kernel keeps them off its page) is never published, partial or not
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr",
                                           text=f"{checkout}/src/recjudge/x.py:1: UserWarning: careful\n")]
    nbformat.write(notebook, sources / "ch.ipynb")
    with pytest.raises(PublishError, match="ch.ipynb: a warning printed into it .UserWarning: careful"):
        publish(site, checkout, Destination.parse(f"folder:{folder}"), allow_partial=True, log=lambda line: None)
    assert "UserWarning" not in (folder / "_sources" / "book" / "notebooks" / "ch.ipynb").read_text()


def test_no_writable_temporary_folder_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from recjudge.cli import main

    missing = tmp_path / "no-such-tmp"
    monkeypatch.setenv("TMPDIR", str(missing))
    assert main(["book", "--check-only"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"TMPDIR={missing} is not a folder that exists" in lines[0]


def test_a_symlinked_environment_is_ignored_and_a_dirty_checkout_names_its_paths(checkout: Path, tmp_path: Path,
                                                                                 capsys) -> None:
    """The project's `.gitignore` held `.venv/`, which matches a folder only: a `.venv` that is a symlink to an
    environment elsewhere made `git status` list it, and publishing was refused as "not clean" without a path."""
    project = Path(__file__).resolve().parents[1]
    shutil.copyfile(project / ".gitignore", checkout / ".gitignore")
    git(checkout, "commit", "--quiet", "-am", "The project's ignore rules")
    environment = tmp_path / "elsewhere-venv"
    environment.mkdir()
    (checkout / ".venv").symlink_to(environment, target_is_directory=True)
    site = build(checkout)
    assert publish(site, checkout, Destination.parse("pages"), log=lambda line: None) == "published"
    (checkout / "README.md").write_text("# Edited\n")
    (checkout / "notes.txt").write_text("mine\n")
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1 and "the checkout is not clean" in message
    assert "README.md" in message and "notes.txt" in message and ".venv" not in message


def test_a_variant_is_never_written_through_a_symlinked_variants_folder(checkout: Path, tmp_path: Path) -> None:
    """A destination whose `variants` was a symlink to another folder had the variant's book written there, outside
    the destination."""
    site = build(checkout)
    folder = tmp_path / "www"
    publish(site, checkout, Destination.parse(f"folder:{folder}"), log=lambda line: None)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.txt").write_text("mine\n")
    (folder / "variants").symlink_to(outside, target_is_directory=True)
    message = refused(site, checkout, Destination.parse(f"folder:{folder}"), variant="v1")
    assert "symbolic link" in message and str(folder / "variants") in message
    assert sorted(path.name for path in outside.iterdir()) == ["mine.txt"]
    # A symlink below the variant's own folder is replaced by the folder it stands for, never followed
    (folder / "variants").unlink()
    publish(site, checkout, Destination.parse(f"folder:{folder}"), variant="v1", log=lambda line: None)
    shutil.rmtree(folder / "variants" / "v1" / "book")
    (folder / "variants" / "v1" / "book").symlink_to(outside, target_is_directory=True)
    assert publish(site, checkout, Destination.parse(f"folder:{folder}"), variant="v1",
                   log=lambda line: None) == "published"
    assert not (folder / "variants" / "v1" / "book").is_symlink()
    assert (folder / "variants" / "v1" / "book" / "intro.html").is_file()
    assert sorted(path.name for path in outside.iterdir()) == ["mine.txt"]


def test_a_variant_is_never_written_through_a_symlink_on_the_published_branch(checkout: Path, tmp_path: Path) -> None:
    bare = tmp_path / "pages.git"
    site = build(checkout)
    publish(site, checkout, Destination.parse("pages"), log=lambda line: None)
    work = tmp_path / "pages-work"
    git(tmp_path, "clone", "--quiet", "--branch", "gh-pages", str(bare), str(work))
    git(work, "config", "user.name", "Someone")
    git(work, "config", "user.email", "someone@example.org")
    for name, target in (("variants", "book"), ("outside", "../../elsewhere")):
        (work / name).symlink_to(target)
        git(work, "add", name)
        git(work, "commit", "--quiet", "-m", f"A symlink {name}")
        git(work, "push", "--quiet", "origin", "gh-pages")
        tip = git(bare, "rev-parse", "gh-pages")
        message = refused(site, checkout, Destination.parse("pages"), variant="v1")
        assert "symbolic link" in message or "cannot give back safely" in message, message
        assert git(bare, "rev-parse", "gh-pages") == tip


def test_an_interrupted_first_publication_is_completed_by_the_next(checkout: Path, tmp_path: Path,
                                                                   monkeypatch) -> None:
    """A first publication stopped half-way (Ctrl-C) left files without a build record: the folder was then refused
    as "not a published book" until deleted by hand."""
    from recjudge.compendium import publish as publish_module

    site = build(checkout)
    folder = tmp_path / "www"
    copy = shutil.copyfile
    written = []

    def interrupted(source, target, *args, **kwargs):
        if Path(target).is_relative_to(folder) or Path(target).parent.name.startswith(f".{folder.name}"):
            if len(written) == 2:
                raise KeyboardInterrupt
            written.append(target)
        return copy(source, target, *args, **kwargs)

    monkeypatch.setattr(publish_module.shutil, "copyfile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publish(site, checkout, Destination.parse(f"folder:{folder}"), log=lambda line: None)
    monkeypatch.setattr(publish_module.shutil, "copyfile", copy)
    assert folder.is_dir() and any(folder.rglob("*"))
    assert publish(site, checkout, Destination.parse(f"folder:{folder}"), log=lambda line: None) == "published"
    assert json.loads((folder / BUILD_INFO).read_text())["project"] == "recjudge"
    assert (folder / "book" / "intro.html").is_file()
    assert [path.name for path in folder.iterdir() if path.name.startswith(".") and path.name != NOJEKYLL] == []


def test_a_chapter_stale_for_its_data_is_refused_saying_so(checkout: Path) -> None:
    """Chapters executed with the data mirror and recorded by a build without it were refused as "not executed from
    the sources of commit X": the sources are the same; what differs is the data they read."""
    site = build(checkout, chapters={"proxy_vs_llm": {"fingerprint": "new", "executed": "old", "differs": ["datasets"],
                                                      "tables_changed": []},
                                     "trust_judges": {"fingerprint": "new", "executed": "old",
                                                      "differs": ["notebook", "package"], "tables_changed": []}})
    message = refused(site, checkout, Destination.parse("pages"))
    lines = message.splitlines()
    assert len(lines) == 2, lines
    data = next(line for line in lines if "proxy_vs_llm" in line)
    assert "the data setting" in data and "RECJUDGE_DATA_MIRROR" in data and "not executed from" not in data
    sources = next(line for line in lines if "trust_judges" in line)
    assert "not executed from the sources of commit" in sources and "notebook, package" in sources


def test_a_results_table_edited_after_its_chapter_ran_is_refused(checkout: Path) -> None:
    """A committed table edited by hand was published as a full book, its page and its download disagreeing."""
    site = build(checkout, chapters={"proxy_vs_llm": {"fingerprint": "f", "executed": "f", "differs": [],
                                                      "results": {"table2.csv": "a"},
                                                      "tables_changed": ["table2.csv"]}})
    message = refused(site, checkout, Destination.parse("pages"))
    assert len(message.splitlines()) == 1
    assert "results/proxy_vs_llm/table2.csv" in message and "from what its chapter wrote" in message
    assert "`make run`" in message


@pytest.fixture
def stand_in_book_build(checkout: Path, monkeypatch) -> list:
    """`recjudge book` in the checkout with Jupyter Book replaced by a writer of the landing pages (returns the
    builds made) and the run plan by none."""
    from recjudge.compendium import book as book_module
    from recjudge.compendium import publish as publish_module
    from recjudge.compendium import runplan as runplan_module

    builds = []

    def fake_build(root: Path, all_pages: bool = False, source: Path | None = None) -> None:
        builds.append(root)
        site = root / "_build" / "html"
        (site / "book").mkdir(parents=True, exist_ok=True)
        (site / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />\n')
        (site / "book" / "intro.html").write_text(INTRO)

    monkeypatch.setenv("RECJUDGE_HOME", str(checkout))
    monkeypatch.setattr(book_module, "ensure_mathjax", lambda root: root)
    monkeypatch.setattr(book_module, "check_toc_against_runplan", lambda root: [])
    monkeypatch.setattr(book_module, "build_html", fake_build)
    monkeypatch.setattr(publish_module, "dataset_statuses", lambda root: {"serendipity-2018": "complete"})
    monkeypatch.setattr(runplan_module, "load_runplan", lambda root: [])
    return builds


def test_recjudge_book_refuses_a_table_edited_after_its_chapter_ran(checkout: Path, stand_in_book_build: list,
                                                                     monkeypatch, capsys) -> None:
    from recjudge.cli import main
    from recjudge.compendium import runplan as runplan_module

    monkeypatch.setattr(runplan_module, "executed_from", lambda runs, root: {"proxy_vs_llm": {
        "fingerprint": "f", "executed": "f", "differs": [], "results": {"table2.csv": "a"},
        "tables_changed": ["table2.csv"]}})
    assert main(["book"]) == 1
    err = capsys.readouterr().err
    assert "results/proxy_vs_llm/table2.csv" in err and "`make run`" in err
    assert stand_in_book_build == [], "nothing is built from a table its chapter did not write"


def test_a_build_remembers_the_data_setting_it_was_made_with(checkout: Path, stand_in_book_build: list,
                                                              tmp_path: Path, monkeypatch, capsys) -> None:
    """Built with the mirror, then published from a new shell without it, a finished build was refused as stale
    because its chapters' data were fingerprinted in the new shell: the build record keeps the data setting."""
    from recjudge.cli import main
    from recjudge.compendium import runplan as runplan_module

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    seen = []

    def executed_from(runs, root):
        seen.append(os.environ.get("RECJUDGE_DATA_MIRROR"))
        return {"proxy_vs_llm": {"fingerprint": "f", "executed": "f", "differs": [], "results": {},
                                 "tables_changed": []}}

    monkeypatch.setattr(runplan_module, "executed_from", executed_from)
    monkeypatch.setenv("RECJUDGE_DATA_MIRROR", str(mirror))
    assert main(["book"]) == 0
    assert json.loads((checkout / "_build" / "html" / BUILD_INFO).read_text())["data_mirror"] == str(mirror)
    monkeypatch.delenv("RECJUDGE_DATA_MIRROR")
    capsys.readouterr()
    assert main(["book", "--publish", "pages"]) == 0
    assert seen == [str(mirror), str(mirror)]
    assert f"RECJUDGE_DATA_MIRROR={mirror}" in capsys.readouterr().out
    assert "RECJUDGE_DATA_MIRROR" not in os.environ, "the shell's setting is left as it was"
    published = json.loads(git(tmp_path / "pages.git", "show", f"gh-pages:{BUILD_INFO}"))
    assert "data_mirror" not in published, "a folder of the machine that built it is not published"
