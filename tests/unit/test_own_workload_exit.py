"""make exp-own-workload exits by its findings, not by compare's code: 0 when the pool that
does not hold the data is worse and no digest's results differ (the experiment
reproduced, which compare reports as exit 3: a regression), 3 when either does not."""
from __future__ import annotations

import importlib.util

from harness.paths import CHECKOUT

_spec = importlib.util.spec_from_file_location("own_workload",
                                               CHECKOUT / "tools" / "own_workload.py")
assert _spec and _spec.loader
own_workload = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(own_workload)


def _out(verdict: str, differ: int = 0) -> dict:
    return {"verdict": verdict, "comparisons": [{"results_differ": [{}] * differ}]}


def test_reproduced_findings_exit_0_and_a_finding_not_reproduced_exits_3(capsys):
    assert own_workload.findings(_out("worse")) == 0
    assert capsys.readouterr().out.count(": reproduced") == 2
    assert own_workload.findings(_out("could not tell")) == 3
    assert "WORSE: NOT reproduced (the verdict is could not tell)" in capsys.readouterr().out
    assert own_workload.findings(_out("worse", differ=2)) == 3
    assert "NOT reproduced (2 digest(s) differ)" in capsys.readouterr().out
