"""The Qt-free render and benchmark service that the CLI and the GUI both call: requests, rendering a request,
a benchmark run from plain fields, the simulator's child process, and the fast start's first frame."""
