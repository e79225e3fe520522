"""What the scanners of the package's source (typed verdict words, typed numbers) share: which string constants are
docstrings, which document the code and never reach a page."""

from __future__ import annotations

import ast


def docstring_ids(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree`` (they document the code; no reader sees them on a page)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found
