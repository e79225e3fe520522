"""What a process costs before it does its work, before and after, side by side in one run.

Four figures, each measured for two set-ups in alternation (``--repeat`` times, medians printed):

- **engine import**: CPU and wall seconds of ``python -c "import recjudge.llm"``;
- **500 judgments**: a client process that imports the engine and judges ``--judgments`` prompts with an
  ``openai`` judge against the loopback mock server (``tests/mock_openai_server.py``, its own process, a token-bucket
  limit of ``--rps`` requests per second, ``--latency`` seconds per reply: 0.1 by default, a fast hosted API's order;
  0 gives a server no rate limit of requests in flight can hold to its pace, so the run is throttled far more often),
  each run into a fresh response store: the whole client process's CPU
  seconds, its wall time, and the delay from the call of ``run_judge`` to the server's receipt of the first request
  (both read ``time.monotonic``, one clock for every process on Linux);
- **kernel start**: a notebook kernel started by papermill that runs a chapter's imports (pandas, NumPy, SciPy,
  matplotlib, seaborn, statsmodels, scikit-learn, the engine): wall seconds from the call to the end, and the CPU
  seconds of the kernel and its manager;
- **the paper plan** (``--plan``): ``recjudge run --judge openai:gpt-4o-mini --profile paper --plan`` in a copy of
  each revision's whole tree (the data mirror as the caller sets it).

The two set-ups: *before* is the engine of revision ``--before`` (default: where this branch left ``main``), its
``src/`` exported with ``git archive`` and put first on ``PYTHONPATH``, with no cached bytecode
(``PYTHONPYCACHEPREFIX`` an empty folder, ``PYTHONDONTWRITEBYTECODE=1``: what every process met before set-up
compiled bytecode) and papermill's own kernel manager (TCP); *after* is this checkout as installed (bytecode compiled
at set-up, read through the environment's ``.pth`` file; kernels over IPC sockets).

A third column, **inspect_ai**, runs the same 500 judgments through inspect_ai (``eval`` of a task of one
``generate()`` per sample, its OpenAI provider on the chat-completions API at the same loopback server, its
defaults otherwise: connections, retries, an ``.eval`` log) and imports ``inspect_ai`` for the engine import. It
lives in its own environment, ``.venv-bench`` (``make bench-setup``: the pinned ``requirements/bench.txt``, bytecode
compiled), so that its dependencies never enter the project's lock; without it the column is left out, saying so.
Kernel start and the plan have no inspect_ai counterpart.

The machine's load average is printed before and after: on a shared machine the figures move with it.

    python benchmarks/bench_startup.py [--before REV] [--judgments 500] [--rps 50] [--latency 0.1] [--repeat 3] [--plan]
                                       [--inspect PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOCK = ROOT / "tests" / "mock_openai_server.py"
#: The environment ``make bench-setup`` installs inspect_ai into (the third column).
INSPECT_PYTHON = ROOT / ".venv-bench" / "bin" / "python"
#: What a chapter's first cells import (the kernel start figure).
CHAPTER_IMPORTS = ("import numpy, pandas, scipy.stats, matplotlib, matplotlib.pyplot, seaborn, statsmodels.api, "
                   "sklearn.metrics, recjudge.llm, recjudge.compendium.pages")


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and every descendant it waited for, its stdout)."""
    cpu, started = cpu_of_children(), time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall, spent = time.perf_counter() - started, cpu_of_children() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, spent, done.stdout


# ------------------------------------------------------------------------------------------------ the set-ups
class Setup:
    def __init__(self, name: str, env: dict[str, str], ipc: bool, tree: Path, python: str = sys.executable):
        self.name, self.env, self.ipc, self.tree, self.python = name, env, ipc, tree, python

    @property
    def is_inspect(self) -> bool:
        return self.python != sys.executable


def environment_as_installed() -> dict[str, str]:
    """This process's environment without a caller's PYTHONPATH or bytecode cache: each interpreter as installed."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONPYCACHEPREFIX")}


def setups(before: str, scratch: Path, with_tree: bool) -> list[Setup]:
    """The revision ``before`` (its src/ first on PYTHONPATH, no cached bytecode) and this checkout as installed."""
    exported = scratch / "before"
    exported.mkdir()
    paths = [] if with_tree else ["src"]
    archive = subprocess.run(["git", "archive", before, *paths], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(exported)], input=archive, check=True)
    empty_cache = scratch / "no-bytecode"
    empty_cache.mkdir()
    base = environment_as_installed()
    old = {**base, "PYTHONPATH": str(exported / "src"), "PYTHONPYCACHEPREFIX": str(empty_cache),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return [Setup(f"before ({before[:12]})", old, False, exported), Setup("after (this checkout)", base, True, ROOT)]


def inspect_setup(python: Path) -> Setup:
    """inspect_ai in its own environment (its compiled bytecode read as installed; a dummy key it insists on)."""
    return Setup("inspect_ai", {**environment_as_installed(), "OPENAI_API_KEY": "no-key"}, False, ROOT, str(python))


# ------------------------------------------------------------------------------------------------ the figures
def engine_import(setup: Setup) -> dict[str, float]:
    engine = "inspect_ai" if setup.is_inspect else "recjudge.llm"
    wall, cpu, _ = measured([setup.python, "-c", f"import {engine}"], setup.env)
    return {"engine import, CPU s": cpu, "engine import, wall s": wall}


def client(setup: Setup, base_url: str, arrivals: Path, judgments: int, tag: str) -> dict[str, float]:
    model = f"bench-{tag}"
    with tempfile.TemporaryDirectory() as store:
        mode = "--inspect-client" if setup.is_inspect else "--client"
        wall, cpu, out = measured([setup.python, __file__, mode, base_url, model, store, str(judgments)], setup.env)
    report = json.loads(out.strip().splitlines()[-1])
    if report["n_asked"] != judgments or report["n_failed"]:
        raise SystemExit(f"{setup.name}: the client asked {report['n_asked']} of {judgments} prompts, "
                         f"{report['n_failed']} failed")
    first = next(float(line.split()[1]) for line in arrivals.read_text().splitlines() if line.split()[0] == model)
    return {f"{judgments} judgments, client CPU s": cpu, f"{judgments} judgments, wall s": wall,
            "judging called (run_judge; eval) -> first request, s": first - report["called"]}


def run_client(base_url: str, model: str, store: str, judgments: int) -> None:
    """The client process (``--client``): import the engine, judge, read the scores as a chapter would."""
    from recjudge.llm import JudgeConfig, JudgeRequest, run_judge

    requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"{model} prompt {i}: rate it 1-5"}])
                for i in range(judgments)]
    config = JudgeConfig(provider="openai", model=model, base_url=base_url)
    called = time.monotonic()
    run = run_judge(config, requests, store=store, progress=False)
    scores = run.scores()
    print(json.dumps({"called": called, "n_asked": run.report.n_asked, "n_failed": run.report.n_failed,
                      "scored": int(scores.notna().sum())}))


def run_inspect_client(base_url: str, model: str, log_dir: str, judgments: int) -> None:
    """The inspect_ai client process (``--inspect-client``, run by ``.venv-bench``'s Python): the same prompts as
    one task of ``generate()`` per sample, evaluated with inspect_ai's defaults; its log written to ``log_dir``."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    task = Task(dataset=[Sample(input=f"{model} prompt {i}: rate it 1-5", id=f"k{i}") for i in range(judgments)],
                solver=generate())
    called = time.monotonic()
    # responses_api=False: the chat-completions endpoint our engine and the mock server speak
    [log] = inspect_eval(task, model=f"openai/{model}", model_base_url=base_url, log_dir=log_dir, display="none",
                         model_args={"responses_api": False})
    answered = sum(1 for sample in log.samples or [] if sample.output and sample.output.completion)
    print(json.dumps({"called": called, "n_asked": judgments, "n_failed": judgments - answered}))


def kernel_start(setup: Setup) -> dict[str, float]:
    _, _, out = measured([sys.executable, __file__, "--kernel", "ipc" if setup.ipc else "tcp"], setup.env)
    report = json.loads(out.strip().splitlines()[-1])
    return {"kernel start + chapter imports, wall s": report["wall"],
            "kernel start + chapter imports, CPU s": report["cpu"]}


def run_kernel(transport: str) -> None:
    """The kernel figure's process (``--kernel``): one notebook cell of a chapter's imports, executed by papermill."""
    import nbformat
    import papermill

    options = {}
    if transport == "ipc":
        from recjudge.compendium.kernels import local_kernel_manager

        options["kernel_manager_class"] = local_kernel_manager()
    with tempfile.TemporaryDirectory() as folder:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(CHAPTER_IMPORTS)]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        source, output = Path(folder) / "in.ipynb", Path(folder) / "out.ipynb"
        nbformat.write(notebook, source)
        cpu, started = cpu_of_children(), time.perf_counter()
        papermill.execute_notebook(str(source), str(output), kernel_name="python3", progress_bar=False,
                                   log_output=False, **options)
        wall = time.perf_counter() - started
    print(json.dumps({"wall": wall, "cpu": cpu_of_children() - cpu}))


def paper_plan(setup: Setup) -> dict[str, float]:
    command = [sys.executable, "-m", "recjudge", "run", "--judge", "openai:gpt-4o-mini", "--profile", "paper",
               "--plan"]
    env = {**setup.env, "RECJUDGE_HOME": str(setup.tree)}
    wall, cpu, _ = measured(command, env, cwd=setup.tree)
    return {"paper plan, wall s": wall, "paper plan, CPU s": cpu}


# ------------------------------------------------------------------------------------------------ the table
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="the revision compared (default: git merge-base HEAD main)")
    parser.add_argument("--judgments", type=int, default=500)
    parser.add_argument("--rps", type=float, default=50.0, help="the mock server's rate limit, requests per second")
    parser.add_argument("--latency", type=float, default=0.1, help="the mock server's seconds per reply")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plan", action="store_true", help="also time the paper plan (once per set-up)")
    parser.add_argument("--inspect", default=str(INSPECT_PYTHON), metavar="PYTHON",
                        help="the Python of an environment with inspect_ai (default: .venv-bench's, from "
                             "`make bench-setup`); the inspect_ai column is left out when it does not exist")
    parser.add_argument("--client", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--inspect-client", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--kernel", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        base_url, model, store, judgments = args.client
        run_client(base_url, model, store, int(judgments))
        return
    if args.inspect_client:
        base_url, model, log_dir, judgments = args.inspect_client
        run_inspect_client(base_url, model, log_dir, int(judgments))
        return
    if args.kernel:
        run_kernel(args.kernel)
        return
    before = args.before or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True,
                                           text=True, check=True).stdout.strip()
    load_at_start = os.getloadavg()
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        arrivals = Path(scratch) / "arrivals.txt"
        server = subprocess.Popen([sys.executable, str(MOCK), "--rps", str(args.rps), "--latency", str(args.latency),
                                   "--arrivals", str(arrivals)], stdout=subprocess.PIPE, text=True)
        try:
            base_url = server.stdout.readline().strip()
            compared = setups(before, Path(scratch), with_tree=args.plan)
            if Path(args.inspect).exists():
                compared.append(inspect_setup(Path(args.inspect)))
            else:
                print(f"inspect_ai column left out: {args.inspect} does not exist (make bench-setup installs it)")
            for repeat in range(args.repeat):
                for number, setup in enumerate(compared if repeat % 2 == 0 else compared[::-1]):
                    figures = {**engine_import(setup),
                               **client(setup, base_url, arrivals, args.judgments, f"{repeat}-{number}")}
                    if not setup.is_inspect:
                        figures.update(kernel_start(setup))
                    if args.plan and repeat == 0 and not setup.is_inspect:
                        figures.update(paper_plan(setup))
                    for name, value in figures.items():
                        results.setdefault(name, {}).setdefault(setup.name, []).append(value)
                    time.sleep(1.0)  # the server's token bucket refills
        finally:
            server.terminate()
            server.wait(timeout=10)
    names = [setup.name for setup in compared]
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in load_at_start)} at the start, "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end; {os.cpu_count()} CPUs; medians of "
          f"{args.repeat} alternated runs; mock server limited to {args.rps:g} requests/s, {args.latency:g} s per "
          f"reply "
          f"({args.judgments / args.rps:.1f} s for {args.judgments} judgments at best)")
    width = max(len(name) for name in results) + 2
    ratios = [("after/before", names[1], names[0])]
    if len(names) > 2:
        ratios.append(("inspect_ai/after", names[2], names[1]))
    print(f"{'':<{width}}" + "".join(f"{name:>26}" for name in names) + "".join(f"{r:>18}" for r, _, _ in ratios))
    for figure, by_setup in results.items():
        values = {name: statistics.median(by_setup[name]) for name in names if name in by_setup}
        shown = "".join(f"{values[name]:>26.2f}" if name in values else f"{'-':>26}" for name in names)
        quotients = "".join(f"{values[top] / values[bottom]:>18.2f}" if top in values and values.get(bottom)
                            else f"{'-':>18}" for _, top, bottom in ratios)
        print(f"{figure:<{width}}{shown}{quotients}")


if __name__ == "__main__":
    main()
