"""--target docker on this host's real Docker daemon (Debian's docker.io, started by the
harness when none runs) with images built here by `harness images build`: no registry."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store import open_store

from ..conftest import (
    ROOT,
    TARGET_SCENARIO,
    harness,
    holding,
    run_watching_argv,
    target_scenario,
)

pytestmark = pytest.mark.integration

LABEL = "org.mysql-harness"


@pytest.fixture(scope="module")
def docker_client():
    """The daemon (started here when none runs) and the two default images, built when
    missing (a fresh machine: debootstrap once, then docker import)."""
    from harness.errors import ProviderError
    from harness.providers import images
    from harness.providers.dockerd import client

    try:
        c = client()
    except ProviderError as e:
        pytest.skip(f"no Docker daemon can start on this machine: {e}")
    for server in images.DEFAULT_IMAGES:
        try:
            images.find_image(server)
        except ProviderError:
            r = harness("images", "build", "--server", server, timeout=1200)
            assert r.returncode == 0, r.stderr
    return c


def _ours(c) -> list:
    return c.containers.list(all=True, filters={"label": f"{LABEL}.owned=true"})


def test_images_declare_how_to_start(docker_client):
    from harness.providers import images

    for server in images.DEFAULT_IMAGES:
        spec = images.find_image(server)
        labels = docker_client.images.get(spec.image).labels
        # The declaration round-trips through the image's labels, $ signs included.
        assert images.ImageSpec.from_labels(spec.image, labels) == spec
        assert "{datadir}" in " ".join(spec.init) and "{config}" in " ".join(spec.start)
        assert spec.basedir.startswith("/opt/mysql-harness/")
    listed = harness("images", "list", check=True).stdout
    assert "mysql-harness/mariadb-10.11:latest" in listed and "mysql:5.7" in listed


def test_two_servers_in_containers_then_locally(tmp_path, results, docker_client):
    """The same scenario file on --target docker and local: both stored, targets recorded,
    and no container left."""
    f = target_scenario(tmp_path, "both_targets", servers="[mariadb-10.11, mysql-5.7.29]")
    planted = "Planted-docker-pw-41c9e"  # in no argv, output, artifact or store file
    r, argv = run_watching_argv(["run", f, "--target", "docker"],
                                env={"HARNESS_SANDBOX_PASSWORD": planted})
    assert r.returncode == 0, r.stderr
    assert "2/2 runs ok" in r.stdout
    assert any("mysqld" in a or "mariadbd" in a for a in argv)
    assert not [a for a in argv if planted in a] and planted not in r.stdout + r.stderr
    assert not holding(results, planted)
    harness("run", f, "--server", "mariadb-10.11", check=True)
    runs = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert sorted((x["target"], x["server"], x["status"]) for x in runs) == [
        ("docker", "mariadb-10.11", "ok"), ("docker", "mysql-5.7.29", "ok"),
        ("local", "mariadb-10.11", "ok")]
    for run in runs:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        assert show["summary"]["measured"]["tps_median"] > 0
        if run["target"] != "docker":
            continue
        # The container's own view of memory, labelled as such, next to mysqld's /proc.
        out = harness("export", run["run_id"], check=True).stdout
        container = [ln for ln in out.splitlines() if ",container_memory_usage_bytes," in ln]
        assert container and "view=container" in container[0]
        assert float(container[-1].rsplit(",", 1)[1]) > 32 << 20  # a 64M pool is in there
        assert ",harness_mysqld_rss_bytes," in out  # /proc of the container's mysqld
        art = show["artifacts"]
        meta = json.load(open(os.path.join(art, "container.json")))
        assert meta["image"] == f"mysql-harness/{run['server']}:latest"
    assert _ours(docker_client) == []


@pytest.mark.nightly
def test_host_profile_limits_the_container(tmp_path, results, docker_client):
    """The profile's memory limit is what the container's cgroup is held to (it is the
    container's cgroup parent), and its IOPS limit throttles mysqld's reads in it."""
    f = tmp_path / "profile.yaml"
    f.write_text(TARGET_SCENARIO.format(name="profile", servers="[mariadb-10.11]", duration=6,
                                        options="", extra="""\
host_profile: {memory: 768M, read_iops: 60}
""").replace("innodb_buffer_pool_size: 64M", "innodb_buffer_pool_size: 6M\n"
             "  innodb_flush_method: O_DIRECT").replace("table_size: 2000", "table_size: 30000"))
    # CPU placement pins a local sandbox's threads: refused for a container up front.
    placed = tmp_path / "placed.yaml"
    placed.write_text(f.read_text().replace("name: profile", "name: placed") +
                      'cpu_placement: {server: "1", client: "0"}\n')
    r = harness("run", str(placed), "--target", "docker")
    assert r.returncode == 2 and f"{placed}: cpu_placement: pins a mysqld that runs here " \
        "as a local sandbox, not on --target docker" in r.stderr, r.stderr
    assert json.loads(harness("runs", "--json", check=True).stdout)["runs"] == []
    harness("run", str(f), "--target", "docker", check=True)
    run = json.loads(harness("runs", "--json", check=True).stdout)["runs"][0]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["details"]["host_profile"]["memory_bytes"] == 768 << 20
    assert show["details"]["host_profile"]["read_iops"] == 60
    out = harness("export", run["run_id"], check=True).stdout
    limits = {float(ln.rsplit(",", 1)[1]) for ln in out.splitlines()
              if ",container_spec_memory_limit_bytes," in ln}
    assert limits == {float(768 << 20)}
    warm_end = next(e["t"] for e in show["events"] if (e["kind"], e["name"]) == (
        "phase_end", "warmup"))
    reads = [(float(r["t"]), float(r["value"])) for r in csv.DictReader(io.StringIO(out))
             if r["metric"] == "mysql_global_status_innodb_pages_read"
             and float(r["t"]) >= warm_end]
    rate = (reads[-1][1] - reads[0][1]) / (reads[-1][0] - reads[0][0])
    # A 6M pool over ~14 MB of rows misses on most point selects: unthrottled, this disk
    # serves thousands of reads a second.
    assert 20 < rate < 75, rate
    assert _ours(docker_client) == []
    # the cgroups the container's runtime made under the profile's name, in every
    # hierarchy, are gone with it
    assert list(Path("/sys/fs/cgroup").glob("*/mysql-harness-docker-*")) == []


def test_sigterm_removes_the_container_and_keeps_the_partial_run(tmp_path, results,
                                                                 docker_client):
    f = target_scenario(tmp_path, "interrupted", duration=120)
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", f, "--target", "docker"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=os.environ.copy())
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not any(
            c.labels.get(f"{LABEL}.role") == "server" and c.status == "running"
            for c in _ours(docker_client)):
        time.sleep(0.5)
    time.sleep(8)  # into the measured part
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 130, out
    # at once, not after the workload's 120 s (1.8 s on a quiet machine; 15 s beside five
    # workers, where the container's shutdown waits for a CPU)
    assert time.monotonic() - t0 < 45
    assert _ours(docker_client) == []
    (rec,) = open_store(f"sqlite:///{results}/harness.db").runs()
    assert (rec.status, rec.target) == ("interrupted", "docker")


def test_a_killed_harness_leaves_a_container_that_cleanup_removes(docker_client, tmp_path):
    """Containers outlive a SIGKILLed harness; the next run (or make clean-sandboxes)
    removes those whose harness is gone, and never a container without our label."""
    from harness.providers import images
    from harness.providers.docker import remove_stale

    image = images.find_image("mariadb-10.11").image
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = docker_client.containers.run(image, ["sleep", "300"], detach=True, labels={
        f"{LABEL}.owned": "true", f"{LABEL}.harness-pid": str(dead.pid)})
    foreign = docker_client.containers.run(image, ["sleep", "300"], detach=True)
    try:
        assert stale.name in remove_stale()
        names = {c.name for c in docker_client.containers.list(all=True)}
        assert stale.name not in names and foreign.name in names
    finally:
        foreign.remove(force=True)
        for c in (stale,):
            try:
                c.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone, as it should be
                pass


def test_a_port_forwarded_by_docker_proxy_is_reported(tmp_path):
    """A daemon started elsewhere with its userland proxy: the run says why its
    throughput is lower (the harness starts its own dockerd without it)."""
    from harness.providers import images
    from harness.providers.docker import ContainerServer
    from harness.server import catalog

    build = catalog.resolve("mariadb-10.11")
    server = ContainerServer(build, tmp_path / "box", images.spec_for_build(build, "x"))
    assert server.notes == []
    fake = subprocess.Popen(["bash", "-c", "exec -a /usr/bin/docker-proxy bash -c "
                             f"'sleep 30; true' x -host-ip 127.0.0.1 -host-port {server.port}"])
    try:
        time.sleep(0.3)
        (note,) = server.notes
        assert f"port {server.port} is forwarded by docker-proxy" in note
    finally:
        fake.kill()
        fake.wait()


@pytest.mark.nightly
def test_current_servers_in_containers(tmp_path, results, docker_client):
    """MySQL 9.7 and MariaDB 11.8 images from their own Debian roots (no host library
    copied): both run, and mysqld loads plugins from the build's folder in the image."""
    from harness.errors import ProviderError
    from harness.providers import images

    for server in ("mysql-9.7", "mariadb-11.8"):
        try:
            images.find_image(server)
        except ProviderError:
            harness("images", "build", "--server", server, check=True, timeout=1200)
    f = target_scenario(tmp_path, "current_docker", servers="[mysql-9.7, mariadb-11.8]")
    assert "2/2 runs ok" in harness("run", f, "--target", "docker", check=True).stdout
    for run in json.loads(harness("runs", "--json", check=True).stdout)["runs"]:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        server_vars = json.load(open(os.path.join(show["artifacts"], "variables.json")))
        assert server_vars["plugin_dir"].startswith(f"/opt/mysql-harness/{run['server']}/")
        assert run["target"] == "docker" and show["summary"]["measured"]["tps_median"] > 0
    assert _ours(docker_client) == []


@pytest.mark.nightly
def test_5_5_in_containers(tmp_path, results, docker_client):
    """MySQL 5.5.55 and Percona Server 5.5.52, tarballs of the lab's mirror, as images
    (the build's folder and the host libraries it links) and as runs in them
    (make test-nightly: building both images takes minutes)."""
    from harness.errors import ProviderError
    from harness.providers import images

    servers = ("mysql-5.5.55", "percona-5.5.52")
    for server in servers:
        try:
            images.find_image(server)
        except ProviderError:
            harness("images", "build", "--server", server, check=True, timeout=1800)
    f = target_scenario(tmp_path, "docker_5_5", servers=f"[{', '.join(servers)}]")
    assert "2/2 runs ok" in harness("run", f, "--target", "docker", check=True,
                                    timeout=1800).stdout
    for run in json.loads(harness("runs", "--json", check=True).stdout)["runs"]:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        assert run["target"] == "docker" and show["version"].startswith("5.5."), show["version"]
        assert show["summary"]["measured"]["tps_median"] > 0
    assert _ours(docker_client) == []
