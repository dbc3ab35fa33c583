"""The kernel inspector: what a GPU variant's kernel compiles to, without a GPU.

For every GPU variant of every algorithm (declared next to each variant in its algorithm package, read by :mod:`kernels.inspector.declarations`) it compiles the
kernel for a chosen architecture in a child process (numba-cuda's ``compile_ptx``), runs ``ptxas -v`` for
its resources and ``nvdisasm -gi`` for SASS linked to Python lines, and derives the instruction mix, the
theoretical occupancy and a roofline placement. :func:`kernels.inspector.report.inspect` is the entry
point; :class:`kernels.inspector.report.KernelReport` is what it returns. No Qt here.
"""
