"""The locked environment: what the README says produced the results is what the lock pins and what is installed."""

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK_FILES = ("lock.txt", "build.txt", "weights.txt")
#: The benchmarks' inspect_ai, installed into its own environment (make bench-setup), never into the project's.
BENCH_LOCK = "bench.txt"


def locked_versions(files: tuple[str, ...] = LOCK_FILES) -> dict[str, str]:
    pins = {}
    for name in files:
        for match in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements" / name).read_text(), re.M):
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def documented_versions(path: Path) -> dict[str, str]:
    """Rows '| package | version |' of the versions table (the package's first word is its name)."""
    rows = re.findall(r"^\| ([a-z0-9_.-]+)[^|]* \| (\d[\w.]*) \|$", path.read_text(encoding="utf-8"), re.M)
    return {name: version for name, version in rows}


def test_every_locked_requirement_is_pinned_with_hashes():
    for name in (*LOCK_FILES, BENCH_LOCK):
        entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements" / name).read_text())
        for entry in entries:
            if entry.startswith("#") or not entry.strip():
                continue
            assert "==" in entry.splitlines()[0], f"{name}: not pinned: {entry.splitlines()[0]}"
            assert "--hash=sha256:" in entry, f"{name}: no hash for {entry.splitlines()[0]}"


def test_the_benchmarks_inspect_ai_speaks_through_the_projects_openai_sdk():
    """bench_startup's inspect_ai column compares engines, not SDK releases: its environment pins the same openai."""
    bench = locked_versions((BENCH_LOCK,))
    assert "inspect-ai" in bench
    assert bench["openai"] == locked_versions()["openai"]


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


def test_the_conda_environment_installs_every_locked_extra():
    """environment.yml must install the extras the lock resolves (``make lock``'s --extra flags), so that a conda
    user can run every chapter, the re-evaluation chapter's recommenders included."""
    import yaml

    locked_extras = set(re.findall(r"--extra (\w+)", (ROOT / "Makefile").read_text()))
    assert locked_extras, "Makefile: `make lock` names no extras"
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_lines = next(entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict))
    installed = re.search(r'\.\[([\w,]+)\]', " ".join(pip_lines))
    assert installed, "environment.yml does not install the package with extras"
    assert locked_extras <= set(installed.group(1).split(",")), (
        f"environment.yml misses extras {sorted(locked_extras - set(installed.group(1).split(',')))}")


def test_setup_does_every_step_that_needs_the_network():
    """`make book` must work offline after `make setup`: MathJax (the npm registry) is vendored by setup, not by the
    first build. `make -n` lists what setup would do on a checkout whose vendored copy is older than the lock."""
    import subprocess

    dry_run = subprocess.run(["make", "-n", "-W", "package-lock.json", "setup"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    assert "recjudge book --vendor-only" in dry_run


def test_setup_is_decided_by_content_not_modification_times(tmp_path):
    """A fresh clone beside an existing environment: every input of set-up is newer than the environment's stamp (git
    writes checkout times), yet nothing it installs from changed, so `make setup` must not install again; a changed
    lock must."""
    import hashlib
    import os
    import shutil
    import subprocess

    inputs = re.search(r"^SETUP_INPUTS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    for name in ["Makefile", "package-lock.json", *inputs]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    venv = tmp_path / "env"
    venv.mkdir()
    digest = hashlib.sha256(b"".join((tmp_path / name).read_bytes() for name in inputs)).hexdigest()[:16]
    (venv / ".installed").write_text(digest + "\n")
    os.utime(venv / ".installed", (0, 0))  # older than every input

    def installs() -> bool:
        dry_run = subprocess.run(["make", "-n", "setup", "VENV=env"], cwd=tmp_path, capture_output=True, text=True,
                                 check=True).stdout
        return "install_env.sh" in dry_run

    assert not installs()
    with (tmp_path / "requirements" / "lock.txt").open("a") as lock:
        lock.write("# changed\n")
    assert installs()


def test_the_extras_of_dependencies_are_locked_too():
    """A dependency asked for with extras (``llama-cpp-python[server]``) needs what those extras require in the lock,
    so that `make setup` (which installs the lock with --no-deps) installs it. Read from the installed package's
    metadata: a dependency that is not installed is skipped here (test_installed_versions_are_the_locked_ones and
    the local-model tests cover a missing install)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(text) for text in [*project["dependencies"],
                                                   *(r for extra in project["optional-dependencies"].values()
                                                     for r in extra)]]
    pins = locked_versions()
    checked = 0
    for requirement in (r for r in requirements if r.extras):
        try:
            declared = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for extra in requirement.extras:
            needed = [Requirement(text) for text in declared]
            needed = [r for r in needed if r.marker is not None and r.marker.evaluate({"extra": extra})]
            assert needed, f"{requirement.name} declares no extra {extra!r}"
            checked += len(needed)
            missing = sorted(r.name for r in needed if r.name.lower().replace("_", "-") not in pins)
            assert not missing, f"{requirement.name}[{extra}] needs {missing}, which requirements/lock.txt lacks"
    if not checked:
        pytest.skip("no dependency with extras is installed")


def test_every_process_of_the_environment_reuses_compiled_bytecode(tmp_path):
    """Each process of the environment (a notebook kernel, a CLI call, an xdist worker, a test's subprocess) reads the
    bytecode compiled at set-up and caches what it compiles, in the environment's cache folder, whatever the caller's
    PYTHONDONTWRITEBYTECODE, and never writes into the source tree; a caller's own cache folder is left in charge."""
    import os
    import subprocess
    import sys

    probe = ("import sys, importlib.util, pandas, recjudge.llm; "
             "print(sys.pycache_prefix); print(sys.dont_write_bytecode); "
             "print(importlib.util.cache_from_source(pandas.__file__)); "
             "print(importlib.util.cache_from_source(recjudge.llm.__file__))")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPYCACHEPREFIX"}
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    prefix, no_writes, pandas_cached, engine_cached = subprocess.run(
        [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, check=True,
        cwd=tmp_path).stdout.split()
    assert Path(prefix) == Path(sys.prefix) / "pycache"
    assert no_writes == "False"
    assert Path(pandas_cached).is_file(), "pandas was not compiled at set-up"
    assert Path(engine_cached).is_file(), "the project's src/ is not compiled into the cache"
    assert not list((ROOT / "src").rglob("__pycache__")), "bytecode written into the source tree"

    environment["PYTHONPYCACHEPREFIX"] = str(tmp_path / "own")
    prefix, no_writes = subprocess.run([sys.executable, "-c", "import sys; print(sys.pycache_prefix); "
                                        "print(sys.dont_write_bytecode)"], env=environment, capture_output=True,
                                       text=True, check=True).stdout.split()
    assert (prefix, no_writes) == (str(tmp_path / "own"), "True")
