"""What a run of the plan is (``Run``), the plan's two errors, and the file names, folders and environment
variables the other modules of the run plan share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUNPLAN_FILE = "runplan.yaml"
CACHE_DIR = ".runplan-cache"
OUTPUT_DIR = Path("book") / "notebooks"
#: Source notebooks: Jupyter JSON, or MyST markdown text read with jupytext.
NOTEBOOK_SUFFIXES = (".ipynb", ".md")
#: The book as committed: no overrides, ever (the committed results are this profile's).
DEFAULT_PROFILE = "default"
#: The parameter through which every chapter that asks an LLM takes the reader's judges (see the package's docstring).
JUDGES_PARAMETER = "judges"
#: The engine's mode variable (``recjudge.llm.runner``), named here so that importing the run plan stays light.
MODE_ENV = "RECJUDGE_LLM_MODE"
#: The engine's variable naming the only judges asked (``recjudge.llm.ask_options.ASK_ONLY_ENV``), likewise.
ASK_ONLY_ENV = "RECJUDGE_LLM_ASK_ONLY"


class RunPlanError(ValueError):
    """The run plan is malformed; the message names the file, the run entry and the field."""


class RunFailedError(RuntimeError):
    """A notebook of the run plan failed; the message names the notebook and the failing cell."""


@dataclass(frozen=True)
class Run:
    """One entry of the run plan: a notebook executed with one parameter set."""

    name: str
    notebook: str
    parameters: dict[str, Any] = field(default_factory=dict)
    datasets: tuple[str, ...] = ()
    timeout: int | None = None
    results_of: tuple[str, ...] = ()
    variant: str | None = None
    asks_llm: bool = False
    reads_logprobs: bool = False

    def output_path(self, root: Path) -> Path:
        return root / OUTPUT_DIR / f"{self.name}.ipynb"
