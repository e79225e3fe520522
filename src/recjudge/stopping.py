"""Stopping a command cleanly: its children ended first, then SIGTERM or Ctrl-C raised as an exception.

A command stopped by SIGTERM (``kill``, a CI timeout, a closed session) would otherwise die at once, skipping every
``finally`` and leaving its worker processes (``recjudge run --jobs``, the tuning workers) and Jupyter kernels running
and writing after it has gone; stopped by Ctrl-C, each worker would print its own traceback.  Within
``stops_cleanly`` both signals first end the process's children (``end_children``: the workers and the kernels, which
run in their own session and so get no signal sent to a process group), then raise ``Terminated`` (a
``KeyboardInterrupt``) or ``KeyboardInterrupt`` in the main thread, so every clean-up written for Ctrl-C runs.

Stopping is one way: a signal that follows the first (a second Ctrl-C, a SIGTERM at once after it) finds the process
already stopping and changes nothing, so the clean-ups and the command's last line run undisturbed and the exit status
is the first signal's.  What the handlers need (psutil) is imported before they are installed, never inside them.

A worker process stopped by SIGTERM exits at once (``worker_ends_with_its_children``), without running its
``finally`` blocks: the temporary files it made with ``own_temporary_file`` are removed before it goes.  A worker that
must record its stop itself (a tuning worker fails its trial and queues it again) uses ``worker_stops_cleanly``
instead, which raises ``Terminated`` in its main thread.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Exit status after SIGTERM (128 + 15), as a shell reports a terminated command.
TERMINATED = 128 + signal.SIGTERM
_SIGNALS = (signal.SIGTERM, signal.SIGINT)

#: The first stop's signal, once this process is stopping; every later SIGINT or SIGTERM is then ignored.
_stopping: int | None = None
#: Temporary files of this process (``own_temporary_file``), removed by a worker that a stop ends at once.
_own_files: set[str] = set()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread within ``stops_cleanly`` (and in a ``worker_stops_cleanly`` worker)."""


def _stop(signum: int, frame: object) -> None:
    global _stopping
    if _stopping is not None:  # already stopping (this handler may be running below): the first stop goes on
        return
    _stopping = signum
    # The children first: a kernel or worker must not go on writing while this process cleans up (a kernel runs in
    # its own session, so neither Ctrl-C nor a signal to this process group reaches it).
    end_children(grace=2.0)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _import_what_the_handlers_need() -> None:
    # A handler that imports runs that import again when a second signal arrives mid-import, and finds the module
    # half made; so every import is done before any handler is installed.
    import multiprocessing.resource_tracker  # noqa: F401

    import psutil  # noqa: F401


@contextmanager
def stops_cleanly() -> Iterator[None]:
    """Within the block, SIGTERM and Ctrl-C (SIGINT) end this process's children (``end_children``) and then raise
    ``Terminated`` or ``KeyboardInterrupt`` in the main thread, so that every clean-up runs; outside the main thread
    (where no signal handler can be set) nothing changes.  After a stop the signals stay ignored (the process is
    ending: its clean-ups and last line run undisturbed); otherwise the previous handlers come back."""
    global _stopping
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _import_what_the_handlers_need()
    _stopping = None
    previous = {number: signal.signal(number, _stop) for number in _SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_IGN if _stopping is not None else handler)


def end_children(pid: int | None = None, *, grace: float = 5.0) -> None:
    """End every descendant of process ``pid`` (default: this one, whose multiprocessing resource tracker is kept):
    SIGTERM first, SIGKILL for any still there after ``grace`` seconds."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    if pid is None:  # multiprocessing's resource tracker outlives its users on purpose: it frees what they leave
        from multiprocessing import resource_tracker

        tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
        children = [child for child in children if child.pid != tracker]
    for child in children:
        try:
            child.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(children, timeout=grace)
    for child in alive:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace)


def worker_ends_with_its_children() -> None:
    """In a worker process: ignore Ctrl-C (the parent hears it and ends its workers, so no worker prints a traceback)
    and, on SIGTERM, end the worker's own children (its kernels), remove its own temporary files
    (``own_temporary_file``) and exit at once with ``TERMINATED``."""
    global _stopping
    _import_what_the_handlers_need()
    _stopping = None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)


def _end_worker(signum: int, frame: object) -> None:
    global _stopping
    if _stopping is not None:
        return
    _stopping = signum
    try:
        end_children(grace=2.0)
    finally:
        for name in list(_own_files):
            Path(name).unlink(missing_ok=True)
        os._exit(TERMINATED)


def worker_stops_cleanly() -> None:
    """In a worker process that records its own stop: ignore Ctrl-C (the parent hears it and ends its workers) and,
    on SIGTERM, end the worker's own children and raise ``Terminated`` in its main thread, so that its ``except`` and
    ``finally`` blocks run (the worker then exits with ``TERMINATED``; its parent gives it ``end_children``'s grace)."""
    global _stopping
    _import_what_the_handlers_need()
    _stopping = None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)


@contextmanager
def own_temporary_file(folder: Path, prefix: str, suffix: str) -> Iterator[Path]:
    """A new empty file in ``folder`` (``tempfile.mkstemp``) that is this process's own: removed when the block ends,
    however it ends (an error, Ctrl-C, SIGTERM), also in a worker that a stop ends at once
    (``worker_ends_with_its_children``).  A file moved away meanwhile (the finished output) is not touched."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)  # made and recorded as one step
    try:
        handle, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
        os.close(handle)
        _own_files.add(name)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)
        _own_files.discard(name)


__all__ = ["TERMINATED", "Terminated", "end_children", "own_temporary_file", "stops_cleanly",
           "worker_ends_with_its_children", "worker_stops_cleanly"]
