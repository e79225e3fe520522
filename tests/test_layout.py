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
    ("planted",),
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


def module_name(path: Path) -> str:
    """The dotted name ``path`` is imported as (a package's ``__init__.py`` is the package)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("recjudge", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports, by any import statement (module level, inside
    a function, under TYPE_CHECKING): ``from P import name`` is P.name when that is a module, else P."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                for alias in node.names:
                    if f"{module}.{alias.name}" in modules:
                        targets.add(f"{module}.{alias.name}")
                    elif module in modules:
                        targets.add(module)
        graph[name] = targets - {name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) through each strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        queue = [start]
        while queue:  # the shortest way from start back to itself, inside the group
            node = queue.pop(0)
            for target in sorted(graph[node] & group):
                if target == start:
                    cycles.append(paths[node] + [start])
                    queue = []
                    break
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    queue.append(target)
    return cycles


def test_no_module_imports_itself_round_a_circle():
    cycles = import_cycles(import_graph())
    assert not cycles, "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_the_cycle_check_finds_a_circle_through_a_deferred_import(tmp_path):
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []
    # a deferred import (inside a function) is an edge like any other
    edges = import_graph()
    assert "recjudge.compendium.runplan" in edges["recjudge.compendium.book"]


#: A module longer than this holds more than one concern: split it by concern (one concept, one home).
MAX_MODULE_LINES = 1_000


def modules_over(folder: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Every ``*.py`` under ``folder`` longer than ``limit`` lines, as ``"path (n lines)"``."""
    lengths = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in sorted(folder.rglob("*.py"))}
    return [f"{path.relative_to(folder).as_posix()} ({lines} lines)" for path, lines in lengths.items()
            if lines > limit]


def test_no_module_exceeds_the_line_limit():
    too_long = modules_over(PACKAGE)
    assert not too_long, f"modules over {MAX_MODULE_LINES:,} lines (split each by concern): " + ", ".join(too_long)


def test_the_line_limit_check_finds_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert modules_over(tmp_path) == [f"package/long.py ({MAX_MODULE_LINES + 1} lines)"]
