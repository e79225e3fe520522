"""The locked environment: what the README says produced the results is what the lock pins and what is installed."""

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK_FILES = ("lock.txt", "build.txt", "weights.txt")


def locked_versions() -> dict[str, str]:
    pins = {}
    for name in LOCK_FILES:
        for match in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements" / name).read_text(), re.M):
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def documented_versions(path: Path) -> dict[str, str]:
    """Rows '| package | version |' of the versions table (the package's first word is its name)."""
    rows = re.findall(r"^\| ([a-z0-9_.-]+)[^|]* \| (\d[\w.]*) \|$", path.read_text(encoding="utf-8"), re.M)
    return {name: version for name, version in rows}


def test_every_locked_requirement_is_pinned_with_hashes():
    for name in LOCK_FILES:
        entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements" / name).read_text())
        for entry in entries:
            if entry.startswith("#") or not entry.strip():
                continue
            assert "==" in entry.splitlines()[0], f"{name}: not pinned: {entry.splitlines()[0]}"
            assert "--hash=sha256:" in entry, f"{name}: no hash for {entry.splitlines()[0]}"


@pytest.mark.parametrize("document", ["README.md", "book/reproducibility.md"])
def test_documented_versions_are_the_locked_ones(document):
    documented = documented_versions(ROOT / document)
    assert len(documented) >= 10, f"{document}: versions table not found"
    pins = locked_versions()
    wrong = {name: (version, pins.get(name)) for name, version in documented.items() if pins.get(name) != version}
    assert not wrong, f"{document} names versions the lock does not pin (documented, locked): {wrong}"


def test_pyproject_ranges_admit_the_locked_versions():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values()
                                                for r in extra)]
    pins = locked_versions()
    for text in requirements:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        assert name in pins, f"{name} is a dependency but not in the lock"
        assert Version(pins[name]) in requirement.specifier, f"lock pins {name}=={pins[name]} outside {text!r}"


def test_installed_versions_are_the_locked_ones():
    """make setup installed the lock, not whatever the registry serves today."""
    pins = locked_versions()
    different = {}
    for name in ("numpy", "pandas", "scipy", "scikit-learn", "statsmodels", "gensim", "papermill", "openai"):
        installed = metadata.version(name)
        if installed != pins[name]:
            different[name] = (installed, pins[name])
    assert not different, f"installed (left) differs from the lock (right): {different}"


def test_the_llama_build_turns_amx_off():
    script = (ROOT / "scripts" / "install_env.sh").read_text()
    for flag in ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16", "-DGGML_NATIVE=ON"):
        assert flag in script
    assert "--no-cache-dir" in script  # pip's wheel cache ignores build flags


@pytest.mark.local_model
def test_installed_llama_cpp_has_no_amx_kernels():
    llama_cpp = pytest.importorskip("llama_cpp")
    assert metadata.version("llama-cpp-python") == locked_versions()["llama-cpp-python"]
    info = llama_cpp.llama_print_system_info().decode()
    assert "AMX_INT8 = 1" not in info, info
