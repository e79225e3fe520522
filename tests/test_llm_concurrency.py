"""Adaptive (AIMD) and fixed concurrency: the limit's rules on scripted outcomes, and runs against a rate-limited
mock server that give the same table either way."""

from __future__ import annotations

import threading
import time

import pytest
from mock_openai_server import MockOpenAIServer, TokenBucket
from mock_openai_server import expected_score as mock_score

from recjudge.llm import JudgeConfig, JudgeRequest, RetryPolicy, run_judge
from recjudge.llm.concurrency import NEUTRAL, SUCCESS, THROTTLED, ConcurrencyLimit
from recjudge.llm.providers.base import Completion, TransientProviderError


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("RECJUDGE_LLM_ADAPTIVE", raising=False)
    monkeypatch.delenv("RECJUDGE_LLM_CONCURRENCY", raising=False)


def one(gate: ConcurrencyLimit, outcome: str, retry_after: float | None = None) -> int:
    epoch = gate.acquire()
    assert epoch is not None
    gate.release(epoch, outcome, retry_after)
    return gate.limit


def test_aimd_rises_by_one_per_window_and_halves_on_429_within_1_and_the_cap():
    gate = ConcurrencyLimit(6, initial=1, slow_start=False)
    # (outcome, limit after it): a window is as many successes as the limit.
    script = [
        (SUCCESS, 2),                              # window of 1
        (SUCCESS, 2), (SUCCESS, 3),                # window of 2
        (NEUTRAL, 3),                              # errors and refusals do not count
        (SUCCESS, 3), (SUCCESS, 3), (SUCCESS, 4),  # window of 3
        *[(SUCCESS, 4)] * 3, (SUCCESS, 5),
        *[(SUCCESS, 5)] * 4, (SUCCESS, 6),
        *[(SUCCESS, 6)] * 5, (SUCCESS, 6),         # never above the cap
        (THROTTLED, 3), (THROTTLED, 1), (THROTTLED, 1),  # halves, never below 1
        (SUCCESS, 2), (SUCCESS, 2), (THROTTLED, 1),      # a throttle also restarts the window
    ]
    for step, (outcome, limit) in enumerate(script):
        assert one(gate, outcome) == limit, f"step {step}: {outcome}"
    assert gate.stats.n_throttled == 4 and gate.stats.n_decreases == 4 and gate.stats.peak == 6
    assert gate.in_flight == 0


def test_slow_start_doubles_until_the_first_throttle():
    gate = ConcurrencyLimit(64, initial=4)
    for expected in (8, 16, 32):
        for _ in range(gate.limit):
            one(gate, SUCCESS)
        assert gate.limit == expected
    assert one(gate, THROTTLED) == 16
    for _ in range(16):
        one(gate, SUCCESS)
    assert gate.limit == 17  # additive from now on


def test_throttles_of_requests_started_before_a_cut_do_not_cut_again():
    gate = ConcurrencyLimit(8, initial=8, slow_start=False)
    epochs = [gate.acquire() for _ in range(8)]  # eight in flight in epoch 0
    for epoch in epochs[:3]:
        gate.release(epoch, THROTTLED)
    assert gate.limit == 4 and gate.stats.n_throttled == 3 and gate.stats.n_decreases == 1
    for epoch in epochs[3:]:
        gate.release(epoch, SUCCESS)  # five successes: one window of 4, so +1
    assert gate.limit == 5
    assert one(gate, THROTTLED) == 2  # a request of the new epoch cuts again


def test_retry_after_holds_back_new_starts_and_fixed_mode_never_moves():
    now = [100.0]
    gate = ConcurrencyLimit(4, initial=4, slow_start=False, clock=lambda: now[0])
    one(gate, THROTTLED, retry_after=2.5)
    assert gate.limit == 2
    stop = threading.Event()
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(gate.acquire(stop)))
    waiter.start()
    time.sleep(0.3)
    assert not got  # paused until t = 102.5
    now[0] = 102.6
    waiter.join(2)
    assert got == [1]
    fixed = ConcurrencyLimit(3, adaptive=False)
    assert [one(fixed, o) for o in (THROTTLED, SUCCESS, THROTTLED)] == [3, 3, 3]
    assert fixed.stats.n_throttled == 2 and fixed.stats.n_decreases == 0


def test_the_gate_bounds_requests_in_flight():
    gate = ConcurrencyLimit(3, initial=2, slow_start=False)
    assert gate.acquire() == 0 and gate.acquire() == 0
    stop = threading.Event()
    stop.set()
    assert gate.acquire(stop) is None  # full, and stopped: gives up instead of waiting


def make_requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(f"k{i}", [{"role": "user", "content": f"prompt {i}"}]) for i in range(n)]


def test_adaptive_run_equals_fixed_run_against_a_rate_limited_server(tmp_path):
    requests = make_requests(120)
    # 50 requests/s: well below what 16 requests in flight ask even when the machine is busy, so the fixed run is
    # throttled for certain (at 150/s a loaded machine sometimes sent too slowly to draw a single 429); the fixed
    # run gets retries enough to lose no prompt, as the tables are compared whole (30 were once not enough for one
    # prompt on a busy machine: 16 in flight draw several 429s per reply).
    with MockOpenAIServer(latency_s=0.02, rate_limit_rps=50, burst=3) as server:
        config = JudgeConfig(provider="openai", model="mock-judge", base_url=server.base_url)
        adaptive = run_judge(config, requests, store=tmp_path / "a", concurrency=32, progress=False)
        throttled_adaptive = server.throttled
        server.reset_counters()
        fixed = run_judge(config, requests, store=tmp_path / "f", concurrency=16, adaptive=False, progress=False,
                          retry=RetryPolicy(max_attempts=200, base_delay_s=0.05))
        throttled_fixed = server.throttled
    assert adaptive.report.n_failed == 0 and fixed.report.n_failed == 0
    assert adaptive.report.concurrency["mode"] == "adaptive" and fixed.report.concurrency == {
        "mode": "fixed", "cap": 16, "final": 16, "peak": 16, "decreases": 0}
    assert adaptive.report.n_throttled == throttled_adaptive and fixed.report.n_throttled == throttled_fixed > 0
    assert adaptive.report.concurrency["decreases"] >= 1 and "throttled (429)" in str(fixed.report)
    columns = ["key", "run", "score", "reply", "store_key"]
    assert adaptive.table[columns].equals(fixed.table[columns])
    assert list(adaptive.table["score"]) == [float(mock_score(f"prompt {i}")) for i in range(120)]


class CountingProvider:
    name = "counting"

    def __init__(self, throttle_first: int = 0):
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.calls = 0
        self.throttle_first = throttle_first

    def complete(self, messages, **kwargs):
        with self.lock:
            self.in_flight += 1
            self.calls += 1
            call = self.calls
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.01)
            if call <= self.throttle_first:
                raise TransientProviderError("HTTP 429", status=429)
            return Completion(text="Score: 3")
        finally:
            with self.lock:
                self.in_flight -= 1


def test_fixed_mode_keeps_the_limit_and_the_environment_chooses(tmp_path, monkeypatch):
    provider = CountingProvider()
    config = JudgeConfig(provider="openai", model="m")
    run = run_judge(config, make_requests(60), store=tmp_path / "1", provider=provider, concurrency=5,
                    adaptive=False, progress=False)
    assert provider.peak == 5 and run.report.concurrency["mode"] == "fixed"
    monkeypatch.setenv("RECJUDGE_LLM_ADAPTIVE", "0")
    monkeypatch.setenv("RECJUDGE_LLM_CONCURRENCY", "3")
    run = run_judge(config, make_requests(30), store=tmp_path / "2", provider=CountingProvider(), progress=False)
    assert run.report.concurrency == {"mode": "fixed", "cap": 3, "final": 3, "peak": 3, "decreases": 0}
    monkeypatch.setenv("RECJUDGE_LLM_ADAPTIVE", "1")
    provider = CountingProvider(throttle_first=1)
    run = run_judge(config, make_requests(30), store=tmp_path / "3", provider=provider, progress=False)
    assert run.report.concurrency["mode"] == "adaptive" and run.report.concurrency["cap"] == 3
    assert provider.peak <= 3 and run.report.n_throttled == 1 and run.report.n_failed == 0
    monkeypatch.setenv("RECJUDGE_LLM_ADAPTIVE", "sometimes")
    with pytest.raises(ValueError, match="RECJUDGE_LLM_ADAPTIVE"):
        run_judge(config, make_requests(2), store=tmp_path / "4", provider=CountingProvider(), progress=False)


def test_token_bucket_refills_at_its_rate():
    now = [0.0]
    bucket = TokenBucket(10, 2, clock=lambda: now[0])
    assert bucket.take() == 0.0 and bucket.take() == 0.0
    assert bucket.take() == pytest.approx(0.1)
    now[0] = 0.1
    assert bucket.take() == 0.0 and bucket.take() == pytest.approx(0.1)


def test_a_gentler_decrease_still_cuts_by_at_least_one():
    gate = ConcurrencyLimit(20, initial=10, slow_start=False, decrease=0.7)
    assert [one(gate, THROTTLED) for _ in range(6)] == [7, 4, 2, 1, 1, 1]
    with pytest.raises(ValueError, match="decrease factor"):
        ConcurrencyLimit(4, decrease=1.0)


def test_the_throttle_that_ends_slow_start_halves_and_later_ones_step_back_gently():
    gate = ConcurrencyLimit(64, initial=4, decrease=0.85, first_decrease=0.5)
    for _ in range(4 + 8):
        one(gate, SUCCESS)
    assert gate.limit == 16
    assert one(gate, THROTTLED) == 8  # back to the last limit that drew no throttle
    assert [one(gate, THROTTLED) for _ in range(4)] == [6, 5, 4, 3]  # x0.85 rounded down, at least one less
    # Against a server whose pace is between 5 and 6 in flight, the limit then steps between them: a window of
    # successes takes it to 6, the throttle there back to 5 (x0.7 would go back to 4).
    script = [*[(SUCCESS, 3)] * 2, (SUCCESS, 4), *[(SUCCESS, 4)] * 3, (SUCCESS, 5), *[(SUCCESS, 5)] * 4,
              (SUCCESS, 6), (THROTTLED, 5), *[(SUCCESS, 5)] * 4, (SUCCESS, 6), (THROTTLED, 5)]
    for step, (outcome, limit) in enumerate(script):
        assert one(gate, outcome) == limit, f"step {step}: {outcome}"
    assert gate.stats.n_decreases == 7 and gate.stats.peak == 16
    previous = ConcurrencyLimit(64, initial=6, slow_start=False, decrease=0.7)  # one factor for every throttle
    assert [one(previous, THROTTLED) for _ in range(3)] == [4, 2, 1]
    with pytest.raises(ValueError, match="first decrease factor"):
        ConcurrencyLimit(4, first_decrease=0)


def test_with_pacing_slow_start_goes_on_after_an_unpaced_throttle_and_ends_at_a_paced_one():
    now = [0.0]
    gate = ConcurrencyLimit(64, initial=4, decrease=0.85, first_decrease=0.5, pacing=True, clock=lambda: now[0])

    def window(seconds: float = 0.5) -> None:
        for _ in range(gate.limit):
            now[0] = max(now[0], gate._next_start)  # the next paced start is due
            gate.release(gate.acquire(), SUCCESS, seconds=seconds)

    window()
    assert gate.limit == 8 and gate.pacing_interval() == 0.0
    assert one(gate, THROTTLED) == 4 and gate.slow_start  # a clump of unpaced starts: halved, still doubling
    assert gate.pacing_interval() == pytest.approx(0.5 / 4)
    for expected in (8, 16, 32):
        window()
        assert gate.limit == expected
    now[0] = gate._next_start
    assert one(gate, THROTTLED) == 16 and not gate.slow_start  # the first paced throttle ends slow start
    unpaced = ConcurrencyLimit(64, initial=8)
    assert one(unpaced, THROTTLED) == 4 and not unpaced.slow_start  # without pacing the first throttle ends it


def test_binary_increase_grows_halfway_back_to_the_limit_that_drew_the_cut():
    gate = ConcurrencyLimit(64, initial=32, slow_start=False, decrease=0.5, binary_increase=True)
    assert one(gate, THROTTLED) == 16
    grown = []
    for _ in range(7):
        for _ in range(gate.limit):
            one(gate, SUCCESS)
        grown.append(gate.limit)
    assert grown == [24, 28, 30, 31, 32, 33, 34]  # halfway to 32, at least one more, then one per window
    assert one(gate, THROTTLED) == 17  # the next cut: 34 x 0.5
    for _ in range(17):
        one(gate, SUCCESS)
    assert gate.limit == 25  # halfway back to 34
    additive = ConcurrencyLimit(64, initial=32, slow_start=False, decrease=0.5)
    one(additive, THROTTLED)
    for _ in range(16):
        one(additive, SUCCESS)
    assert additive.limit == 17


def test_the_runner_uses_its_adaptive_factors(tmp_path, monkeypatch):
    from recjudge.llm import asking

    made = []

    class Recording(ConcurrencyLimit):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(asking, "ConcurrencyLimit", Recording)
    provider = CountingProvider()
    run_judge(JudgeConfig(provider="openai", model="m"), make_requests(3), store=tmp_path, provider=provider,
              progress=False)
    assert [(g.first_decrease, g.decrease, g.adaptive, g.pacing, g.binary_increase) for g in made] == [
        (asking.ADAPTIVE_FIRST_DECREASE, asking.ADAPTIVE_DECREASE, True, asking.ADAPTIVE_PACING,
         asking.ADAPTIVE_BINARY_INCREASE)]
    assert made[0].srtt is not None  # the runner reports how long each successful call took
    assert asking.ADAPTIVE_FIRST_DECREASE == 0.5 and 0.7 < asking.ADAPTIVE_DECREASE < 1


def test_after_the_first_throttle_starts_are_spaced_one_round_trip_over_the_limit():
    now = [10.0]
    gate = ConcurrencyLimit(8, initial=4, slow_start=False, pacing=True, clock=lambda: now[0])

    def succeed(seconds: float) -> None:
        gate.release(gate.acquire(), SUCCESS, seconds=seconds)

    succeed(0.2)
    succeed(0.6)
    assert gate.srtt == pytest.approx(0.25)  # 7/8 of the old estimate, 1/8 of the newest
    assert gate.pacing_interval() == 0.0  # no throttle yet: a server with room is not slowed down
    epochs = [gate.acquire() for _ in range(4)]  # a whole window starts at once, at the same instant
    assert epochs == [0] * 4 and gate.in_flight == 4
    gate.release(epochs[0], THROTTLED)  # 429 without Retry-After: 4 -> 2
    gate.release(epochs[1], NEUTRAL)
    gate.release(epochs[2], NEUTRAL)
    gate.release(epochs[3], NEUTRAL)  # throttles and errors do not change the round-trip estimate
    assert gate.limit == 2 and gate.srtt == pytest.approx(0.25)
    assert gate.pacing_interval() == pytest.approx(0.125)
    assert gate.acquire() == 1 and gate._next_start == pytest.approx(10.125)
    now[0] = 10.125  # the next start may come one interval later
    assert gate.acquire() == 1 and gate._next_start == pytest.approx(10.25)
    now[0] = 20.0  # after an idle spell the next start is one interval after now, not a catch-up burst
    gate.release(1, SUCCESS, seconds=0.25)
    assert gate.acquire() == 1 and gate._next_start == pytest.approx(20.125)
    fixed = ConcurrencyLimit(4, adaptive=False, pacing=True, clock=lambda: now[0])
    fixed.release(fixed.acquire(), SUCCESS, seconds=0.2)
    fixed.release(fixed.acquire(), THROTTLED)
    assert fixed.pacing_interval() == 0.0  # a fixed limit is never paced


class ThrottlingProvider:
    """Throttles every prompt ``times`` times (429 with a zero Retry-After), then answers."""

    name = "throttling"

    def __init__(self, times: int):
        self.times, self.calls, self.lock = times, {}, threading.Lock()

    def complete(self, messages, **kwargs):
        prompt = messages[-1]["content"]
        with self.lock:
            self.calls[prompt] = count = self.calls.get(prompt, 0) + 1
        if count <= self.times:
            raise TransientProviderError("HTTP 429", status=429, retry_after=0.0)
        return Completion(text="Score: 3")


def test_throttled_retries_have_their_own_budget_with_the_adaptive_limit(tmp_path):
    from recjudge.llm import RetryPolicy

    retry = RetryPolicy(max_attempts=6, max_throttled_attempts=12, base_delay_s=0.001, max_delay_s=0.001)
    config = JudgeConfig(provider="openai", model="m")
    provider = ThrottlingProvider(times=10)  # ten 429s in a row: more than max_attempts, fewer than the budget
    adaptive = run_judge(config, make_requests(2), store=tmp_path / "a", provider=provider, retry=retry,
                         progress=False)
    assert adaptive.report.n_failed == 0 and provider.calls == {"prompt 0": 11, "prompt 1": 11}
    assert adaptive.report.n_throttled == 20
    provider = ThrottlingProvider(times=10)
    fixed = run_judge(config, make_requests(2), store=tmp_path / "f", provider=provider, retry=retry,
                      adaptive=False, concurrency=2, progress=False)
    assert fixed.report.n_failed == 2 and provider.calls == {"prompt 0": 6, "prompt 1": 6}
    provider = ThrottlingProvider(times=30)  # the throttle budget is bounded too
    capped = run_judge(config, make_requests(1), store=tmp_path / "c", provider=provider, retry=retry,
                       progress=False)
    assert capped.report.n_failed == 1 and provider.calls == {"prompt 0": 12}
    assert "gave up after 12 attempts" in capped.table["error"][0]
