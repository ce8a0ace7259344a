"""What the plugins declare holds together: the registries find every module, each
workload has one headline figure and its own series, each collector draws only what
it stores, and the scenario's unions are built from them."""
from __future__ import annotations

import typing

from harness.collectors import REGISTRY
from harness.scenario import Scenario
from harness.sideloads import PLUGINS as SIDE_LOADS
from harness.workloads import DEFAULT_KIND, PLUGINS


def test_every_workload_declares_one_headline_and_its_own_series():
    assert {"sysbench", "ssb", "iibench", "tpcc", "replay", "dump"} <= set(PLUGINS)
    assert PLUGINS[DEFAULT_KIND].default and sum(p.default for p in PLUGINS.values()) == 1
    regress = [f.regress for p in PLUGINS.values() for f in p.figures if f.regress]
    assert len(regress) == len(set(regress)), "two workloads claim one regress metric"
    for kind, p in PLUGINS.items():
        if p.workload is None:  # a dataset only: another kind's workload runs on it
            assert p.dataset and not p.figures, kind
            continue
        assert [f.headline for f in p.figures].count(True) == 1, kind
        if p.dataset is not None:  # else it runs on any dataset (a replay)
            assert p.dataset.model_fields["kind"].annotation == typing.Literal[kind]
        assert p.workload.model_fields["kind"].annotation == typing.Literal[kind]
        if p.throughput and p.latency:
            assert p.throughput[0] == p.latency[0], f"{kind}: series of two sources"


def test_the_scenario_takes_every_workload_and_side_load_kind():
    text = str(Scenario.model_fields["workload"].annotation) + \
        str(Scenario.model_fields["side_loads"].annotation)
    for kind, p in PLUGINS.items():
        assert p.workload is None or p.workload.__name__ in text, kind
    for kind, model in SIDE_LOADS.items():
        assert model.__name__ in text, kind


def test_each_collector_draws_only_the_series_it_stores():
    for name, c in REGISTRY.items():
        for panel in c.panels:
            assert panel.lines and {ln.source for ln in panel.lines} == {name}, panel.title


def test_the_collector_registry_finds_one_per_module():
    import pkgutil

    import harness.collectors as pkg

    helpers = {"base", "procfile"}
    modules = {m.name for m in pkgutil.iter_modules(pkg.__path__)} - helpers
    assert len(REGISTRY) == len(modules) >= 12
    assert {c.__module__.rsplit(".", 1)[1] for c in REGISTRY.values()} == modules
    assert {"global_status", "innodb_metrics", "innodb_status", "buffer_pool_index",
            "vmstat", "meminfo", "mysqld_process"} <= set(REGISTRY)


def test_a_plugin_without_a_dataset_of_its_own_runs_on_any_and_prepares_none():
    import pytest

    from harness.workloads.base import WorkloadPlugin

    replay, tpcc = PLUGINS["replay"], PLUGINS["tpcc"]
    with pytest.raises(TypeError, match="x: without a dataset of its own"):
        type("NoDataset", (WorkloadPlugin,), {"kind": "x", "workload": replay.workload,
                                               "runner": type(replay).runner})
    with pytest.raises(TypeError, match="x: a dataset needs prepare, verify and tables"):
        type("HalfDataset", (WorkloadPlugin,), {
            "kind": "x", "dataset": tpcc.dataset, "workload": replay.workload,
            "runner": type(replay).runner, "prepare": type(tpcc).prepare})
    with pytest.raises(TypeError, match="x: a workload and its runner"):
        type("NoRunner", (WorkloadPlugin,), {"kind": "x", "workload": replay.workload,
                                              "any_dataset": True})
    with pytest.raises(TypeError, match="NoKind: no kind"):
        type("NoKind", (WorkloadPlugin,), {"workload": replay.workload,
                                            "runner": type(replay).runner})


def test_every_workload_plugin_names_its_methods_with_the_contract_s_signature():
    """Each kind's overrides take the parameters the contract names, so a caller that
    passes them by name (or a new kind copied from one) cannot drift."""
    import inspect

    from harness.workloads.base import WorkloadPlugin

    contract = {n: list(inspect.signature(f).parameters) for n, f in
                vars(WorkloadPlugin).items() if inspect.isfunction(f) and not n.startswith("_")}
    assert {"runner", "prepare", "verify", "tables", "items", "wakeup_probe"} <= set(contract)
    for kind, p in PLUGINS.items():
        for name, params in contract.items():
            mine = getattr(type(p), name)
            assert list(inspect.signature(mine).parameters) == params, (kind, name)


def test_harness_collectors_off_leaves_unnamed_collectors_off_and_refuses_a_typo(monkeypatch):
    import pytest

    from harness import collectors
    from harness.errors import InputError
    from harness.scenario import CollectorSpec

    def on(settings):
        return {cls.name for cls, _ in collectors.enabled(settings)}

    monkeypatch.delenv("HARNESS_COLLECTORS_OFF", raising=False)  # conftest's
    defaults = on({})
    assert "percona_toolkit" in defaults
    monkeypatch.setenv("HARNESS_COLLECTORS_OFF", " percona_toolkit ,vmstat")
    assert on({}) == defaults - {"percona_toolkit", "vmstat"}
    # a scenario that names one decides for it
    assert "vmstat" in on({"vmstat": CollectorSpec(enabled=True)})
    monkeypatch.setenv("HARNESS_COLLECTORS_OFF", "percona_tolkit")
    with pytest.raises(InputError, match="HARNESS_COLLECTORS_OFF: unknown collector"
                                         r"\(s\) percona_tolkit; known: .*percona_toolkit"):
        collectors.enabled({})
