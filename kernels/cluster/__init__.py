"""Beyond one machine, through Dask distributed (docs/cluster.md): a laptop drives a GPU server, a sweep uses
every GPU of a host. Optional: the `cluster` extra (dask[distributed]; `cluster-certs` adds cryptography); with
no cluster named nothing here is imported and everything runs in this process, as before.

- jobs.py: a job (a BenchRequest, `bench --counters`'s ncu batch or a RenderRequest, a user's variant file as
  its text) to JSON and back
- worker_side.py: what a Dask worker runs: the job through the one door (kernels.service), rows streamed back
  as they finish (``Worker.log_event``), a stop flag (``distributed.Event``) checked between rows
- remote.py: the client's side: connect, split a sweep over the workers of one GPU model, stream, stop,
  restart a worker that does not stop, merge the rows in a local run's order
- pieces.py: how a sweep is split (or a lesson's separate step requests), the order its pieces are handed
  out in, and the merge (pure: no Dask)
- problem_cache.py: a worker's problems of one sweep, kept between its pieces
- security.py: `cluster certs` (a CA, a server and a client certificate) and the TLS settings
- local.py: `cluster start | status | stop` on this host: a scheduler and one worker process per GPU

Imports no numba and no Dask at import time."""

# resources a worker of this app declares (besides its GPU's model, e.g. H200=1)
GPU_RESOURCE = "GPU"
ADDRESS_ENV = "RAYTRACER_CLUSTER"
CERTS_ENV = "RAYTRACER_CLUSTER_CERTS"
