"""This project's asv suite: the demo workloads (``jaxbench.measure.workloads``).

Each ``jax_suite`` call makes two classes: the timed one (``time_warm``,
``peakmem_call``) and its figures (first call and its stages, accuracy,
XLA's cost and memory analysis, workload memory). Real programs written
with the general contract are in ``programs.py``; to benchmark your own
code, see the guide's docs/write-benchmarks.md.
"""

from jaxbench.measure.asvsuite import jax_suite

Predict, PredictFigures = jax_suite("Predict", "predict", params={"rows": [64, 96]})
Energy, EnergyFigures = jax_suite("Energy", "energy")
Structured, StructuredFigures = jax_suite("Structured", "structured")
# Logical CPU devices come from the environment's XLA_FLAGS (asv.conf.json's
# matrix); a device count the environment lacks is skipped, not failed.
Sharded, ShardedFigures = jax_suite("Sharded", "sharded", params={"devices": [1, 4]})
