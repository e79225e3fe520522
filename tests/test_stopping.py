"""recjudge.stopping: a command stopped by SIGTERM or Ctrl-C ends its children and exits with the shell's status for
the signal, also when a second signal follows the first at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from child_process import default_sigint

ROOT = Path(__file__).resolve().parents[1]

#: A command as ``recjudge.cli.main`` runs one: a child process (a kernel, a worker), then a wait to be stopped in.
STOPPED_COMMAND = """
import subprocess
import sys
import time

from recjudge.stopping import TERMINATED, Terminated, stops_cleanly

try:
    with stops_cleanly():
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(child.pid, flush=True)
        time.sleep(120)
except Terminated:
    print("terminated", file=sys.stderr)
    sys.exit(TERMINATED)
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    sys.exit(130)
"""


def alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("pause", [0.01, 0.1])
@pytest.mark.parametrize(("first", "second", "status", "said"), [
    (signal.SIGTERM, signal.SIGTERM, 143, "terminated"),
    (signal.SIGINT, signal.SIGINT, 130, "interrupted"),
    (signal.SIGINT, signal.SIGTERM, 130, "interrupted"),
    (signal.SIGTERM, signal.SIGINT, 143, "terminated")])
def test_a_second_signal_at_once_after_the_first_still_stops_cleanly(
        tmp_path: Path, first: signal.Signals, second: signal.Signals, status: int, said: str, pause: float) -> None:
    # The second signal arrives while the first one's handler is still running (importing what it needs, ending the
    # children): the handler must not fail, the command ends as the first signal asked, and no child survives.
    pytest.importorskip("psutil")
    script = tmp_path / "command.py"
    script.write_text(STOPPED_COMMAND)
    command = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                               preexec_fn=default_sigint)
    child = None
    try:
        child = int(command.stdout.readline())
        command.send_signal(first)
        time.sleep(pause)
        command.send_signal(second)
        _, err = command.communicate(timeout=60)
        assert (command.returncode, err.strip()) == (status, said)
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(child)
    finally:
        for pid in (command.pid, child):
            if pid is not None and alive(pid):
                os.kill(pid, signal.SIGKILL)
