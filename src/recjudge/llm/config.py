"""A judge configuration: the small value object notebooks pass around.

It names everything that decides what a judge says (provider, model, prompt template, sampling, number of runs,
scoring mode). Two equal configurations asked the same prompt hit the same response-store entries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

ProviderName = Literal["openai", "anthropic", "local", "recorded"]
ScoringMode = Literal["generate", "expected"]


@dataclass(frozen=True)
class JudgeConfig:
    """What a judge is.

    provider:    "openai" (also any OpenAI-compatible server through ``base_url``), "anthropic", "local"
                 (llama.cpp GGUF), or "recorded" (judgments imported from a file and attributed to their model).
    model:       the provider's model name; for "local" a name known to the local provider or a GGUF path.
    prompt:      name of the prompt template (see ``recjudge.prompts``).
    temperature: sampling temperature; runs > 1 at temperature > 0 are distinct store entries (sample index).
    runs:        how many replies per prompt; scores are averaged over runs by the caller.
    scoring:     "generate" parses the reply text; "expected" is the probability-weighted mean over the score
                 tokens where the provider returns log-probabilities.
    max_tokens:  reply length limit.
    seed:        passed to providers that accept one.
    base_url:    OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server); None means the provider default.
    options:     further provider parameters as sorted (key, value) pairs, part of the store key.
    served_model: the name sent to the server when it differs from ``model``, which is then the judge's explicit
                 identity in the response store (for a server that serves its weights under a generic name such
                 as "default"; see ``recjudge.llm.providers.openai_compat``).  Not part of the store key.
    output_shape: None (the reply is free text), or an output shape's JSON (``recjudge.llm.shapes``; set it with
                 ``constrained(shape)``) that every provider enforces; its schema is sent as the provider option
                 ``output_schema``, so it is part of the store key, and only when set.
    """

    provider: ProviderName
    model: str
    prompt: str = "kang_basic"
    temperature: float = 0.0
    runs: int = 1
    scoring: ScoringMode = "generate"
    max_tokens: int = 256
    seed: int | None = 0
    base_url: str | None = None
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    served_model: str | None = None
    output_shape: str | None = None

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise ValueError(f"JudgeConfig.runs must be >= 1, got {self.runs}")
        if self.base_url:  # a config is recorded (results, notebooks, run records): never with a credential
            from .providers.openai_compat import credential_problem

            problem = credential_problem(self.base_url)
            if problem is not None:
                raise ValueError(f"JudgeConfig: {problem}")
        if self.temperature < 0:
            raise ValueError(f"JudgeConfig.temperature must be >= 0, got {self.temperature}")
        if self.scoring not in ("generate", "expected"):
            raise ValueError(f"JudgeConfig.scoring must be 'generate' or 'expected', got {self.scoring!r}")
        object.__setattr__(self, "options", tuple(sorted(dict(self.options).items())))
        if self.output_shape is not None:
            from .shapes import OPTION, OutputShape

            if OPTION in dict(self.options):
                raise ValueError(f"JudgeConfig: give the output shape as output_shape, not as the option {OPTION!r}")
            object.__setattr__(self, "output_shape", OutputShape.from_json(self.output_shape).json)
            if self.scoring == "expected":  # a constrained reply opens with '{', never with the score's token
                raise ValueError("JudgeConfig: expected scoring reads the score from the first reply token, which a "
                                 "constrained reply spends on its JSON; constrain a judge with scoring='generate'")

    @property
    def label(self) -> str:
        """Short human-readable name for tables and figures, e.g. ``local:smollm2-135m/kang_basic`` (with
        ``+constrained`` when an output shape is enforced)."""
        return f"{self.provider}:{self.model}/{self.prompt}" + ("+constrained" if self.output_shape else "")

    @property
    def shape(self):
        """The enforced ``OutputShape``, or None."""
        from .shapes import OutputShape

        return None if self.output_shape is None else OutputShape.from_json(self.output_shape)

    def constrained(self, shape) -> "JudgeConfig":
        """This judge with its replies constrained to ``shape`` (a ``recjudge.llm.shapes.OutputShape``)."""
        return replace(self, output_shape=shape.json)

    def provider_options(self) -> dict[str, Any]:
        """The options sent to the provider and keyed in the store: ``options``, plus the output schema when a
        shape is enforced."""
        from .shapes import OPTION

        options = dict(self.options)
        if self.output_shape is not None:
            options[OPTION] = dict(self.shape.schema)
        return options

    def with_(self, **changes: Any) -> "JudgeConfig":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
