"""Notebook kernels run on the same numeric kernels on every x86-64 machine (recjudge.compendium.kernels)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from recjudge.compendium import kernels


def test_the_kernel_environment_turns_off_every_numpy_target_above_x86_64_v3():
    from numpy._core import _multiarray_umath as umath

    environment = kernels.kernel_environment()
    above = [target for target in umath.__cpu_dispatch__ if target not in kernels.COMMON_TARGETS]
    assert environment.get("NPY_DISABLE_CPU_FEATURES", "").split() == above
    probe = ("import json; from numpy._core import _multiarray_umath as u; "
             "print(json.dumps({t: bool(u.__cpu_features__.get(t)) for t in u.__cpu_dispatch__}))")
    seen = json.loads(subprocess.run([sys.executable, "-c", probe], env={**os.environ, **environment},
                                     capture_output=True, text=True, check=True).stdout)
    assert not any(seen[target] for target in above), seen


def test_variables_already_set_are_kept_and_the_rest_undone(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    restore = kernels.use_common_numeric_kernels()
    try:
        assert os.environ["OPENBLAS_CORETYPE"] == "Prescott"
        wanted = kernels.kernel_environment().get("NPY_DISABLE_CPU_FEATURES")
        assert os.environ.get("NPY_DISABLE_CPU_FEATURES") == wanted
    finally:
        restore()
    assert "NPY_DISABLE_CPU_FEATURES" not in os.environ and os.environ["OPENBLAS_CORETYPE"] == "Prescott"
