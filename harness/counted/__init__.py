"""Counters of mysqld's instructions: what ``compare --measure instructions`` runs
mysqld under (callgrind, a software counter that runs anywhere) and how it reads a
window's count; :mod:`.pmu` says whether this host's hardware counter answers."""
