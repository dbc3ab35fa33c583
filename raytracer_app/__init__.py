"""The GPU kernel lab's GUI and command line. Holds no compute: everything runs in :mod:`kernels`."""
