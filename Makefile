# mysql-harness: every install and every server start lives in this project's files.
# `make demo` and `make test` each work alone on a fresh machine: `make demo` installs
# what running the harness needs (setup-runtime), `make test` adds what only the tests
# need (setup). No server comes from the host's packages, and no host package is ever
# removed or replaced (harness/server/aptsetup.py refuses, naming it).

SHELL := /bin/bash
# Bytecode is cached: a shell that sets PYTHONDONTWRITEBYTECODE (these machines' does)
# makes every harness process compile ~100 modules again, 0.2-0.3 s of CPU each time,
# and the tests start a few hundred.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
HARNESS := $(VENV)/bin/harness
STAMPS := .stamps
# What the harness runs: the load generator, the collectors' percona-toolkit, a client
# (mysqldump for side loads on builds without one, my_print_defaults), libaio for the
# Oracle 5.x builds, debootstrap for the builds in Debian roots (the default among them),
# perf for the cpu_profile collector's flame graphs, gdb for stall_stacks' stacks,
# mariadb-backup for physical backups of MariaDB (a datadir dataset, and its test),
# valgrind for compare --measure instructions (callgrind counts mysqld's instructions),
# sqlite3 for store check --salvage (SQLite's own .recover reads a damaged file's pages).
RUNTIME_APT := sysbench percona-toolkit mariadb-client libaio1 libnuma1 debootstrap linux-perf gdb \
	mariadb-backup valgrind sqlite3
# What only the tests use: the report test's browser, the Docker and Ansible (SSH) targets,
# a Prometheus server that scrapes a run for the dashboard test, systemd-analyze for the
# nightly timer's units.
TEST_APT := chromium docker.io openssh-server prometheus systemd
# The catalog builds that install on the machines the harness is built on (Debian roots, npm, Maven).
DEFAULT_SERVER := mariadb-10.11
# A lab's tarball mirror (HARNESS_MIRROR): ../shared/tarballs when it is there, whose
# Percona Server and MySQL 5.5 builds (the published posts' servers) the catalog pins.
HARNESS_MIRROR ?= $(wildcard $(abspath ../shared/tarballs))
export HARNESS_MIRROR
SEED_SERVERS := $(if $(HARNESS_MIRROR),percona-5.5.52 percona-5.6.33 mysql-5.5.55)
SERVERS := $(DEFAULT_SERVER) mysql-5.7.29 mysql-5.6.24 mariadb-10.1.23 mariadb-10.2.11 \
	mysql-9.7 mariadb-11.8 mysql-8.0.31 $(SEED_SERVERS)

.PHONY: setup setup-runtime demo test test-unit test-ab check lint docs bench bench-power bench-switchback bench-inject bench-warmup bench-state bench-replay bench-placement bench-disk bench-observers bench-observer-windows bench-faults bench-instructions bench-cli soak clean-sandboxes help \
	exp-side-load exp-ssb docker-images \
	exp-insert-buffer exp-purge-flush exp-swap exp-upgrade exp-release-series exp-release-instructions exp-own-workload nightly \
	nightly-timer test-nightly

help:
	@echo "make demo   - run scenarios/quickstart.yaml on the embedded default server"
	@echo "make test   - run the test suite (unit + real servers), TEST_WORKERS=8 in parallel (20.7-22.6 min in the last green runs: docs/development.md)"
	@echo "make test-ab - compare --baseline/--candidate end to end on oltp_read_only and tpcc too (~2 min)"
	@echo "make test-nightly - the lab's targets end to end: two lab hosts (matrix, host lost, 5.5, the default nightly into one store) and containers (~20 min; CI runs it)"
	@echo "make check  - the fast loop: unit tests, the fake-provider lifecycle, lint (~3 min)"
	@echo "make docs   - the documentation site into results/site (mkdocs, --strict)"
	@echo "make bench  - write results/bench.json"
	@echo "make bench-power - only its verdict_power section: what a comparison can see here (~50 min)"
	@echo "make bench-inject - only its injected_effect section: one more point select a transaction, found or not (~25 min)"
	@echo "make bench-switchback - only its switchback section: an A/A switchback run on compare's default workload and its re-cut trials (~15 min)"
	@echo "make bench-warmup - only its warmup section: warmup_s auto against a fixed 5 s (~20 min)"
	@echo "make bench-state - only its state section: between_runs restore, restart, warmup (~15 min)"
	@echo "make bench-placement - only its placement section: does cpu_placement cut the noise (~15 min)"
	@echo "make bench-faults - only its faults section: the fault drills (store away, mysqld stopped, harness killed, disk full, a store I/O error, a stall, a stopped lock holder, half a store) and what survived (~15 min)"
	@echo "make bench-cli - only its cli section: wall and CPU seconds of --help, servers list, runs on 1,000 runs, show, validate (~1 min)"
	@echo "make bench-instructions - only its instructions section: the counted verdict's A/A false alarms, power for 1% and 0.3%, minutes to a verdict, a real change (~12 min)"
	@echo "make bench-moved - only its moved section: does what moved name a known cause first, 10 compares of each of two (~18 min)"
	@echo "make bench-replay - only its replay section: can a replay keep up with sysbench"
	@echo "make bench-disk - only its seek_disk section: the model disk against its model (~1 min)"
	@echo "make bench-observer-windows - only its observer_windows section: perf, wait_events and its wait instruments switched on and off in windows of one stream on one server, performance_schema on against off in windows on two sandboxes (~60 min; OBSERVER_WINDOWS=N OBSERVERS=... OBSERVER_SERVERS=... OBSERVER_THREADS=N for a longer, narrower or busier run)"
	@echo "make bench-observers - only its observers section: what performance_schema, wait_events and perf at 99 Hz cost in tps and in CPU per transaction (~15 min)"
	@echo "make exp-side-load - reproduce Percona's 2014 mysqldump side-load experiment (~30 min)"
	@echo "make exp-ssb - reproduce Percona's SSB innodb_old_blocks_time experiment (~45 min)"
	@echo "make exp-insert-buffer - the insert buffer filling up under the insert benchmark (~50 min)"
	@echo "make exp-purge-flush - purge lag and flushing under Read+Update and Read+Write ramps (~30 min)"
	@echo "make exp-swap I_KNOW=1 - buffer pool vs memory limit, and vm.dirty_ratio under a backup split (~25 min; changes the host's swap, vm.* and memory: asks first)"
	@echo "make exp-upgrade - one 5.7 my.cnf on MySQL 5.6/5.7/9.7 and MariaDB 10.11/11.8: verdicts vs 5.7 (~25 min)"
	@echo "make exp-release-series - MySQL 5.6.24, 5.7.29, 8.0.31 and 9.7 at 1 and 4 threads, each release against the one before (Callaghan's CPU per query) (~15 min)"
	@echo "make exp-release-instructions - the same steps counted: instructions per point select under callgrind, each release against the one before (~10 min)"
	@echo "make exp-own-workload - capture, dump and replay a workload on two buffer pools: which digests moved (~26 min)"
	@echo "  (SCALE=F on any exp- target multiplies data, pool and memory sizes for a lab)"
	@echo "make docker-images - local container images for --target docker (no registry)"
	@echo "make soak   - 2 h run at 1 s sampling, harness RSS verdict in results/soak.json"
	@echo "make nightly - the nightly scenarios (scenarios/nightly/), then harness regress (exit 3: new regression)"
	@echo "make nightly-timer - a systemd timer (or the crontab line) that runs harness nightly (the scenarios of make nightly) at NIGHTLY_AT"
	@echo "make lint   - ruff, mypy and ansible-lint"
	@echo "make setup-runtime - Debian packages, the virtualenv and the default server build"
	@echo "make setup  - that, plus what the tests need and every server build"

setup-runtime: $(STAMPS)/apt $(STAMPS)/venv $(STAMPS)/default-server
setup: setup-runtime $(STAMPS)/apt-test $(STAMPS)/venv-dev $(STAMPS)/servers

$(STAMPS)/apt: Makefile harness/server/aptsetup.py
	@mkdir -p $(STAMPS)
	python3 -m harness.server.aptsetup $(RUNTIME_APT)
	@touch $@

$(STAMPS)/apt-test: Makefile harness/server/aptsetup.py
	@mkdir -p $(STAMPS)
	python3 -m harness.server.aptsetup $(TEST_APT)
	@for t in npm mvn; do command -v $$t >/dev/null || { echo "error: $$t is needed to fetch server builds (apt-get install npm maven)"; exit 2; }; done
	@touch $@

$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	@touch $@

$(STAMPS)/venv-dev: $(STAMPS)/venv pyproject.toml
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

$(STAMPS)/default-server: $(STAMPS)/apt $(STAMPS)/venv harness/server/catalog.py
	$(HARNESS) servers install $(DEFAULT_SERVER)
	@touch $@

$(STAMPS)/servers: $(STAMPS)/apt $(STAMPS)/apt-test $(STAMPS)/venv harness/server/catalog.py
	$(HARNESS) servers install $(SERVERS)
	@touch $@

demo: setup-runtime
	$(HARNESS) run scenarios/quickstart.yaml

# The suite on TEST_WORKERS workers (pytest-xdist; a file's tests stay on one worker, so
# its module fixtures are made once), then the tests marked alone one by one; on any
# exit, Ctrl-C and SIGTERM included, what a killed worker left (sandboxes, lab hosts'
# network namespaces and sshd) is removed (tests/run.py). PYTEST_ARGS adds pytest
# options; TEST_JUNIT=DIR keeps each phase's junit XML (each test's seconds).
TEST_WORKERS ?= 8
PYTEST_ARGS ?=
TEST_JUNIT ?=
test: setup
	$(PY) -m tests.run --workers $(TEST_WORKERS) $(if $(TEST_JUNIT),--junit-dir $(TEST_JUNIT)) \
		$(if $(PYTEST_ARGS),-- $(PYTEST_ARGS))

# compare --baseline/--candidate end to end on the shipped workloads make test leaves out
# (the default one is in it): ~2 minutes here, both CPUs flat out.
test-ab: setup
	$(PY) -m pytest -q -n 2 -m every_workload tests/integration/test_compare_files.py

# The lab's targets end to end, which make test leaves out (each makes hosts or images
# first): two lab hosts (network namespaces with sshd) - their matrix at once, a host
# unreachable or lost mid-run, a profile a host cannot apply, MySQL and Percona Server
# 5.5, the default nightly (scenarios/nightly/) into one store, then regress - and
# containers: a host profile's limits, the current servers, 5.5 (images built once); the
# lab's host tuning through Ansible, the default collectors on 5.6, 5.7 and MariaDB 11.8.
# make test keeps one of each path: Ansible against localhost, two servers in containers,
# the collectors on the default server and MySQL 9.7.
test-nightly: setup
	$(PY) -m pytest -q -m nightly tests/integration

test-unit: $(STAMPS)/venv-dev
	$(PY) -m pytest -q tests/unit

# The fast loop: unit tests, the Runner's whole lifecycle on stand-in sandboxes in front
# of one real server, and lint (under 3 minutes here).
check: $(STAMPS)/venv-dev $(STAMPS)/default-server
	$(PY) -m pytest -q -n 2 tests/unit tests/integration/test_runner_lifecycle.py
	$(MAKE) --no-print-directory lint

lint: $(STAMPS)/venv-dev
	$(VENV)/bin/ruff check harness tests tools
	$(VENV)/bin/mypy harness
	cd ansible && PATH=$(CURDIR)/$(VENV)/bin:$$PATH ansible-lint -q
	$(PY) tools/cli_reference.py --check
	$(VENV)/bin/mkdocs build --strict --quiet

# The documentation site (docs/, mkdocs.yml) into results/site: the command-line
# reference regenerated from the parser, then built with --strict.
docs: $(STAMPS)/venv-dev
	$(PY) tools/cli_reference.py
	$(VENV)/bin/mkdocs build --strict

bench: setup
	$(PY) -m harness.bench --out results/bench.json

# One section of results/bench.json each, measured again and updated in place:
#   bench-replay     can a replay keep up with sysbench (statements/s against its qps,
#                    the client's CPU and memory)
#   bench-power      what harness compare can see here: variance components, smallest
#                    change per budget, A/A and injected-change trials
#   bench-inject     a real change of known size: one more point select a transaction,
#                    rounds of a run without and one with it (balanced order), the
#                    host's drift, and the rate at which compare --budget 15m --effect 3
#                    finds it, paired and not
#   bench-switchback one A/A switchback run on compare's default workload
#                    (scenarios/ab/oltp_read_write.yaml, 4 threads), its verdict and the
#                    re-cut trials; SWITCHBACK_WORKLOAD=oltp_read_only or
#                    one_thread (quickstart's data, one thread: the noisiest case)
#   bench-warmup     warmup_s: auto against a fixed 5 s, alternating
#   bench-state      between_runs restore, restart and warmup in turn
#   bench-placement  cpu_placement against none, alternating
#   bench-disk       the model disk (host_profile.disk) against its model, and how far
#                    from being its own bottleneck
#   bench-observers  what watching costs in tps and in mysqld's CPU per transaction:
#                    performance_schema on against off, the wait_events collector on
#                    top of it, perf at 99 Hz; mariadb-10.11
#                    and mysql-5.7.29, 3 balanced rounds of 15 s each
#   bench-observer-windows  the same costs window by window on one server: perf
#                    paused and resumed, the wait_events collector started and stopped,
#                    and (wait_instruments) every wait instrument switched on with it
#                    against the build's default instruments; 48 windows of 6 s in quads
#                    of random orientation, judged as a switchback; and performance_schema
#                    on against off (two_sandboxes: an A/A of the same two-sandbox
#                    design), a start-up setting, so two sandboxes side by side and
#                    one sysbench run a window on the side's; mariadb-10.11 and
#                    mysql-5.7.29. Longer or
#                    narrower: OBSERVER_WINDOWS=200 OBSERVERS=wait_events
#                    OBSERVER_SERVERS=mariadb-10.11 (a server and observer take
#                    windows x 6 s + ~1 min; the rows not measured are kept);
#                    OBSERVER_THREADS=2 for a stream that keeps both cores busy.
#                    Not in the default set (MySQL 5.7.8+ only): OBSERVERS=innodb_mutex
#                    (InnoDB's latch monitor and SHOW ENGINE INNODB MUTEX each second,
#                    with performance_schema off); waits_build_default (the same beside
#                    the build's own performance_schema, its summary read too: the
#                    collector's instruments: build_default); innodb_latches (InnoDB's
#                    latches alone switched on beside the build's default instruments)
#   bench-faults     the fault drills: the results store killed at a run's end, in its
#                    middle and for good, mysqld stopped for 12 s and for good, the
#                    harness killed, the store's disk filling (for good, and for 3 s
#                    then the harness killed), the store's I/O error and lock at the
#                    end, a 20 s stall, a stopped lock holder, half a store salvaged;
#                    what survived each
#   bench-cli        the commands a user types to look around, each a fresh interpreter:
#                    wall (median of 5) and CPU seconds; runs and show on a store of
#                    1,000 runs (goals: runs 0.15 s, validate 0.3 s wall)
#   bench-instructions  the counted verdict (compare --measure instructions) here: an
#                    A/A lifetime of 48 point-select windows under callgrind and 4
#                    restarts (the CVs), 400 re-cut trials each of A/A, +1% and +0.3%
#                    (false alarms, power, minutes to a verdict), and a real change
#                    (slow_query_log on) compared as a user runs it
#   bench-moved      does what moved name a known cause first: a small buffer pool
#                    (interleaved) and the general log (switchback), 10 compares each
BENCH_SECTIONS := replay=replay power=verdict_power switchback=switchback \
	inject=injected_effect warmup=warmup \
	state=state placement=placement disk=seek_disk observers=observers \
	observer-windows=observer_windows moved=moved faults=faults cli=cli \
	instructions=instructions
BENCH_TARGETS := $(foreach s,$(BENCH_SECTIONS),bench-$(firstword $(subst =, ,$(s))))
OBSERVER_WINDOWS ?= 48
OBSERVER_THREADS ?= 1
OBSERVERS ?= cpu_profile wait_events wait_instruments performance_schema two_sandboxes
OBSERVER_SERVERS ?= mariadb-10.11 mysql-5.7.29
SWITCHBACK_WORKLOAD ?= oltp_read_write
bench-switchback: BENCH_ARGS = --switchback-workload $(SWITCHBACK_WORKLOAD)
bench-observer-windows: BENCH_ARGS = --observer-windows $(OBSERVER_WINDOWS) \
	--observer-threads $(OBSERVER_THREADS) \
	$(foreach o,$(OBSERVERS),--observer $(o)) $(foreach s,$(OBSERVER_SERVERS),--observer-server $(s))
$(BENCH_TARGETS): bench-%: setup
	$(PY) -m harness.bench --only $(lastword $(subst =, ,$(filter $*=%,$(BENCH_SECTIONS)))) \
		$(BENCH_ARGS) --out results/bench.json

# 2 hours at 1 s sampling with every collector; RSS series and verdict in results/soak.json.
SOAK_MINUTES ?= 120
SOAK_RATE ?= 0
# Local images for --target docker (no registry: debootstrap + the catalog builds).
DOCKER_SERVERS ?= mariadb-10.11 mysql-5.7.29
docker-images: setup
	$(HARNESS) images build $(foreach s,$(DOCKER_SERVERS),--server $(s))

soak: setup-runtime
	$(PY) -m harness.bench.soak --minutes $(SOAK_MINUTES) --rate $(SOAK_RATE) --out results/soak.json

# Published experiments, one target each (scenarios/*.yaml document their scaling).
# The table, the verdicts and the plots are printed at the end; `harness report RUN_SET`
# prints them again from the store.
# SCALE=F multiplies the sizes (data, buffer pool, memory limit, ...) for lab hardware.
SCALE ?=
RUN := $(HARNESS) run $(if $(SCALE),--scale $(SCALE))
# The scenarios of an experiment in turn, each held against its reference in
# scenarios/reference/ when one ships (harness run --against): one that DIFFERS (exit 3)
# does not stop the next, and the target exits 3 at the end; any other failure stops it.
# $(call EXPERIMENT,SCENARIO_STEMS[,FLAGS])
EXPERIMENT = @rc=0; for s in $(1); do ref=scenarios/reference/$$s.json; \
	set -- $(2) $$([ -f $$ref ] && echo --against $$ref) scenarios/$$s.yaml; \
	echo "$(RUN) $$*"; $(RUN) "$$@"; c=$$?; \
	[ $$c -eq 0 ] || [ $$c -eq 3 ] || exit $$c; [ $$c -eq 0 ] || rc=3; done; exit $$rc

exp-side-load: setup-runtime
	$(call EXPERIMENT,side_load_mysqldump)

exp-ssb: setup-runtime
	$(call EXPERIMENT,ssb_old_blocks_time)

exp-insert-buffer: setup-runtime
	$(call EXPERIMENT,insert_buffer insert_buffer_5_5)

exp-purge-flush: setup-runtime
	$(call EXPERIMENT,purge_flush_read_update purge_flush_read_write purge_flush_5_5)

# A DBA's own workload, end to end on data made here: a captured slow log (sysbench and
# reporting queries), a mysqldump, the log replayed on the dump against two buffer pool
# sizes; which digests moved, and whether any digest's results differ.
exp-own-workload: setup-runtime
	$(PY) tools/own_workload.py

# The upgrade off 5.7: sysbench point selects, read-only and read-write at 1, 2 and 4
# threads, then SSB's result fingerprints, on five versions; each against mysql-5.7.29.
exp-upgrade: setup-runtime
	$(call EXPERIMENT,upgrade_point_select upgrade_read_only upgrade_read_write upgrade_ssb)

exp-release-series: setup-runtime
	$(call EXPERIMENT,release_series_point_select release_series_read_write)

# The same steps counted: each release against the one before, instructions per point
# select under callgrind (compare --measure instructions, each build on its own sandbox
# by restarts). Exit 3 when a step is worse (the anchor's direction), 4 when one is
# undecided; the verdicts are in results/reports/*/compare.json.
RELEASES := mysql-5.6.24 mysql-5.7.29 mysql-8.0.31 mysql-9.7
exp-release-instructions: setup-runtime
	@rc=0; set -- $(RELEASES); while [ $$# -ge 2 ]; do \
	  echo "$(HARNESS) compare --baseline-server $$1 --candidate-server $$2 --workload oltp_point_select --measure instructions"; \
	  $(HARNESS) compare --baseline-server $$1 --candidate-server $$2 \
	    --workload oltp_point_select --measure instructions; c=$$?; \
	  [ $$c -eq 0 ] || [ $$c -eq 3 ] || [ $$c -eq 4 ] || exit $$c; \
	  [ $$c -eq 0 ] || [ $$rc -eq 3 ] || rc=$$c; shift; done; exit $$rc

# Makes a swap file and changes vm.* sysctls on this machine for the run sets (all
# restored at the end): the scenarios mark the host disposable, and so does this line.
SWAP_SCENARIOS := swap_pool_uniform swap_pool_pareto swap_dirty_ratio swap_dirty_ratio_cgroup
# It changes this host while it runs: refused (exit 5, as the harness refuses a change to
# the host) unless I_KNOW=1 says the host can be spared.
exp-swap: setup-runtime
	@if [ "$(I_KNOW)" != 1 ]; then \
	  echo "make exp-swap changes this host while it runs: a 4G swap file when the host has"; \
	  echo "none, vm.swappiness, vm.dirty_* (ratios and bytes), a memory cgroup around mysqld,"; \
	  echo "and a balloon process that locks all of the host's free memory but 1 GB for"; \
	  echo "minutes (everything else on the host may be swapped out or slowed). Each is put back"; \
	  echo "when its run set ends, fails or is interrupted, the balloon first; a harness killed"; \
	  echo "before it could leaves a journal that the next 'harness run' or 'make clean-sandboxes'"; \
	  echo "restores from."; \
	  echo "Run it on a host you can spare: make exp-swap I_KNOW=1"; \
	  exit 5; fi
	$(call EXPERIMENT,$(SWAP_SCENARIOS),--i-know-this-is-disposable)

# The lab's nightly job: harness nightly (every scenario of NIGHTLY, by default
# scenarios/nightly/, each by its own run; with NIGHTLY_TARGET=ansible:INVENTORY on every
# host of the inventory at once), then change points since the night began; exit code 3
# when a regression is new, 1 when a run failed. NOTIFY=@FILE (a file holding the
# webhook's URL; or HARNESS_NOTIFY_URL in the environment) posts either there.
# Their values reach the recipes through the environment, never the recipe's text (a
# quote or a ';' in one is then a refused value, not a command): harness/runner/timer.py
# checks each for what it is.
export NIGHTLY NIGHTLY_TARGET NOTIFY NIGHTLY_AT SYSTEMD_DIR
nightly: setup-runtime
	$(PY) -m harness.runner.timer run

# The nightly on a schedule: a systemd timer and service for this checkout (NIGHTLY,
# NIGHTLY_TARGET and NOTIFY=@FILE as given, at NIGHTLY_AT, default 02:00) that run the
# harness itself, enabled where systemd runs; else the crontab line to use.
# SYSTEMD_DIR=DIR writes the units there only.
nightly-timer: setup-runtime
	@$(PY) -m harness.runner.timer units

# Sandboxes left by a killed harness (a live harness removes its own; kept ones stay).
clean-sandboxes:
	$(PY) -c "from harness.providers import remove_stale; remove_stale(verbose=True)"
