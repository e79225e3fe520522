"""The numeric kernels a chapter runs on, held to the same ones on every x86-64 machine.

NumPy chooses its SIMD kernels when it is imported: the AVX-512 ones where the CPU has them. They differ from the
AVX2 ones in the last bit of some functions (``exp``, ``log``) and in which of several tied elements a partition or
an unstable sort puts first, so the same notebook gave other digits of an ordinal logit's p-values and other kNN
neighbours on an AVX-512 machine than on an AVX2 one. OpenBLAS likewise picks its kernels per CPU. The committed
results must not depend on the machine that built them, so ``recjudge run`` starts every notebook kernel with:

- ``NPY_DISABLE_CPU_FEATURES``: NumPy's dispatch targets above x86-64-v3 (AVX-512) turned off;
- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's AVX2 kernels, on CPUs that have AVX2.

A variable the caller has already set is left as it is. The settings change speed a little, never a result's meaning.

``recjudge run --jobs N`` executes N notebooks at once; each kernel's thread pools (OpenMP, which torch's intra-op
threads follow, MKL, and llama.cpp's ``RECJUDGE_LOCAL_THREADS``) are held to its share of the CPUs,
``max(1, cpus // N)`` (``thread_share_environment``), so that N kernels do not each start one thread per CPU. OpenBLAS
is the exception: its LAPACK routines split their work by thread count, so ``numpy.linalg.solve`` of a 200 x 200
system gives other last bits with 1 thread than with 2, and a kernel run beside others would no longer compute what it
computes alone. It keeps the count it takes alone (every CPU, unless the caller set one).
"""

from __future__ import annotations

import os
from collections.abc import Callable

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
