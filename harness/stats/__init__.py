"""The statistics both the workloads and the analysis use, below both: quantiles, the
log-ratio of two samples, steadiness, intervals and the three-valued verdict."""
