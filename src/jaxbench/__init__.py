"""jaxbench: benchmark-regression tracking for JAX code, built on asv.

The package has two halves that meet only through asv's results files:

* measuring (``workloads``, ``timing``, ``reference``, ``report``,
  ``asvsuite``, ``xla_analysis``): needs jax, runs inside asv environments;
* analysing (``results``, ``kinds``, ``stats``, ``compare``, ``detect``,
  ``markdown``, ``html``, ``hlo``): needs asv, numpy and scipy, never jax.

Importing ``jaxbench`` itself imports neither half.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
