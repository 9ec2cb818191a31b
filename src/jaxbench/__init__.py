"""jaxbench: benchmark-regression tracking for JAX code, built on asv.

The package has two halves that meet only through asv's results files:

* measuring (:mod:`jaxbench.measure`): needs jax, runs inside asv environments;
* analysing (:mod:`jaxbench.analyse`, :mod:`jaxbench.render`,
  :mod:`jaxbench.store`): needs asv, numpy and scipy, never jax.

:mod:`jaxbench.lockstep` times two environments side by side, and
:mod:`jaxbench.commands` holds the command line's thin edges. Importing
``jaxbench`` itself imports neither half.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
