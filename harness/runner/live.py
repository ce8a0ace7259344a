"""Live metrics: the latest value of every sampled series, served on /metrics while a
run is active (``harness run --metrics-port PORT``) and optionally pushed to a
Pushgateway. Names follow mysqld_exporter and node_exporter (the collectors already
sample under those names); other series get a ``harness_<source>_`` prefix. Every
series carries server, variant and workload labels, and the labels PMM's dashboards
select on: ``service_name`` (the server, as PMM names a MySQL service), ``node_name``
(its host) and ``instance`` (its address; scrape with ``honor_labels: true`` to keep
it, as PMM does)."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, push_to_gateway, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    UnknownMetricFamily,
)

from ..errors import UnavailableError

CONST = ("server", "variant", "workload", "service_name", "node_name", "instance")


def prometheus_name(source: str, metric: str) -> str:
    if metric.startswith(("mysql_", "node_", "harness_")):
        return metric
    return f"harness_{source}_{metric}"


class LiveMetrics:
    """Thread-safe latest values, exposed through a prometheus_client collector."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
        self.const: dict[str, str] = {k: "" for k in CONST}
        self.registry = CollectorRegistry()
        self.registry.register(self)
        self._server: Any = None
        self._push_stop = threading.Event()
        self._push_thread: threading.Thread | None = None

    def start_run(self, server: str, variant: str, workload: str, node: str = "",
                  address: str = "") -> None:
        """A new run: forget the last one's series, label the next ones."""
        with self._lock:
            self._values.clear()
            self.const = {"server": server, "variant": variant, "workload": workload,
                          "service_name": server, "node_name": node, "instance": address}

    def update(self, _t: float, source: str, metric: str, value: float,
               labels: dict[str, str] | None) -> None:
        name = prometheus_name(source, metric)
        key = tuple(sorted((labels or {}).items()))
        with self._lock:
            self._values.setdefault(name, {})[key] = value

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            snapshot = {n: dict(v) for n, v in self._values.items()}
            const = dict(self.const)
        for name, series in sorted(snapshot.items()):
            label_names = sorted({k for key in series for k, _ in key})
            names = [*CONST, *label_names]
            fam: Metric
            if name.endswith("_total"):
                fam = CounterMetricFamily(name, name, labels=names)
            elif name.startswith(("mysql_global_status_", "node_vmstat_")):
                fam = UnknownMetricFamily(name, name, labels=names)  # untyped, as the exporters
            else:
                fam = GaugeMetricFamily(name, name, labels=names)
            for key, value in series.items():
                d = dict(key)
                fam.add_metric([const[c] for c in CONST] + [d.get(k, "") for k in label_names],
                               value)
            yield fam

    def serve(self, port: int, addr: str = "127.0.0.1") -> None:
        try:
            self._server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        except OSError as e:
            raise UnavailableError(f"--metrics-port {port}: cannot listen on {addr}:{port}: "
                                   f"{e.strerror or e}") from None

    def push_every(self, gateway: str, job: str, interval_s: float = 10.0) -> None:
        def loop() -> None:
            while not self._push_stop.wait(interval_s):
                self.push(gateway, job)
        self._push_thread = threading.Thread(target=loop, daemon=True, name="pushgateway")
        self._push_thread.start()
        self._gateway, self._job = gateway, job

    def push(self, gateway: str, job: str) -> None:
        try:
            push_to_gateway(gateway, job=job, registry=self.registry)
        except OSError:
            pass  # a Pushgateway outage must not stop the benchmark

    def close(self) -> None:
        self._push_stop.set()
        if self._push_thread is not None:
            self._push_thread.join(5)
            self.push(self._gateway, self._job)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
