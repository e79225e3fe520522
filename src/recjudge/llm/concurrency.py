"""How many requests the runner keeps in flight: adaptive (AIMD, the default) or a fixed limit.

``ConcurrencyLimit(cap)`` is a gate the runner's worker threads pass before every provider call (``acquire``) and
after it (``release`` with what happened):

- **Adaptive** (``adaptive=True``, the default): additive increase, multiplicative decrease, as TCP does.  The limit
  starts at ``min(cap, initial)``; after every *window* of successes (as many successes as the limit) it grows by
  one, never above ``cap``.  A throttled reply (HTTP 429, or any reply carrying Retry-After) multiplies it by
  ``decrease`` (rounded down, at least one less, never below 1; the first throttle by ``first_decrease``, see
  below), and holds back every new start until the Retry-After time has passed.  Only the first throttled reply of a
  window counts: replies to requests that were already in flight when the limit was cut say nothing new about the
  reduced limit (each request remembers the *epoch* it started in; a throttle from an older epoch is counted but
  does not cut again).  Until the first throttle, the limit doubles per window instead of growing by one
  (``slow_start``), so a server with room reaches the cap in a few round trips.  The throttle that ends slow
  start comes after a doubling, so it may cut deeper (``first_decrease``, e.g. 0.5: back to the last limit that drew
  no throttle) than the later ones, which find the limit just above the server's pace and only need to step back
  a little (``decrease``, e.g. 0.85: a limit of 6 becomes 5, where 0.7 would give 4).  Other outcomes (errors, refusals,
  timeouts) are neutral, and so are store hits, which never pass the gate.
- **Pacing** (``pacing=True``, adaptive only): once the server has throttled, request starts are spaced one smoothed
  round trip of a successful request (``srtt``, weighted as TCP does) divided by the limit apart, as paced TCP
  does.  Unpaced, a window of replies that return together starts a window of requests at once; a rate limit with a
  small bucket (a tenth of a second's requests) refuses such a clump although the rate is within the limit, so the
  limit was cut far below the server's pace when replies were slow.  Before the first throttle nothing is paced: a
  server that never throttles (a self-hosted one) is not slowed down.  For the same reason, with pacing the first
  throttle (of requests that left in a clump) cuts by ``first_decrease`` but does not end slow start: doubling goes
  on, paced, until a paced request is throttled.
- **Binary increase** (``binary_increase=True``, adaptive only): after a cut, each window of successes takes the
  limit halfway back to the limit that drew the cut (at least one more), as BIC TCP does, and by one per window
  once there.  Growing by one per window from a halved limit took many round trips when replies are slow and many
  requests fit in flight (50 requests/s at 500 ms per reply: 25).
- **Fixed** (``adaptive=False``): at most ``cap`` requests in flight, always.

Neither changes what is asked or what is stored: replies depend only on the prompts, so an adaptive run and a
fixed run of the same job give identical tables.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

#: Outcomes ``release`` understands.
SUCCESS, THROTTLED, NEUTRAL = "success", "throttled", "neutral"


@dataclass
class LimitStats:
    """What the gate did during a job: final and peak limit, throttled replies, cuts of the limit."""

    adaptive: bool
    cap: int
    limit: int
    peak: int
    n_throttled: int = 0
    n_decreases: int = 0
    #: (event, limit after it) for every change of the limit: "increase", "decrease"
    history: list[tuple[str, int]] = field(default_factory=list)


class ConcurrencyLimit:
    """Gate for requests in flight; see the module docstring.  Thread-safe."""

    #: Longest wait of the thread waiting out a pause or a pacing interval (its clock is read again after it).
    POLL_S = 0.1
    #: Longest wait of the other threads between wake-ups (each is woken when it may start).
    IDLE_POLL_S = 1.0

    def __init__(self, cap: int, *, adaptive: bool = True, initial: int = 4, slow_start: bool = True,
                 max_pause_s: float = 300.0, decrease: float = 0.5, first_decrease: float | None = None,
                 pacing: bool = False, binary_increase: bool = False, clock=time.monotonic):
        if cap < 1:
            raise ValueError(f"concurrency cap must be >= 1, got {cap}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease factor must be between 0 and 1 (exclusive), got {decrease}")
        if first_decrease is not None and not 0 < first_decrease < 1:
            raise ValueError(f"first decrease factor must be between 0 and 1 (exclusive), got {first_decrease}")
        self.decrease = float(decrease)
        self.first_decrease = self.decrease if first_decrease is None else float(first_decrease)
        self.cap = int(cap)
        self.adaptive = bool(adaptive)
        self.limit = max(1, min(self.cap, int(initial))) if self.adaptive else self.cap
        self.slow_start = bool(slow_start) and self.adaptive
        self.max_pause_s = max_pause_s
        self.in_flight = 0
        self._clock = clock
        self._cond = threading.Condition()
        self._window_successes = 0
        self._epoch = 0
        self._paused_until = 0.0
        self.pacing = bool(pacing) and self.adaptive
        self.binary_increase = bool(binary_increase) and self.adaptive
        self._ceiling = 0  # the limit that drew the last cut
        self.srtt: float | None = None  # smoothed seconds per successful request
        self._next_start = 0.0
        self._pacer: int | None = None  # the thread waiting out a pause or pacing interval (``acquire``)
        self.stats = LimitStats(adaptive=self.adaptive, cap=self.cap, limit=self.limit, peak=self.limit)

    def acquire(self, stop: threading.Event | None = None) -> int | None:
        """Wait for a slot; returns the epoch to hand back to ``release``, or None when ``stop`` was set.

        Of the threads waiting while a slot is free but a start must wait (a Retry-After pause, pacing), one, the
        *pacer*, waits for that time; the others wait to be woken (by ``release``, by the pacer once it has
        started, or by ``wake``), so that dozens of workers do not all wake at every pacing interval."""
        me = threading.get_ident()
        with self._cond:
            try:
                while True:
                    if stop is not None and stop.is_set():
                        return None
                    now = self._clock()
                    not_before = max(self._paused_until, self._next_start)
                    if self.in_flight < self.limit and now >= not_before:
                        self.in_flight += 1
                        interval = self.pacing_interval()
                        if interval:
                            self._next_start = max(now, self._next_start) + interval
                        if self._pacer == me:
                            self._pacer = None
                        if self.in_flight < self.limit:
                            self._cond.notify()  # a slot is still free: the next waiter takes over
                        return self._epoch
                    if self.in_flight < self.limit and self._pacer in (None, me):
                        self._pacer = me
                        self._cond.wait(min(self.POLL_S, not_before - now))
                    else:
                        self._cond.wait(self.IDLE_POLL_S)  # woken by release, the pacer or wake
            finally:
                if self._pacer == me:  # leaving without a slot (stopped): another waiter becomes the pacer
                    self._pacer = None
                    self._cond.notify()

    def wake(self) -> None:
        """Wake every waiting thread (after its ``stop`` event was set: each returns None at once)."""
        with self._cond:
            self._cond.notify_all()

    def pacing_interval(self) -> float:
        """Seconds between request starts: one round trip spread over the limit, once pacing is on (else 0)."""
        if not self.pacing or self.stats.n_decreases == 0 or self.srtt is None:
            return 0.0
        return self.srtt / self.limit

    def release(self, epoch: int, outcome: str = NEUTRAL, retry_after: float | None = None,
                seconds: float | None = None) -> None:
        """A request started in ``epoch`` ended with ``outcome`` (SUCCESS, THROTTLED or NEUTRAL) after ``seconds``."""
        with self._cond:
            self.in_flight -= 1
            if outcome == SUCCESS and seconds is not None and seconds >= 0:
                # Exponentially weighted, as TCP smooths its round-trip time (weight 1/8 for the newest).
                self.srtt = seconds if self.srtt is None else 0.875 * self.srtt + 0.125 * seconds
            if outcome == THROTTLED:
                self.stats.n_throttled += 1
            if self.adaptive:
                if outcome == SUCCESS:
                    self._window_successes += 1
                    if self._window_successes >= self.limit:
                        self._window_successes = 0
                        if self.slow_start:
                            grown = self.limit * 2
                        elif self.binary_increase and self.limit < self._ceiling:
                            grown = max(self.limit + 1, (self.limit + self._ceiling) // 2)
                        else:
                            grown = self.limit + 1
                        self._set(min(self.cap, grown), "increase")
                elif outcome == THROTTLED:
                    if epoch == self._epoch:
                        factor = self.first_decrease if self.slow_start else self.decrease
                        # With pacing, the unpaced throttle that comes first may only say that a window's
                        # requests left at once: slow start goes on, paced, and ends at the first paced throttle.
                        if not self.pacing or self.pacing_interval() > 0:
                            self.slow_start = False
                        self._ceiling = self.limit
                        self._epoch += 1
                        self._window_successes = 0
                        self.stats.n_decreases += 1
                        self._set(max(1, min(self.limit - 1, int(self.limit * factor))), "decrease")
                    if retry_after is not None and retry_after > 0:
                        until = self._clock() + min(float(retry_after), self.max_pause_s)
                        self._paused_until = max(self._paused_until, until)
            # Wake as many waiters as there are free slots, not all of them: with dozens of workers waiting at a
            # limit of a few, waking every one on every reply cost more CPU than the requests themselves.
            free = self.limit - self.in_flight
            if free > 0:
                self._cond.notify(free)

    def _set(self, limit: int, event: str) -> None:
        if limit != self.limit:
            self.limit = limit
            self.stats.history.append((event, limit))
        self.stats.limit = self.limit
        self.stats.peak = max(self.stats.peak, self.limit)
