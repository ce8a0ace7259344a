"""--target ansible: the real playbooks in ansible/, run by ansible-playbook, against this
machine (local connection) and against lab hosts made here as network namespaces, each
with its own address and sshd, reached over real SSH."""
from __future__ import annotations

import functools
import grp
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from harness import proc
from harness.host.profile import CGROUP_ROOT
from tests import leftovers

from ..conftest import (
    ROOT,
    TARGET_SCENARIO,
    _procs_mentioning,
    harness,
    holding,
    mysql_store,
    run_watching_argv,
    target_scenario,
)

_harness = harness

pytestmark = pytest.mark.integration

ANSIBLE = ROOT / "ansible"
LOCAL_INVENTORY = ANSIBLE / "inventories" / "local.yml"


def sandboxes(root: Path) -> list[str]:
    d = root / "sandboxes"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def playbook(name: str, inventory: Path, extra: dict, check: bool = True):
    r = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i",
                        str(inventory), str(ANSIBLE / f"{name}.yml"), "-e", json.dumps(extra)],
                       capture_output=True, text=True, timeout=600, cwd=ANSIBLE,
                       env={**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg")})
    if check:
        assert r.returncode == 0, r.stdout[-3000:]
    return r


def _layout(box: Path) -> dict[str, tuple[str, str, int]]:
    """Owner, group and mode of a lab sandbox's folder and what is in it (links not
    followed)."""
    out = {}
    for name in (".", "my.cnf", "OWNER.json", "data", "run", "log", "tmp", "files"):
        st = (box / name).lstat()
        out[name] = (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name,
                     stat.S_IMODE(st.st_mode))
    return out


def test_quickstart_shape_on_localhost(tmp_path, results):
    """The shipped local inventory: provision, configure, start, run, stop, teardown,
    results stored with the target and host, and no sandbox or mysqld left. The server
    is a current one, MariaDB 11.8 from its own Debian root: the archive keeps the root's
    links, the role creates the datadir with the build's init command and the account
    with CREATE USER / ALTER USER, and mysqld loads plugins from its own folder."""
    root = Path("/var/tmp/mysql-harness")
    before = sandboxes(root)
    f = target_scenario(tmp_path, "ansible_local", servers="[mariadb-11.8]", duration=3,
                        extra="snapshot: false\nbetween_runs: restart")
    planted = "Planted-ansible-pw-7f3e9"
    layout: dict[str, tuple[str, str, int]] = {}

    def look() -> None:  # once mysqld is up: the sandbox as the role laid it out
        for box in (root / "sandboxes").glob("*"):
            if box.name not in before and not layout and (box / "run/mysqld.pid").exists():
                layout.update(_layout(box))
    r, argv = run_watching_argv(["run", f, "--target", f"ansible:{LOCAL_INVENTORY}"],
                                env={"HARNESS_SANDBOX_PASSWORD": planted}, watch=look)
    assert r.returncode == 0, r.stderr
    # Root's folder and files (mysqld's group may pass and read), the account's folders.
    assert layout.pop(".") == ("root", "mysql", 0o710), layout
    assert layout.pop("my.cnf") == ("root", "mysql", 0o640)
    assert layout.pop("OWNER.json")[::2] == ("root", 0o640)
    assert set(layout.values()) == {("mysql", "mysql", 0o700)}, layout
    assert "1/1 runs ok" in r.stdout
    assert any("ansible-playbook" in a for a in argv)
    assert not [a for a in argv if planted in a]
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert (run["target"], run["host"], run["status"]) == ("ansible", "localhost", "ok")
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["summary"]["measured"]["tps_median"] > 0
    assert show["details"]["lab_host"]["cpus"] == os.cpu_count()
    art = Path(show["artifacts"])
    logs = sorted(p.name for p in (art / "ansible").iterdir())
    assert logs[0] == "01-provision.log" and any("start" in n for n in logs)
    assert "PLAY RECAP" in (art / "ansible" / "01-provision.log").read_text()
    assert "ready for connections" in (art / "error.log").read_text()
    cnf = (art / "my.cnf").read_text()  # templated by the role from the variant
    assert "innodb_buffer_pool_size = 64M" in cnf and "init-file" in cnf
    server_vars = json.loads((art / "variables.json").read_text())
    assert server_vars["version"].startswith("11.8.")
    assert server_vars["plugin_dir"].startswith(str(root / "builds" / "mariadb-11.8"))
    # The account's password never reached a playbook's output, an artifact or the store.
    assert not holding(results, planted)
    assert planted not in r.stdout + r.stderr
    assert sandboxes(root) == before
    assert not _procs_mentioning(str(root / "sandboxes"))


# vm.swappiness for a moment, which no other test reads (the host tuning tests run alone)
def test_os_tuning_is_refused_unless_disposable_and_reverted_at_teardown(tmp_path, open_tmp):
    inv = tmp_path / "inv.yml"
    root = open_tmp / "root"  # mysqld's unprivileged account must reach the sandboxes
    inv.write_text(yaml.safe_dump({"all": {"children": {"mysql_servers": {"hosts": {
        "localhost": {"ansible_connection": "local", "mysql_harness_root": str(root),
                      "ansible_python_interpreter": sys.executable}}}}}}))
    swappiness = Path("/proc/sys/vm/swappiness")
    original = swappiness.read_text().strip()
    wanted = "7" if original != "7" else "9"
    common = {"mysql_server_name": "mariadb-10.11", "os_tuning_sysctls": {
        "vm.swappiness": wanted}}
    # Not disposable: the role refuses, naming the host, and changes nothing.
    r = playbook("provision", inv, common, check=False)
    assert r.returncode != 0 and "localhost is not marked disposable" in r.stdout
    assert swappiness.read_text().strip() == original
    playbook("teardown", inv, common)
    try:
        playbook("provision", inv, {**common, "os_tuning_disposable": True})
        assert swappiness.read_text().strip() == wanted
        state = json.loads((root / "os-tuning.json").read_text())
        assert state["sysctls"] == {"vm.swappiness": original}
    finally:
        playbook("teardown", inv, common)
    assert swappiness.read_text().strip() == original
    assert not (root / "os-tuning.json").exists()
    assert sandboxes(root) == []


@pytest.mark.nightly  # the lab's host tuning end to end (make test keeps the role's refusal)
@pytest.mark.alone  # host sysctls
def test_scenario_host_tuning_goes_through_the_os_tuning_role(tmp_path, results):
    """host: {disposable, sysctls} and a variant's vm.dirty_bytes, on --target ansible:
    set on the lab host by the role while the run goes on, put back after."""
    vm = Path("/proc/sys/vm")
    before = {k: (vm / k).read_text().strip() for k in ("swappiness", "dirty_ratio",
                                                        "dirty_bytes")}
    swappiness = "7" if before["swappiness"] != "7" else "9"
    seen = tmp_path / "seen"
    f = tmp_path / "tuned.yaml"
    f.write_text(TARGET_SCENARIO.format(name="tuned", servers="[mariadb-10.11]", duration=5,
                                        extra="", options="") + f"""\
host: {{disposable: true, sysctls: {{vm.swappiness: {swappiness}}}}}
variants:
  small_cache: {{sysctls: {{vm.dirty_bytes: 64M}}}}
side_loads:
  - name: look
    kind: command
    argv: [sh, -c, "cat /proc/sys/vm/swappiness /proc/sys/vm/dirty_bytes > {seen}"]
    start: 1
""")
    refused = harness("run", str(f), "--target", f"ansible:{LOCAL_INVENTORY}")
    assert refused.returncode == 2 and "--i-know-this-is-disposable" in refused.stderr
    harness("run", str(f), "--target", f"ansible:{LOCAL_INVENTORY}",
            "--i-know-this-is-disposable", check=True)
    assert seen.read_text().split() == [swappiness, str(64 << 20)]
    assert {k: (vm / k).read_text().strip() for k in before} == before
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["details"]["host_tuning"]["sysctls"] == {
        "vm.swappiness": swappiness, "vm.dirty_bytes": str(64 << 20)}


# --- lab hosts: network namespaces with their own sshd ------------------------------------

def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Two hosts, lab1 (10.77.1.2) and lab2 (10.77.2.2): each a network namespace joined
    to this one by a veth pair, with an sshd of its own on its address."""
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(sshd).exists() or not shutil.which("ip"):
        pytest.skip("sshd or ip is not installed (make setup installs openssh-server)")
    # Not under pytest's 0700 folder: mysqld's unprivileged account reaches its sandbox.
    d = Path(tempfile.mkdtemp(prefix="hlab-", dir="/tmp"))
    d.chmod(0o755)
    leftovers.note(dirs=[str(d)], netns=["hxlab1", "hxlab2"], links=["vhx1", "vhx2"])
    key = d / "id_ed25519"
    _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))
    _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
    (d / "authorized_keys").write_text((d / "id_ed25519.pub").read_text())
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    known = d / "known_hosts"
    hosts, procs, made = {}, [], []
    try:
        for i in (1, 2):
            ns, outer, inner = f"hxlab{i}", f"vhx{i}", f"vhx{i}p"
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            subprocess.run(["ip", "link", "del", outer], capture_output=True)
            _sh("ip", "netns", "add", ns)
            made.append((ns, outer))
            _sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
            _sh("ip", "link", "set", inner, "netns", ns)
            _sh("ip", "addr", "add", f"10.77.{i}.1/24", "dev", outer)
            _sh("ip", "link", "set", outer, "up")
            for cmd in (["ip", "addr", "add", f"10.77.{i}.2/24", "dev", inner],
                        ["ip", "link", "set", inner, "up"], ["ip", "link", "set", "lo", "up"]):
                _sh("ip", "netns", "exec", ns, *cmd)
            cfg = d / f"sshd{i}.conf"
            cfg.write_text(f"ListenAddress 10.77.{i}.2\nPort 22\nHostKey {d / 'host_key'}\n"
                           f"PidFile {d / f'sshd{i}.pid'}\nAuthorizedKeysFile "
                           f"{d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
                           "UsePAM no\nStrictModes no\nPasswordAuthentication no\n")
            # nsenter, not "ip netns exec": that mounts a sysfs of the namespace's own over
            # /sys, without the cgroup hierarchies a host profile needs.
            procs.append(subprocess.Popen(["nsenter", f"--net=/run/netns/{ns}", sshd, "-D",
                                           "-e", "-f", str(cfg)], stderr=subprocess.DEVNULL,
                                          preexec_fn=proc.die_with_parent))
            # The host key recorded as a lab would (ssh-keyscan and a check of the
            # fingerprint): host key checking stays on.
            with open(known, "a") as kh:
                kh.write(f"10.77.{i}.2 {(d / 'host_key.pub').read_text()}")
            hosts[f"lab{i}"] = {
                "ansible_host": f"10.77.{i}.2", "ansible_user": "root",
                "ansible_ssh_private_key_file": str(key),
                "ansible_ssh_common_args": f"-o StrictHostKeyChecking=yes "
                                           f"-o UserKnownHostsFile={known}",
                "ansible_python_interpreter": sys.executable,
                "mysql_harness_root": str(d / f"root{i}"),
                "mysql_harness_class": "netns-test"}
        inv = d / "lab.yml"
        inv.write_text(yaml.safe_dump({"all": {"children": {"mysql_servers": {
            "hosts": hosts}}}}))
        deadline = time.monotonic() + 20
        for h in hosts.values():
            while subprocess.run(["ssh", "-i", str(key), "-o", "BatchMode=yes", "-o",
                                  "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known}",
                                  f"root@{h['ansible_host']}", "true"],
                                 capture_output=True).returncode != 0:
                assert time.monotonic() < deadline, "the lab hosts' sshd did not answer"
                time.sleep(0.3)
        yield {"inventory": inv, "dir": d, "hosts": hosts}
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)
        for ns, outer in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            subprocess.run(["ip", "link", "del", outer], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.nightly
def test_two_servers_over_two_lab_hosts_in_parallel(tmp_path, results, lab):
    # With a host profile, which each host applies to its mysqld itself.
    f = target_scenario(tmp_path, "lab_matrix", "[mariadb-10.11, mysql-5.7.29]", duration=5,
                        extra=f"host_profile: {{{LAB_PROFILE}}}\n")
    # sysbench on each lab host itself (over SSH), next to its mysqld.
    Path(f).write_text(Path(f).read_text().replace("  duration_s: 5\n",
                                                   "  duration_s: 5\n  client: db_host\n"))
    # A shared MySQL store whose URL holds a password: the child harness of each host
    # inherits it, no process ever has it in its argv.
    with mysql_store() as (url, password):
        env = {"HARNESS_STORE": url}
        r, argv = run_watching_argv(["run", f, "--target", f"ansible:{lab['inventory']}"],
                                    env=env)
        assert r.returncode == 0, r.stderr + r.stdout
        assert sum("--target ansible:" in a for a in argv) >= 2  # the children were seen
        assert not [a for a in argv if password in a]
        assert password not in r.stdout + r.stderr
        _check_lab_runs(lab, r, env)


CLIENT_SCRIPT = """
function event()
  local f = io.open("/proc/self/status")
  local status = f:read("*a")
  f:close()
  print("UID " .. status:match("Uid:%s+(%d+)"))
  print("READ " .. tostring(io.open("{path}") ~= nil))
end
"""


@pytest.mark.nightly
def test_sysbench_on_a_lab_host_runs_as_its_client_account(lab, tmp_path):
    # A server's LOAD DATA LOCAL request names any file the client can read: on a lab
    # host (client: db_host) sysbench is the client account there, and a file of root's
    # there is one it cannot read. The control, the same script as SSH's root, reads it.
    from harness import client
    from harness.providers.ansible import Host, SSHShell
    from harness.server import osuser

    account = osuser.client_account()  # the lab hosts share this machine's accounts
    secret = lab["dir"] / "root-only.txt"
    secret.write_text("secret\n")
    secret.chmod(0o600)
    script = tmp_path / "who.lua"
    script.write_text(CLIENT_SCRIPT.replace("{path}", str(secret)))
    shell = SSHShell(Host("lab1", lab["hosts"]["lab1"]),
                     str(lab["dir"] / "root1" / "clients" / "probe"), account.name)
    there = shell.put(script)
    try:
        st = os.stat(there)  # the same filesystem: what the lab host holds
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (account.uid, 0o600)
        assert stat.S_IMODE(os.stat(Path(there).parent).st_mode) == 0o711
        assert os.stat(Path(there).parent).st_uid == 0
        argv = ["sysbench", there, "--time=0", "--events=1", "run"]
        lines: list[str] = []
        with client.stream(shell.wrap_client(argv), lines.append, over_ssh=True) as s:
            assert s.wait(timeout=120, check=False) == 0, lines
        out = "\n".join(lines)
        assert f"UID {account.uid}" in out and "READ false" in out, out
        control = subprocess.run(shell.wrap(argv), capture_output=True, text=True,
                                 timeout=120)
        assert "UID 0" in control.stdout and "READ true" in control.stdout, control.stdout
    finally:
        shell.remove(there)
    assert not Path(there).parent.exists()  # the folder went with its last file


def _check_lab_runs(lab, r, env) -> None:
    assert "2/2 runs ok on 2 hosts" in r.stdout
    harness = functools.partial(_harness, env=env)
    runs = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert sorted((x["server"], x["host"], x["target"], x["status"]) for x in runs) == [
        ("mariadb-10.11", "lab1", "ansible", "ok"), ("mysql-5.7.29", "lab2", "ansible", "ok")]
    assert len({x["run_set"] for x in runs}) == 1
    # In parallel: each host's run began before the other's ended.
    a, b = runs
    assert a["started_at"] < b["ended_at"] and b["started_at"] < a["ended_at"]
    for run in runs:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        assert show["summary"]["measured"]["tps_median"] > 0
        assert show["details"]["lab_host"]["class"] == "netns-test"
        # mysqld listened on the lab host's own address, not on this machine's.
        art = Path(show["artifacts"])
        host = lab["hosts"][run["host"]]
        assert f"bind-address = {host['ansible_host']}" in (art / "my.cnf").read_text()
        # read there as mysqld's account, copied to a file of root's, fetched
        assert "ready for connections" in (art / "error.log").read_text()
        assert show["details"]["workload_client"] == run["host"]
        command = (art / "sysbench.command").read_text()
        assert command.startswith("ssh ") and f"root@{host['ansible_host']}" in command
        # The OS collectors sample the lab host, over its SSH connection.
        notes = " ".join(show["summary"]["collectors"]["notes"])
        for name in ("vmstat", "meminfo", "diskstats"):
            assert f"{name}: sampled on {run['host']} over its connection" in notes
        out = harness("export", run["run_id"], check=True).stdout
        for metric in (",node_memory_MemFree_bytes,", ",node_vmstat_", ",node_disk_"):
            assert metric in out, metric
        _check_lab_profile(show["details"])
    for i in (1, 2):
        assert sandboxes(lab["dir"] / f"root{i}") == []
        assert not _procs_mentioning(str(lab["dir"] / f"root{i}" / "sandboxes"))


LAB_PROFILE = "cpus: 1, memory: 4G, write_iops: 100000"


def _check_lab_profile(details: dict) -> None:
    """The profile was in force on the lab host, with mysqld inside its cgroups there
    (each controller in the hierarchy the host has it in), and is gone after the run."""
    got = details["host_profile"]
    assert (got["cpus"], got["memory_bytes"], got["write_iops"]) == ("0", 4 << 30, 100000)
    made = f"/mysql-harness-{details['server_state']['sandbox']}-"
    assert set(got["cgroup"]) == {"io", "cpuset", "memory"}
    where = list(got["cgroup"].values())  # a cgroup per v1 hierarchy, one for v2
    assert len(got["mysqld_in"]) == where.count("v1") + ("v2" in where)
    for key, path in got["mysqld_in"].items():
        assert made in path, (key, path)
        assert not (CGROUP_ROOT / key / path.lstrip("/")).exists()


@pytest.mark.nightly
def test_a_profile_a_lab_host_cannot_apply_is_refused_up_front(tmp_path, results, lab):
    target = f"ansible:{lab['inventory']}@lab1"
    good = target_scenario(tmp_path, "fits", extra=f"host_profile: {{{LAB_PROFILE}}}\n")
    r = harness("validate", good, "--target", target)
    assert r.returncode == 0, r.stderr
    assert "host_profile applies on lab1: io on cgroup " in r.stdout
    bad = target_scenario(tmp_path, "too_big", extra="host_profile: {cpus: 4096}\n")
    r = harness("run", bad, "--target", target)
    assert r.returncode == 2, r.stderr
    assert f"{bad}: on lab host lab1: host_profile.cpus: 4096 CPUs asked" in r.stderr
    # A side load in the server's cgroups would run here, not on the lab host.
    side = target_scenario(tmp_path, "side", extra=(
        f"host_profile: {{{LAB_PROFILE}}}\nside_loads:\n- {{kind: command, name: c, "
        "argv: [\"true\"], start: 1, in_server_cgroup: true}\n"))
    r = harness("run", side, "--target", target)
    assert r.returncode == 2, r.stderr
    assert "in_server_cgroup: lab host lab1 is another machine" in r.stderr
    assert json.loads(harness("runs", "--json", check=True).stdout)["runs"] == []  # none started


@pytest.mark.nightly
def test_unreachable_lab_host_is_named(tmp_path, results, lab):
    inv = tmp_path / "gone.yml"
    hosts = {"lab9": {**lab["hosts"]["lab1"], "ansible_host": "10.77.9.2",
                      "ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o "
                      f"UserKnownHostsFile={lab['dir'] / 'known_hosts'} -o ConnectTimeout=3"}}
    inv.write_text(yaml.safe_dump({"all": {"children": {"mysql_servers": {"hosts": hosts}}}}))
    f = target_scenario(tmp_path, "gone")
    r = harness("run", f, "--target", f"ansible:{inv}")
    assert r.returncode == 1
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert run["status"] == "failed" and run["host"] == "lab9"
    err = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)["error"]
    assert "lab9" in err and "unreachable" in err


def _children(pid: int) -> list[list[str]]:
    out = []
    for child, argv in proc.processes():
        try:
            stat = Path(f"/proc/{child}/stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            out.append(argv)
    return out


@pytest.mark.nightly
def test_lab_host_lost_mid_run_fails_the_run_at_once(tmp_path, results, lab):
    """lab1 drops off the network while sysbench runs against it: the watchdog stops the
    workload, the run fails naming the host, and the sandbox left there is named with
    the command that removes it once the host is back."""
    f = target_scenario(tmp_path, "lost", duration=120)
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", f, "--target",
                          f"ansible:{lab['inventory']}@lab1"], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root = lab["dir"] / "root1"
    try:
        # the sandbox and the prepare over Ansible first: ~1 min alone, 3+ on a busy host
        deadline = time.monotonic() + 300
        while not any(a[0].endswith("sysbench") and "run" in a for a in _children(p.pid)):
            if p.poll() is not None or time.monotonic() > deadline:
                p.kill()  # not its 120 s workload too
                raise AssertionError(f"no sysbench run within 300 s: {p.communicate()}")
            time.sleep(0.2)
        time.sleep(3)
        _sh("ip", "link", "set", "vhx1", "down")
        lost = time.monotonic()
        out, err = p.communicate(timeout=300)
        took = time.monotonic() - lost
    finally:
        _sh("ip", "link", "set", "vhx1", "up")
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, out + err
    # Well before sysbench's own limit (its duration plus 120 s) or a TCP timeout.
    assert took < 90, (took, out, err)
    assert "stopped answering: stopping the workload" in out + err
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert run["status"] == "failed" and run["host"] == "lab1"
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert "lab1" in show["error"] and "unreachable" in show["error"], show["error"]
    # The teardown could not reach the host: what was left, and how to remove it.
    (left,) = sandboxes(root)
    assert [e["name"] for e in show["events"] if e["kind"] == "server_lost"] == [left]
    assert f"left on lab1: sandbox {root / 'sandboxes' / left}" in out + err
    playbook("teardown", lab["inventory"], {"mysql_harness_hosts": "lab1",
                                            "mysql_server_sandbox":
                                                str(root / "sandboxes" / left)})
    assert sandboxes(root) == []
    assert not _procs_mentioning(str(root / "sandboxes"))


def test_a_scenario_value_is_never_templated_by_ansible(tmp_path):
    """Variables reach the playbooks as !unsafe: Jinja in a my.cnf value stays text
    (it would run `id` on the controller otherwise), and text YAML reads as something
    else stays that text (ansible-core 2.19 turns !unsafe 'ON' into true)."""
    from harness.providers.ansible import unsafe_yaml
    out = tmp_path / "out.txt"
    book = tmp_path / "book.yml"
    book.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"ansible.builtin.copy": {"dest": str(out), "content": "{{ value | to_json }}\n"}}]}]))
    varfile = tmp_path / "vars.yml"
    evil = ["{{ lookup('pipe', 'id') }}", "ON", "0", "007", "yes", "null", "2020-01-01"]
    varfile.write_text(unsafe_yaml({"value": evil}))
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    r = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inv),
                        str(book), "-e", f"@{varfile}"], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "ANSIBLE_CONFIG": str(
                           ANSIBLE / "ansible.cfg")})
    assert r.returncode == 0, r.stdout[-2000:]
    assert json.loads(out.read_text()) == evil


def test_the_role_starts_nothing_its_mysqld_reads_otherwise_than_written(tmp_path):
    """configure.yml reads the rendered my.cnf back with the build's own mysqld
    --print-defaults: the line the harness meant, or the play stops naming both. A value
    rendered without its quotes (a '#' starts a comment) stands in for any fault."""
    from harness.server import catalog
    from harness.server.mycnf import fmt_value, printed_defaults
    b = catalog.resolve("mariadb-10.11")
    box = tmp_path / "box"
    box.mkdir()
    (box / "OWNER.json").write_text(json.dumps({"created_by": "mysql-harness"}))
    sandbox = {"datadir": str(box / "data"), "port": 3399}
    extra = {"mysql_harness_hosts": "localhost", "mysql_server_sandbox": str(box),
             "mysql_server_name": b.name, "mysql_server_mysqld": str(b.mysqld),
             "mysql_server_env": b.env(), "mysql_server_sandbox_options": sandbox}
    meant = {"innodb_buffer_pool_size": "64M", "init_connect": "SET @a = 1 #2"}
    quoted = {k: fmt_value(v) for k, v in meant.items()}
    line = printed_defaults({**sandbox, **meant}.items())
    playbook("configure", LOCAL_INVENTORY, {**extra, "mysql_server_options": quoted,
                                            "mysql_server_print_defaults": line})
    assert 'init_connect = "SET @a = 1 #2"' in (box / "my.cnf").read_text()
    r = playbook("configure", LOCAL_INVENTORY, {**extra, "mysql_server_options": meant,
                                                "mysql_server_print_defaults": line},
                 check=False)
    assert r.returncode != 0
    assert f"{box}/my.cnf: mariadb-10.11's mysqld reads it otherwise than it was written; " \
        "it reads --datadir" in r.stdout and "--init_connect=SET @a = 1 where" in r.stdout, \
        r.stdout[-3000:]


def test_a_host_the_roles_do_not_support_is_refused_by_name(tmp_path):
    """provision.yml reads the host's system first: a host whose family cannot install
    the packages asked for (this Debian host, with only RedHat said to have apt here) is
    refused before any role runs, the message naming the host and what it runs."""
    box = tmp_path / "box"
    r = playbook("provision", LOCAL_INVENTORY, {
        "mysql_harness_hosts": "localhost", "bench_tools_install": True,
        "mysql_harness_apt_families": ["RedHat"], "mysql_server_sandbox": str(box)},
        check=False)
    assert r.returncode != 0
    assert re.search(r"localhost runs Debian \S+ \(Debian family, Linux x86_64\): lab hosts "
                     r"need Linux on x86_64", r.stdout), r.stdout[-2000:]
    assert "Install sysbench" not in r.stdout and not box.exists()


@pytest.mark.nightly
def test_5_5_on_two_lab_hosts(tmp_path, results, lab):
    """MySQL 5.5.55 on lab1 and Percona Server 5.5.52 on lab2, tarballs of the lab's
    mirror, provisioned by the roles and run in parallel into one store."""
    f = target_scenario(tmp_path, "lab_5_5", "[mysql-5.5.55, percona-5.5.52]", duration=5)
    r = _harness("run", f, "--target", f"ansible:{lab['inventory']}", timeout=1800)
    assert r.returncode == 0 and "2/2 runs ok on 2 hosts" in r.stdout, r.stderr + r.stdout
    runs = json.loads(_harness("runs", "--json", check=True).stdout)["runs"]
    assert sorted((x["server"], x["host"], x["status"]) for x in runs) == [
        ("mysql-5.5.55", "lab1", "ok"), ("percona-5.5.52", "lab2", "ok")]
    for run in runs:
        show = json.loads(_harness("show", run["run_id"], "--json", check=True).stdout)
        assert show["version"].startswith("5.5.") and \
            show["summary"]["measured"]["tps_median"] > 0, show["version"]


@pytest.mark.nightly
def test_the_default_nightly_over_two_lab_hosts_into_one_store(tmp_path, results, lab):
    """make nightly's harness nightly with the inventory: every scenario of
    scenarios/nightly/ on both lab hosts at once, into one store, then regress."""
    with mysql_store() as (url, password):  # the lab's shared store
        env = {"HARNESS_STORE": url}
        r = _harness("nightly", "--target", f"ansible:{lab['inventory']}", env=env,
                     timeout=3600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert password not in r.stdout + r.stderr
        runs = json.loads(_harness("runs", "--json", env=env, check=True).stdout)["runs"]
        site = tmp_path / "site"
        hist = _harness("history", "--html", str(site), env=env, check=True)
    assert "nightly: 4 scenario(s) on each of 2 host(s)" in r.stderr
    assert "lab1: done" in r.stderr and "lab2: done" in r.stderr
    names = sorted(p.stem for p in (ROOT / "scenarios" / "nightly").glob("*.yaml"))
    assert len(names) == 4
    assert sorted((x["scenario"], x["host"], x["status"]) for x in runs) == sorted(
        (f"nightly_{n}", h, "ok") for n in names for h in ("lab1", "lab2"))
    # The hosts ran at once: each host's first run began before the other's last ended.
    by_host = {h: sorted((x for x in runs if x["host"] == h), key=lambda x: x["started_at"])
               for h in ("lab1", "lab2")}
    assert by_host["lab1"][0]["started_at"] < by_host["lab2"][-1]["ended_at"]
    assert by_host["lab2"][0]["started_at"] < by_host["lab1"][-1]["ended_at"]
    # regress read the night: 4 scenarios x 2 hosts histories, each too short to judge.
    assert "no change point" in r.stdout and "too short to see a change" in r.stdout
    # Each run wrote its HTML report, and the history site links each run to it.
    assert all((results / "reports" / x["run_set"] / "report.html").is_file() for x in runs)
    assert f"history site: {site / 'index.html'} (8 histories)" in hist.stdout
    pages = [p.read_text() for p in site.glob("h-*.html")]
    assert len(pages) == 8 and all("report.html'><circle" in p for p in pages)
    first, last = min(x["started_at"] for x in runs), max(x["ended_at"] for x in runs)
    print(f"the default nightly over two lab hosts: {first} to {last}")
