"""The GPU results the app ships (assets/reference-results/, made by scripts/reference_results.py on an H100
and an H200): result files in the format of `bench --json`, one per device and target, shown as ghost bars
and points labelled with the device so that a user without a GPU sees what the kernels do on one. No Qt:
the panels and the sphere count curve ask this module; a file that cannot be read is reported, never used."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kernels.harness.results import device_slug, short_device

REFERENCE_DIR = Path(__file__).resolve().parents[3] / "assets" / "reference-results"


@dataclass
class Reference:
    """One shipped result file: ``label`` is the short device name shown on charts."""

    path: Path
    result: object  # kernels.harness.results.Result
    label: str = field(init=False)

    def __post_init__(self):
        self.label = short_device(self.result.device.get("name", "?"))

    @property
    def target(self) -> str:
        return self.result.target

    def describe(self) -> str:
        """'H100 reference: NVIDIA H100 80GB HBM3, 2026-11-24, 18 rows (raytracer-app bench reduction ...)'"""
        r = self.result
        command = " ".join(r.command or [])
        return (f"{self.label} reference: {r.device.get('name', '?')}, {r.date[:10]}, {len(r.rows)} row(s)"
                + (f" ({command})" if command else ""))


def file_name(device: str, target: str) -> str:
    """'NVIDIA H100 80GB HBM3', 'reduction' -> 'nvidia-h100-80gb-hbm3-reduction.json' (scripts/reference_results.py
    names its files so, and :func:`listed` reads the device back from the name)."""
    return f"{device_slug(device)}-{target}.json"


def listed(target: str, folder: Path | None = None) -> list[tuple[str, Path]]:
    """(device label, path) of the reference files shipped for ``target``, by label; a folder listing only,
    no file is read (the GUI thread may ask)."""
    folder = Path(folder) if folder is not None else REFERENCE_DIR
    if not folder.is_dir():
        return []
    # a lesson's reference (DEVICE-lesson-reduction.json, kernels.lessons.references) and the per-line figures
    # (DEVICE-lines-reduction.json, kernels.inspector.line_references) are not bench results
    found = [(short_device(p.name[: -len(f"-{target}.json")].replace("-", " ").upper()), p)
             for p in folder.glob(f"*-{target}.json") if p.is_file()
             and not p.name.endswith((f"-lesson-{target}.json", f"-lines-{target}.json"))]
    return sorted(found)


def none_text(target: str) -> str:
    return (f"no reference results shipped for {target} (assets/reference-results/ is filled by "
            "scripts/reference_results.py on a GPU)")


def load(path: Path, target: str) -> Reference:
    """A shipped file, read and validated as any result file; InputError when it is not one of ``target``."""
    from kernels.errors import InputError
    from kernels.service.result_files import read_result

    result = read_result(path, "reference results")
    if result.target != target:
        raise InputError(f"reference results {path.name} hold {result.target} rows, not {target}")
    return Reference(Path(path), result)


def curve_points(reference) -> dict[str, list[tuple[int, float]]]:
    """A raytrace reference as the sphere count curve draws it: memory -> [(spheres, median ms)]."""
    points: dict[str, list] = {}
    for row in reference.result.rows:
        if row.timing is not None and row.timing.median_ms > 0 and row.variant.startswith("spheres-"):
            points.setdefault(row.variant.removeprefix("spheres-"), []).append((row.n, row.timing.median_ms))
    return {memory: sorted(p) for memory, p in points.items()}
