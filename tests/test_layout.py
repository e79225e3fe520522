"""The package's layers, lowest first: nothing imports a layer above its own."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "recjudge"
#: Lowest first; a module may import its own layer and those below.
LAYERS = (
    ("paths", "settings", "stopping"),
    ("data",),
    ("llm",),
    ("prompts", "metaeval", "papers"),
    ("compendium",),
    ("serendipity", "explanations", "surprise", "recsys", "metamorphic", "trust"),
    ("chapters",),
    ("cli", "__main__"),
)
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}


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


def test_every_top_level_module_has_a_layer():
    tops = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert tops == set(LAYER_OF), f"give these a layer in LAYERS: {sorted(tops ^ set(LAYER_OF))}"


def test_nothing_imports_a_higher_layer():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts == ("__init__.py",):
            continue
        own = LAYER_OF[parts[0].removesuffix(".py")]
        for module in imported_modules(path):
            names = module.split(".")
            if len(names) > 1 and names[0] == "recjudge" and LAYER_OF.get(names[1], -1) > own:
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
    assert "recjudge.paths" in imported_modules(PACKAGE / "llm" / "store.py")
