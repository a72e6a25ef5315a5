"""`GET /metrics` in the Prometheus text format.

Counts of requests by status, the pending gauge and deliveries by result are read from the
store at scrape time, so they are right across restarts and replicas. The time-to-decision
histogram counts the decisions made through this server (its API, inbox and channels), so the
replicas' histograms add up to every decision once.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from .._util import from_iso, utcnow
from ..requests import Request, RequestStatus
from ..store import Store

EXECUTION_STATES_COUNTED = ("running", "in_doubt", "abandoned")
DECISION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 72 * 3600)


class StoreCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        counts = self.store.status_counts()
        by_status = GaugeMetricFamily(
            "signoff_requests", "Requests in the store by status.", labels=["status"]
        )
        for status in RequestStatus:
            by_status.add_metric([status.value], counts.get(status.value, 0))
        yield by_status
        yield GaugeMetricFamily(
            "signoff_pending_requests",
            "Requests waiting for a decision (pending or still drafting).",
            value=counts.get("pending", 0) + counts.get("drafting", 0),
        )
        deliveries = CounterMetricFamily(
            "signoff_deliveries",
            "Requests shown or sent through a channel, by result.",
            labels=["channel", "result"],
        )
        for (channel, result), count in sorted(self.store.delivery_counts().items()):
            deliveries.add_metric([channel, result], count)
        yield deliveries
        executions = GaugeMetricFamily(
            "signoff_executions",
            "Executions running, in doubt (someone must check whether the tool ran) and abandoned "
            "(approved, never run), by status.",
            labels=["status"],
        )
        counted = self.store.execution_counts()
        for state in EXECUTION_STATES_COUNTED:
            executions.add_metric([state], counted.get(state, 0))
        yield executions
        outbox = GaugeMetricFamily(
            "signoff_outbox",
            "Outbox rows waiting to be sent (pending) and given up (dead), by channel.",
            labels=["channel", "state"],
        )
        for (channel, state), count in sorted(self.store.outbox_counts().items()):
            outbox.add_metric([channel, state], count)
        yield outbox
        unsealed, oldest = self.store.audit_unsealed()
        yield GaugeMetricFamily(
            "signoff_audit_unsealed",
            "Audit entries written but not yet sealed into the hash chain (PostgreSQL; 0 on SQLite).",
            value=unsealed,
        )
        yield GaugeMetricFamily(
            "signoff_audit_unsealed_age_seconds",
            "How long the oldest unsealed audit entry has waited (0 when none): more than a few "
            "seconds means no replica is sealing.",
            value=_age_seconds(oldest),
        )


def _age_seconds(moment: str | None) -> float:
    if moment is None:
        return 0.0
    return max((utcnow() - from_iso(moment)).total_seconds(), 0.0)


class Metrics:
    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(StoreCollector(store))
        self.time_to_decision = Histogram(
            "signoff_time_to_decision_seconds",
            "From a request's creation to its decision, for decisions made through this server.",
            labelnames=["status"],
            buckets=DECISION_BUCKETS,
            registry=self.registry,
        )

    def observe_decision(self, request: Request) -> None:
        if request.decided_at is not None:
            seconds = (request.decided_at - request.created_at).total_seconds()
            self.time_to_decision.labels(request.status.value).observe(max(0.0, seconds))

    def render(self) -> bytes:
        return generate_latest(self.registry)
