"""The GPU kernel lab's GUI and command line. Holds no compute: everything runs in :mod:`kernels`."""

import time

STARTED = time.perf_counter()  # when the app's first line ran: the first frame's time counts from here
