"""Property-based bad input: whatever a scenario file holds, validation answers with a
ScenarioError naming the file (and a field or line), or a valid scenario; never a crash."""
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.scenario import parse_scenario

FIELDS = ["name", "description", "servers", "mysqld", "variants", "dataset", "workload",
          "repetitions", "collectors", "wakeup_probe", "cpu_keepalive", "kind", "test",
          "tables", "table_size", "threads", "duration_s", "warmup_s", "database",
          "basedir", "my_cnf", "enabled", "interval_s", "options", "rand_type"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=True), st.text(max_size=20),
                    st.sampled_from(["oltp_read_only", "sysbench", "mariadb-10.11",
                                     "mysql-5.7.29", "sbtest", "64M"]))
keys = st.one_of(st.sampled_from(FIELDS), st.text(min_size=1, max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=25)
documents = st.dictionaries(keys, values, max_size=10)


def _check(text: str) -> None:
    try:
        parse_scenario(Path("gen.yaml"), text)
    except ScenarioError as e:
        assert str(e).startswith("gen.yaml: ")
        assert e.problems and all(isinstance(p, str) and p for p in e.problems)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_any_mapping_is_validated_without_a_crash(doc):
    _check(yaml.safe_dump(doc, allow_unicode=True))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_validated_without_a_crash(text):
    _check(text)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["tables", "table_size", "threads", "duration_s",
                                        "warmup_s", "repetitions"]), scalars, min_size=1))
def test_near_valid_scenarios_name_the_bad_field(bad):
    doc = {"name": "t", "dataset": {"tables": 1}, "workload": {"test": "oltp_read_only"}}
    for k, v in bad.items():
        target = doc if k == "repetitions" else doc["dataset"] if k in ("tables", "table_size") \
            else doc["workload"]
        target[k] = v
    try:
        parse_scenario(Path("gen.yaml"), yaml.safe_dump(doc))
    except ScenarioError as e:
        assert any(k in p for p in e.problems for k in bad), e.problems
