"""The analysing half's core: pure functions over asv results, never jax.

Benchmark kinds, statistics, the comparison of two commits, step detection
over a history and HLO text analysis. Takes and returns frozen dataclasses;
reading files is :mod:`jaxbench.store`'s job, rendering :mod:`jaxbench.render`'s.
"""
