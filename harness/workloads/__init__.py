"""Workloads: prepare, run (returns samples and a summary), cleanup. One file per tool."""
