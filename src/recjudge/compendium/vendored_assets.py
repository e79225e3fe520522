"""The book's vendored web assets: MathJax, served from the book's own ``_static/mathjax/``, never from a CDN.

The version is pinned in ``package.json`` / ``package-lock.json`` (npm package ``mathjax``); ``make setup`` installs it
once (``recjudge book --vendor-only``, the one book step that needs the network) with ``npm ci`` into a temporary
folder and copies its browser bundle (``es5/``) to ``vendor/mathjax/`` (git-ignored), which ``_config.yml`` adds to
the static path. A stamp holding the lockfile's integrity makes the step a no-op afterwards, so later builds need no
network. Without npm, the same tarball is taken from the npm registry and verified against the lockfile's sha512
integrity.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from recjudge.compendium.toc import BookError
from recjudge.paths import project_root

MATHJAX_PACKAGE = "mathjax"
VENDOR_DIR = Path("vendor")
MATHJAX_DIR = VENDOR_DIR / "mathjax"
#: The MathJax component the book loads (``_config.yml``: ``mathjax_path: mathjax/tex-chtml.js``).
MATHJAX_ENTRY = "tex-chtml.js"
STAMP_FILE = ".installed-from"


def _locked_mathjax(root: Path) -> tuple[str, str]:
    """(version, integrity) of MathJax as pinned in package-lock.json."""
    lock_path = root / "package-lock.json"
    try:
        lock = json.loads(lock_path.read_text(encoding="utf-8"))
        entry = lock["packages"][f"node_modules/{MATHJAX_PACKAGE}"]
        return entry["version"], entry["integrity"]
    except (OSError, ValueError, KeyError) as error:
        raise BookError(f"{lock_path}: cannot read the pinned {MATHJAX_PACKAGE} version and integrity ({error})") \
            from error


def ensure_mathjax(root: Path | None = None, *, log=print) -> Path:
    """Make ``vendor/mathjax/`` hold the pinned MathJax browser bundle; return that folder. Idempotent and offline
    once installed."""
    root = Path(root) if root is not None else project_root()
    version, integrity = _locked_mathjax(root)
    target = root / MATHJAX_DIR
    stamp = f"{MATHJAX_PACKAGE}@{version} {integrity}"
    stamp_path = target / STAMP_FILE
    if (target / MATHJAX_ENTRY).is_file() and stamp_path.is_file() and stamp_path.read_text().strip() == stamp:
        log(f"[book] MathJax {version} already vendored in {MATHJAX_DIR}/")
        return target
    with tempfile.TemporaryDirectory(prefix="recjudge-mathjax-") as work:
        work_dir = Path(work)
        if shutil.which("npm"):
            package_dir = _npm_ci(root, work_dir)
            how = "npm ci"
        else:
            package_dir = _registry_tarball(version, integrity, work_dir)
            how = "npm registry tarball (npm not found)"
        bundle = package_dir / "es5"
        if not (bundle / MATHJAX_ENTRY).is_file():
            raise BookError(f"{MATHJAX_PACKAGE}@{version} has no es5/{MATHJAX_ENTRY}: is the pinned version a 3.x?")
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(bundle, staging)
        for extra in ("LICENSE", "package.json"):
            if (package_dir / extra).is_file():
                shutil.copy2(package_dir / extra, staging / extra)
        (staging / STAMP_FILE).write_text(stamp + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    log(f"[book] MathJax {version} vendored in {MATHJAX_DIR}/ ({how})")
    return target


def _npm_ci(root: Path, work_dir: Path) -> Path:
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(root / name, work_dir / name)
    command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]
    result = subprocess.run(command, cwd=work_dir, capture_output=True, text=True)
    if result.returncode != 0:
        raise BookError(f"`{' '.join(command)}` failed (exit {result.returncode}); MathJax cannot be vendored "
                        "(run `make setup` where the npm registry can be reached):\n"
                        f"{result.stderr.strip()[-2000:]}")
    return work_dir / "node_modules" / MATHJAX_PACKAGE


def _registry_tarball(version: str, integrity: str, work_dir: Path) -> Path:
    registry = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")
    url = f"{registry}/{MATHJAX_PACKAGE}/-/{MATHJAX_PACKAGE}-{version}.tgz"
    algorithm, _, expected = integrity.partition("-")
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            payload = response.read()
    except OSError as error:
        raise BookError(f"cannot download {url} ({error}); install npm or vendor MathJax by hand") from error
    got = base64.b64encode(hashlib.new(algorithm, payload).digest()).decode()
    if got != expected:
        raise BookError(f"{url}: {algorithm} integrity mismatch with package-lock.json (expected {expected}, "
                        f"got {got})")
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as archive:
        archive.extractall(work_dir, filter="data")
    return work_dir / "package"
