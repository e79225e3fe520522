"""Output shapes: declared once, enforced by every provider (local grammar, OpenAI response_format, Anthropic forced
tool), part of the store key only when on, and replies out of shape counted apart from unparsable ones."""

from __future__ import annotations

import json

import pytest
from mock_openai_server import MockOpenAIServer, expected_score

from recjudge.llm import JudgeConfig, JudgeRequest, RetryPolicy, run_judge, shapes
from recjudge.llm.store import ResponseStore, StoreKeyer

REQUESTS = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Judge."},
                                   {"role": "user", "content": f"film {i}"}]) for i in range(4)]
SCORE = shapes.score(1, 5)


def test_shapes_are_strict_object_schemas_and_round_trip():
    for shape in (SCORE, shapes.scores(["persuasiveness", "transparency"]), shapes.label(["yes", "no"]),
                  shapes.titles(3), shapes.titles(2, catalogue=["B", "A", "A"]), shapes.reasoning_then(SCORE)):
        assert shape.schema["additionalProperties"] is False
        assert shape.schema["required"] == list(shape.schema["properties"])
        assert shapes.OutputShape.from_json(shape.json) == shape
    assert list(shapes.reasoning_then(SCORE).schema["properties"]) == ["reasoning", "score"]  # thinks first
    steps = shapes.scores(["relevance", "unexpectedness", "serendipity"])
    through_config = JudgeConfig(provider="local", model="m").constrained(steps).shape
    assert list(through_config.schema["properties"]) == ["relevance", "unexpectedness", "serendipity"]  # not sorted
    assert list(JudgeConfig(provider="local", model="m").constrained(steps).provider_options()[shapes.OPTION][
        "properties"]) == ["relevance", "unexpectedness", "serendipity"]
    assert shapes.titles(2, catalogue=["B", "A", "A"]).schema["properties"]["titles"]["items"]["enum"] == ["A", "B"]
    with pytest.raises(shapes.ShapeError, match="required"):
        shapes.OutputShape("bad", {"type": "object", "properties": {"a": {}}, "required": [],
                                   "additionalProperties": False}, ("a",))
    with pytest.raises(shapes.ShapeError, match="answer"):
        shapes.OutputShape("bad", SCORE.schema, ("nope",))
    with pytest.raises(shapes.ShapeError, match="not an output shape"):
        shapes.OutputShape.from_json("{}")


@pytest.mark.parametrize("text, problem", [
    ('{"score": 4}', None),
    ('{"score": 6}', "score: 6 is not one of"),
    ('{"score": 4, "extra": 1}', "Additional properties"),
    ('Score: 4', "not JSON"),
    ('{"score": 4', "not JSON"),
    ('', "empty reply"),
])
def test_check_tells_a_conforming_reply_from_a_violation(text, problem):
    value, why = shapes.check(SCORE, text)
    if problem is None:
        assert value == {"score": 4} and why is None
    else:
        assert value is None and problem in why
    parsed = shapes.answer_parser(SCORE)(text)
    assert parsed == 4.0 if problem is None else parsed != parsed  # NaN out of shape


def test_multi_answer_parser_returns_every_aspect():
    shape = shapes.scores(["a", "b"])
    assert shapes.answer_parser(shape)('{"a": 2, "b": 5}') == {"a": 2.0, "b": 5.0}
    out = shapes.answer_parser(shape)('{"a": 2}')
    assert set(out) == {"a", "b"} and all(v != v for v in out.values())


def test_constraining_changes_the_store_key_and_leaving_it_off_does_not():
    plain = JudgeConfig(provider="openai", model="gpt-4o-mini")
    shaped = plain.constrained(SCORE)
    assert plain.provider_options() == {} and shaped.provider_options() == {shapes.OPTION: SCORE.schema}
    assert shaped.label.endswith("+constrained") and shaped.shape == SCORE

    def key(config):
        keyer = StoreKeyer(provider=config.provider, model=config.model, temperature=config.temperature,
                           max_tokens=config.max_tokens, seed=config.seed, logprobs=False,
                           options=config.provider_options())
        return keyer.key(REQUESTS[0].messages, 0)

    before = StoreKeyer(provider="openai", model="gpt-4o-mini", temperature=0.0, max_tokens=256, seed=0,
                        logprobs=False, options={}).key(REQUESTS[0].messages, 0)
    assert key(plain) == before != key(shaped)
    with pytest.raises(ValueError, match="output_shape"):
        JudgeConfig(provider="openai", model="m", options=((shapes.OPTION, {}),), output_shape=SCORE.json)


def test_openai_receives_the_schema_as_response_format(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockOpenAIServer() as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url).constrained(SCORE)
        run = run_judge(config, REQUESTS, shapes.answer_parser(SCORE), store=tmp_path, progress=False)
        sent = server.payloads[0]["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCORE.schema, "strict": True}}
    assert run.table["score"].tolist() == [float(expected_score(f"film {i}")) for i in range(4)]
    assert run.report.n_shape_violations == 0 and run.report.n_unparsable == 0
    assert run.table["shape_violation"].isna().all()


def test_a_server_that_ignores_the_shape_is_counted_as_violating_it(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockOpenAIServer(shape_support="ignore") as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url).constrained(SCORE)
        run = run_judge(config, REQUESTS, shapes.answer_parser(SCORE), store=tmp_path, progress=False)
    assert run.report.n_shape_violations == 4 and run.report.n_unparsable == 0
    assert run.table["shape_violation"].str.contains("not JSON").all()
    assert "out of the output shape" in str(run.report)


def test_a_server_that_rejects_the_shape_fails_each_judgment_and_never_asks_unconstrained(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockOpenAIServer(shape_support="reject") as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url).constrained(SCORE)
        run = run_judge(config, REQUESTS[:1], shapes.answer_parser(SCORE), store=tmp_path, progress=False,
                        retry=RetryPolicy(base_delay_s=0.01))
        assert all("response_format" in payload for payload in server.payloads)
    assert run.report.n_failed == 1 and "response_format is not supported" in run.table["error"].iloc[0]


def test_a_server_that_takes_the_schema_only_as_json_object_is_asked_in_that_form(monkeypatch, tmp_path):
    # llama-cpp-python's server: json_schema refused (500), json_object + schema honoured. One refusal, then every
    # request in the accepted form; the store keys are those of any constrained run.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockOpenAIServer(shape_support="json_object") as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url).constrained(SCORE)
        run = run_judge(config, REQUESTS, shapes.answer_parser(SCORE), store=tmp_path, progress=False,
                        concurrency=1)
        forms = [payload["response_format"] for payload in server.payloads]
    assert [form["type"] for form in forms] == ["json_schema"] + ["json_object"] * 4
    assert all(form["schema"] == SCORE.schema for form in forms[1:])
    assert run.table["score"].tolist() == [float(expected_score(f"film {i}")) for i in range(4)]
    assert run.report.n_failed == 0 and run.report.n_shape_violations == 0
    assert {entry.provenance["response_format"] for entry in ResponseStore(tmp_path)} == {"json_object with schema"}


def test_anthropic_is_forced_to_call_one_tool_whose_input_is_the_answer(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    shape = shapes.reasoning_then(SCORE)
    with MockOpenAIServer() as server:
        config = JudgeConfig(provider="anthropic", model="claude-sonnet-4-6",
                             base_url=server.root_url).constrained(shape)
        run = run_judge(config, REQUESTS, shapes.answer_parser(shape), store=tmp_path, progress=False)
        sent = server.payloads[0]
    assert sent["tool_choice"] == {"type": "tool", "name": shapes.ANTHROPIC_TOOL}
    assert sent["tools"][0]["input_schema"] == shape.schema
    assert json.loads(run.table["reply"].iloc[0]) == {"reasoning": "reasoning", "score": expected_score("film 0")}
    assert run.table["score"].tolist() == [float(expected_score(f"film {i}")) for i in range(4)]


def test_batch_request_bodies_carry_the_shape():
    from recjudge.llm.providers.anthropic_provider import AnthropicProvider
    from recjudge.llm.providers.openai_compat import OpenAICompatProvider

    options = {shapes.OPTION: SCORE.schema}
    body = OpenAICompatProvider.request_body([], model="m", temperature=0.0, max_tokens=5, options=options)
    assert body["response_format"]["json_schema"]["schema"] == SCORE.schema and shapes.OPTION not in body
    body = AnthropicProvider.request_body([], model="m", temperature=0.0, max_tokens=5, options=options)
    assert body["tools"][0]["input_schema"] == SCORE.schema and shapes.OPTION not in body


LOCAL_SHAPES = [SCORE, shapes.scores(["persuasiveness", "transparency", "accuracy", "satisfaction"]),
                shapes.label(["not serendipitous", "serendipitous"]), shapes.titles(3),
                shapes.titles(2, catalogue=["Alien (1979)", "Up (2009)", "Heat (1995)"]),
                shapes.reasoning_then(SCORE)]


@pytest.mark.local_model
@pytest.mark.parametrize("shape", LOCAL_SHAPES, ids=[s.name for s in LOCAL_SHAPES])
def test_the_local_grammar_makes_smollm2_answer_in_every_shape(shape, tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    messages = [{"role": "user", "content": "The user liked Toy Story (1995) and Up (2009). Recommended: Alien "
                                            "(1979). How serendipitous is it, from 1 to 5? Answer in JSON."}]
    config = JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1", max_tokens=96).constrained(shape)
    run = run_judge(config, [JudgeRequest("q", messages)], shapes.answer_parser(shape), store=tmp_path,
                    progress=False, mode="live")
    reply = run.table["reply"].iloc[0]
    value, problem = shapes.check(shape, reply)
    assert problem is None, (reply, problem)
    assert run.report.n_shape_violations == 0
    if all(shape.schema["properties"][a]["type"] == "integer" for a in shape.answer):
        assert run.table["parsed_ok"].all()


def test_a_schema_llama_cpp_cannot_compile_is_one_clear_error():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup installs it)")
    with pytest.raises(shapes.ShapeError, match="cannot be compiled"):
        shapes.llama_grammar({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}, "required": ["a"],
                              "additionalProperties": False})


def test_every_template_declares_the_shape_its_answer_lines_ask_for():
    from recjudge.prompts import list_templates
    from recjudge.prompts.output_shapes import TEMPLATE_SHAPES, output_shape

    assert sorted(TEMPLATE_SHAPES) == list_templates()
    assert output_shape("tokutake_cot").answer == ("serendipity",)
    assert list(output_shape("tokutake_cot").schema["properties"]) == ["relevance", "unexpectedness", "serendipity"]
    assert output_shape("khirbat_recommend", k=5).schema["properties"]["titles"]["minItems"] == 5
    assert shapes.answer_parser(output_shape("tokutake_cot"))(
        '{"relevance": 2, "unexpectedness": 5, "serendipity": 4}') == 4.0
    with pytest.raises(shapes.ShapeError, match="declares no output shape"):
        output_shape("no_such_template")
    with pytest.raises(shapes.ShapeError, match="takes no parameters"):
        output_shape("kang_basic", k=3)
    with pytest.raises(shapes.ShapeError, match="parameters"):
        output_shape("khirbat_recommend")


def test_an_enum_value_the_local_grammar_would_break_on_is_refused_by_name():
    # llama-cpp-python writes such values unescaped and llama.cpp then fails at the first reply
    for title in ('11\'09"01 - September 11 (2002)', "back\\slash"):
        with pytest.raises(shapes.ShapeError, match="double quote or a backslash"):
            shapes.llama_grammar(shapes.titles(2, catalogue=[title, "Up (2009)"]).schema)


def test_a_constrained_judge_generates_and_is_read_by_its_shape_by_default(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="first reply token"):
        JudgeConfig(provider="local", model="m", scoring="expected", max_tokens=1).constrained(SCORE)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rating = shapes.score(1, 5, name="rating")
    with MockOpenAIServer() as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url).constrained(rating)
        run = run_judge(config, REQUESTS, store=tmp_path, progress=False)  # no parser given
    assert [json.loads(text) for text in run.table["reply"]] == [{"rating": expected_score(f"film {i}")}
                                                                 for i in range(4)]
    assert run.table["score"].tolist() == [float(expected_score(f"film {i}")) for i in range(4)]
