"""The harness measuring itself: ``make bench`` (python -m harness.bench: start times,
prepare and restore speed, store throughput, collector and client cost, report
rendering) and ``make soak`` (python -m harness.bench.soak: memory over hours)."""
