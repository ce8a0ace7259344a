"""sysbench output parsing on captured real sysbench 1.0.20 output."""
from pathlib import Path

import pytest

from harness.workloads import sysbench as sb
from harness.workloads.sysbench import SysbenchDataset, SysbenchWorkload

DATA = Path(__file__).parent.parent / "data"


def test_plain_run_intervals_and_summary():
    out = sb.parse_output((DATA / "sysbench-1.0.20-oltp_read_only-run.txt").read_text())
    assert [iv.t for iv in out.intervals] == [1, 2, 3, 4]
    first = out.intervals[0]
    assert (first.threads, first.tps, first.qps) == (2, 3431.67, 54925.76)
    assert (first.reads, first.writes, first.other) == (48060.41, 0.0, 6865.34)
    assert first.latency_ms == 0.89 and first.percentile == 95
    assert len(out.reports) == 1
    final = out.reports[0]
    assert final["transactions"] == 14604 and final["transactions_per_s"] == 3649.71
    assert final["queries_per_s"] == 58395.43
    assert final["lat_pct"] == 0.60 and final["lat_percentile"] == 95
    assert final["lat_avg"] == 0.55 and final["lat_max"] == 2.97
    assert final["total_time"] == 4.0011


def test_checkpoint_splits_warmup_from_measured_report():
    out = sb.parse_output((DATA / "sysbench-1.0.20-oltp_read_only-checkpoint.txt").read_text())
    assert len(out.reports) == 2  # the checkpoint (warmup) report and the final one
    # sysbench prints latency 0.00 on the interval that carries the checkpoint: not a sample.
    ckpt_iv = [iv for iv in out.intervals if iv.t == 2][0]
    assert ckpt_iv.latency_ms is None
    assert [iv.latency_ms for iv in out.intervals if iv.t != 2] == [1.39, 0.87, 0.94]
    warm, final = out.reports
    assert warm["transactions"] == 6678 and final["transactions"] == 6555
    # per-second rate of the final report covers only the measured part (~2 s)
    assert final["transactions"] / final["transactions_per_s"] == pytest.approx(2.0, abs=0.01)


def test_long_run_from_a_real_sandbox():
    out = sb.parse_output((DATA / "sysbench-1.0.20-mariadb-10.11-warmup.txt").read_text())
    assert len(out.intervals) == 35
    assert all(iv.tps > 0 for iv in out.intervals)
    assert out.reports[-1]["transactions"] > 0


def test_missing_summary_field_raises_never_zero():
    text = (DATA / "sysbench-1.0.20-oltp_read_only-run.txt").read_text()
    broken = text.replace("95th percentile:", "percentile:")
    with pytest.raises(ValueError, match="lat_pct"):
        sb.parse_output(broken)


def test_prepare_progress_lines():
    lines = (DATA / "sysbench-1.0.20-prepare.txt").read_text().splitlines()
    done = [m.group(1) for line in lines if (m := sb.PREPARE_DONE_RE.match(line))]
    assert done and all(t.startswith("sbtest") for t in done)


def test_build_args_keeps_password_out_and_uses_checkpoint(tmp_path):
    spec = SysbenchWorkload(test="oltp_read_only", threads=4, warmup_s=5, duration_s=30,
                            options={"range_size": 50, "skip_trx": True})
    data = SysbenchDataset(tables=3, table_size=1000)
    argv = sb.build_args(spec, data, tmp_path / "cfg")
    assert argv[-1] == "run"
    assert "--time=35" in argv and "--report-checkpoints=5" in argv
    assert "--threads=4" in argv and "--tables=3" in argv and "--table-size=1000" in argv
    assert "--range-size=50" in argv and "--skip-trx=on" in argv
    assert not any(a.startswith("--mysql-password") for a in argv)
    no_warm = sb.build_args(SysbenchWorkload(test="oltp_read_only"), data, tmp_path / "c")
    assert not any(a.startswith("--report-checkpoints") for a in no_warm)


def test_p99_from_the_histogram_of_the_measured_part():
    from harness.workloads.sysbench import histogram_percentile, parse_histogram
    text = (DATA / "sysbench-1.0.20-oltp_read_only-histogram.txt").read_text()
    hist = parse_histogram(text)
    # The histogram covers exactly the part after the checkpoint: its events are the
    # final report's transactions.
    assert sum(n for _, n in hist) == 1260 == sb.parse_output(text).reports[-1]["transactions"]
    assert histogram_percentile(hist, 0.99) == 2.032
    assert histogram_percentile(hist, 0.95) == 1.759  # sysbench printed 1.76
    assert parse_histogram("no histogram here") == [] and histogram_percentile([], 0.99) is None


def test_kept_columns_give_back_what_the_summaries_read():
    out = sb.parse_output((DATA / "sysbench-1.0.20-oltp_read_only-checkpoint.txt").read_text())
    kept = sb.Kept()
    for iv in out.intervals:
        kept.append(iv)
    assert len(kept) == len(out.intervals)
    assert kept.after(-1) == [(iv.t, iv.tps, iv.latency_ms) for iv in out.intervals]
    assert None in [lat for _, _, lat in kept.after(-1)]  # the checkpoint's interval
    assert [t for t, _, _ in kept.after(2)] == [iv.t for iv in out.intervals if iv.t > 2]
