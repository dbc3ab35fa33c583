"""Users' own variants: a Python file (docs/user-variants.md) that declares ``TARGET``, ``NAME``,
``SUPPORTS``, optionally ``LAUNCH``, its ``@cuda.jit`` kernels and ``run(...)``, loaded as one more
:class:`kernels.harness.variants.Variant` of that algorithm, timed by the same harness and verified against
the algorithm's own reference.

The file's code never runs in the app's process: :mod:`.loader` reads it and checks its syntax, and a
child process (:mod:`kernels.backend.child`, :mod:`.child_side`) imports, compiles and times it under a
watchdog. :mod:`.templates` writes a built-in variant out as such a file. Imports no numba."""
