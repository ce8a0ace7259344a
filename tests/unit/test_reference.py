"""A reproduction held against a reference: the agreement rule and the file's refusals
(analysis/reference.py). The end-to-end check on a real run set is in
tests/integration/test_report.py."""
from __future__ import annotations

import json

import pytest

from harness.analysis import reference
from harness.analysis.reference import (
    AGREES,
    DIFFERS,
    NOT_COMPARABLE,
    NOT_RUN,
    CellFinding,
    agreement,
)
from harness.errors import InputError

from ..schemas import conform


def _f(value, ci=None, outcome="reproduced"):
    return CellFinding("drop", "mysql-5.7.29", "a", value, ci, outcome, 1, (0.5, None))


@pytest.mark.parametrize("ours, yours, state, basis", [
    (_f(1.0, (0.9, 1.1)), _f(1.2, (1.05, 1.3)), AGREES, "intervals"),  # overlap
    (_f(1.0, (0.9, 1.1)), _f(1.2, (1.11, 1.3)), DIFFERS, "intervals"),  # apart
    (_f(1.0, (0.9, 1.1)), _f(1.1), AGREES, "intervals"),  # a value on the interval's edge
    (_f(1.0, (0.9, 1.1)), _f(0.89), DIFFERS, "intervals"),  # a value outside it
    (_f(1.0), _f(3.0), AGREES, "outcomes"),  # no interval: outcomes
    (_f(1.0), _f(0.4, outcome="not reproduced"), DIFFERS, "outcomes"),
    (_f(None, outcome="not reproduced"), _f(1.0, (0.9, 1.1)), DIFFERS,
     "outcomes"),
    # intervals that overlap, but here the finding was not reproduced: never agrees
    (_f(1.0, (0.9, 1.1)), _f(0.6, (0.45, 0.95), outcome="inconclusive"), DIFFERS,
     "outcome"),
    # a reference too wide to tell ([0.000, 0.912] on a bound of 0.1): not comparable
    (CellFinding("wash", "mariadb-10.11", "a", 0.011, (0.0, 0.912), "reproduced", 6,
             (None, 0.1)),
     CellFinding("wash", "mariadb-10.11", "a", 0.985, (0.807, 1.236), "not reproduced", 6,
             (None, 0.1)), NOT_COMPARABLE, "reference interval"),
])
def test_a_finding_agrees_when_the_intervals_overlap(ours, yours, state, basis):
    a = agreement(ours, yours)
    assert (a.state, a.basis) == (state, basis)
    assert a.text().startswith(f"{state:<8} {ours.server} / a: {ours.name}")


def test_a_finding_not_run_is_not_a_difference():
    a = agreement(_f(1.0, (0.9, 1.1)), None)
    assert a.state == NOT_RUN and "yours" not in a.text()


def test_a_reference_is_refused_with_its_name_and_what_is_wrong(tmp_path):
    p = tmp_path / "ref.json"
    for text, said in [("{", "not a reference file (JSON)"),
                       ('{"scenario": "x"}', "no reference_version"),
                       ('{"reference_version": 2}', "reference_version 2; this harness "
                                                   "reads version 1"),
                       ('{"reference_version": 1, "scenario": "x"}', "a field is missing")]:
        p.write_text(text)
        with pytest.raises(InputError, match="--against .*ref.json") as e:
            reference.load(p)
        assert said in str(e.value)
    with pytest.raises(InputError, match="No such file"):
        reference.load(tmp_path / "none.json")


def test_a_reference_reads_back_as_written(tmp_path):
    ref = reference.Reference("rep", ["20261127-1"], "2026-11-27T00:00:00Z", None,
                              dict.fromkeys(reference.HOST_FACTS) | {"cpus": 2}, "0.1",
                              [_f(1.0, (0.9, 1.1))],
                              [reference.Figure("s", "a", "tps_median", 10.0, 9.0, 11.0, 3)])
    p = tmp_path / "ref.json"
    p.write_text(json.dumps(ref.to_json()))
    conform("reference", json.loads(p.read_text()))
    assert reference.load(p) == ref


def test_each_shipped_reference_is_of_its_scenario_as_it_is_now():
    """scenarios/reference/NAME.json: read as --against reads it, of scenarios/NAME.yaml,
    every finding one that scenario still expects (a renamed finding would show as 'not
    run' in every reproduction), on a server the scenario runs."""
    from harness.scenario import load_scenario

    from ..conftest import ROOT
    shipped = sorted((ROOT / "scenarios" / "reference").glob("*.json"))
    assert shipped
    for path in shipped:
        conform("reference", json.loads(path.read_text()))
        ref = reference.load(path)
        model = load_scenario(str(ROOT / "scenarios" / f"{path.stem}.yaml")).model
        assert ref.scenario == model.name == path.stem
        expected = {e.name for e in model.expectations}
        assert {f.name for f in ref.findings} <= expected, path
        servers = {s.name for s in model.servers}
        assert {f.server for f in ref.findings} <= servers, path
