"""The metrics of one process, as /metrics renders them (prometheus-client's text format)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from service.ops.metrics import COUNTERS, GAUGES, Metrics


def families(metrics: Metrics) -> dict[str, dict[str, float]]:
    return {
        f.name: {
            ",".join(f"{k}={v}" for k, v in sorted(s.labels.items())): s.value for s in f.samples
        }
        for f in text_string_to_metric_families(metrics.render())
    }


def test_every_counter_and_gauge_is_shown_from_zero_with_help_and_type() -> None:
    metrics = Metrics("here")
    text = metrics.render()
    for name in COUNTERS:
        assert f"# HELP fairway_{name}_total " in text
        assert f"# TYPE fairway_{name}_total counter" in text
        assert f"fairway_{name}_total 0.0\n" in text
    for name in GAUGES:
        assert f"# TYPE fairway_{name} gauge" in text
    assert 'fairway_turns_played_for_total{reason="withdrawn"} 0.0' in text
    assert 'fairway_bot_moves_total{level="strong"} 0.0' in text
    assert 'fairway_instance_info{instance="here"} 1.0' in text
    assert "process_resident_memory_bytes" in text
    assert "python_info{" in text


def test_the_service_vocabulary_counts_and_reads_back() -> None:
    metrics = Metrics()
    metrics.count("commands")
    metrics.count("commands", 2)
    metrics.count_by("turns_played_for", "reason", "timeout")
    metrics.gauge("sse_streams_open", 1)
    metrics.count("a_new_thing")  # a name the module does not list: made on first use
    weight = [7]
    metrics.sample("cache_events", lambda: weight[0])
    metrics.observe_request("GET", "/variants", 200, 0.003)
    assert metrics.counters["commands"] == 3
    assert metrics.labelled[("turns_played_for", "reason", "timeout")] == 1
    assert metrics.gauges["sse_streams_open"] == 1
    found = families(metrics)
    assert found["fairway_a_new_thing"] == {"": 1}
    assert found["fairway_cache_events"] == {"": 7}
    weight[0] = 9
    assert families(metrics)["fairway_cache_events"] == {"": 9}, "sampled at each scrape"
    latency = families(metrics)["fairway_http_request_seconds"]
    assert latency["le=0.005,route=/variants"] == 1
    assert latency["le=0.0025,route=/variants"] == 0
    requests = families(metrics)["fairway_http_requests"]
    assert requests["method=GET,route=/variants,status=200"] == 1
    metrics.observe_thinking("strong", 0.03)
    thinking = families(metrics)["fairway_bot_thinking_seconds"]
    assert thinking["le=0.05,level=strong"] == 1
    assert thinking["le=0.025,level=strong"] == 0
    count = metrics.registry.get_sample_value(
        "fairway_bot_thinking_seconds_count", {"level": "strong"}
    )
    assert count == 1


def test_two_metrics_objects_in_one_process_keep_apart() -> None:
    one, other = Metrics(), Metrics()
    one.count("commands")
    assert other.counters["commands"] == 0


def test_the_event_stores_commit_sizes_are_a_histogram() -> None:
    metrics = Metrics()
    metrics.observe_append_batch(1)
    metrics.observe_append_batch(5)
    sizes = families(metrics)["fairway_append_batch_size"]
    assert (sizes["le=1.0"], sizes["le=4.0"], sizes["le=8.0"], sizes["le=+Inf"]) == (1, 1, 2, 2)


def test_the_hot_counts_are_tallied_and_reach_the_values_at_a_refresh() -> None:
    metrics = Metrics()
    metrics.observe_request("POST", "/games/{game_id:str}/actions", 200, 0.002)
    metrics.observe_append_batch(3)
    metrics.count("commands")
    metrics.count("append_conflicts")  # rare: written at once
    requests = (
        "fairway_http_requests_total",
        {"method": "POST", "route": "/games/{game_id:str}/actions", "status": "200"},
    )
    # Not yet written through prometheus-client (a locked mmap write each, with workers).
    assert metrics.registry.get_sample_value(*requests) is None
    assert metrics.registry.get_sample_value("fairway_append_batch_size_count") == 0
    assert metrics.registry.get_sample_value("fairway_commands_total") == 0
    assert metrics.registry.get_sample_value("fairway_append_conflicts_total") == 1
    metrics.refresh()
    assert metrics.registry.get_sample_value(*requests) == 1
    assert metrics.registry.get_sample_value("fairway_append_batch_size_count") == 1
    assert metrics.registry.get_sample_value("fairway_commands_total") == 1
    metrics.refresh()
    assert metrics.registry.get_sample_value(*requests) == 1, "a tally is added once"


def test_tallied_latencies_fall_in_the_buckets_observe_would_choose() -> None:
    metrics = Metrics()
    for seconds in (0.005, 0.0051, 3.0, 0.0001):  # on a bound, just past it, past all, low
        metrics.observe_request("GET", "/health", 200, seconds)
    metrics.observe_request("GET", "/health", 503, 0.02)
    latency = families(metrics)["fairway_http_request_seconds"]
    route = "route=/health"
    assert latency[f"le=0.001,{route}"] == 1
    assert latency[f"le=0.005,{route}"] == 2
    assert latency[f"le=0.01,{route}"] == 3
    assert latency[f"le=0.025,{route}"] == 4
    assert latency[f"le=2.5,{route}"] == 4
    assert latency[f"le=+Inf,{route}"] == 5
    total = metrics.registry.get_sample_value(
        "fairway_http_request_seconds_sum", {"route": "/health"}
    )
    assert total is not None
    assert abs(total - 3.0302) < 1e-9
    requests = families(metrics)["fairway_http_requests"]
    assert requests["method=GET,route=/health,status=200"] == 4
    assert requests["method=GET,route=/health,status=503"] == 1
