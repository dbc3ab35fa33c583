"""`raytracer-app devices`: the GPUs' properties (as seed 003 prints them) and the CPU backend."""

from __future__ import annotations

from raytracer_app.cli.parser import common, resolve_if_named


def add_parser(sub) -> None:
    common(sub.add_parser("devices", help="print the GPUs' properties (as seed 003 does) and the CPU backend"))


def run(args) -> int:
    from kernels.backend.devices import devices_report

    resolve_if_named(args)  # `devices --backend cuda` without a GPU: exit 2, as render
    print(devices_report())
    return 0
