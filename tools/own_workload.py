"""A DBA's own workload, end to end, on data made here (`make exp-own-workload`): capture
a workload's slow log, dump its data, replay the log on the dump against two my.cnf
variants and say which query digests moved.

1. scenarios/own_workload_capture.yaml: sysbench oltp_read_write and a reporting session,
   captured by the slow_log collector;
2. scenarios/own_workload_dump.yaml: a mysqldump of the same dataset;
3. the capture and the dump copied to results/own-workload/, where
   scenarios/own_workload_replay.yaml reads them, and `harness compare` on it.

Its findings: the pool that does not hold the data is WORSE, and no digest's results
differ between the pools. Exit 0 when both reproduce, 3 when one does not (each said).

Run: .venv/bin/python tools/own_workload.py [--repetitions N]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
OUT = ROOT / "results" / "own-workload"


def harness(*args: str) -> str:
    """The CLI's stdout; its progress goes to the terminal, a failure ends this."""
    print("+ harness " + " ".join(args), flush=True)
    r = subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, text=True,
                       stdout=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"harness {args[0]} failed (exit code {r.returncode})")
    return r.stdout


def artifact(scenario: str, name: str) -> Path:
    """Run the scenario; the file ``name`` its run left in its artifacts."""
    (run,) = json.loads(harness("run", str(SCENARIOS / scenario), "--json"))["runs"]
    if run["status"] != "ok":
        sys.exit(f"{scenario}: run {run['run_id']} is {run['status']}")
    show = json.loads(harness("show", run["run_id"], "--json"))
    found = Path(show["artifacts"]) / name
    if not found.is_file():
        sys.exit(f"{scenario}: run {run['run_id']} left no {name} in {show['artifacts']}")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repetitions", type=int, default=6, help="runs a side (default 6)")
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copy(artifact("own_workload_capture.yaml", "slow.log"), OUT / "captured-slow.log")
    shutil.copy(artifact("own_workload_dump.yaml", "dump-sbtest.sql"), OUT / "sbtest.sql")
    print(f"capture and dump in {OUT}", flush=True)
    r = subprocess.run(
        [sys.executable, "-m", "harness", "compare", str(SCENARIOS / "own_workload_replay.yaml"),
         "--design", "interleaved", "--repetitions", str(a.repetitions)], cwd=ROOT, text=True,
        stdout=subprocess.PIPE)
    print(r.stdout, end="", flush=True)
    if r.returncode not in (0, 3, 4):
        return r.returncode  # compare failed (bad input 2, a run failed 1): as it said
    saved = next((ln.split()[1].rstrip(",") for ln in r.stdout.splitlines()
                  if ln.startswith("saved: ")), None)
    if saved is None:
        sys.exit("harness compare saved no verdict")
    return findings(json.loads(Path(saved).read_text()))


def findings(out: dict) -> int:
    """The experiment's two findings in the saved verdict, each said: 0 when both
    reproduce, 3 when one does not."""
    worse = out["verdict"] == "worse"
    differ = [x for c in out["comparisons"] for x in c["results_differ"]]
    said = [("the pool that does not hold the data is WORSE", worse,
             f"the verdict is {out['verdict']}"),
            ("no digest's results differ between the pools", not differ,
             f"{len(differ)} digest(s) differ")]
    for what, held, otherwise in said:
        print(f"finding: {what}: " + ("reproduced" if held else f"NOT reproduced ({otherwise})"))
    return 0 if all(held for _, held, _ in said) else 3


if __name__ == "__main__":
    sys.exit(main())
