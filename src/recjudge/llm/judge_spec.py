"""A reader's judge, as given on the command line or in a small YAML file: ``JudgeSpec``.

``recjudge run --judge SPEC`` takes the judge a reader brings to the whole book.  SPEC is either

- ``provider:model``: ``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku``, ``local:/path/model.gguf`` or a local
  model's name (``recjudge models list``), with the options ``--base-url`` (an OpenAI-compatible server: vLLM,
  Ollama, llama.cpp's server), ``--served-model`` (the name that server knows the weights by, when the model part
  of SPEC is the judge's identity) and ``--batch`` (the provider's batch API: half price, replies within a day); or
- the path of a YAML file (``.yaml``/``.yml``) with the fields of ``FILE_FIELDS``::

      provider: openai
      model: llama-3.1-8b-instruct-q4_k_m@my-vllm   # the judge's identity in the response store
      served_model: default                          # what the server is asked for
      base_url: http://127.0.0.1:8000/v1
      label: Llama 3.1 8B                            # its name in the chapters' tables (default: the model)
      temperature: 0.0                               # sampling; omitted = each chapter's own choice
      seed: 0
      options: {top_p: 0.95}                         # further provider sampling options

A spec says *who* the judge is and how it samples.  *What* it is asked (prompt template, scoring mode, reply length,
number of runs) stays each chapter's choice for each of its LLM roles, so ``to_config(**role)`` combines the two into
the ``JudgeConfig`` (the store key) a chapter runs; a sampling value the spec sets wins over the chapter's.

Notebooks receive judges as plain data (papermill writes parameters as Python literals): ``to_parameter()`` is a
dict of ``label`` plus ``JudgeConfig`` keyword fields (``options`` as a mapping, ``batch`` only when true), the shape
the chapters' ``judges`` parameter already uses, and ``JudgeSpec.from_parameter`` reads it back.

Checks, each naming the option, file or field: an unknown provider, a malformed SPEC or file, a base URL no request
can use or one holding credentials (user information, a key-like query parameter, a fragment: a base URL is written
wherever the judge is recorded, so it is refused before anything is written, by ``openai_compat.check_base_url``),
options that do not fit the provider (``--served-model`` without a server, ``--base-url`` for a local model,
``--batch`` without a batch API), and a generic model name at a server that does not identify the weights (the rule
of ``providers.openai_compat``).  What depends on the machine (a missing API key, a local model file not there) is
``readiness_problems``, which the command line asks before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, NoReturn

from .config import JudgeConfig

#: Providers a reader can bring ("recorded" imports judgments from a file: not a judge that can be asked).
PROVIDERS = ("openai", "anthropic", "local")
#: Fields of a judge file.
FILE_FIELDS = ("provider", "model", "served_model", "base_url", "batch", "label", "temperature", "seed", "options")
#: Providers with a batch API (``recjudge.llm.batch``).
BATCH_PROVIDERS = ("openai", "anthropic")
#: Providers whose replies carry token log-probabilities, which expected-score roles read (Anthropic's do not).
LOGPROB_PROVIDERS = ("openai", "local")
#: API key each hosted provider reads (an OpenAI-compatible server other than OpenAI's own needs none).
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
JUDGE_FILE_SUFFIXES = (".yaml", ".yml")
#: Longest slug kept readable; a longer one is cut and made unique by a hash.
MAX_SLUG = 60
_SLUG_UNSAFE = re.compile(r"[^a-z0-9._-]+")


class JudgeSpecError(ValueError):
    """A judge given on the command line or in a judge file cannot be used; the message names the option, the file
    or the field."""


@dataclass(frozen=True)
class JudgeSpec:
    """A judge a reader brings: identity, endpoint, batch mode and sampling (see the module docstring)."""

    provider: str
    model: str
    served_model: str | None = None
    base_url: str | None = None
    batch: bool = False
    #: a display name, not part of what the judge is
    label: str | None = field(default=None, compare=False)
    #: None: each chapter's own temperature and seed for each role
    temperature: float | None = None
    seed: int | None = None
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    #: where the spec came from, for messages ("--judge openai:gpt-4o-mini", "judge file my.yaml"); not its identity
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(sorted(dict(self.options).items())))

    # -------------------------------------------------------------------------------------------- what it is called
    @property
    def display_label(self) -> str:
        """The judge's name in tables: ``label``, else the model (a file's name without ``.gguf``)."""
        if self.label:
            return self.label
        return Path(self.model).name.removesuffix(".gguf") if self._is_path() else self.model

    @property
    def slug(self) -> str:
        """A filesystem-safe name (lower case letters, digits, ``.``, ``_``, ``-``), e.g. ``openai-gpt-4o-mini``,
        that names the whole judge: two judges that differ in anything their replies or their tables depend on get
        two slugs (a variant folder is named from it).  When making it safe lost information (a path cut to its file
        name, characters replaced, a long name cut), a short hash of the identity keeps two judges apart; a judge
        that sets its own sampling (temperature, seed, options) or label gets a short hash of those too.  The
        endpoint and the name the server knows the weights by are not part of it (the same judge on another port
        is the same judge)."""
        model = Path(self.model).name.removesuffix(".gguf") if self._is_path() else self.model
        readable = f"{self.provider}-{_SLUG_UNSAFE.sub('-', model.lower()).strip('-.') or 'model'}"
        lossless = readable == f"{self.provider}-{self.model}" and len(readable) <= MAX_SLUG
        if not lossless:
            digest = hashlib.sha256(f"{self.provider}:{self.model}".encode()).hexdigest()[:8]
            readable = f"{readable[:MAX_SLUG - 9].rstrip('-.')}-{digest}"
        setting = self._setting()
        if setting is None:
            return readable
        return f"{readable}-{hashlib.sha256(setting.encode()).hexdigest()[:8]}"

    def _setting(self) -> str | None:
        """What this judge sets beyond its identity (sampling and label), as canonical JSON; None when nothing."""
        setting = {"label": self.label, "temperature": self.temperature, "seed": self.seed,
                   "options": [[key, list(value) if isinstance(value, tuple) else value]
                               for key, value in self.options]}
        setting = {key: value for key, value in setting.items() if value not in (None, [])}
        if not setting:
            return None
        return json.dumps({"provider": self.provider, "model": self.model, **setting}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)

    def _is_path(self) -> bool:
        return self.provider == "local" and ("/" in self.model or os.sep in self.model
                                             or self.model.lower().endswith(".gguf"))

    # ---------------------------------------------------------------------------------------------------- forms
    def to_config(self, **chapter: Any) -> JudgeConfig:
        """The ``JudgeConfig`` of this judge in one chapter role: ``chapter`` gives the role's fields (prompt,
        scoring, max_tokens, runs, temperature, options, ...); the spec's identity, endpoint and the sampling values
        it sets take precedence (its options are merged over the role's).  A local judge that sets no ``n_batch``
        is asked at ``recjudge.llm.prefix_reuse.PREFIX_BATCH``, which reuses the prompts' shared prefix."""
        if chapter.get("scoring") == "expected" and not self.gives_logprobs():
            raise JudgeSpecError(
                f"judge {self.display_label!r} cannot play this chapter's role: it reads expected scores from token "
                f"log-probabilities, which provider {self.provider!r} does not return. Judge this chapter with a "
                f"provider that does ({', '.join(LOGPROB_PROVIDERS)}, any OpenAI-compatible server), or leave it out")
        options = dict(chapter.pop("options", ()) or ())
        options.update(self.options)
        chapter.update(provider=self.provider, model=self.model, served_model=self.served_model,
                       base_url=self.base_url, options=tuple(options.items()))
        if self.temperature is not None:
            chapter["temperature"] = self.temperature
        if self.seed is not None:
            chapter["seed"] = self.seed
        from .prefix_reuse import local_judge_config

        # A reader's local judge has no committed replies: it reuses the shared prompt prefix (unless it sets n_batch).
        return local_judge_config(JudgeConfig(**chapter), reuse=True)

    def to_parameter(self) -> dict[str, Any]:
        """The plain-data form a notebook receives in its ``judges`` parameter: ``label``, ``provider``, ``model``,
        and each other field only when it is set (so ``JudgeConfig(**rest)`` works on what a chapter gets)."""
        parameter: dict[str, Any] = {"label": self.display_label, "provider": self.provider, "model": self.model}
        for name in ("served_model", "base_url", "temperature", "seed"):
            if getattr(self, name) is not None:
                parameter[name] = getattr(self, name)
        if self.options:  # lists, not tuples: papermill writes parameters as plain literals
            parameter["options"] = {key: list(value) if isinstance(value, tuple) else value
                                    for key, value in self.options}
        if self.batch:
            parameter["batch"] = True
        return parameter

    @classmethod
    def from_parameter(cls, parameter: Mapping[str, Any]) -> "JudgeSpec":
        """The spec a ``to_parameter()`` dict stands for (a chapter reading its ``judges`` parameter)."""
        return _checked(_from_mapping(dict(parameter), "a judges parameter entry", allowed=FILE_FIELDS))

    # ------------------------------------------------------------------------------------------------ the machine
    def readiness_problems(self, *, live: bool = True) -> list[str]:
        """What stops this judge on this machine, each message naming the option: the API key and the local model
        file a live run needs (``live``; a plan or a replay needs neither: it reads the response store, whose keys
        hold the model's name, not its file)."""
        problems = []
        key = KEY_ENV.get(self.provider) if self._hosted() else None
        if live and key and not (os.environ.get(key) or "").strip():
            problems.append(f"{self.source or 'the judge'}: provider {self.provider!r} needs the environment variable "
                            f"{key} to ask (it is read from the environment only). `--plan` needs no key, and "
                            "RECJUDGE_LLM_MODE=replay rebuilds from the response store without one")
        if live and self.provider == "local":
            try:
                from .providers.local import resolve_model_path

                resolve_model_path(self.model)
            except Exception as error:  # ProviderError with the fix, or an unusable local stack
                problems.append(f"{self.source or 'the judge'}: {error}")
        return problems

    def _hosted(self) -> bool:
        """True for the provider's own service (which needs a key), False for a reader's server or a local model."""
        if self.provider == "openai":
            from .providers.openai_compat import is_openai_host

            return is_openai_host(self.base_url)
        return self.provider == "anthropic"

    def gives_logprobs(self) -> bool:
        """True when this judge's replies carry token log-probabilities (an expected-score role needs them)."""
        return self.provider in LOGPROB_PROVIDERS

    def own_server(self) -> bool:
        """True when the reader serves this judge (OpenAI-compatible server, not OpenAI's host): it costs nothing
        at list price."""
        return self.provider == "openai" and not self._hosted()


# ------------------------------------------------------------------------------------------------- in a chapter
#: What a chapter asks in one LLM role and how it samples there: the fields of a ``JudgeConfig`` that are not the
#: judge's identity or endpoint.  Provider options are left out: a chapter's options (``n_threads``, ``n_batch``, ...)
#: belong to its own model's provider, and a reader's judge brings its own.
ROLE_FIELDS = ("prompt", "temperature", "runs", "scoring", "max_tokens", "seed", "output_shape")


def role_of(config: JudgeConfig) -> dict[str, Any]:
    """The role a chapter's own judge plays (``ROLE_FIELDS`` of its ``JudgeConfig``), for a reader's judge to play
    too: ``judge_configs(judges, **role_of(config))``."""
    return {name: getattr(config, name) for name in ROLE_FIELDS}


def judge_configs(judges: Iterable[Mapping[str, Any]], **role: Any) -> list[tuple[str, JudgeConfig]]:
    """Each entry of a chapter's ``judges`` parameter (``JudgeSpec.to_parameter()`` dicts) in one LLM role of the
    chapter: ``(label, JudgeConfig)`` pairs, in the order given.  ``role`` gives the role's fields (prompt, scoring,
    max_tokens, runs, ...); the spec's identity, endpoint and sampling take precedence (``JudgeSpec.to_config``).
    An empty ``judges`` gives an empty list, so the committed book runs exactly as without judges."""
    specs = [JudgeSpec.from_parameter(entry) for entry in judges]
    return [(spec.display_label, spec.to_config(**dict(role))) for spec in specs]


def chapter_judge(entry: Mapping[str, Any], **role: Any) -> tuple[str, JudgeConfig, bool | None]:
    """One judge of a chapter whose judge list holds both kinds of entry: a reader's judge (a
    ``JudgeSpec.to_parameter()`` dict: only ``FILE_FIELDS`` and ``label``), which plays ``role`` like
    ``judge_configs``; or the chapter's own judge, a ``label`` plus ``JudgeConfig`` fields, which takes ``role``'s
    fields only where it sets none.  Returns ``(label, config, batch)``: ``batch`` is True when the entry asks for
    the provider's batch API and None otherwise (then ``RECJUDGE_LLM_BATCH`` decides), for ``run_judge(...,
    batch=batch)``; it is never a ``JudgeConfig`` field, since how replies are fetched is not part of their key."""
    if "label" not in entry:
        raise JudgeSpecError(f"a judges parameter entry needs a 'label' (the judge's name in tables): {dict(entry)}")
    batch = True if entry.get("batch") else None
    if set(entry) <= set(FILE_FIELDS) | {"label"}:
        spec = JudgeSpec.from_parameter(entry)
        return spec.display_label, spec.to_config(**dict(role)), batch
    fields = {key: value for key, value in entry.items() if key not in ("label", "batch")}
    fields["options"] = tuple(dict(fields.get("options") or {}).items())
    unknown = sorted(set(fields) - set(JudgeConfig.__dataclass_fields__))
    if unknown:
        raise JudgeSpecError(f"judges parameter entry {entry['label']!r}: unknown field(s) {unknown} (a reader's "
                             f"judge has the fields {list(FILE_FIELDS)}; a chapter's own judge JudgeConfig fields)")
    return str(entry["label"]), JudgeConfig(**{**role, **fields}), batch


# ------------------------------------------------------------------------------------------------------- parsing
def parse_judge(spec: str, *, base_url: str | None = None, served_model: str | None = None,
                batch: bool = False) -> JudgeSpec:
    """One ``--judge`` value (``provider:model`` or a judge file's path) with the command line's ``--base-url``,
    ``--served-model`` and ``--batch``, which override a judge file's fields.  JudgeSpecError naming the option."""
    if not isinstance(spec, str) or not spec.strip():
        raise JudgeSpecError("--judge: empty value; give provider:model (e.g. openai:gpt-4o-mini) or a judge file")
    spec = spec.strip()
    overrides: dict[str, Any] = {"base_url": base_url, "served_model": served_model}
    overrides = {key: value for key, value in overrides.items() if value is not None}
    if batch:
        overrides["batch"] = True
    if spec.lower().endswith(JUDGE_FILE_SUFFIXES):  # no model is named like a YAML file
        return _with_overrides(read_judge_file(Path(spec).expanduser()), overrides)
    provider, colon, model = spec.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    source = f"--judge {spec}"
    if not colon or not provider or not model:
        raise JudgeSpecError(f"{source}: expected provider:model (e.g. openai:gpt-4o-mini, anthropic:claude-3-5-haiku, "
                             "local:/path/model.gguf) or the path of a judge file (.yaml)")
    if provider not in PROVIDERS:
        _unknown_provider(provider, source)
    return _checked(JudgeSpec(provider, model, source=source, **overrides))


def parse_judges(specs: Iterable[str], *, base_url: str | None = None, served_model: str | None = None,
                 batch: bool = False) -> tuple[JudgeSpec, ...]:
    """Every ``--judge`` value; ``--base-url`` and ``--served-model`` describe one server, so with several judges
    they belong in judge files.  The same judge twice is an error (it would be asked and shown twice)."""
    specs = list(specs)
    if len(specs) > 1 and (base_url or served_model):
        raise JudgeSpecError("--base-url/--served-model with several --judge options: it is not clear which judge "
                             "they describe; give each judge that needs them as a judge file (.yaml) instead")
    judges = tuple(parse_judge(spec, base_url=base_url, served_model=served_model, batch=batch) for spec in specs)
    seen: dict[tuple[str, str], JudgeSpec] = {}
    for judge in judges:
        earlier = seen.setdefault((judge.provider, judge.model), judge)
        if earlier is not judge:
            raise JudgeSpecError(f"{judge.source}: the same judge as {earlier.source} ({judge.provider}:{judge.model})")
    labels = [judge.display_label for judge in judges]
    doubled = sorted({label for label in labels if labels.count(label) > 1})
    if doubled:
        raise JudgeSpecError(f"--judge: several judges are labelled {doubled}; give them distinct 'label' fields in "
                             "judge files (the chapters' tables tell judges apart by label)")
    return judges


#: A judge file is a few lines: a larger file is not one, and is not read whole.
MAX_JUDGE_FILE_BYTES = 64 * 1024
#: What a field name of a judge file looks like; other keys are counted in a message, never shown.
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def read_judge_file(path: Path) -> JudgeSpec:
    """A judge file (module docstring); JudgeSpecError naming the file and the field.  A path that is not a regular
    file (a folder, a pipe, a device) or that cannot be read is refused as such, before anything is read from it.  A
    message never shows the file's content beyond the field at fault (the path may lead, through a symlink, to any
    file): a YAML error gives its line and column, and keys that are not field names are counted, not shown."""
    import stat

    import yaml

    where = f"judge file {path}"
    try:
        mode = path.stat().st_mode  # of what a symlink leads to: what would be read
    except FileNotFoundError:
        raise JudgeSpecError(f"--judge {path}: judge file not found") from None
    except OSError as error:
        raise JudgeSpecError(f"{where} cannot be read ({error.strerror or error})") from None
    if stat.S_ISDIR(mode):
        raise JudgeSpecError(f"{where} is a folder: give the path of a judge file (.yaml)")
    if not stat.S_ISREG(mode):
        raise JudgeSpecError(f"{where} is not a regular file (a pipe, a socket or a device): give the path of a "
                             "judge file (.yaml)")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_JUDGE_FILE_BYTES + 1)
    except OSError as error:
        raise JudgeSpecError(f"{where} cannot be read ({error.strerror or error})") from None
    if len(raw) > MAX_JUDGE_FILE_BYTES:
        raise JudgeSpecError(f"{where} is larger than {MAX_JUDGE_FILE_BYTES // 1024} KiB: not a judge file, which "
                             f"is a few lines with the fields {list(FILE_FIELDS)}")
    try:
        document = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise JudgeSpecError(f"{where}: not a readable YAML file (not UTF-8 text: byte {error.start})") from None
    except yaml.YAMLError as error:  # its own text quotes the file's lines: only where and what is said
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise JudgeSpecError(f"{where}: not a readable YAML file{at} "
                             f"({getattr(error, 'problem', None) or type(error).__name__})") from None
    if not isinstance(document, dict):
        raise JudgeSpecError(f"{where}: must be a mapping with the fields {list(FILE_FIELDS)} "
                             f"(found {type(document).__name__})")
    odd = [key for key in document if not (isinstance(key, str) and _FIELD_NAME.fullmatch(key))]
    if odd:
        raise JudgeSpecError(f"{where}: {len(odd)} of its {len(document)} keys are not field names (not shown); a "
                             f"judge file is a mapping with the fields {list(FILE_FIELDS)}")
    return _checked(_from_mapping(document, where, allowed=FILE_FIELDS))


def _from_mapping(document: dict[str, Any], where: str, *, allowed: tuple[str, ...]) -> JudgeSpec:
    unknown = sorted(str(key) for key in document if key not in allowed)
    if unknown:
        raise JudgeSpecError(f"{where}: unknown field(s) {unknown} (allowed: {list(allowed)}; prompt, scoring, reply "
                             "length and runs are each chapter's choice)")
    for name in ("provider", "model"):
        if not isinstance(document.get(name), str) or not document[name].strip():
            raise JudgeSpecError(f"{where}: field '{name}' is required and must be a non-empty string")
    values: dict[str, Any] = {"provider": document["provider"].strip().lower(), "model": document["model"].strip()}
    for name in ("served_model", "base_url", "label"):
        value = document.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise JudgeSpecError(f"{where}: field '{name}' must be a non-empty string, got {value!r}")
        values[name] = value.strip() if value is not None else None
    batch = document.get("batch", False)
    if not isinstance(batch, bool):
        raise JudgeSpecError(f"{where}: field 'batch' must be true or false, got {batch!r}")
    temperature = document.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not math.isfinite(temperature) or temperature < 0):
        raise JudgeSpecError(f"{where}: field 'temperature' must be a number >= 0, got {temperature!r}")
    seed = document.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise JudgeSpecError(f"{where}: field 'seed' must be a whole number, got {seed!r}")
    given = document.get("options") or {}
    if not isinstance(given, dict) or not all(isinstance(key, str) for key in given):
        raise JudgeSpecError(f"{where}: field 'options' must be a mapping of provider option names to values")

    def plain(value: Any) -> bool:
        return isinstance(value, (str, int, float, bool)) and not (isinstance(value, float)
                                                                   and not math.isfinite(value))

    options = {}  # a new mapping: the document (a chapter's judges parameter, read again later) is left as given
    for key, value in given.items():
        if not (plain(value) or isinstance(value, (list, tuple)) and all(plain(item) for item in value)):
            raise JudgeSpecError(f"{where}: field 'options', {key!r}: not a plain value (a string, number, "
                                 "true/false, or a list of them)")
        options[key] = tuple(value) if isinstance(value, list) else value  # hashable, as the store key's options
    if values["provider"] not in PROVIDERS:
        _unknown_provider(values["provider"], f"{where}: field 'provider'")
    return JudgeSpec(**values, batch=batch, temperature=None if temperature is None else float(temperature),
                     seed=seed, options=tuple(options.items()), source=where)


def _unknown_provider(provider: str, source: str) -> NoReturn:
    hint = " (an OpenAI-compatible server is provider 'openai' with --base-url)" if provider in (
        "vllm", "ollama", "llamacpp", "llama.cpp", "server") else ""
    raise JudgeSpecError(f"{source}: unknown provider {provider!r}; known: {', '.join(PROVIDERS)}{hint}")


def _with_overrides(spec: JudgeSpec, overrides: dict[str, Any]) -> JudgeSpec:
    if not overrides:
        return spec
    given = ", ".join(f"--{name.replace('_', '-')}" for name in overrides)
    return _checked(replace(spec, **overrides, source=f"{spec.source} with {given}"))


#: Fields of a judge that are names, shown in pages, figures, tables and logs.
NAME_FIELDS = ("provider", "model", "served_model", "base_url", "label")
#: ASCII characters that are markup somewhere a judge's name is shown: MyST (roles, directives, links, emphasis,
#: tables, math, substitutions), HTML (tags, entities, attributes), Jinja, matplotlib's mathtext and LaTeX. A name
#: holding one is refused where it enters (``reader_text``), so no page, figure or log ever has to escape it.
MARKUP_CHARACTERS = frozenset("\\`*{}[]<>#|$&^\"")
#: What a judge's name may hold instead, for the message.
PLAIN_TEXT = "letters, digits, spaces and - _ . , : ; / @ + ' ( ) = % ~ ! ?"


def _control_character(text: str) -> str | None:
    """The first control or format character of ``text`` (a newline, a tab, a zero-width or bidirectional mark, a
    line separator), or None: such characters would let a name break out of the Markdown, HTML or terminal line it
    is shown in."""
    return next((char for char in text if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")),
                None)


def printable(text: str) -> str:
    """``text`` for a message: every control or format character written as its code (``\\u001b``), so a file name
    cannot move a terminal's cursor or hide part of a line."""
    return "".join(f"\\u{ord(char):04x}" if _control_character(char) else char for char in str(text))


def reader_text(value: str, name: str, where: str) -> str:
    """``value``, a name a reader chose (a judge's label, model, served name or base URL), when it is one line of
    plain text; else JudgeSpecError naming ``where``, the field ``name`` and the character. The one check every
    reader's name passes where it enters (a judge given on the command line, in a judge file, in a chapter's
    ``judges`` parameter, in a variant's record or an imported store), so that it is text wherever it is shown."""
    char = _control_character(value)
    if char is not None:
        raise JudgeSpecError(f"{printable(where)}: field '{name}' holds the control character U+{ord(char):04X}; a "
                             "judge's names are shown in pages, figures and logs and must be one line of printable "
                             "text")
    markup = [char for char in value if char in MARKUP_CHARACTERS]
    if name == "base_url":  # an IPv6 host is written in brackets, the one place a URL needs them
        from urllib.parse import urlsplit

        try:
            host = urlsplit(value).netloc.rpartition("@")[2]
        except ValueError:
            host = ""
        bracketed = host[host.find("["):host.find("]") + 1] if "[" in host and "]" in host else ""
        markup = [char for char in value.replace(bracketed, "", 1) if char in MARKUP_CHARACTERS]
    if markup:
        raise JudgeSpecError(f"{printable(where)}: field '{name}' holds {markup[0]!r}, which a page, a figure or a "
                             f"table would read as markup; a judge's names are plain text ({PLAIN_TEXT})")
    return value


def reader_labels(judges: Iterable[Mapping[str, Any]]) -> list[str]:
    """The labels of a chapter's ``judges`` parameter (``JudgeSpec.to_parameter()`` dicts), each entry checked as
    ``JudgeSpec.from_parameter`` checks it: what a page names a reader's judge by."""
    return [JudgeSpec.from_parameter(judge).display_label for judge in judges]


def _checked(spec: JudgeSpec) -> JudgeSpec:
    """The combinations no chapter could use, refused before anything runs (module docstring)."""
    where = spec.source or "the judge"
    for name in NAME_FIELDS:
        value = getattr(spec, name)
        # a base URL's markup is checked after its own check, which names credentials where a URL holds them
        if isinstance(value, str) and (name != "base_url" or _control_character(value)):
            reader_text(value, name, where)
    if spec.base_url is not None:
        if spec.provider == "local":
            raise JudgeSpecError(f"{where}: --base-url is not for provider 'local' (a model loaded in this process); "
                                 "a llama.cpp or vLLM server is provider 'openai' with --base-url")
        from .providers._common import endpoint_label
        from .providers.base import ProviderError
        from .providers.openai_compat import check_base_url

        try:  # the one check of a base URL, credentials included; the message never repeats a credential
            check_base_url(spec.base_url)
        except ProviderError as error:
            raise JudgeSpecError(f"{where}: --base-url {endpoint_label(spec.base_url) or '(unreadable)'!r}: "
                                 f"{error}") from None
        reader_text(spec.base_url, "base_url", where)
    if spec.served_model is not None:
        if spec.provider != "openai" or spec.base_url is None:
            raise JudgeSpecError(f"{where}: --served-model is the name an OpenAI-compatible server knows the weights "
                                 "by; it needs provider 'openai' and --base-url")
    if spec.batch and spec.provider not in BATCH_PROVIDERS:
        raise JudgeSpecError(f"{where}: --batch needs a provider with a batch API ({', '.join(BATCH_PROVIDERS)}); "
                             f"provider {spec.provider!r} has none")
    if spec.batch and spec.own_server():
        raise JudgeSpecError(f"{where}: --batch uses OpenAI's batch API, which the server at {spec.base_url} does "
                             "not offer")
    if spec.provider == "openai" and spec.base_url is not None:
        _check_identity(spec, where)
    return spec


def _check_identity(spec: JudgeSpec, where: str) -> None:
    """A model name that does not say which weights a server serves would let replies of different models share
    store entries (``providers.openai_compat``, rule 1)."""
    from .providers.openai_compat import GENERIC_MODEL_NAMES, identity_problem

    explicit = spec.served_model is not None
    generic_identity = explicit and spec.model.strip().lower() in GENERIC_MODEL_NAMES
    if generic_identity or identity_problem(spec.base_url, spec.served_model or spec.model, explicit):
        raise JudgeSpecError(
            f"{where}: model name {spec.model!r} does not identify the weights served at {spec.base_url} (a generic "
            "name, or an OpenAI model name on another host), so replies of different models would share store "
            f"entries. Give the identity as the model and the server's name with --served-model, e.g. --judge "
            f"openai:<weights>@<server> --served-model {spec.served_model or spec.model}")


__all__ = ["BATCH_PROVIDERS", "FILE_FIELDS", "MARKUP_CHARACTERS", "JudgeSpec", "JudgeSpecError", "KEY_ENV",
           "LOGPROB_PROVIDERS", "PROVIDERS", "ROLE_FIELDS", "chapter_judge", "judge_configs", "parse_judge",
           "parse_judges", "printable", "read_judge_file", "reader_labels", "reader_text", "role_of"]
