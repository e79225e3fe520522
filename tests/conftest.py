"""Shared test set-up."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

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


#: Set to 1 (``.ci/run`` does) to make the tests that need a PostgreSQL server fail, not skip, when it is missing.
REQUIRE_POSTGRES_ENV = "RECJUDGE_REQUIRE_POSTGRES"


def _postgres_unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
        pytest.fail(f"{REQUIRE_POSTGRES_ENV}=1 but {reason}")
    pytest.skip(reason)


def _postgres_binaries() -> Path | None:
    """The folder of initdb, pg_ctl and createdb: Debian's (not on PATH), or PATH's."""
    folders = [Path(p).parent for p in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)]
    if shutil.which("initdb"):
        folders.append(Path(shutil.which("initdb")).parent)
    return next((f for f in folders if all((f / tool).exists() for tool in ("initdb", "pg_ctl", "createdb"))), None)


class ThrowawayPostgres:
    """A PostgreSQL cluster of its own on a Unix socket in a temporary folder (Debian's ``postgresql`` package), with
    one database, ``optuna``: ``url`` is its URL without a driver; ``stop()`` stops the server (a test may do so
    midway) and ``start()`` starts it again; ``remove()`` stops it and deletes the folder.  Skips (or fails, with
    RECJUDGE_REQUIRE_POSTGRES=1) when the server's binaries or the driver are absent."""

    def __init__(self) -> None:
        binaries = _postgres_binaries()
        if binaries is None:
            _postgres_unavailable("PostgreSQL's server binaries (initdb, pg_ctl) are not installed: "
                                  "apt-get install postgresql")
        try:
            import psycopg2  # noqa: F401
        except ImportError:
            _postgres_unavailable("the PostgreSQL driver psycopg2 is not installed (make setup installs the lock's "
                                  "[postgres] extra)")
        self.binaries = binaries
        # Not under pytest's temporary folder: as root, that is private to root and the server runs as postgres.
        self.folder = Path(tempfile.mkdtemp(prefix="recjudge-postgres-"))
        self.data, self.sockets = self.folder / "data", self.folder / "sockets"
        self.sockets.mkdir()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # the server refuses to run as root
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.sockets, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.running = False
        try:
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")
            self.start()
            self._run("createdb", "-h", str(self.sockets), "-p", str(self.port), "-U", "postgres", "optuna")
        except BaseException:
            self.remove()
            raise
        self.url = f"postgresql://postgres@/optuna?host={self.sockets}&port={self.port}"

    def _run(self, tool: str, *arguments: str) -> None:
        done = subprocess.run([*self.as_user, str(self.binaries / tool), *arguments], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, f"{tool} failed: {done.stderr or done.stdout}"

    def start(self) -> None:
        if not self.running:
            self._run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.folder / "server.log"), "-o",
                      f"-k {self.sockets} -p {self.port} -c listen_addresses='' -c fsync=off", "start")
            self.running = True

    def stop(self) -> None:
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
            self.running = False

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_url():
    """The URL (without a driver) of a throwaway PostgreSQL server shared by a test module (``ThrowawayPostgres``)."""
    server = ThrowawayPostgres()
    try:
        yield server.url
    finally:
        server.remove()


@pytest.fixture
def postgres_server():
    """A throwaway PostgreSQL server of the test's own (``ThrowawayPostgres``), which the test may stop."""
    server = ThrowawayPostgres()
    try:
        yield server
    finally:
        server.remove()
