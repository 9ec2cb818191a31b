"""``jaxbench init``'s core: what to write into a JAX project's repository (never jax).

* :mod:`.project`: the project found in a directory (git repository, name,
  import package, layout, build backend);
* :mod:`.sources`: where jaxbench, asv_runner and jax come from (PEP 610
  ``direct_url.json``, ``pip index versions``), and what is installed here;
* :mod:`.matrix`: the project's benchmark dependencies beside jax, pinned or
  said unpinned; :mod:`.launch`: asv's launch method;
* :mod:`.plan`: the files, rendered from the templates in ``jaxbench/templates``
  (pure: settings in, file texts out);
* :mod:`.apply`: what exists already, and writing all or nothing;
* :mod:`.existing`: the benchmark set-ups of the repository's own, left alone;
* :mod:`.gitignore`: what asv and jaxbench write that must not be committed.
"""
