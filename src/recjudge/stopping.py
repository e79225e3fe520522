"""Stopping a command cleanly: its children ended first, then SIGTERM or Ctrl-C raised as an exception.

A command stopped by SIGTERM (``kill``, a CI timeout, a closed session) would otherwise die at once, skipping every
``finally`` and leaving its worker processes (``recjudge run --jobs``, the tuning workers) and Jupyter kernels running
and writing after it has gone; stopped by Ctrl-C, each worker would print its own traceback.  Within
``stops_cleanly`` both signals first end the process's children (``end_children``: the workers and the kernels, which
run in their own session and so get no signal sent to a process group), then raise ``Terminated`` (a
``KeyboardInterrupt``) or ``KeyboardInterrupt`` in the main thread, so every clean-up written for Ctrl-C runs.
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
    """SIGTERM, raised in the main thread within ``stops_cleanly``."""


def _stop(signum: int, frame: object) -> None:
    # The children first: a kernel or worker must not go on writing while this process cleans up (a kernel runs in
    # its own session, so neither Ctrl-C nor a signal to this process group reaches it).
    end_children(grace=2.0)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def stops_cleanly() -> Iterator[None]:
    """Within the block, SIGTERM and Ctrl-C (SIGINT) end this process's children (``end_children``) and then raise
    ``Terminated`` or ``KeyboardInterrupt`` in the main thread, so that every clean-up runs; outside the main thread
    (where no signal handler can be set) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _stop) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


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
    and, on SIGTERM, end the worker's own children (its kernels) and exit at once with ``TERMINATED``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)


def _end_worker(signum: int, frame: object) -> None:
    try:
        end_children(grace=2.0)
    finally:
        os._exit(TERMINATED)


__all__ = ["TERMINATED", "Terminated", "end_children", "stops_cleanly", "worker_ends_with_its_children"]
