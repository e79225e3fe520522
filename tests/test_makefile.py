"""The Makefile's recipes: a value given on make's command line reaches the command as one argument, as written, and
is never run as make or shell syntax."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What `make setup` hashes to decide whether the environment is installed (Makefile: SETUP_INPUTS)
SETUP_INPUTS = ("requirements/lock.txt", "requirements/build.txt", "requirements/weights.txt", "scripts/install_env.sh",
                "pyproject.toml")
#: A stand-in for the environment's Python: it records each command it is given, one argument a line.
RECORDING_PYTHON = """#!/bin/sh
for argument in "$@"; do printf '%s\\n' "$argument"; done >> "$CALLS"
printf '%s\\n' "--" >> "$CALLS"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the Makefile in a folder whose environment counts as installed and whose Python records its calls."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    folder = tmp_path / "checkout"
    for name in SETUP_INPUTS:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{name}\n")
    shutil.copy(ROOT / "Makefile", folder / "Makefile")
    (folder / "package-lock.json").write_text("{}\n")
    for stamp in ("vendor/mathjax/.installed-from", "node_modules/.installed-from"):
        (folder / stamp).parent.mkdir(parents=True)
        (folder / stamp).write_text("")
    python = folder / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(RECORDING_PYTHON)
    python.chmod(0o755)
    digest = hashlib.sha256(b"".join((folder / name).read_bytes() for name in SETUP_INPUTS)).hexdigest()[:16]
    (folder / ".venv" / ".installed").write_text(f"{digest}\n")
    return folder


def calls(checkout: Path, *assignments: str) -> list[list[str]]:
    """The commands `make run ASSIGNMENTS` gave the environment's Python, each as its list of arguments."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    done = subprocess.run(["make", "-C", str(checkout), "run", *assignments], capture_output=True, text=True,
                          env={**environment, "CALLS": str(checkout / "calls.txt")}, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = (checkout / "calls.txt").read_text().splitlines()
    commands, current = [], []
    for line in lines:
        if line == "--":
            commands.append(current)
            current = []
        else:
            current.append(line)
    return commands


@pytest.mark.parametrize("value", [
    "http://127.0.0.1:8000/v1; touch INJECTED",
    "http://127.0.0.1:8000/v1'; touch INJECTED; echo '",
    "http://127.0.0.1:8000/v1$(shell touch INJECTED)",
    "http://127.0.0.1:8000/v1`touch INJECTED`"])
def test_a_command_line_value_is_one_argument_as_written(checkout: Path, value: str) -> None:
    commands = calls(checkout, f"BASE_URL={value}", f"SERVED_MODEL={value}", "JUDGE=openai:a@x;touch${IFS}INJECTED",
                     "JOBS=2;touch INJECTED", "DATA_FETCH_FLAGS=--no-download;touch${IFS}INJECTED")
    assert not (checkout / "INJECTED").exists()
    data, run = commands
    assert data[:5] == ["-m", "recjudge", "data", "fetch", "all"] and data[5:] == ["--no-download;touch${IFS}INJECTED"]
    assert run[:3] == ["-m", "recjudge", "run"]
    options = dict(zip(run[3::2], run[4::2]))
    assert options == {"--judge": "openai:a@x;touch${IFS}INJECTED", "--base-url": value, "--served-model": value,
                       "--jobs": "2;touch INJECTED"}


def test_plain_values_reach_the_command_unchanged(checkout: Path) -> None:
    _, run = calls(checkout, "JUDGE=openai:a@x local:b", "PROFILE=smoke", "ALLOW_FAILURES=1")
    assert run == ["-m", "recjudge", "run", "--judge", "openai:a@x", "--judge", "local:b", "--profile", "smoke",
                   "--allow-failures"]
