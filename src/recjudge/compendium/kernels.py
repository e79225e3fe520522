"""The numeric kernels a chapter runs on, held to the same ones on every x86-64 machine.

NumPy chooses its SIMD kernels when it is imported: the AVX-512 ones where the CPU has them. They differ from the
AVX2 ones in the last bit of some functions (``exp``, ``log``) and in which of several tied elements a partition or
an unstable sort puts first, so the same notebook gave other digits of an ordinal logit's p-values and other kNN
neighbours on an AVX-512 machine than on an AVX2 one. OpenBLAS likewise picks its kernels per CPU. The committed
results must not depend on the machine that built them, so ``recjudge run`` starts every notebook kernel with:

- ``NPY_DISABLE_CPU_FEATURES``: NumPy's dispatch targets above x86-64-v3 (AVX-512) turned off;
- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's AVX2 kernels, on CPUs that have AVX2.

A variable the caller has already set is left as it is. The settings change speed a little, never a result's meaning.

A warning a chapter's code meets (a library's ``UserWarning``, with the path of the file that raised it) is no part of
its page: ``recjudge run`` starts each kernel so that its warnings go to the run's log (``WARNING_LOG_ENV``,
``keep_warnings_off_the_page``) instead of the cell's output, and names them when the run ends. A warning is handled
where it arises (or filtered there, where a library's warning is noise); the log only keeps one from the page.

``recjudge run --jobs N`` executes N notebooks at once; each kernel's thread pools (OpenMP, which torch's intra-op
threads follow, MKL, and llama.cpp's ``RECJUDGE_LOCAL_THREADS``) are held to its share of the CPUs,
``max(1, cpus // N)`` (``thread_share_environment``), so that N kernels do not each start one thread per CPU. OpenBLAS
is the exception: its LAPACK routines split their work by thread count, so ``numpy.linalg.solve`` of a 200 x 200
system gives other last bits with 1 thread than with 2, and a kernel run beside others would no longer compute what it
computes alone. It keeps the count it takes alone (every CPU, unless the caller set one).

A kernel is local, so it is reached over IPC (Unix domain) sockets in a private folder (``local_kernel_manager``),
never TCP: no port is chosen by one process and bound by another a moment later (a race with whatever else starts on
the machine), no other user of the machine can reach the sockets, and the kernel has no reason to warn that it "is
running over TCP without encryption". The folder is removed when the kernel shuts down.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

#: NumPy dispatch targets every x86-64 machine this project builds on has (x86-64-v3: AVX2, FMA).
COMMON_TARGETS = ("X86_V2", "X86_V3")
OPENBLAS_AVX2_CORE = "Haswell"
#: The thread pools held to a kernel's share under ``--jobs`` (torch reads ``OMP_NUM_THREADS``; llama.cpp the local
#: provider's variable).
SHARED_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "RECJUDGE_LOCAL_THREADS")
OPENBLAS_THREADS = "OPENBLAS_NUM_THREADS"
#: Where OpenBLAS reads its thread count, first found first (it falls back to OpenMP's).
OPENBLAS_THREAD_SOURCES = (OPENBLAS_THREADS, "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def kernel_environment() -> dict[str, str]:
    """The environment variables that hold a notebook kernel's numeric code to the common x86-64-v3 kernels."""
    from numpy._core import _multiarray_umath as umath

    environment = {}
    above_common = [target for target in umath.__cpu_dispatch__ if target not in COMMON_TARGETS]
    if above_common:
        environment["NPY_DISABLE_CPU_FEATURES"] = " ".join(above_common)
    if umath.__cpu_features__.get("AVX2"):
        environment["OPENBLAS_CORETYPE"] = OPENBLAS_AVX2_CORE
    return environment


def use_common_numeric_kernels() -> Callable[[], None]:
    """Give processes started from here on (notebook kernels) ``kernel_environment()``, except variables already
    set; returns the function that undoes it."""
    applied = {name: value for name, value in kernel_environment().items() if name not in os.environ}
    os.environ.update(applied)

    def restore() -> None:
        for name in applied:
            os.environ.pop(name, None)

    return restore


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one, as in a container)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def thread_share_environment(jobs: int, cpus: int | None = None) -> dict[str, str]:
    """The environment of a kernel run beside ``jobs - 1`` others: ``SHARED_THREAD_VARIABLES`` set to its share of
    the CPUs, ``max(1, cpus // jobs)``, and OpenBLAS kept at the count it takes alone (see the module docstring).
    A variable the caller has already set is left as it is."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    cpus = cpus or available_cpus()
    environment = {name: str(max(1, cpus // jobs)) for name in SHARED_THREAD_VARIABLES if name not in os.environ}
    if not any(name in os.environ for name in OPENBLAS_THREAD_SOURCES):
        environment[OPENBLAS_THREADS] = str(cpus)  # what it would take alone, not OMP_NUM_THREADS's share
    return environment


#: A kernel's socket folder is named after the process that manages it: ``recjudge-kernel-<pid>-<random>``.
_SOCKET_FOLDER_PREFIX = "recjudge-kernel-"
#: The longest socket path a Unix domain socket takes is about 107 bytes; a kernel's are "<folder>/k-<n>".
_MAX_SOCKET_FOLDER = 90


@lru_cache(maxsize=1)
def local_kernel_manager() -> type:
    """The kernel manager class papermill is given (``kernel_manager_class``): jupyter_client's asynchronous manager
    with IPC transport, each kernel's sockets in a private temporary folder (mode 0700) removed at its shutdown. Where
    the temporary folder's path is too long for a socket path, TCP as before."""
    from jupyter_client import AsyncKernelManager
    from traitlets import default

    class LocalKernelManager(AsyncKernelManager):
        _socket_folder: str | None = None

        @default("transport")
        def _local_transport(self) -> str:
            _remove_folders_of_ended_processes()
            folder = tempfile.mkdtemp(prefix=f"{_SOCKET_FOLDER_PREFIX}{os.getpid()}-")
            if len(folder) > _MAX_SOCKET_FOLDER:
                os.rmdir(folder)
                return "tcp"
            self._socket_folder = folder
            return "ipc"

        @default("ip")
        def _socket_prefix(self) -> str:
            if self.transport == "ipc" and self._socket_folder:
                return os.path.join(self._socket_folder, "k")
            return super()._ip_default()

        async def cleanup_resources(self, restart: bool = False) -> None:
            await super().cleanup_resources(restart=restart)
            if not restart and self._socket_folder:
                shutil.rmtree(self._socket_folder, ignore_errors=True)

    return LocalKernelManager


def _remove_folders_of_ended_processes() -> None:
    """Remove the socket folders of managers that ended without shutting their kernel down (a run stopped by a
    signal): those named after a process that no longer runs. Folders of other users are not touched."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_SOCKET_FOLDER_PREFIX}*-*"):
        pid = folder.name[len(_SOCKET_FOLDER_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # gone already, or a process of another user: not ours to judge
            continue

#: The file a kernel appends its warnings to, one JSON line each (set by ``recjudge run`` for each run).
WARNING_LOG_ENV = "RECJUDGE_WARNING_LOG"


def keep_warnings_off_the_page() -> None:
    """In a notebook kernel: write every warning shown from here on to ``$RECJUDGE_WARNING_LOG`` (its category,
    message, file and line, as a JSON line) instead of the cell's output, which the page shows. Nothing changes when
    the variable is unset (a notebook opened by hand shows its warnings)."""
    import json
    import warnings

    path = os.environ.get(WARNING_LOG_ENV, "").strip()
    if not path:
        return

    def to_the_log(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        record = {"category": category.__name__, "message": str(message), "file": str(filename), "line": lineno}
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")

    warnings.showwarning = to_the_log


def kernel_arguments() -> list[str]:
    """The command-line arguments a chapter's kernel is started with: it runs ``keep_warnings_off_the_page`` before
    the notebook's first cell."""
    return ["--IPKernelApp.exec_lines=from recjudge.compendium.kernels import keep_warnings_off_the_page; "
            "keep_warnings_off_the_page()"]


def read_warning_log(path: Path) -> list[dict]:
    """The warnings a kernel wrote to ``path`` (``keep_warnings_off_the_page``), each shown once; none when absent.
    A line that is not a record is kept as its text."""
    import json

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found: dict[str, dict] = {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            record = {"category": "Warning", "message": line, "file": "?", "line": 0}
        if isinstance(record, dict):
            found.setdefault(json.dumps(record, sort_keys=True), record)
    return list(found.values())
