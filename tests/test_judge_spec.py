"""A reader's judge: SPEC strings and judge files, their checks and the forms a chapter receives."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from recjudge.llm import JudgeConfig
from recjudge.llm.judge_spec import JudgeSpec, JudgeSpecError, judge_configs, parse_judge, parse_judges

SERVER = "http://127.0.0.1:8000/v1"


def test_provider_model_spec() -> None:
    spec = parse_judge("openai:gpt-4o-mini")
    assert (spec.provider, spec.model, spec.base_url, spec.served_model, spec.batch) == (
        "openai", "gpt-4o-mini", None, None, False)
    assert spec.slug == "openai-gpt-4o-mini"
    assert spec.display_label == "gpt-4o-mini"
    # The first colon separates the provider: a model name may hold more.
    assert parse_judge("anthropic:claude-3-5-haiku:latest").model == "claude-3-5-haiku:latest"


def test_a_server_with_an_explicit_identity() -> None:
    spec = parse_judge("openai:llama-3.1-8b-q4@vllm", base_url=SERVER, served_model="default")
    assert (spec.model, spec.served_model, spec.base_url) == ("llama-3.1-8b-q4@vllm", "default", SERVER)
    config = spec.to_config(prompt="kang_basic", max_tokens=4)
    assert config == JudgeConfig(provider="openai", model="llama-3.1-8b-q4@vllm", served_model="default",
                                 base_url=SERVER, prompt="kang_basic", max_tokens=4)
    # '@' is not filesystem-safe: replaced, and a hash keeps it apart from 'llama-3.1-8b-q4-vllm'
    readable = "openai-llama-3.1-8b-q4-vllm-"
    assert spec.slug.startswith(readable) and len(spec.slug) == len(readable) + 8
    assert spec.slug != parse_judge("openai:llama-3.1-8b-q4-vllm", base_url=SERVER).slug


def test_local_model_path_slug_and_label(tmp_path: Path) -> None:
    one = parse_judge(f"local:{tmp_path / 'a' / 'Qwen2.5-7B.gguf'}")
    two = parse_judge(f"local:{tmp_path / 'b' / 'Qwen2.5-7B.gguf'}")
    assert one.display_label == "Qwen2.5-7B"
    assert one.slug.startswith("local-qwen2.5-7b-") and one.slug != two.slug  # same file name, other file
    assert parse_judge("local:smollm2-135m-instruct-q4_1").slug == "local-smollm2-135m-instruct-q4_1"


def test_judge_file_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text("provider: openai\nmodel: qwen2.5-7b-instruct@my-llama-server\nserved_model: default\n"
                    f"base_url: {SERVER}\nlabel: Qwen 7B\ntemperature: 0.2\nseed: 3\noptions: {{top_p: 0.9, "
                    "stop: [\"\\n\"]}\n")
    spec = parse_judge(str(path))
    assert spec == JudgeSpec("openai", "qwen2.5-7b-instruct@my-llama-server", served_model="default",
                             base_url=SERVER, label="Qwen 7B", temperature=0.2, seed=3,
                             options=(("stop", ("\n",)), ("top_p", 0.9)))
    # The spec's sampling wins over the chapter role's; options merge.
    config = spec.to_config(prompt="kang_fewshot", temperature=1.0, options=(("n_batch", 64),))
    assert (config.temperature, config.seed, dict(config.options)) == (
        0.2, 3, {"n_batch": 64, "stop": ("\n",), "top_p": 0.9})
    # Command-line options override the file's fields.
    other = parse_judge(str(path), base_url="http://10.0.0.2:9000/v1")
    assert other.base_url == "http://10.0.0.2:9000/v1" and "--base-url" in other.source


def test_to_parameter_round_trips_and_feeds_judgeconfig(tmp_path: Path) -> None:
    spec = JudgeSpec("anthropic", "claude-3-5-haiku", batch=True, temperature=0.0, options=(("stop", ("x",)),))
    parameter = spec.to_parameter()
    assert parameter == {"label": "claude-3-5-haiku", "provider": "anthropic", "model": "claude-3-5-haiku",
                         "temperature": 0.0, "options": {"stop": ["x"]}, "batch": True}
    assert JudgeSpec.from_parameter(parameter) == spec
    # The shape the chapters' `judges` parameter already uses: label + JudgeConfig fields (options a mapping).
    plain = parse_judge("openai:gpt-4o-mini").to_parameter()
    rest = {key: value for key, value in plain.items() if key != "label"}
    assert JudgeConfig(prompt="kang_basic", **rest) == parse_judge("openai:gpt-4o-mini").to_config(prompt="kang_basic")


def test_several_judges() -> None:
    judges = parse_judges(["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku"], batch=True)
    assert [judge.batch for judge in judges] == [True, True]
    with pytest.raises(JudgeSpecError, match="the same judge as --judge openai:gpt-4o-mini"):
        parse_judges(["openai:gpt-4o-mini", "OpenAI:gpt-4o-mini"])
    with pytest.raises(JudgeSpecError, match="--base-url/--served-model with several --judge"):
        parse_judges(["openai:a@x", "openai:b@x"], base_url=SERVER)


@pytest.mark.parametrize(
    ("spec", "options", "expected"),
    [
        ("gpt-4o-mini", {}, "--judge gpt-4o-mini: expected provider:model"),
        ("openai:", {}, "--judge openai:: expected provider:model"),
        ("", {}, "--judge: empty value"),
        ("vllm:llama", {}, "unknown provider 'vllm'; known: openai, anthropic, local (an OpenAI-compatible server"),
        ("mistral:large", {}, "--judge mistral:large: unknown provider 'mistral'"),
        ("openai:default", {"base_url": SERVER}, "model name 'default' does not identify the weights"),
        ("openai:gpt-4o-mini", {"base_url": SERVER}, "model name 'gpt-4o-mini' does not identify"),
        ("openai:default", {"base_url": SERVER, "served_model": "default"}, "--served-model default"),
        ("openai:gpt-4o-mini", {"served_model": "x"}, "--served-model is the name an OpenAI-compatible server"),
        ("local:smollm2-135m-instruct-q4_1", {"base_url": SERVER}, "--base-url is not for provider 'local'"),
        ("openai:m@x", {"base_url": "ftp://host/v1"}, "--base-url 'ftp://host/v1': base_url"),
        ("local:smollm2-135m-instruct-q4_1", {"batch": True}, "--batch needs a provider with a batch API"),
        ("openai:m@x", {"base_url": SERVER, "batch": True}, "--batch uses OpenAI's batch API"),
        ("missing.yaml", {}, "--judge missing.yaml: judge file not found"),
    ],
)
def test_bad_specs_name_the_option(spec: str, options: dict, expected: str) -> None:
    with pytest.raises(JudgeSpecError) as caught:
        parse_judge(spec, **options)
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- openai\n", "must be a mapping with the fields"),
        ("provider: openai\nmodel: [\n", "not a readable YAML file"),
        ("provider: openai\n", "field 'model' is required"),
        ("provider: openai\nmodel: gpt-4o-mini\nprompt: kang_basic\n", "unknown field(s) ['prompt']"),
        ("provider: cohere\nmodel: c\n", "field 'provider': unknown provider 'cohere'"),
        ("provider: openai\nmodel: gpt-4o-mini\nbatch: maybe\n", "field 'batch' must be true or false"),
        ("provider: openai\nmodel: gpt-4o-mini\ntemperature: -1\n", "field 'temperature' must be a number >= 0"),
        ("provider: openai\nmodel: gpt-4o-mini\nseed: 1.5\n", "field 'seed' must be a whole number"),
        ("provider: openai\nmodel: gpt-4o-mini\noptions: [top_p]\n", "field 'options' must be a mapping"),
        ("provider: openai\nmodel: gpt-4o-mini\noptions: {top_p: {a: 1}}\n", "field 'options', 'top_p'"),
        ("provider: openai\nmodel: gpt-4o-mini\nlabel: ''\n", "field 'label' must be a non-empty string"),
    ],
)
def test_bad_judge_files_name_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "judge.yml"
    path.write_text(text)
    with pytest.raises(JudgeSpecError) as caught:
        parse_judge(str(path))
    assert str(caught.value).startswith(f"judge file {path}") and expected in str(caught.value)


#: Lines of a file that is no judge file and must never be echoed (as /etc/shadow's would be).
SECRET_LINES = "root:$6$SECRET-HASH-1:19000:0:99999:7:::\nalice:$6$SECRET-HASH-2:19000:0:99999:7:::\n"


@pytest.mark.parametrize("text", [SECRET_LINES, "provider: openai\nmodel: [x\nSECRET-HASH-1: {\n",
                                  "provider: openai\nmodel: m\nSECRET-HASH-1 is a secret: 1\n"],
                         ids=["lines-read-as-keys", "yaml-error-on-a-secret-line", "a-key-that-is-no-field-name"])
def test_a_file_that_is_no_judge_file_is_refused_without_echoing_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    # A judge file given through a symlink to another file (try /etc/shadow): the message names the file given and
    # says what is wrong, with the line where YAML failed, never the file's lines or keys.
    secret = tmp_path / "secret"
    secret.write_text(text)
    link = tmp_path / "judge.yaml"
    link.symlink_to(secret)
    with pytest.raises(JudgeSpecError) as caught:
        parse_judge(str(link))
    message = str(caught.value)
    assert message.startswith(f"judge file {link}") and "SECRET" not in message and "$6$" not in message, message
    from recjudge.cli import main

    assert main(["run", "--judge", str(link), "--profile", "smoke", "--plan"]) == 2
    err = capsys.readouterr().err
    assert "SECRET" not in err and len(err.strip().splitlines()) == 1, err


def test_a_judge_file_that_is_a_folder_a_fifo_or_unreadable_is_refused_clearly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    with pytest.raises(JudgeSpecError, match=f"judge file {re.escape(str(folder))} is a folder"):
        parse_judge(str(folder))
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)                                   # reading it would wait for a writer forever
    with pytest.raises(JudgeSpecError, match=f"judge file {re.escape(str(fifo))} is not a regular file"):
        parse_judge(str(fifo))
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to(tmp_path / "nowhere.yaml")
    with pytest.raises(JudgeSpecError, match="judge file not found"):
        parse_judge(str(dangling))
    unreadable = tmp_path / "unreadable.yaml"
    unreadable.write_text("provider: openai\nmodel: gpt-4o-mini\n")

    def refused(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refused)        # as for a file of another user (root reads every file)
    with pytest.raises(JudgeSpecError, match=f"judge file {re.escape(str(unreadable))} cannot be read "
                                             r"\(Permission denied\)"):
        parse_judge(str(unreadable))


def test_a_list_valued_option_survives_every_reading_of_the_judge(tmp_path: Path) -> None:
    # A run reads a judge's parameter more than once (the plan, each chapter): the first reading must not change it
    # so that the next refuses it.
    path = tmp_path / "judge.yaml"
    path.write_text("provider: openai\nmodel: gpt-4o-mini\noptions: {stop: [END], top_p: 0.9}\n")
    spec = parse_judge(str(path))
    parameter = spec.to_parameter()
    assert [JudgeSpec.from_parameter(parameter) for _ in range(3)] == [spec] * 3
    assert parameter["options"] == {"stop": ["END"], "top_p": 0.9}
    (_, first), = judge_configs([parameter], prompt="kang_basic")
    (_, second), = judge_configs([parameter], prompt="kang_basic")
    assert first == second and dict(first.options)["stop"] == ("END",)


def test_an_option_that_is_no_plain_value_is_named_with_its_file(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text("provider: openai\nmodel: gpt-4o-mini\noptions: {stop: [END, {a: 1}]}\n")
    with pytest.raises(JudgeSpecError) as caught:
        parse_judge(str(path))
    assert str(caught.value).startswith(f"judge file {path}: field 'options', 'stop'")
    assert "a list of them" in str(caught.value)


def test_missing_key_is_a_problem_only_for_a_live_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (problem,) = parse_judge("openai:gpt-4o-mini").readiness_problems(live=True)
    assert problem.startswith("--judge openai:gpt-4o-mini: provider 'openai' needs the environment variable "
                              "OPENAI_API_KEY")
    assert parse_judge("openai:gpt-4o-mini").readiness_problems(live=False) == []
    assert "ANTHROPIC_API_KEY" in parse_judge("anthropic:claude-3-5-haiku").readiness_problems()[0]
    # A reader's own server needs no key.
    assert parse_judge("openai:m@x", base_url=SERVER).readiness_problems() == []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert parse_judge("openai:gpt-4o-mini").readiness_problems() == []


def test_a_local_model_that_cannot_be_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECJUDGE_LOCAL_GGUF", raising=False)
    (problem,) = parse_judge(f"local:{tmp_path / 'absent.gguf'}").readiness_problems(live=True)
    assert problem.startswith(f"--judge local:{tmp_path / 'absent.gguf'}: local model file not found")
    present = tmp_path / "present.gguf"
    present.write_bytes(b"GGUF")
    assert parse_judge(f"local:{present}").readiness_problems() == []


def test_a_plan_or_a_replay_needs_no_local_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECJUDGE_MODELS_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("RECJUDGE_LOCAL_GGUF", raising=False)
    for model in ("gemma-3-270m-q4_k_m", str(tmp_path / "absent.gguf")):
        assert parse_judge(f"local:{model}").readiness_problems(live=False) == []
    (problem,) = parse_judge("local:gemma-3-270m-q4_k_m").readiness_problems(live=True)
    assert "is not fetched" in problem and "recjudge models fetch gemma-3-270m-q4_k_m" in problem


def test_judge_configs_put_each_judge_into_a_chapter_role() -> None:
    from recjudge.llm.judge_spec import judge_configs, role_of

    judges = [parse_judge("openai:gpt-4o-mini").to_parameter(),
              JudgeSpec("anthropic", "claude-3-5-haiku", label="Haiku", temperature=0.5).to_parameter()]
    own = JudgeConfig(provider="local", model="smollm2", prompt="kang_fewshot", scoring="expected", max_tokens=1,
                      options=(("n_threads", 1),))
    role = role_of(own)
    assert role == {"prompt": "kang_fewshot", "temperature": 0.0, "runs": 1, "scoring": "expected", "max_tokens": 1,
                    "seed": 0, "output_shape": None}
    generating = {**role, "scoring": "generate", "max_tokens": 8}  # Anthropic returns no log-probabilities
    pairs = judge_configs(judges[:1], **role) + judge_configs(judges[1:], **generating)
    assert [label for label, _ in pairs] == ["gpt-4o-mini", "Haiku"]
    first, second = (config for _, config in pairs)
    assert first == JudgeConfig(provider="openai", model="gpt-4o-mini", prompt="kang_fewshot", scoring="expected",
                                max_tokens=1)  # the role's fields, without the chapter model's provider options
    assert (second.provider, second.model, second.temperature, second.prompt) == (
        "anthropic", "claude-3-5-haiku", 0.5, "kang_fewshot")  # the spec's sampling wins over the role's
    assert judge_configs([], **role) == []
    with pytest.raises(JudgeSpecError, match="unknown field"):
        judge_configs([{"provider": "openai", "model": "gpt-4o-mini", "prompt": "kang_basic"}], **role)


def test_a_judge_without_log_probabilities_cannot_play_an_expected_score_role() -> None:
    claude = parse_judge("anthropic:claude-3-5-haiku").to_parameter()
    with pytest.raises(JudgeSpecError, match=r"claude-3-5-haiku' cannot play this chapter's role: it reads expected "
                                             r"scores from token log-probabilities, which provider 'anthropic'"):
        judge_configs([claude], prompt="kang_basic", scoring="expected", max_tokens=1)
    # The same judge generating its score, and an OpenAI-compatible judge reading log-probabilities, are fine.
    assert judge_configs([claude], prompt="kang_basic", scoring="generate")[0][1].provider == "anthropic"
    gpt = parse_judge("openai:gpt-4o-mini").to_parameter()
    assert judge_configs([gpt], prompt="kang_basic", scoring="expected")[0][1].scoring == "expected"


def test_chapter_judge_reads_a_readers_judge_and_a_chapters_own() -> None:
    from recjudge.llm.judge_spec import chapter_judge

    role = {"prompt": "zhang_multi_zero_shot", "temperature": 0.0, "max_tokens": 32}
    reader = parse_judge("openai:gpt-4o-mini", batch=True).to_parameter()
    label, config, batch = chapter_judge(reader, **role)
    assert (label, batch) == ("gpt-4o-mini", True)  # batch is how replies are fetched, not a JudgeConfig field
    assert config == JudgeConfig(provider="openai", model="gpt-4o-mini", prompt="zhang_multi_zero_shot",
                                 max_tokens=32)  # the chapter's reply length is kept
    assert chapter_judge(parse_judge("openai:gpt-4o-mini").to_parameter(), **role)[2] is None
    own = {"label": "Tiny", "provider": "local", "model": "smollm2", "max_tokens": 16,
           "options": {"n_threads": 1, "stop": ["\n\n"]}}
    label, config, batch = chapter_judge(own, **role)
    assert (label, batch, config.max_tokens, config.prompt) == ("Tiny", None, 16, "zhang_multi_zero_shot")
    assert dict(config.options) == {"n_threads": 1, "stop": ["\n\n"]}  # its own fields win over the role's
    with pytest.raises(JudgeSpecError, match="needs a 'label'"):
        chapter_judge({"provider": "local", "model": "smollm2"}, **role)
    with pytest.raises(JudgeSpecError, match=r"unknown field\(s\) \['max_token'\]"):
        chapter_judge({**own, "max_token": 8}, **role)


@pytest.mark.parametrize(("url", "held"), [
    ("http://alice:PW-s3cret@127.0.0.1:8000/v1", "a user name or password"),
    ("http://PW-s3cret@127.0.0.1:8000/v1", "a user name or password"),
    ("http://127.0.0.1:8000/v1?api_key=PW-s3cret", "the query parameter 'api_key'"),
    ("http://127.0.0.1:8000/v1?api-version=2024&Access_Token=PW-s3cret", "the query parameter 'Access_Token'"),
    ("http://127.0.0.1:8000/v1?sig=PW-s3cret", "the query parameter 'sig'"),
    ("http://127.0.0.1:8000/v1#PW-s3cret", "a fragment"),
    ("http://127.0.0.1:8000/v1;api_key=PW-s3cret", "a path parameter (;...)"),
    ("http://127.0.0.1:8000/v1;PW-s3cret", "a path parameter (;...)"),
    ("http://127.0.0.1:8000/v1;key=PW-s3cret/", "a path parameter (;...)")])
def test_credentials_in_a_base_url_are_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, held: str) -> None:
    # A base URL is recorded in variant.json, the notebooks' parameters and the run records: none may hold a secret,
    # in its user information, its query or its fragment.
    with pytest.raises(JudgeSpecError, match=f"holds {re.escape(held)}") as caught:
        parse_judge("openai:llama-3.1-8b@vllm", base_url=url, served_model="default")
    assert "PW-s3cret" not in str(caught.value) and "http://127.0.0.1:8000/v1" in str(caught.value)
    # The advice names the variable this server is sent, not OPENAI_API_KEY (which goes to OpenAI's host only).
    assert "environment variable RECJUDGE_SERVER_API_KEY" in str(caught.value)
    path = tmp_path / "judge.yaml"
    path.write_text(f"provider: openai\nmodel: llama-3.1-8b@vllm\nserved_model: default\nbase_url: '{url}'\n")
    with pytest.raises(JudgeSpecError, match=f"holds {re.escape(held)}") as caught:
        parse_judge(str(path))
    assert "PW-s3cret" not in str(caught.value)
    with pytest.raises(JudgeSpecError, match=f"holds {re.escape(held)}"):
        JudgeSpec.from_parameter({"label": "x", "provider": "openai", "model": "llama-3.1-8b@vllm",
                                  "served_model": "default", "base_url": url})
    from recjudge.cli import main

    code = main(["run", "--judge", "openai:llama-3.1-8b@vllm", "--base-url", url, "--served-model", "default",
                 "--profile", "smoke", "--plan"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "PW-s3cret" not in err


def test_a_base_url_with_a_query_that_holds_no_credential_is_accepted() -> None:
    # An API version in the query is no secret (Azure-style servers need it); only key-like names are refused.
    spec = parse_judge("openai:llama-3.1-8b@vllm", base_url="http://127.0.0.1:8000/v1?api-version=2024-02-01",
                       served_model="default")
    assert spec.base_url.endswith("?api-version=2024-02-01")


def test_a_judge_config_or_environment_base_url_with_a_credential_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The other ways a base URL enters: a chapter's own JudgeConfig, and OPENAI_BASE_URL at the provider.
    with pytest.raises(ValueError, match="holds the query parameter 'api_key'") as caught:
        JudgeConfig(provider="openai", model="m@vllm", served_model="default",
                    base_url="http://127.0.0.1:8000/v1?api_key=PW-s3cret")
    assert "PW-s3cret" not in str(caught.value)
    from recjudge.llm.providers.base import ProviderError
    from recjudge.llm.providers.openai_compat import OpenAICompatProvider

    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1?key=PW-s3cret")
    with pytest.raises(ProviderError, match="holds the query parameter 'key'") as caught:
        OpenAICompatProvider()
    assert "PW-s3cret" not in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)
