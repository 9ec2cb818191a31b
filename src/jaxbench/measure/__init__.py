"""The measuring half: imports jax and runs inside the benchmarked environment.

The public contract for benchmarking your own code::

    from jaxbench.measure import Args, Golden, Unchecked, Workload, jax_suite

Workloads and their references, synchronized timing, the first-call
breakdown, XLA's work figures and the asv helper (:mod:`.asvsuite`). Nothing
in :mod:`jaxbench.analyse`, :mod:`jaxbench.render` or :mod:`jaxbench.store`
imports this package (``tests/test_architecture.py`` checks it).
"""

from jaxbench.measure.asvsuite import jax_suite
from jaxbench.measure.workloads import FLOAT64, Args, Golden, Unchecked, Workload

__all__ = ["FLOAT64", "Args", "Golden", "Unchecked", "Workload", "jax_suite"]
