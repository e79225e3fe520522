"""The numeric kernels a chapter runs on, held to the same ones on every x86-64 machine.

NumPy chooses its SIMD kernels when it is imported: the AVX-512 ones where the CPU has them. They differ from the
AVX2 ones in the last bit of some functions (``exp``, ``log``) and in which of several tied elements a partition or
an unstable sort puts first, so the same notebook gave other digits of an ordinal logit's p-values and other kNN
neighbours on an AVX-512 machine than on an AVX2 one. OpenBLAS likewise picks its kernels per CPU. The committed
results must not depend on the machine that built them, so ``recjudge run`` starts every notebook kernel with:

- ``NPY_DISABLE_CPU_FEATURES``: NumPy's dispatch targets above x86-64-v3 (AVX-512) turned off;
- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's AVX2 kernels, on CPUs that have AVX2.

A variable the caller has already set is left as it is. The settings change speed a little, never a result's meaning.
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: NumPy dispatch targets every x86-64 machine this project builds on has (x86-64-v3: AVX2, FMA).
COMMON_TARGETS = ("X86_V2", "X86_V3")
OPENBLAS_AVX2_CORE = "Haswell"


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
