"""Every command the documentation gives works as printed from a fresh clone: the project's programs (recjudge, its
Python, jupytext, ...) live in the environment `make setup` makes, `.venv/`, which a new shell has not activated, so
the README, the book's pages and the chapters' prose write them `.venv/bin/NAME` (the chapters' code cells run in
the book's kernel and are not commands)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "book").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.md"))]
#: Programs that exist only in the environment (or would be another Python's outside it).
ENVIRONMENT_PROGRAMS = {"recjudge", "python", "python3", "python3.11", "pip", "pip3", "pytest", "jupyter",
                        "jupyter-book", "jupytext", "papermill", "ruff", "uv", "optuna-dashboard"}
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
#: Leading VAR=value assignments and wrappers before a command's program.
_PREFIX = re.compile(r"^(?:\$\s+)?(?:\w+=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)*(?:(?:env|sudo|time|nohup)\s+)?")


def program(command: str) -> str | None:
    """The program a shell command runs, with any assignments and wrappers before it skipped; None when empty."""
    words = command[_PREFIX.match(command.strip()).end():].split() if command.strip() else []
    return words[0] if words else None


def text_and_commands(document: str) -> tuple[str, list[tuple[int, str]]]:
    """The document's prose (every other line blanked, so that code spans can run over line ends) and the command
    lines of its fenced shell blocks (each with its line number); executable cells ({code-cell}) are neither."""
    prose, commands, fence, executable = [], [], None, False
    for number, line in enumerate(document.split("\n"), 1):
        opening = _FENCE.match(line)
        if fence is None and opening:
            fence, executable = opening.group(1), opening.group(2).strip().startswith("{")
            prose.append("")
        elif fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not opening.group(2).strip():
                fence = None
            elif not executable and not line.lstrip().startswith("#"):
                for part in re.split(r"&&|\|\||;|\|", line.split(" #")[0]):
                    commands.append((number, part.strip()))
            prose.append("")
        else:
            prose.append(line)
    return "\n".join(prose), commands


def bare_commands(path: Path) -> list[str]:
    """Commands in ``path`` that run an environment program by its bare name: code-block lines, and code spans
    that give a program and its arguments (a span of the name alone names the program; ``recjudge run: ...`` quotes
    a message)."""
    prose, commands = text_and_commands(path.read_text(encoding="utf-8"))
    found = [f"{path.name}:{number}: {command}" for number, command in commands
             if program(command) in ENVIRONMENT_PROGRAMS]
    for span in re.finditer(r"`([^`]+)`", prose):
        words = " ".join(span.group(1).split())
        rest = words[_PREFIX.match(words).end():].split()
        if len(rest) > 1 and rest[0] in ENVIRONMENT_PROGRAMS and not rest[1].endswith(":"):
            found.append(f"{path.name}:{prose.count(chr(10), 0, span.start()) + 1}: `{words}`")
    return found


def test_documented_commands_run_the_environments_programs_from_a_fresh_clone() -> None:
    offenders = [command for path in DOCUMENTS for command in bare_commands(path)]
    assert offenders == [], "write these as .venv/bin/NAME:\n" + "\n".join(offenders)


def test_the_check_reads_commands_as_a_shell_would(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Run `recjudge run\n--list`, then `recjudge` alone; `recjudge run: terminated` is a message.\n"
                    "```bash\nRECJUDGE_LLM_MODE=replay recjudge run  # a comment\nmake book && python -m x\n```\n"
                    "```{code-cell} ipython3\nimport recjudge\n```\n"
                    "Fine: `.venv/bin/recjudge run --list`.\n", encoding="utf-8")
    assert sorted(bare_commands(page)) == ["page.md:1: `recjudge run --list`",
                                           "page.md:4: RECJUDGE_LLM_MODE=replay recjudge run",
                                           "page.md:5: python -m x"]
