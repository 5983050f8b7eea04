"""The service's Prometheus metrics, kept by prometheus-client, and added up across the worker
processes of one instance.

With several workers (`fairway serve --workers N`) each worker is a process of its own, and
one that answered /metrics from its own memory would show its share only: a counter scraped
twice could go down. `fairway serve` then gives the workers a fresh directory in
PROMETHEUS_MULTIPROC_DIR (made at start, removed when it stops), where prometheus-client keeps
every value in a memory-mapped file per process; the worker that answers a scrape reads all of
them and adds them up. Counters and histograms sum over every worker that ever ran (a counter
never goes down, even when a worker is replaced); gauges sum the live workers (`livesum`: a
worker that stops takes its share away; one killed with -9 leaves its last values until the
instance restarts). Without several workers the values live in the process, as usual.

The hot counts are tallied first: every request's count and latency, every commit's size and
every command counted (`TALLIED`) go into plain dicts of this process (a dict update, well
under a µs), and are added to prometheus-client's values at each `refresh`: at each scrape
this worker answers, at each read of a value, and, with several workers, every 5 s
(service/http/app.py). Writing each value through prometheus-client cost 8 µs a request in a
multiprocess deployment (a `labels` lookup, then a locked mmap write and a `getpid` per value;
about 4% of a worker's interpreter time in the closed loop, docs/BENCHMARKS.md, issue 19,
"Metrics tallied"). What that changes: a scrape shows another worker's requests, commits and
commands as of its last refresh (at most 5 s old; its own, as of now); counters still never
go down (a refresh only adds); a worker killed with -9 loses what it tallied since its last
refresh, at most 5 s of it (one that stops refreshes first). The other counters are written
at once.

What it shows: HELP and TYPE for every family; the counters the service keeps, each present
from zero; HTTP requests by method, route and status and their latency by route; how many appends
each commit of the event store carried (`fairway_append_batch_size`); how long the bots took
to choose their moves (`fairway_bot_thinking_seconds`, by level); the gauges
(event streams open, the cache's weight, the referee's tables); the process's CPU, memory and
descriptors (`process_*`, one set per worker labelled by `pid` when there are several) and
`python_info`; and `fairway_instance_info{instance}`, which names the instance
(FAIRWAY_INSTANCE, else the host name and the pid of `fairway serve`). The projections' gauges
are read from the projection store at each scrape (service/read/projections.py).
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.metrics_core import Metric

from domain.variants import BOT_KINDS

disable_created_metrics()  # no `_created` series beside each counter: nobody reads them here

MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)

COUNTERS = {
    "commands": "Commands that appended events.",
    "append_conflicts": "Appends that lost the race for a stream's version (retried).",
    "idempotent_replays": "Requests answered from an earlier one with the same Idempotency-Key.",
    "chain_broken": "Game histories whose hash chain did not verify when loaded.",
    "sse_events_delivered": "Events sent on live event streams.",
    "rate_limit_fallbacks": "Requests limited by this process's own bucket because the shared "
    "one in Redis did not answer.",
}
TALLIED = frozenset({"commands"})
"""Counters counted on every action: tallied like the requests (above), not written at once."""
LABELLED = {
    "turns_played_for": (
        "reason",
        ("timeout", "resigned", "withdrawn"),
        "Turns the referee played for a seat, by reason.",
    ),
    "events_unreadable": (
        "kind",
        ("newer", "garbage"),
        "Stored events this version cannot read, by kind.",
    ),
    "bot_moves": ("level", BOT_KINDS, "Bot moves this process appended, by level."),
}
GAUGES = {
    "sse_streams_open": "Live event streams open (SSE subscribers).",
    "cache_events": "Weight of the games kept in memory, in events (FAIRWAY_CACHE_EVENTS).",
    "cache_games": "Games kept in memory.",
    "referee_tables": "Live games the referee watches (a turn clock or a resigned seat).",
    "background_leader": "1 while this process runs the feed's consumers (FAIRWAY_BACKGROUND).",
}


def instance_name() -> str:
    """FAIRWAY_INSTANCE, else this host and this process (`fairway serve` sets the variable
    for its workers, so that they all give the same name)."""
    return os.environ.get("FAIRWAY_INSTANCE", "").strip() or (
        f"{socket.gethostname()}:{os.getpid()}"
    )


class Metrics:
    """One process's metrics. The method names are the service's vocabulary: `count` and
    `count_by` for counters, `gauge` for a value that goes up and down, `sample` for a gauge
    read from its source at each scrape, `observe_request` for the middleware."""

    def __init__(self, instance: str | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.multiprocess = MULTIPROCESS in os.environ
        self._counters: dict[str, Counter] = {}
        self._gauges: dict[str, Gauge] = {}
        self._samplers: dict[str, Callable[[], float]] = {}
        self._tally = _Tally()
        self._requests = Counter(
            "fairway_http_requests",
            "HTTP requests by method, route and status.",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self._latency = Histogram(
            "fairway_http_request_seconds",
            "HTTP request latency by route.",
            ("route",),
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._append_batches = Histogram(
            "fairway_append_batch_size",
            "Appends committed together in one transaction (the event store's group commit).",
            buckets=_BATCH_SIZES,
            registry=self.registry,
        )
        self._thinking = Histogram(
            "fairway_bot_thinking_seconds",
            "How long a bot took to choose each move it appended, by level (wall time).",
            ("level",),
            buckets=_BUCKETS,
            registry=self.registry,
        )
        for name, text in COUNTERS.items():
            self._counter(name, text)
        for name, (label, values, text) in LABELLED.items():
            counter = self._counter(name, text, label)
            for value in values:
                counter.labels(value)
        for name, text in GAUGES.items():
            self._gauge(name, text)
        info = Gauge(
            "fairway_instance_info",
            "The instance these metrics come from (FAIRWAY_INSTANCE, or host:pid).",
            ("instance",),
            registry=self.registry,
            multiprocess_mode="max",
        )
        info.labels(instance or instance_name()).set(1)
        if not self.multiprocess:
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            self.registry.register(GC_COLLECTOR)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """A request answered: tallied, added to the values at the next `refresh`."""
        tally = self._tally
        key = (method, route, status)
        tally.requests[key] = tally.requests.get(key, 0) + 1
        latency = tally.latency.get(route)
        if latency is None:
            latency = tally.latency[route] = [0.0] * (len(_BUCKETS) + 2)
        latency[0] += seconds
        latency[1 + bisect.bisect_left(_BUCKETS, seconds)] += 1

    def observe_append_batch(self, size: int) -> None:
        """The event store committed `size` appends in one transaction (a listener of
        `EventStore.append_batches`); tallied like a request."""
        batches = self._tally.batches
        batches[0] += size
        batches[1 + bisect.bisect_left(_BATCH_SIZES, size)] += 1

    def observe_thinking(self, level: str, seconds: float) -> None:
        """A bot of `level` took `seconds` to choose a move it appended (one per bot turn:
        rare beside requests, so written at once)."""
        self._thinking.labels(level).observe(seconds)

    def count(self, name: str, amount: int = 1) -> None:
        """Written at once, but for the counters of `TALLIED` (counted on every action):
        the others are rare, and some are read right after what they count (the rate
        limiter's fallbacks, across workers: tests/e2e/test_serve_workers.py)."""
        if name in TALLIED:
            counts = self._tally.counts
            counts[name] = counts.get(name, 0) + amount
        else:
            self._counter(name).inc(amount)

    def count_by(self, name: str, label: str, value: str, amount: int = 1) -> None:
        """A counter split by one label (`turns_played_for` by `reason`)."""
        self._counter(name, None, label).labels(value).inc(amount)

    def gauge(self, name: str, change: float) -> None:
        """Move a gauge by `change` (a stream opens: +1; it closes: -1)."""
        self._gauge(name).inc(change)

    def sample(self, name: str, read: Callable[[], float]) -> None:
        """A gauge whose value `read` gives, taken at each scrape and at each `refresh`."""
        self._gauge(name)
        self._samplers[name] = read

    def refresh(self) -> None:
        """Take the sampled gauges' values now: the answering worker does at each scrape;
        with several workers each also does every few seconds (service/http/app.py), so that
        its share is current whoever answers. The tallied counts are added to the values
        here too."""
        self._flush()
        for name, read in self._samplers.items():
            self._gauges[name].set(read())

    def _flush(self) -> None:
        """The counts tallied since the last flush, added to prometheus-client's values. A
        histogram's child keeps its sum and one value per bucket (the count of observations
        that fell in it, not cumulative): the tallies are added to those."""
        tally, self._tally = self._tally, _Tally()
        for (method, route, status), n in tally.requests.items():
            self._requests.labels(method, route, str(status)).inc(n)
        for route, latency in tally.latency.items():
            _add_to(self._latency.labels(route), latency)
        if tally.batches[0] or any(tally.batches[1:]):
            _add_to(self._append_batches, tally.batches)
        for name, n in tally.counts.items():
            self._counter(name).inc(n)

    def close(self) -> None:
        """This worker stops: its tallies are added, and its share of the live gauges goes."""
        self._flush()
        if self.multiprocess:
            multiprocess.mark_process_dead(os.getpid())

    def render(self) -> str:
        self.refresh()
        if not self.multiprocess:
            return generate_latest(self.registry).decode()
        everyone = CollectorRegistry()
        multiprocess.MultiProcessCollector(everyone)
        PlatformCollector(registry=everyone)
        everyone.register(_WorkerProcesses(Path(os.environ[MULTIPROCESS])))
        return generate_latest(everyone).decode()

    def value(self, name: str, **labels: str) -> float:
        """This process's count of `name` (a counter, else a gauge); 0 when never counted."""
        self._flush()
        for sample in (f"fairway_{name}_total", f"fairway_{name}"):
            found = self.registry.get_sample_value(sample, labels)
            if found is not None:
                return found
        return 0.0

    @property
    def counters(self) -> _Readings:
        """`counters["commands"]`: this process's count (tests read it)."""
        return _Readings(self.value)

    @property
    def labelled(self) -> _Readings:
        """`labelled[("turns_played_for", "reason", "timeout")]`: one label's count."""
        return _Readings(lambda key: self.value(key[0], **{key[1]: key[2]}))

    @property
    def gauges(self) -> _Readings:
        return _Readings(self.value)

    def _counter(self, name: str, text: str | None = None, label: str | None = None) -> Counter:
        counter = self._counters.get(name)
        if counter is None:
            counter = self._counters[name] = Counter(
                f"fairway_{name}",
                text or f"Counted by the service: {name.replace('_', ' ')}.",
                () if label is None else (label,),
                registry=self.registry,
            )
        return counter

    def _gauge(self, name: str, text: str | None = None) -> Gauge:
        gauge = self._gauges.get(name)
        if gauge is None:
            gauge = self._gauges[name] = Gauge(
                f"fairway_{name}",
                text or f"Kept by the service: {name.replace('_', ' ')}.",
                registry=self.registry,
                multiprocess_mode="livesum",
            )
        return gauge


class _Tally:
    """Counts of one process not yet added to prometheus-client's values (`Metrics._flush`).
    A latency or batch list: the sum, then one count per bucket, +Inf last."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = {}
        self.latency: dict[str, list[float]] = {}
        self.batches: list[float] = [0.0] * (len(_BATCH_SIZES) + 2)
        self.counts: dict[str, int] = {}


def _add_to(histogram: Histogram, tallied: list[float]) -> None:
    """Add a tally (sum, then per-bucket counts) to a histogram (or a labelled child of one)
    as `observe` would have, one observation at a time. prometheus-client offers no public
    way to add many observations at once; its `_sum` and `_buckets` values are what
    `observe` increments (prometheus-client 0.2x; tests/unit/service/test_metrics.py checks
    the rendered buckets, sum and count)."""
    histogram._sum.inc(tallied[0])
    for bucket, n in zip(histogram._buckets, tallied[1:], strict=True):
        if n:
            bucket.inc(n)


class _Readings:
    def __init__(self, read: Callable[[Any], float]) -> None:
        self._read = read

    def __getitem__(self, key: Any) -> float:
        return self._read(key)


_PID = re.compile(r"_(\d+)\.db$")


class _WorkerProcesses:
    """The `process_*` metrics of each live worker, labelled by its `pid`: with several
    workers there is no one process to describe, and these values do not add up."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def collect(self) -> Iterable[Metric]:
        pids = sorted(
            {int(m.group(1)) for p in self.directory.iterdir() if (m := _PID.search(p.name))}
        )
        merged: dict[str, Metric] = {}
        for pid in pids:
            if not Path(f"/proc/{pid}").exists():
                continue
            # `pid` is a callable that returns the process id: a constant one
            worker = ProcessCollector(pid=functools.partial(int, pid), registry=None)
            for family in worker.collect():
                into = merged.setdefault(
                    family.name, Metric(family.name, family.documentation, family.type)
                )
                for s in family.samples:
                    into.add_sample(s.name, {**s.labels, "pid": str(pid)}, s.value)
        return list(merged.values())
