"""Shared test set-up."""

import os

import pytest

#: Set to 1 (``.ci/run`` does) to make the tests that need the local model's stack fail, not skip, when it is missing.
REQUIRE_LOCAL_MODEL_ENV = "RECJUDGE_REQUIRE_LOCAL_MODEL"


@pytest.fixture(autouse=True)
def _llm_mode_from_the_test_not_the_shell(monkeypatch):
    # The book build replays the store (RECJUDGE_LLM_MODE=replay); tests choose their own mode explicitly, so the
    # calling shell's setting must not leak into them.
    monkeypatch.delenv("RECJUDGE_LLM_MODE", raising=False)


@pytest.fixture(scope="session")
def llama_server_packages():
    """Skips a test when llama-cpp-python's server cannot run here (its ``server`` extra is not installed), unless
    RECJUDGE_REQUIRE_LOCAL_MODEL=1, which makes that a failure."""
    from recjudge.llm.serve_local import server_unavailable

    problem = server_unavailable()
    if problem:
        if os.environ.get(REQUIRE_LOCAL_MODEL_ENV) == "1":
            pytest.fail(f"{problem} ({REQUIRE_LOCAL_MODEL_ENV}=1)")
        pytest.skip(problem)


@pytest.fixture(scope="module")
def llama_server(llama_server_packages, tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server with the default local model (SmolLM2) on 127.0.0.1 at a free
    port, started once per test module through ``recjudge.llm.serve_local.LocalServer`` (what ``recjudge serve
    start`` runs) and stopped at the end.  Yields the ``LocalServer``: ``base_url``, ``served_model``, ``identity``,
    ``judge_spec()``.  Skips or fails as ``llama_server_packages`` says; a server that does not come up fails with
    the tail of its log."""
    from recjudge.llm.serve_local import LocalServer, ServerError

    server = LocalServer(log=tmp_path_factory.mktemp("llama-server") / "server.log")
    try:
        server.start()
    except ServerError as error:
        pytest.fail(str(error))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def page_results(tmp_path, monkeypatch):
    """A chapter page's tables go to a temporary results folder (outside any run), and its figures are closed after
    the test; the folder is returned."""
    import matplotlib.pyplot as plt

    monkeypatch.setenv("RECJUDGE_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("RECJUDGE_RUN_NAME", raising=False)
    yield tmp_path / "results"
    plt.close("all")
