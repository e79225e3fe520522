"""The package's layers: the engine, the data layer, meta-evaluation and the book's plumbing import no paper's
package."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "recjudge"
LOWER_LAYERS = ("data", "llm", "metaeval", "compendium")
PAPER_PACKAGES = ("serendipity", "explanations", "surprise", "recsys", "metamorphic")


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved against its package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("recjudge", *path.relative_to(PACKAGE).parent.parts))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("layer", LOWER_LAYERS)
def test_lower_layers_import_no_paper_package(layer):
    offenders = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for module in imported_modules(path):
            parts = module.split(".")
            if len(parts) > 1 and parts[0] == "recjudge" and parts[1] in PAPER_PACKAGES:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not offenders, offenders


def test_every_concept_folder_documents_its_modules():
    for folder in sorted(p for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder.name}/ is not a package"
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring, f"{folder.name}/__init__.py has no docstring saying what the folder holds"
        modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
        undocumented = sorted(m for m in modules if m not in docstring)
        assert not undocumented, f"{folder.name}/__init__.py does not mention {undocumented}"


def test_the_import_check_resolves_relative_imports():
    # llm/store.py reads its folder through ``from ..compendium import paths``
    assert "recjudge.compendium.paths" in imported_modules(PACKAGE / "llm" / "store.py")
