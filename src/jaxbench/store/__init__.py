"""Files on disk: asv's results and benchmarks.json, the HLO store, atomic writes.

All reading and writing of results lives here (never jax).
"""
