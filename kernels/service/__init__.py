"""The one door the CLI and the GUI both call, Qt-free: the requests (``BenchRequest`` in bench_request.py, its
fields declared once in fields.py; ``RenderRequest`` in requests.py), rendering a request (render.py), a
benchmark run (``bench.run_bench``: here, in the simulator's child or in fresh processes, bench_processes.py),
result files read with their request validated (result_files.py), the ``--counters`` child's entry
(counters_child.py) and the fast start's first frame (first_frame.py)."""
