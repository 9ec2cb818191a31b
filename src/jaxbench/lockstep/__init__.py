"""Side-by-side timing: a coordinator (never jax) and a worker.

:mod:`.coordinator` runs in jaxbench's own environment; :mod:`.worker` is run
*as a script* by each benchmarked environment's Python and needs only the
standard library and asv_runner there.
"""
