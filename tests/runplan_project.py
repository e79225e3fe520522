"""A minimal project for the run plan's tests (``tests/test_runplan_*.py`` and others): a notebook written in a
few lines, a run plan, the project's folders under ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from recjudge.compendium import runplan


def write_notebook(path: Path, body: str, parameters: str = "value = 1") -> Path:
    """A tiny notebook: a title, a `parameters` cell and one code cell."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Tiny chapter"),
        nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(body),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A minimal project: package source, a notebook, a response store, results folder, all under tmp_path."""
    root = tmp_path / "project"
    (root / "src" / "recjudge").mkdir(parents=True)
    (root / "src" / "recjudge" / "module.py").write_text("ANSWER = 1\n")
    (root / "data" / "llm").mkdir(parents=True)
    (root / "data" / "llm" / "replies.jsonl").write_text('{"key": "a", "reply": "3"}\n')
    write_notebook(root / "notebooks" / "tiny.ipynb", "print('result', value * 2)")
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_STORE", str(root / "data" / "llm"))
    monkeypatch.setenv("RECJUDGE_RESULTS", str(root / "results"))
    return root


def write_plan(root: Path, text: str) -> Path:
    path = root / "runplan.yaml"
    path.write_text(text)
    return path


def parameters_cell_namespace(notebook_path: Path) -> dict:
    """Execute a notebook's parameters cell alone and return the names it binds (the oracle the check is held to)."""
    notebook = runplan.read_source_notebook(notebook_path)
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    namespace: dict = {}
    exec(compile(cell.source, str(notebook_path), "exec"), namespace)  # plain assignments of constants
    namespace.pop("__builtins__", None)
    return namespace
