"""What perf samples (collectors/cpu_profile.py): whole CPUs where the kernel lets the
harness (root, or perf_event_paranoid 0), since events on mysqld's own threads cost it
CPU at every switch; mysqld's threads where only they are allowed. The recording itself
is tested on real servers in tests/integration/test_cpu_profile.py."""
from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from harness.collectors import cpu_profile
from harness.collectors.cpu_profile import CpuProfile


def _profile() -> CpuProfile:
    p = CpuProfile.__new__(CpuProfile)
    p.ctx = SimpleNamespace(mysqld_pid=os.getpid())  # type: ignore[assignment]
    return p


@pytest.mark.parametrize(("euid", "paranoid", "whole_cpus"), [
    (0, 2, True), (1000, 0, True), (1000, -1, True), (1000, 1, False)])
def test_whole_cpus_where_allowed_else_mysqlds_threads(monkeypatch, euid, paranoid,
                                                       whole_cpus):
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(cpu_profile, "_paranoid", lambda: paranoid)
    p = _profile()
    p.scope = p._scope()
    if whole_cpus:
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        assert p.scope == ["-a", "-C", cpus]
        assert p._scope_said() == f"sampled on CPUs {cpus}"
    else:
        assert p.scope == ["-p", str(os.getpid())]
        assert "mysqld's own threads" in p._scope_said()
