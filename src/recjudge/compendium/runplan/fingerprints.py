"""What a run's outputs depend on, hashed (``fingerprint``: notebook, the chapters' prose, parameters, package
source, datasets, response store, tables read), and the run cache (``RunCache``, ``.runplan-cache/``) that records
it: what is stale and why.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from recjudge.compendium.prose import PROSE_DIR
from recjudge.compendium.runplan.run import ASK_ONLY_ENV, Run
from recjudge.paths import book_store_dir, results_dir, store_layers

#: Bumped when the fingerprint's composition changes, so old cache entries stop matching.
FINGERPRINT_VERSION = 3
_PACKAGE_SUFFIXES = {".py", ".txt", ".yaml", ".yml", ".json"}


class FileHasher:
    """sha256 of files, memoised on (size, mtime) in a JSON file so that large data files are read once."""

    def __init__(self, memo_path: Path | None = None) -> None:
        self.memo_path = memo_path
        self._memo: dict[str, list[Any]] = {}
        if memo_path is not None and memo_path.is_file():
            try:
                self._memo = json.loads(memo_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._memo = {}  # a damaged memo only costs re-hashing

    def __call__(self, path: Path) -> str:
        stat = path.stat()
        key = str(path.resolve())
        cached = self._memo.get(key)
        if cached and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
            return cached[2]
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        value = digest.hexdigest()
        self._memo[key] = [stat.st_size, stat.st_mtime_ns, value]
        return value

    def entries(self) -> dict[str, list[Any]]:
        """The memo (path -> size, mtime, sha256), to hand to another hasher's :meth:`merge`."""
        return dict(self._memo)

    def merge(self, entries: dict[str, list[Any]]) -> None:
        self._memo.update(entries)

    def save(self) -> None:
        if self.memo_path is not None:
            _write_json_atomic(self.memo_path, self._memo)


def _tree_digest(folder: Path, hasher: Callable[[Path], str], suffixes: set[str] | None = None) -> str:
    """One sha256 over the relative paths and contents of every file below ``folder`` (``"absent"`` if none).
    Hidden files and folders (lock files, ``.gitignore``) and ``__pycache__`` do not hold inputs and are left out."""
    if not folder.is_dir():
        return "absent"
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") or part == "__pycache__"
                               for part in p.relative_to(folder).parts)
                   and (suffixes is None or p.suffix in suffixes))
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0{hasher(path)}\n".encode())
    return digest.hexdigest() if files else "absent"


def dataset_fingerprint(name: str, hasher: Callable[[Path], str]) -> dict[str, str] | str:
    """sha256 of each registry file of dataset ``name`` in its folder (``"absent"`` for a file not there), or
    ``"missing"`` when the dataset is not available or the data layer cannot say where it is."""
    try:
        from recjudge.data import REGISTRY, dataset_dir

        folder = Path(dataset_dir(name))
    except Exception:  # MissingDataError, or a data layer that cannot be imported: either way nothing to hash
        return "missing"
    spec = REGISTRY.get(name)
    declared = [file.path for file in getattr(spec, "files", ())]
    if not declared:  # registry without a file list: take the folder as it is
        return {"*": _tree_digest(folder, hasher)}
    return {path: hasher(folder / path) if (folder / path).is_file() else "absent" for path in sorted(declared)}


def fingerprint(run: Run, root: Path, hasher: Callable[[Path], str] | None = None) -> dict[str, Any]:
    """The inputs that decide a run's outputs, as a JSON-serialisable mapping (see the package's docstring)."""
    hasher = hasher or FileHasher()
    return {
        "version": FINGERPRINT_VERSION,
        "notebook": hasher(root / run.notebook),
        # Every chapter's sentences (a copied chapter reads its original's prose file): an edited sentence re-runs
        # the pages, never the plan's prices (``manifest.prompt_fingerprint`` leaves prose out)
        "prose": _tree_digest(root / PROSE_DIR, hasher, {".md"}),
        "parameters": json.loads(json.dumps(run.parameters, sort_keys=True, default=str)),
        "timeout": run.timeout,
        "variant": run.variant,
        "package": _tree_digest(root / "src" / "recjudge", hasher, _PACKAGE_SUFFIXES),
        "datasets": {name: dataset_fingerprint(name, hasher) for name in sorted(run.datasets)},
        "store": store_fingerprint(root, hasher),
        "results": {name: _tree_digest(results_dir() / name, hasher) for name in sorted(run.results_of)},
        # Which judges are asked (a reader's judge alone, or with the book's): only when limited, so the book's
        # own records keep matching
        **({"asks_only": asks_only} if (asks_only := os.environ.get(ASK_ONLY_ENV, "").strip()) else {}),
    }


def store_fingerprint(root: Path, hasher: Callable[[Path], str]) -> str:
    """The response store a run stands on: for the book's own runs the committed store (or $RECJUDGE_STORE), so a
    reader's own replies (``variants/store``) never make the book stale; for a variant's runs (tables outside
    ``results/``) every layer it reads."""
    if results_dir().resolve() == (root / "results").resolve():
        return _tree_digest(book_store_dir(), hasher)
    return "+".join(_tree_digest(folder, hasher) for folder in store_layers())


def fingerprint_hash(components: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(components, sort_keys=True).encode()).hexdigest()


def changed_components(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Names of the fingerprint components that differ (all of them when there is no previous record)."""
    if not old:
        return ["no previous run"]
    old_components = old.get("components", {})
    return [key for key in new if old_components.get(key) != new[key]]


class RunCache:
    """Per-run records of the last successful execution, one JSON file each under ``<cache>/runs/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def record_path(self, run: Run) -> Path:
        return self.folder / "runs" / f"{run.name}.json"

    def load(self, run: Run) -> dict[str, Any] | None:
        path = self.record_path(run)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def store(self, run: Run, record: dict[str, Any]) -> None:
        _write_json_atomic(self.record_path(run), record)


def _write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)
