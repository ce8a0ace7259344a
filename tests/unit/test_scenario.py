"""Scenario validation: every shipped scenario, and every kind of bad input."""
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).parent.parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))

GOOD = """\
name: t
dataset: {tables: 2, table_size: 100}
workload: {kind: sysbench, test: oltp_read_only, duration_s: 5}
"""


def test_scenarios_folder_is_not_empty():
    assert len(SCENARIOS) >= 1


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_every_scenario_file_validates(path):
    sc = load_scenario(path)
    assert sc.model.name
    w = sc.model.workload
    assert w.duration_s >= 1 if w.kind == "sysbench" else w.warm_runs >= 1


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
])
def test_bad_input(text, needle):
    assert any(needle in p for p in _problems(text))


def test_huge_file_is_refused(tmp_path):
    f = tmp_path / "huge.yaml"
    f.write_text("name: t\n" + "# pad\n" * 300000)
    with pytest.raises(ScenarioError, match="larger than"):
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
    assert main(["validate", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"error: {bad}: 1 problem(s)" in err and "duraton_s" in err
    assert "Traceback" not in err
    assert main(["validate", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


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
