"""The measuring half: imports jax and runs inside the benchmarked environment.

Workloads and their references, synchronized timing, the first-call
breakdown, XLA's work figures and the asv helper (:mod:`.asvsuite`). Nothing
in :mod:`jaxbench.analyse`, :mod:`jaxbench.render` or :mod:`jaxbench.store`
imports this package (``tests/test_architecture.py`` checks it).
"""
