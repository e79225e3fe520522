"""llama-cpp-python's own OpenAI-compatible server on loopback: a local GGUF judged through the OpenAI path.

``recjudge serve start|stop`` (for a shell, e.g. CI) and ``LocalServer`` (for Python, e.g. the tests' fixture) are
the one way the project starts that server::

    url=$(recjudge serve start --port 8765)        # waits until the model is served, prints the base URL
    RECJUDGE_LLM_CONCURRENCY=1 recjudge run --judge openai:smollm2-135m-instruct-q4_1@llama-cpp-server \\
        --base-url "$url" --served-model smollm2-135m-instruct-q4_1 --profile smoke
    recjudge serve stop

``start`` launches ``python -m llama_cpp.server`` on 127.0.0.1 in a session of its own (so it outlives the
command), waits until ``GET /v1/models`` lists the model, writes a state file (pid, base URL, served name, log
file) and prints the base URL on standard output; the judge's arguments go to standard error.  A server that exits
or is not ready within ``--timeout`` seconds is stopped and reported with the tail of its log.  The log is the state
file's name with ``.log``; a file of that name that ``start`` did not write (``LOG_HEADER``) is never replaced: the
command stops first and names it.  A state file whose pid now belongs to another program is named as such, never
taken for a running server.  ``stop`` ends the process the state file names (SIGTERM, SIGKILL after
``STOP_GRACE_S``) and removes the file; with no state file it says there is nothing to stop, and with a pid that has
ended it says no server was running and removes the stale file (both exit 0).

What is served: the GGUF of a local model name (``recjudge.llm.providers.local.resolve_model_path``: SmolLM2 by
default, an optional model, a path or ``RECJUDGE_LOCAL_GGUF``) under its name (``--model_alias``; a path: the file
name without ``.gguf``), with the local provider's context size (``DEFAULT_N_CTX``) and threads
(``RECJUDGE_LOCAL_THREADS``, else every CPU).  The response store keys replies by provider and model name, so the
judge's identity is ``<name>@llama-cpp-server`` (``identity``) with the served name as ``served_model``: provider
``openai``, never mixed with the in-process judge's (``local``) replies of the same weights.

The server answers one request at a time (llama-cpp-python's server holds a lock around its one model), so requests
the runner sends in parallel only queue there, and a long queue runs into the request deadline
(RECJUDGE_LLM_TIMEOUT); ask it with ``RECJUDGE_LLM_CONCURRENCY=1``.

Log-probabilities: the server loads the model with ``logits_all=True`` (its default) and answers ``logprobs`` and
``top_logprobs`` in OpenAI's chat format (``llama_cpp.llama_chat_format._convert_text_completion_logprobs_to_chat``),
so expected-score mode works through it unchanged.  Unlike the in-process provider, the server reuses whatever
prefix of the previous prompt is still in its KV cache without aligning it to batch boundaries, so its
log-probabilities can differ slightly with the order prompts are asked in (``recjudge.llm.providers.local``).

The server needs llama-cpp-python's ``server`` extra (uvicorn, FastAPI, ...), which the ``local`` extra and the
lock include; ``server_unavailable()`` says what is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
#: Suffix of the judge's identity in the response store (``identity``).
IDENTITY_SUFFIX = "@llama-cpp-server"
#: Seconds ``start`` waits for the model to be served (loading SmolLM2 takes ~3 s on 2 cores).
DEFAULT_TIMEOUT_S = 120.0
#: Seconds between SIGTERM and SIGKILL when stopping.
STOP_GRACE_S = 10.0
#: Lines of the server's log shown when it fails to start.
LOG_TAIL_LINES = 25
SERVER_MODULE = "llama_cpp.server"
#: The first line ``recjudge serve start`` writes to the log beside its state file: a later start replaces a log
#: that begins with it (its own, from an earlier server) and refuses to touch any other file of that name.
LOG_HEADER = b"# recjudge serve: llama.cpp server log\n"


class ServerError(RuntimeError):
    """The server could not be started or stopped; the message names the command, port or file and shows the tail
    of the server's log."""


class StatePathError(ServerError):
    """The state file (and the log beside it) cannot be written where ``--state`` says; found before the server
    starts (exit status 2)."""


def server_unavailable() -> str | None:
    """Why ``python -m llama_cpp.server`` cannot run in this environment (a message naming the fix), or None."""
    try:  # what `python -m llama_cpp.server` imports: its app (FastAPI, sse-starlette, ...) and uvicorn
        import llama_cpp.server.app  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return (f"llama-cpp-python's server cannot be imported ({exc}); it needs the extra llama-cpp-python[server] "
                "(run `make setup`, or `pip install -e .[local]`)")
    return None


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on at the moment (the system's choice)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = HOST) -> bool:
    """Whether something accepts connections at ``host:port``."""
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, port)) == 0


#: Requests to the server go straight to loopback, whatever proxy the environment configures.
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def served_name(model: str) -> str:
    """The name the server serves ``model`` under: a local model's name, or a GGUF path's file name without
    ``.gguf``."""
    if "/" in model or os.sep in model or model.lower().endswith(".gguf"):
        return Path(model).name.removesuffix(".gguf").removesuffix(".GGUF")
    return model


def identity(model: str) -> str:
    """The judge's identity in the response store for ``model`` served here (module docstring)."""
    return served_name(model) + IDENTITY_SUFFIX


def log_tail(path: Path | None, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file (empty when there is none)."""
    if path is None or not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()
    return "\n".join(text[-lines:])


class LocalServer:
    """``python -m llama_cpp.server`` for one local model on 127.0.0.1 (module docstring).

    ``with LocalServer() as server: ... server.base_url ...`` starts it, waits until it serves the model, and stops
    it at the end.  port: None picks a free one.  log: the file its output goes to (default: a temporary file,
    removed at ``stop`` unless the start failed).  detach: keep it running when this process exits (the command
    line's ``start``); otherwise it is stopped at interpreter exit at the latest, and it is in this process's group."""

    def __init__(self, model: str | None = None, *, port: int | None = None, threads: int | None = None,
                 n_ctx: int | None = None, log: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 detach: bool = False):
        from ..settings import env_number
        from .providers.local import DEFAULT_MODEL, DEFAULT_N_CTX, THREADS_ENV, resolve_model_path

        self.model = model or DEFAULT_MODEL
        self.gguf = resolve_model_path(self.model)  # ProviderError naming the fix when it is not there
        self.served_model = served_name(self.model)
        self.identity = identity(self.model)
        self.port = port
        self.threads = int(threads or env_number(THREADS_ENV, int) or os.cpu_count() or 1)
        self.n_ctx = int(n_ctx or DEFAULT_N_CTX)
        self.timeout_s = float(timeout_s)
        self.detach = detach
        self._own_log = log is None
        self.log = Path(log) if log is not None else None
        self.process: subprocess.Popen | None = None
        self.startup_s: float | None = None
        self._finalizer: weakref.finalize | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise ServerError("the server has no port yet: start it first")
        return f"http://{HOST}:{self.port}/v1"

    def command(self) -> list[str]:
        """The server's command line."""
        return [sys.executable, "-m", SERVER_MODULE, "--model", str(self.gguf), "--model_alias", self.served_model,
                "--host", HOST, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads), "--verbose", "False"]

    def judge_arguments(self) -> list[str]:
        """The ``recjudge run`` arguments that judge with this server."""
        return ["--judge", f"openai:{self.identity}", "--base-url", self.base_url, "--served-model",
                self.served_model]

    def judge_spec(self):
        """This server's judge as a ``recjudge.llm.judge_spec.JudgeSpec`` (what ``judge_arguments`` give)."""
        from .judge_spec import parse_judge

        return parse_judge(f"openai:{self.identity}", base_url=self.base_url, served_model=self.served_model)

    # -------------------------------------------------------------------------------------------- life cycle
    def start(self) -> "LocalServer":
        """Launch the server and wait until ``GET /v1/models`` lists the model; ServerError (with the log's tail)
        when it exits first or is not ready within ``timeout_s``."""
        if self.process is not None:
            raise ServerError(f"the server at {self.base_url} is already started (pid {self.process.pid})")
        problem = server_unavailable()
        if problem:
            raise ServerError(problem)
        if self.port is None:
            self.port = free_port()
        elif port_in_use(self.port):  # else another server there could answer for this one
            raise ServerError(f"port {self.port} on {HOST} is in use already; give another port (or none: a free one)")
        if self.log is None:
            handle, name = tempfile.mkstemp(prefix=f"llama-server-{self.port}-", suffix=".log")
            os.close(handle)
            self.log = Path(name)
        started = time.perf_counter()
        with self.log.open("ab") as log:
            # Detached: a session of its own, so it outlives this process and the shell's Ctrl-C; attached: in this
            # process group, so whatever ends the group (a CI timeout, Ctrl-C) ends the server too.
            self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=self.detach)
        if not self.detach:
            self._finalizer = weakref.finalize(self, _terminate, self.process, STOP_GRACE_S)
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop(keep_log=True)
            raise
        self.startup_s = time.perf_counter() - started
        return self

    def _wait_ready(self, started: float) -> None:
        deadline = started + self.timeout_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerError(f"the llama.cpp server for {self.gguf} exited with status {code} before serving "
                                  f"(port {self.port}; log {self.log}):\n{log_tail(self.log)}")
            if self.serves_model():
                return
            if time.perf_counter() > deadline:
                raise ServerError(f"the llama.cpp server for {self.gguf} did not serve {self.served_model!r} at "
                                  f"{self.base_url}/models within {self.timeout_s:.0f} s (log {self.log}):\n"
                                  f"{log_tail(self.log)}")
            time.sleep(0.1)

    def serves_model(self) -> bool:
        """True when ``GET /v1/models`` answers and lists the served name."""
        try:
            with _LOOPBACK.open(f"{self.base_url}/models", timeout=2) as response:
                listed = json.load(response)
        except (OSError, ValueError, urllib.error.URLError):
            return False
        items = listed.get("data") if isinstance(listed, dict) else None
        return isinstance(items, list) and any(isinstance(item, dict) and item.get("id") == self.served_model
                                               for item in items)

    def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``STOP_GRACE_S``); removes a temporary log unless
        ``keep_log``.  Stopping a server that is not running does nothing."""
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self.process is not None:
            _terminate(self.process, STOP_GRACE_S)
            self.process = None
        if self._own_log and not keep_log and self.log is not None:
            self.log.unlink(missing_ok=True)

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()


def _terminate(process: subprocess.Popen, grace_s: float) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ------------------------------------------------------------------------------------------------ command line
def default_state_file() -> Path:
    """Where ``recjudge serve`` keeps the running server's pid and URL unless ``--state`` says otherwise."""
    return Path(tempfile.gettempdir()) / f"recjudge-serve-{os.getuid()}.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="serve_command", required=True)
    start = actions.add_parser("start", help="start llama-cpp-python's OpenAI-compatible server on 127.0.0.1 and "
                                             "print its base URL once it serves the model")
    start.add_argument("--model", default=None,
                       help="local model name or GGUF path (default: the default local model, SmolLM2)")
    start.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default 0: a free one)")
    start.add_argument("--threads", type=int, default=None,
                       help="llama.cpp threads (default: RECJUDGE_LOCAL_THREADS, else every CPU)")
    start.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                       help=f"seconds to wait for the model to be served (default {DEFAULT_TIMEOUT_S:.0f})")
    stop = actions.add_parser("stop", help="stop the server `recjudge serve start` started")
    for action in (start, stop):
        action.add_argument("--state", type=Path, default=None,
                            help=f"the server's state file (default {default_state_file()}); its log is beside it")


def run_command(args: argparse.Namespace) -> int:
    state = args.state or default_state_file()
    try:
        if args.serve_command == "start":
            return _start_command(args, state)
        return _stop_command(state)
    except ServerError as error:
        print(f"recjudge serve {args.serve_command}: {error}", file=sys.stderr)
        return 2 if isinstance(error, StatePathError) else 1


def _start_command(args: argparse.Namespace, state: Path) -> int:
    from .providers.base import ProviderError

    if args.port < 0 or args.port > 65535:
        raise ServerError(f"--port {args.port}: not a TCP port (0-65535; 0 picks a free one)")
    if args.timeout <= 0:
        raise ServerError(f"--timeout {args.timeout}: must be a positive number of seconds")
    _check_state_path(state)
    running = _read_state(state)
    if running and _alive(running.get("pid")):
        pid = running.get("pid")
        if not _is_server(pid):
            raise ServerError(f"state file {state} names process {pid}, which is not a llama.cpp server (the server "
                              "ended and its pid was reused?); nothing was started: remove that file and start "
                              "again, or give another --state")
        raise ServerError(f"a server already runs at {running.get('base_url')} (pid {pid}, state "
                          f"{state}); `recjudge serve stop{_state_option(args.state)}` first, or give another --state")
    log = _log_path(state)
    if log.exists() and not _written_by_serve(log):
        raise StatePathError(f"--state {state}: {log} exists and was not written by recjudge serve (the server's "
                             "log goes beside its state file); move it, or give another --state")
    try:
        server = LocalServer(args.model, port=args.port or None, threads=args.threads,
                             log=log, timeout_s=args.timeout, detach=True)
    except ProviderError as error:
        raise ServerError(f"--model {args.model}: {error}" if args.model else str(error)) from None
    state.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(LOG_HEADER)  # a new log, or this command's own from an earlier server (checked above)
    server.start()
    _write_state(state, {"pid": server.process.pid, "base_url": server.base_url, "served_model": server.served_model,
                         "identity": server.identity, "gguf": str(server.gguf), "log": str(server.log)})
    print(server.base_url)
    print(f"llama.cpp server for {server.gguf.name} ready at {server.base_url} in {server.startup_s:.1f} s "
          f"(pid {server.process.pid}, log {server.log}). Judge with it:\n"
          f"  RECJUDGE_LLM_CONCURRENCY=1 recjudge run {' '.join(server.judge_arguments())} --profile smoke\n"
          f"Stop it: recjudge serve stop{_state_option(args.state)}", file=sys.stderr)
    return 0


def _check_state_path(state: Path) -> None:
    """StatePathError naming the path when the state file or its log cannot be written there (a folder in its
    place, a file among its parents, a read-only folder): found before a server is started that nothing could stop."""
    for path in (state, _log_path(state)):
        if path.is_dir():
            raise StatePathError(f"--state {state}: {path} is a folder; give the path of a file")
    try:
        state.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=state.parent):
            pass
    except OSError as exc:
        at_fault = f" ({exc.filename})" if exc.filename else ""
        raise StatePathError(f"--state {state}: its folder cannot be written{at_fault}: "
                             f"{exc.strerror or type(exc).__name__}") from None


def _log_path(state: Path) -> Path:
    return state.with_suffix(".log")


def _written_by_serve(log: Path) -> bool:
    try:
        with log.open("rb") as handle:
            return handle.read(len(LOG_HEADER)) == LOG_HEADER
    except OSError:
        return False


def _stop_command(state: Path) -> int:
    running = _read_state(state)
    if running is None:
        print(f"recjudge serve stop: no server recorded in {state}; nothing to stop", file=sys.stderr)
        return 0
    pid = running.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        raise ServerError(f"state file {state}: no valid pid ({pid!r}); remove the file")
    if not _alive(pid):
        state.unlink(missing_ok=True)
        print(f"recjudge serve stop: no server was running (pid {pid} had ended; stale state {state} removed)",
              file=sys.stderr)
        return 0
    if not _is_server(pid):
        raise ServerError(f"state file {state}: process {pid} is not a llama.cpp server (the server ended and "
                          "its pid was reused?); nothing was signalled; remove the file")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    state.unlink(missing_ok=True)
    print(f"recjudge serve stop: stopped the server at {running.get('base_url')} (pid {pid})", file=sys.stderr)
    return 0


def _state_option(state: Path | None) -> str:
    return f" --state {state}" if state else ""


def _read_state(state: Path) -> dict[str, Any] | None:
    if not state.is_file():
        return None
    try:
        data = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ServerError(f"state file {state} is unreadable ({error}); remove it") from None
    if not isinstance(data, dict):
        raise ServerError(f"state file {state} is not a JSON object; remove it")
    return data


def _write_state(state: Path, data: dict[str, Any]) -> None:
    partial = state.with_name(state.name + ".partial")
    partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    partial.replace(state)


def _alive(pid: Any) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_server(pid: int) -> bool:
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return True  # no /proc to check with: trust the state file
    try:
        return SERVER_MODULE in cmdline.read_bytes().decode("utf-8", "replace").split("\0")
    except OSError:
        return False


__all__ = ["IDENTITY_SUFFIX", "LocalServer", "ServerError", "free_port", "identity", "served_name",
           "server_unavailable"]
