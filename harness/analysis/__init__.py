"""One analysis layer, used by the runner and by the reports alike (it never imports
the driver): phases and their findings (``phases``, ``findings``), the verdict every
finding stores (``verdict``), the figures a run reports (``figures``), A/B verdicts
(``compare``, and ``sequential`` for comparisons that stop when they are sure), change
points in the stored history (``regress``), and the nearest-rank quantile the workloads
report (``quantile``)."""
