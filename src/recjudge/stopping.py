"""Stopping a command cleanly: SIGTERM raised as an exception, and a process's children ended with it.

A command stopped by SIGTERM (``kill``, a CI timeout, a closed session) would otherwise die at once, skipping every
``finally`` and leaving its worker processes (``recjudge run --jobs``, the tuning workers) running and writing after
it has gone.  ``terminate_raises`` makes SIGTERM raise ``Terminated`` in the main thread, a ``KeyboardInterrupt``
so every clean-up written for Ctrl-C runs; ``end_children`` ends a process's children (and theirs: the Jupyter
kernels a worker started, which run in their own session and so get no signal sent to a process group).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Exit status after SIGTERM (128 + 15), as a shell reports a terminated command.
TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread within ``terminate_raises``."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


@contextmanager
def terminate_raises() -> Iterator[None]:
    """Within the block SIGTERM raises ``Terminated`` in the main thread; outside the main thread (where no signal
    handler can be set) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def end_children(pid: int | None = None, *, grace: float = 5.0) -> None:
    """End every descendant of process ``pid`` (default: this one): SIGTERM first, SIGKILL for any still there
    after ``grace`` seconds."""
    import psutil  # installed with the Jupyter kernel (ipykernel needs it)

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
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
    and, on SIGTERM, end the worker's own children (its kernels) and exit at once with ``TERMINATED``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)


def _end_worker(signum: int, frame: object) -> None:
    try:
        end_children(grace=2.0)
    finally:
        os._exit(TERMINATED)


__all__ = ["TERMINATED", "Terminated", "end_children", "terminate_raises", "worker_ends_with_its_children"]
