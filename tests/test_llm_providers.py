"""Providers: error mapping to transient/permanent errors, Retry-After, redaction, the registry."""

from __future__ import annotations

import pytest
from mock_openai_server import FaultPlan, MockOpenAIServer, expected_score

from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.providers import get_provider
from recjudge.llm.providers._common import redact, retry_after_seconds
from recjudge.llm.providers.base import ProviderError, TransientProviderError

MESSAGES = [{"role": "system", "content": "Rate 1-5."}, {"role": "user", "content": "a film"}]


def openai_provider(server, timeout=0.5):
    return get_provider(JudgeConfig(provider="openai", model="m", base_url=server.base_url), timeout=timeout)


def test_retry_after_header_forms():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds({}) is None


def test_redact_removes_secret_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdef123456")
    assert redact("Incorrect API key provided: sk-abcdef123456.") == "Incorrect API key provided: ***."


@pytest.mark.parametrize("fault, expected", [("rate_limit", "HTTP 429"), ("server_error", "HTTP 500"),
                                             ("drop", "connection"), ("garbage", "unreadable"),
                                             ("timeout", "connection")])
def test_openai_faults_become_transient_errors(monkeypatch, fault, expected):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    plan = FaultPlan(**{fault: 1.0}, max_faults_per_prompt=1, retry_after="7")
    with MockOpenAIServer(faults=plan, timeout_sleep_s=0.8) as server:
        # a deadline the stalled reply (0.8 s) outlasts; the other faults answer at once, so a busy machine gets slack
        provider = openai_provider(server, timeout=0.5 if fault == "timeout" else 5.0)
        with pytest.raises(TransientProviderError, match=expected) as caught:
            provider.complete(MESSAGES, model="m", temperature=0.0, max_tokens=8)
        if fault == "rate_limit":
            assert caught.value.retry_after == 7.0
        reply = provider.complete(MESSAGES, model="m", temperature=0.0, max_tokens=8)  # the next one succeeds
    assert reply.text == f"Score: {expected_score('a film')}" and reply.input_tokens and reply.output_tokens == 3


def test_openai_client_errors_are_permanent_and_logprobs_are_read(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockOpenAIServer() as server:
        provider = openai_provider(server)
        with pytest.raises(ProviderError, match="HTTP 400") as caught:
            provider.complete(MESSAGES, model="status-400", temperature=0.0, max_tokens=8)
        assert not isinstance(caught.value, TransientProviderError)
        reply = provider.complete(MESSAGES, model="m", temperature=0.0, max_tokens=8, logprobs=True)
    assert len(reply.logprobs) == 3 and len(reply.logprobs[2]) == 5
    assert "sk-test" not in repr(provider)


def test_anthropic_provider_against_mock(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    requests = [JudgeRequest(f"k{i}", [{"role": "system", "content": "Judge."},
                                       {"role": "user", "content": f"film {i}"}]) for i in range(6)]
    plan = FaultPlan(rate_limit=0.3, server_error=0.3, max_faults_per_prompt=1)
    with MockOpenAIServer(faults=plan, expected_key="sk-ant-test") as server:
        config = JudgeConfig(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url)
        from recjudge.llm import RetryPolicy

        run = run_judge(config, requests, store=tmp_path, retry=RetryPolicy(base_delay_s=0.01), progress=False)
        assert server.unauthorised == 0 and sum(server.fault_counts.values()) > 0
    assert list(run.table["score"]) == [float(expected_score(f"film {i}")) for i in range(6)]
    assert run.report.cost_usd > 0  # priced as claude-sonnet-4


def test_registry_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        get_provider(JudgeConfig(provider="openai", model="gpt-4o-mini"))
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        get_provider(JudgeConfig(provider="anthropic", model="claude-3-5-haiku"))
    with pytest.raises(ProviderError, match="needs options"):
        get_provider(JudgeConfig(provider="recorded", model="gpt-3.5-turbo"))


def test_one_request_object_carries_what_every_provider_is_sent():
    from recjudge.llm.providers.anthropic_provider import AnthropicProvider
    from recjudge.llm.providers.base import ChatProvider, Completion, ProviderRequest
    from recjudge.llm.providers.openai_compat import OpenAICompatProvider

    class Echo(ChatProvider):
        name = "echo"

        def ask(self, request):
            request.messages[0]["content"] = "changed by the provider"
            request.options["extra"] = 1
            return Completion(text=f"{request.model} {request.seed} {request.logprobs}")

    request = ProviderRequest([{"role": "user", "content": "hi"}], model="m", temperature=0.0, max_tokens=8, seed=7,
                              options={"top_p": 0.5})
    assert request.send(Echo()).text == "m 7 False"
    assert request.messages[0]["content"] == "hi" and request.options == {"top_p": 0.5}  # sent as copies
    with pytest.raises(TypeError, match="top_k"):
        Echo().complete(MESSAGES, model="m", temperature=0.0, max_tokens=8, top_k=5)
    assert OpenAICompatProvider.body(request)["seed"] == 7
    assert "seed" not in AnthropicProvider.body(request)  # Anthropic takes no seed


def test_requests_go_through_the_proxy_the_environment_names(monkeypatch, tmp_path):
    """The OpenAI-compatible provider sends through ``http_proxy`` (a plain-HTTP proxy is sent the whole URL; the
    mock server answers such a request as a proxy that forwards it would), and not for a host ``no_proxy`` names."""
    from mock_openai_server import MockOpenAIServer

    from recjudge.llm.providers.base import TransientProviderError

    requests = [JudgeRequest("k0", [{"role": "user", "content": "film 0"}])]
    with MockOpenAIServer() as proxy:
        host, port = proxy.base_url.split("//")[1].split("/")[0].split(":")
        monkeypatch.setenv("http_proxy", f"http://{host}:{port}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        config = JudgeConfig(provider="openai", model="judge@behind-a-proxy", base_url="http://judge.invalid:9/v1")
        run = run_judge(config, requests, store=tmp_path / "a", progress=False)
        assert run.report.n_asked == 1 and proxy.total_requests == 1
        monkeypatch.setenv("no_proxy", "judge.invalid")
        with pytest.raises((ProviderError, TransientProviderError)):
            get_provider(config).complete(requests[0].messages, model="judge", temperature=0.0, max_tokens=5)
