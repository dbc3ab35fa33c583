"""`raytracer-app cluster start | status | stop | certs`: a Dask scheduler and a worker per GPU on this host
(kernels/cluster/local.py), and the certificates a cluster beyond loopback needs (docs/cluster.md)."""

from __future__ import annotations

import os

from kernels.errors import InputError
from raytracer_app.cli.parser import Parser, add_list


def add_parser(sub) -> None:
    p = sub.add_parser("cluster", help="a GPU server for a class or a team: start, status, stop a Dask cluster on "
                                       "this host; make its certificates (docs/cluster.md)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser, required=True)
    start = actions.add_parser("start", help="start a scheduler and one worker process per GPU (or, without a GPU, "
                                             "workers for the cpu and sim backends), detached")
    add_list(start, "--gpus", default="all", metavar="all|I,...", noun="GPU index",
             help="'all' (default) or GPU indices, e.g. 0,1 (or the flag repeated)")
    start.add_argument("--listen", default="127.0.0.1:8786",
                       help="ADDR:PORT the scheduler listens on (default 127.0.0.1:8786, loopback); any other "
                            "address needs --certs")
    start.add_argument("--certs", default=None, metavar="DIR",
                       help="mutual TLS with the certificates of `cluster certs DIR`: only clients holding its "
                            "client certificate are admitted")
    status = actions.add_parser("status", help="the cluster's workers: GPU, model, clocks, what each runs")
    cluster_address(status)
    actions.add_parser("stop", help="end what `cluster start` began on this host")
    certs = actions.add_parser("certs", help="make a CA, a server and a client certificate in DIR")
    certs.add_argument("file", metavar="DIR", help="folder to write ca.pem, server.pem, client.pem and their keys")
    add_list(certs, "--host", default=None, noun="name",
             help="names or addresses the server is reached by, separated by commas or the flag repeated (this "
                  "host's name, localhost and loopback are always in)")


def cluster_address(p) -> None:
    """--cluster and --certs, as every command that can run on a cluster takes them."""
    from kernels.cluster import ADDRESS_ENV, CERTS_ENV

    p.add_argument("--cluster", default=os.environ.get(ADDRESS_ENV) or None, metavar="ADDRESS",
                   help=f"run on the Dask cluster at HOST:PORT or tls://HOST:PORT (default ${ADDRESS_ENV}; none: "
                        "here)")
    p.add_argument("--certs", default=os.environ.get(CERTS_ENV) or None, metavar="DIR",
                   help=f"the client certificate for a TLS cluster, from `cluster certs DIR` (default ${CERTS_ENV})")


def on_option(p, what: str) -> None:
    p.add_argument("--on", default=None, metavar="MODEL",
                   help=f"with --cluster: the GPU model {what} on (e.g. H200; default: the model with the most "
                        "GPUs for cuda, any worker for cpu and sim)")


def one_place(args, client):
    """(backend, resources) of a command that runs on one kind of worker (render, lesson): the backend named
    (auto: cuda when the cluster has a GPU, else cpu), a GPU as its worker reports it, so the request is
    checked here; the resources its jobs ask for."""
    from kernels.backend import Backend, choice
    from kernels.cluster import remote

    if args.device is not None:
        raise InputError("--device picks a GPU here; give it without --cluster (--on picks the workers)")
    if args.on == "each":
        raise InputError(f"--on each applies to bench; `{args.command}` runs in one place: give a GPU model")
    named = choice(args.backend)
    backend = Backend(named.name) if not named.is_auto else Backend("cuda" if remote.gpu_models(client) else "cpu")
    (_, resources), = remote.targets(client, args.on, backend).items()
    return (remote.remote_gpu(client, resources) if backend.is_gpu else backend), resources


def run(args) -> int:
    from kernels.cluster import local

    if args.action == "certs":
        return _certs(args)
    if args.action == "start":
        gpus = args.gpus if isinstance(args.gpus, str) else ",".join(args.gpus)  # 'all', or the list given
        state = local.start(gpus, args.listen, args.certs)
        workers = [p["name"] for p in state["processes"][1:]]
        print(f"cluster at {state['address']}: {len(workers)} worker(s) {', '.join(workers)}")
        print(f"logs and state: {local.state_path().parent}")
        import socket

        shown = state["address"].replace("0.0.0.0", socket.gethostname()).replace("[::]", socket.gethostname())
        print(f"run on it: raytracer-app bench reduction --cluster {shown}"
              + (f" --certs {args.certs}" if args.certs else ""))
        return 0
    if args.action == "stop":
        ended = local.stop()
        print(f"stopped {ended} process(es)")
        return 0
    return _status(args)


def _status(args) -> int:
    from kernels.cluster import local, remote

    address, certs = args.cluster, args.certs
    if address is None:
        state = local.read_state()
        if state is None:
            raise InputError("no cluster was started here; name one with --cluster ADDRESS")
        address, certs = state["address"], certs or state.get("certs")
    client = remote.connect(address, certs)
    try:
        for line in local.status_lines(client):
            print(line)
    finally:
        client.close()
    return 0


def _certs(args) -> int:
    from kernels.cluster import security

    folder = args.file
    existing = [str(p) for pair in security.paths(folder).values() for p in pair if p.exists()]
    if existing:
        raise InputError(f"{folder} already holds certificates ({existing[0]}); remove them or choose another folder")
    written = security.make_certificates(folder, args.host)
    print(f"wrote {len(written)} files to {folder}: the server keeps all of them; each laptop gets ca.pem, "
          "client.pem and client-key.pem (whoever holds them can run code on the workers)")
    return 0
