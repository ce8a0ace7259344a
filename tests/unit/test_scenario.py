"""Scenario validation: every shipped scenario, and every kind of bad input."""
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.scenario import load_scenario, parse_scenario
from harness.server.mycnf import parse_size
from harness.workloads import PLUGINS

ROOT = Path(__file__).parent.parent.parent
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))  # scenarios/ab/ too

GOOD = """\
name: t
dataset: {tables: 2, table_size: 100}
workload: {kind: sysbench, test: oltp_read_only, duration_s: 5}
"""


def test_scenarios_folder_is_not_empty():
    assert len(SCENARIOS) >= 1


# Scenarios that read what an earlier step of their make target made (tools/own_workload.py).
MADE_BY_EARLIER_STEPS = {"own_workload_replay.yaml": ROOT / "results" / "own-workload"}


@pytest.mark.parametrize("path", SCENARIOS,
                         ids=[str(p.relative_to(ROOT / "scenarios")) for p in SCENARIOS])
def test_every_scenario_file_validates(path, tmp_path):
    if path.name in MADE_BY_EARLIER_STEPS:
        made = MADE_BY_EARLIER_STEPS[path.name]
        if not made.exists():  # a fresh checkout: only the files are missing, by name
            with pytest.raises(ScenarioError) as e:
                load_scenario(path)
            assert all("file not found" in p and "own-workload" in p
                       for p in e.value.problems), e.value.problems
            return
    sc = load_scenario(path)
    assert sc.model.name
    w = sc.model.workload
    assert w.kind in PLUGINS
    assert (getattr(w, "duration_s", None) or getattr(w, "warm_runs", 0)
            or getattr(w, "log", None)), "the workload runs for no time"


def _problems(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as e:
        parse_scenario(Path("bad.yaml"), text)
    assert str(e.value).startswith("bad.yaml:")
    return e.value.problems


def test_typo_names_field_and_line():
    (p,) = _problems(GOOD.replace("duration_s", "duraton_s"))
    assert p == "line 3: workload.duraton_s: Extra inputs are not permitted"


def test_every_problem_is_reported_at_once():
    text = GOOD + "repetitions: 0\nservers: [mysql-9.9]\nvariants: {a: {mysqld: {}, x: 1}}\n"
    probs = _problems(text)
    assert len(probs) == 3
    assert any(p.startswith("line 4: repetitions:") for p in probs)
    assert any("unknown server 'mysql-9.9'" in p for p in probs)
    assert any(p.startswith("line 6: variants.a.x:") for p in probs)


@pytest.mark.parametrize("text,needle", [
    ("", "file is empty"),
    ("- a\n- b\n", "top level must be a mapping"),
    ("name: [unclosed\n", "not valid YAML"),
    (GOOD.replace("kind: sysbench, ", "kind: hammerdb, "), "unknown kind 'hammerdb'"),
    (GOOD.replace("oltp_read_only", "oltp_read_onyl"), "workload.test"),
    (GOOD + "workload2: 1\n", "workload2: Extra inputs"),
    (GOOD.replace("tables: 2", "tables: -1"), "dataset.0.tables"),
    (GOOD.replace("{kind: sysbench,", "{database: other, kind: sysbench,"),
     "not prepared by any dataset"),
    (GOOD + "variants: {v: {my_cnf: nowhere.cnf}}\n", "variants.v.my_cnf: file not found"),
    (GOOD.replace("duration_s: 5", "duration_s: 5, options: {mysql-password: x}"),
     "set by the harness"),
    # each metric takes the fields its declaration names, and says whose a field is
    (GOOD + "expectations: [{name: e, metric: server_ratio, server: a, max: 1}]\n",
     "server_ratio needs 'baseline_server'"),
    (GOOD + "expectations: [{name: e, metric: tps_ratio, phase: d, threads: 4, max: 1}]\n",
     "'threads' goes with metric: server_cpu_ratio or server_ratio, not tps_ratio"),
    (GOOD + "expectations: [{name: e, metric: server_cpu_ratio, server: a, max: 1}]\n",
     "server_cpu_ratio needs 'baseline_server'"),
    (GOOD + "expectations: [{name: e, metric: server_ratio, server: a, baseline_server: b, "
     "phase: d, max: 1}]\n", "server_ratio is about servers, not phases"),
    (GOOD + "expectations: [{name: e, metric: flight_ratio, variant: a, max: 1}]\n",
     "flight_ratio needs 'baseline_variant'"),
    (GOOD + "expectations: [{name: e, metric: warm_cold_ratio, max: 1}]\n",
     "warm_cold_ratio needs a workload of kind ssb"),
    (GOOD + "expectations: [{name: e, metric: tpmc_ratio, max: 1}]\n",
     "expectations.0.metric"),
    # only a profiler records at some thread counts, and a count is a positive number
    (GOOD + "collectors: {vmstat: {threads: [1]}}\n",
     "vmstat: hz and threads are for a profiling collector (cpu_profile)"),
    (GOOD + "collectors: {cpu_profile: {threads: [0]}}\n", "collectors.cpu_profile.threads.0"),
    (GOOD + "collectors: {cpu_profile: {threads: []}}\n", "collectors.cpu_profile.threads"),
    # only a collector of performance_schema's waits chooses them, from two choices
    (GOOD + "collectors: {innodb_metrics: {instruments: build_default}}\n",
     "innodb_metrics: instruments is for a collector that reads performance_schema's waits"
     " (wait_events)"),
    (GOOD + "collectors: {wait_events: {instruments: some}}\n",
     "collectors.wait_events.instruments"),
])
def test_bad_input(text, needle):
    assert any(needle in p for p in _problems(text))


def test_huge_file_is_refused(tmp_path):
    f = tmp_path / "huge.yaml"
    f.write_text("name: t\n" + "# pad\n" * 300000)
    with pytest.raises(ScenarioError, match="1.7 MiB, more than the 1.0 MiB a scenario may be"):
        load_scenario(f)


def test_variant_from_my_cnf_file(tmp_path):
    (tmp_path / "new.cnf").write_text("[mysqld]\ninnodb_old_blocks_time = 0\n[client]\nx=1\n")
    f = tmp_path / "s.yaml"
    f.write_text(GOOD + "mysqld: {innodb_buffer_pool_size: 64M}\n"
                 "variants: {cand: {my_cnf: new.cnf, mysqld: {innodb_old_blocks_time: 5}}}\n")
    sc = load_scenario(f)
    # base, then the file, then inline options: inline wins
    assert sc.variant_options("cand") == {"innodb_buffer_pool_size": "64M",
                                          "innodb_old_blocks_time": 5}


def test_cli_validate_exit_codes(tmp_path, capsys):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("duration_s", "duraton_s"))
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 8
    err = capsys.readouterr().err
    assert f"error: {bad}: 1 problem(s)" in err and "duraton_s" in err
    assert "Traceback" not in err
    assert main(["validate", str(tmp_path / "missing.yaml")]) == 9
    assert "file not found" in capsys.readouterr().err


@pytest.mark.parametrize("server,want", [
    ("{host: db1}", "an external server needs 'user'"),
    ("{host: db1, user: u, password: hunter2-secret}", "never write a password"),
    ("{name: mariadb-10.11, user: u}", "are for external servers"),
    ("{name: mariadb-10.11, disposable: true}", "are for external servers"),
    ("{name: mariadb-10.11, host: db1, user: u}", "give exactly one of"),
    ("{host: db1, user: u, password_env: 'not a name'}", "password_env"),
])
def test_external_server_specs(server, want):
    (p,) = _problems(GOOD + f"servers: [{server}]\n")
    assert p.startswith("line 4: servers.0") and want in p, p
    assert "hunter2-secret" not in p


def test_external_server_title_and_defaults():
    sc = parse_scenario(Path("ok.yaml"), GOOD + "servers: [{host: db1, user: u}]\n")
    (s,) = sc.model.servers
    assert s.external and s.title == "db1:3306" and not s.disposable


@pytest.mark.parametrize("extra, message", [
    ("host: {swap_file: 2G}\n", "host.swap_file changes the whole host: mark it"),
    ("variants: {a: {sysctls: {vm.swappiness: 1}}}\n", "variants.a.sysctls changes the whole"),
    ("host: {disposable: true, sysctls: {kernel.panic: 1}}\n", "only vm.* settings"),
    ("host: {disposable: true, sysctls: {vm.dirty_ratio: 5, vm.dirty_bytes: 64M}}\n",
     "one setting (writing one zeroes the other)"),
    ("host: {disposable: true, sysctls: {vm.dirty_ratio: 5M}}\n", "not a non-negative integer"),
    ("host: {disposable: true, swap_file: lots}\n", "a size like 4G"),
    ("host: {balloon: {size: 2G}}\n", "host.balloon changes the whole host: mark it"),
    ("host: {disposable: true, balloon: {size: 2G, leave: 1G}}\n", "give one of size"),
    ("host: {disposable: true, balloon: {}}\n", "give one of size"),
    ("host: {disposable: true, balloon: {leave: most}}\n", "a size like 4G"),
    ("host_profile: {background_cpu: {threads: [purge], cpus: 0.0001}}\n",
     "greater than or equal to 0.001"),
    ("host_profile: {background_cpu: {threads: [purg], cpus: 0.1}}\n", "purge"),
    ("host_profile: {background_cpu: {threads: [purge]}}\n", "give cpus (a quota), weight"),
    ("host_profile: {disk: {seek_ms: 8}}\n", "name a model (sata-7200, sas-15k, laptop-5400)"),
    ("host_profile: {disk: {model: floppy}}\n", "'sata-7200', 'sas-15k' or 'laptop-5400'"),
    ("host_profile: {disk: {model: sata-7200, size: big}}\n", "a size like 4G"),
])
def test_host_tuning_input_errors(extra, message):
    problems = _problems(GOOD + extra)
    assert any(message in p for p in problems), problems


def test_variant_sysctls_overlay_the_hosts():
    sc = parse_scenario(Path("ok.yaml"), GOOD + """\
host: {disposable: true, sysctls: {vm.swappiness: 1, vm.dirty_ratio: 20}}
variants: {low: {sysctls: {vm.dirty_bytes: 64M}}, high: {sysctls: {vm.dirty_ratio: 40}}}
""")
    assert sc.variant_sysctls("low") == {"vm.swappiness": 1, "vm.dirty_bytes": "64M"}
    assert sc.variant_sysctls("high") == {"vm.swappiness": 1, "vm.dirty_ratio": 40}


def test_extends_merges_mappings_and_replaces_the_rest(tmp_path):
    (tmp_path / "base.yaml").write_text(GOOD + """\
mysqld: {innodb_buffer_pool_size: 64M, innodb_io_capacity: 200}
variants: {a: {mysqld: {innodb_io_capacity: 100}}}
side_loads: [{name: d, kind: sql, query: SELECT 1, start: 0}]
""")
    child = tmp_path / "child.yaml"
    child.write_text("""\
extends: base.yaml
name: child
mysqld: {innodb_io_capacity: 400}
variants: {b: {}}
side_loads: []
""")
    sc = load_scenario(child)
    m = sc.model
    assert m.name == "child" and m.dataset[0].tables == 2
    assert m.mysqld == {"innodb_buffer_pool_size": "64M", "innodb_io_capacity": 400}
    assert set(m.variants) == {"a", "b"} and m.side_loads == []
    assert "innodb_buffer_pool_size: 64M" in sc.text  # the effective scenario is stored
    (tmp_path / "loop.yaml").write_text("extends: loop.yaml\nname: x\n")
    with pytest.raises(ScenarioError, match="a cycle"):
        load_scenario(tmp_path / "loop.yaml")
    (tmp_path / "lost.yaml").write_text("extends: nowhere.yaml\nname: x\n")
    with pytest.raises(ScenarioError, match="nowhere.yaml"):
        load_scenario(tmp_path / "lost.yaml")


def test_scale_multiplies_sizes_not_durations():
    sc = load_scenario(ROOT / "scenarios" / "swap_dirty_ratio_cgroup.yaml")
    big = sc.scaled(4)
    m, b = sc.model, big.model
    pool = parse_size(m.mysqld["innodb_buffer_pool_size"])
    assert pool and b.mysqld["innodb_buffer_pool_size"] == 4 * pool
    assert b.dataset[0].table_size == 4 * m.dataset[0].table_size
    assert b.host_profile.memory == str(4 * 512 << 20) and b.host.swap_file == str(16 << 30)
    assert b.variants["dirty_bytes_32M"].sysctls["vm.dirty_bytes"] == 4 * 33554432
    assert b.variants["dirty_ratio_40"].sysctls == {"vm.dirty_ratio": 40}
    assert b.side_loads[0].size == str(4 * parse_size(m.side_loads[0].size))
    assert b.workload.duration_s == m.workload.duration_s and b.workload.threads == 4
    assert big.scale == 4 and big.text.startswith("# scaled x4")
    wide = load_scenario(ROOT / "scenarios" / "swap_dirty_ratio.yaml")
    leave = parse_size(wide.model.host.balloon.leave)
    assert wide.scaled(4).model.host.balloon.leave == str(4 * leave)
    ib = load_scenario(ROOT / "scenarios" / "insert_buffer.yaml").scaled(2)
    assert ib.model.dataset[0].initial_rows == 8_000_000
    assert ib.model.prepare_mysqld["innodb_buffer_pool_size"] == 2 << 30
    (pages,) = [e for e in ib.model.expectations if e.stat == "max" and e.min == 1800]
    assert pages.scaled


def test_a_replay_runs_on_any_dataset_and_its_log_must_be_there(tmp_path):
    f = tmp_path / "r.yaml"
    text = ("name: r\ndataset: {tables: 1, table_size: 100}\n"
            "workload: {kind: replay, database: sbtest, log: logs/slow.log}\n")
    with pytest.raises(ScenarioError,
                       match=r"workload.log: input file .*logs/slow.log: file not found"):
        parse_scenario(f, text)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "slow.log").write_text("# Time: 2026-11-25T06:00:00Z\nSELECT 1;\n")
    sc = parse_scenario(f, text)
    assert sc.model.workload.kind == "replay" and sc.model.dataset[0].kind == "sysbench"
    with pytest.raises(ScenarioError, match="not prepared by any dataset entry"):
        parse_scenario(f, text.replace("database: sbtest", "database: shop"))


def _folder_scenario(tmp_path, dataset: str) -> Path:
    from harness.workloads.dump import EXAMPLE_LOG
    (tmp_path / "captured.log").write_text(EXAMPLE_LOG)
    f = tmp_path / "s.yaml"
    f.write_text(f"name: s\ndataset: {dataset}\n"
                 "workload: {kind: replay, database: shop, log: captured.log}\n")
    return f


def test_a_folder_where_a_dataset_reads_one(tmp_path):
    """A dump's --tab directory and a datadir are folders their plugins read; a datadir
    is the only dataset entry, and one that is not a datadir is said before any run."""
    tab = tmp_path / "tab"
    tab.mkdir()
    (tab / "orders.sql").write_text("CREATE TABLE orders (id INT PRIMARY KEY);\n")
    (tab / "orders.txt").write_text("1\n")
    load_scenario(_folder_scenario(tmp_path, "{kind: dump, database: shop, file: tab}"))
    with pytest.raises(ScenarioError) as e:
        load_scenario(_folder_scenario(tmp_path, "{kind: datadir, database: shop, "
                                                 "path: tab}"))
    assert e.value.problems == [f"dataset[0]: {tmp_path / 'tab'}: no mysql schema folder: "
                                "not a datadir (a physical backup is given as the folder "
                                "it was prepared in)"]
    with pytest.raises(ScenarioError, match="a datadir dataset is the server's whole "
                                            "datadir, so the only entry"):
        load_scenario(_folder_scenario(tmp_path, "[{kind: datadir, database: shop, path: "
                                                 "tab}, {kind: dump, database: x, file: "
                                                 "tab}]"))
