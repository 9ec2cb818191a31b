"""The jobs: use cases of several steps (processes, files, analysis), one module each.

A command parses its options and calls a job; a job starts the processes it
needs (git, asv, the lockstep workers), reads and writes the store, and calls
the pure core (``analyse``, ``render``). Never imports jax.
"""
