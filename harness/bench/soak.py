"""``make soak``: a long run at 1 s sampling with every collector, watching the harness's
own memory. Verdict: RSS growth after the first 10 minutes stays below 10% (sampled
series are streamed to the store, not held).

    python -m harness.bench.soak --minutes 120 --out results/soak.json
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import proc
from ..jsonvalue import JsonDict

SCENARIO = """\
name: soak
servers: [{server}]
mysqld: {{innodb_buffer_pool_size: 256M}}
dataset: {{tables: 4, table_size: 50000}}
workload: {{test: oltp_read_write, threads: 2, warmup_s: 5, duration_s: {seconds}{rate}}}
collectors:
  buffer_pool_index: {{interval_s: 1}}
wakeup_probe: false
"""


def rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def verdict(series: list[tuple[float, int]], a: argparse.Namespace,
            rc: int | None) -> JsonDict:
    """RSS growth after the settling minutes; ``rc`` None while the run goes on."""
    after = [r for t, r in series if t >= a.settle_minutes * 60]
    growth = (max(after) - after[0]) / after[0] if len(after) >= 2 else None
    return {"rc": rc, "finished": rc is not None, "minutes": a.minutes,
            "elapsed_minutes": round(series[-1][0] / 60, 1) if series else 0.0,
            "rate": a.rate or None, "settle_minutes": a.settle_minutes,
            "rss_at_settle_mb": round(after[0] / 2**20, 1) if after else None,
            "rss_max_after_settle_mb": round(max(after) / 2**20, 1) if after else None,
            "growth_after_settle": round(growth, 4) if growth is not None else None,
            "goal": "< 0.10",
            "ok": rc == 0 and growth is not None and growth < 0.10,
            "rss_series": series}


def _write(out: Path, v: dict[str, Any]) -> None:
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(v, indent=2))
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.bench.soak")
    p.add_argument("--minutes", type=float, default=120.0)
    p.add_argument("--settle-minutes", type=float, default=10.0,
                   help="growth is measured from this point on")
    p.add_argument("--server", default="mariadb-10.11")
    p.add_argument("--out", default="results/soak.json")
    p.add_argument("--rate", type=int, default=0,
                   help="sysbench transactions/s (0: as fast as it goes); the samples a "
                        "second, and so what the harness must stream, do not depend on it")
    a = p.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="soak-"))
    scenario = workdir / "soak.yaml"
    rate = f", options: {{rate: {a.rate}}}" if a.rate else ""
    scenario.write_text(SCENARIO.format(server=a.server, seconds=int(a.minutes * 60), rate=rate))
    child = proc.spawn_daemon([sys.executable, "-m", "harness", "run", str(scenario),
                               "--quiet"], workdir / "run.log")
    t0 = time.monotonic()
    series: list[tuple[float, int]] = []
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    last_write = 0.0
    while child.poll() is None:
        rss = rss_bytes(child.pid)
        if rss:
            series.append((round(time.monotonic() - t0, 1), rss))
        if time.monotonic() - last_write >= 60:  # the verdict so far, readable mid-soak
            _write(out, verdict(series, a, None))
            last_write = time.monotonic()
        time.sleep(10)
    v = verdict(series, a, child.returncode)
    _write(out, v)
    print(f"soak: rc {child.returncode}, RSS {v['rss_at_settle_mb']} MB at "
          f"{a.settle_minutes} min -> max {v['rss_max_after_settle_mb']} MB "
          f"(growth {v['growth_after_settle']}), {'ok' if v['ok'] else 'FAILED'}; "
          f"wrote {a.out}", file=sys.stderr)
    return 0 if v["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
