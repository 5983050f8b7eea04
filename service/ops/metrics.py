"""Prometheus text exposition of a few counters and one latency histogram, no dependency."""

from __future__ import annotations

from collections import defaultdict

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.latency_counts: dict[str, list[int]] = {}
        self.latency_sums: dict[str, float] = defaultdict(float)
        self.counters: dict[str, int] = defaultdict(int)
        self.gauges: dict[str, int] = defaultdict(int)
        """Values that go up and down (open event streams), rendered as they are now."""
        self.labelled: dict[tuple[str, str, str], int] = defaultdict(int)
        """Counters with one label: (name, label, value)."""

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests[(method, route, status)] += 1
        counts = self.latency_counts.setdefault(route, [0] * (len(_BUCKETS) + 1))
        for i, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                counts[i] += 1
                break
        else:
            counts[-1] += 1
        self.latency_sums[route] += seconds

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] += amount

    def count_by(self, name: str, label: str, value: str, amount: int = 1) -> None:
        """A counter split by one label (`turns_played_for` by `reason`)."""
        self.labelled[(name, label, value)] += amount

    def gauge(self, name: str, change: int) -> None:
        self.gauges[name] += change

    def render(self) -> str:
        out = [
            "# HELP fairway_http_requests_total HTTP requests by method, route and status.",
            "# TYPE fairway_http_requests_total counter",
        ]
        for (method, route, status), n in sorted(self.requests.items()):
            out.append(
                f'fairway_http_requests_total{{method="{method}",route="{route}",'
                f'status="{status}"}} {n}'
            )
        out += [
            "# HELP fairway_http_request_seconds HTTP request latency by route.",
            "# TYPE fairway_http_request_seconds histogram",
        ]
        for route, counts in sorted(self.latency_counts.items()):
            cumulative = 0
            for bound, n in zip((*_BUCKETS, float("inf")), counts, strict=True):
                cumulative += n
                le = "+Inf" if bound == float("inf") else repr(bound)
                out.append(
                    f'fairway_http_request_seconds_bucket{{route="{route}",le="{le}"}} {cumulative}'
                )
            out.append(
                f'fairway_http_request_seconds_sum{{route="{route}"}} '
                f"{self.latency_sums[route]:.6f}"
            )
            out.append(f'fairway_http_request_seconds_count{{route="{route}"}} {cumulative}')
        for name, n in sorted(self.counters.items()):
            out += [f"# TYPE fairway_{name}_total counter", f"fairway_{name}_total {n}"]
        typed: set[str] = set()
        for (name, label, value), n in sorted(self.labelled.items()):
            if name not in typed:
                typed.add(name)
                out.append(f"# TYPE fairway_{name}_total counter")
            out.append(f'fairway_{name}_total{{{label}="{value}"}} {n}')
        for name, n in sorted(self.gauges.items()):
            out += [f"# TYPE fairway_{name} gauge", f"fairway_{name} {n}"]
        return "\n".join(out) + "\n"
