"""`raytracer-app [gui]`: open the desktop app (the default command)."""

from __future__ import annotations

from raytracer_app.cli.parser import common


def add_parser(sub) -> None:
    common(sub.add_parser("gui", help="open the desktop app (the default)"))


def run(args) -> int:
    from raytracer_app.gui import run_gui

    return run_gui(args.backend, args.device)
