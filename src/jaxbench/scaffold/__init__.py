"""``jaxbench init``'s core: what to write into a JAX project's repository (never jax).

* :mod:`.project`: the project found in a directory (git repository, name,
  import package, layout, build backend);
* :mod:`.sources`: where jaxbench, asv_runner and jax come from (PEP 610
  ``direct_url.json``, ``pip index versions``);
* :mod:`.plan`: the files, rendered from the templates in ``jaxbench/templates``
  (pure: settings in, file texts out);
* :mod:`.apply`: what exists already, and writing all or nothing.
"""
