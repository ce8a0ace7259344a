"""The host's part of a run set: the swap file and memory balloon a scenario asks for
(made before the first run, undone after the last), and each variant's vm.* sysctls,
on this host or through a lab host's provider."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..host import tuning
from ..providers.base import Provider
from ..scenario import LoadedScenario
from ..store import RunRecord


class HostWork:
    def __init__(self, sc: LoadedScenario, provider: Provider, disposable_confirmed: bool,
                 update: Callable[[str], None], log: Callable[[str], None]):
        self.sc, self.provider = sc, provider
        self.disposable_confirmed = disposable_confirmed
        self.update, self.log = update, log
        self.tuner: tuning.HostTuner | None = None
        self.swap: dict[str, Any] = {}
        self.balloon: dict[str, Any] = {}  # host.balloon's, while it is inflated

    def start(self) -> None:
        """Settings a killed harness left, restored; then this host's swap file and
        memory balloon, when the scenario asks for them (lab hosts tune themselves
        through their provider)."""
        for what in tuning.recover():
            self.log(f"restored a host setting left by a killed harness: {what}")
        host = self.sc.model.host
        if host is None or self.provider.tunes_host:
            return
        self.tuner = tuning.HostTuner()
        if host.swap_file:
            self.update(f"making a {host.swap_file} swap file (the host has none)")
            self.swap = self.tuner.ensure_swap(host.swap_file)
            self.log(f"host swap: {_describe_swap(self.swap)}")
        if host.balloon:
            self.update("inflating the memory balloon (host.balloon)")
            self.balloon = self.tuner.inflate(**host.balloon.sizes())
            self.log(f"host memory: a balloon of {self.balloon['bytes'] >> 20} MB locked, "
                     f"{self.balloon['available_after'] >> 20} MB available (was "
                     f"{self.balloon['available_before'] >> 20})")

    def for_run(self, variant: str, rec: RunRecord) -> None:
        """The variant's vm.* sysctls, on this host or through a lab host's provider,
        stored in the run's details."""
        host = self.sc.model.host
        if self.tuner is not None:
            wanted = {k: tuning.sysctl_value(k, v)
                      for k, v in self.sc.variant_sysctls(variant).items()}
            rec.details.host_tuning = {"sysctls": self.tuner.set_sysctls(wanted), **self.swap,
                                       **({"balloon": self.balloon} if self.balloon else {})}
        elif host is not None and self.provider.tunes_host:
            wanted = {k: str(tuning.sysctl_value(k, v))
                      for k, v in self.sc.variant_sysctls(variant).items()}
            rec.details.host_tuning = {
                "host": self.provider.host_name,
                "sysctls": self.provider.tune(wanted, host.disposable
                                              and self.disposable_confirmed)}

    def stop(self) -> None:
        """Every host setting put back as it was, and said so."""
        self.provider.untune()
        if self.tuner is None:
            return
        restored = sorted(self.tuner.original)
        if self.swap.get("swap") == "file":
            restored.append("swap file off and removed")
        if self.balloon:
            restored.insert(0, "memory balloon let go")
            self.balloon = {}
        self.tuner.close()
        self.tuner = None
        if restored:
            self.log("host settings restored: " + ", ".join(restored))


def _describe_swap(swap: dict[str, Any]) -> str:
    size = f"{swap['bytes'] / 2**30:.1f} GiB"
    if swap.get("swap") == "file":
        return f"{size} swap file {swap['path']} (removed when the run set ends)"
    return f"{size} already active ({', '.join(a['path'] for a in swap['areas'])}), kept"
