"""A lesson's reference results: lesson result files (:mod:`.results`) measured on an H100 and an H200 by
scripts/reference_results.py and shipped in assets/reference-results/ as DEVICE-lesson-NAME.json
(nvidia-h100-80gb-hbm3-lesson-reduction.json). Without a GPU a lesson shows them beside its verification,
each labelled with the device and date it was measured on: never as a measurement of this machine.

The folder is the project's assets/reference-results/, or the one the environment variable
RAYTRACER_LESSON_REFERENCES names (tests, or a folder of one's own references)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kernels.harness.results import device_slug, short_device

ENV = "RAYTRACER_LESSON_REFERENCES"
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "assets" / "reference-results"


def folder() -> Path:
    return Path(os.environ[ENV]) if os.environ.get(ENV) else REFERENCE_DIR


def file_name(device: str, lesson: str) -> str:
    """'NVIDIA H100 80GB HBM3', 'reduction' -> 'nvidia-h100-80gb-hbm3-lesson-reduction.json'."""
    return f"{device_slug(device)}-lesson-{lesson}.json"


def listed(lesson: str, where: Path | None = None) -> list[Path]:
    """The reference files of ``lesson`` in the folder, by name; a folder listing only, no file is read."""
    where = Path(where) if where is not None else folder()
    if not where.is_dir():
        return []
    return sorted(p for p in where.glob(f"*-lesson-{lesson}.json") if p.is_file())


@dataclass
class LessonReference:
    """One reference file read back: ``run`` a LessonRun measured on ``run.device`` (not this machine)."""

    run: object  # kernels.lessons.run.LessonRun, read from the file
    path: Path

    @property
    def label(self) -> str:
        """'H100': the short device name its columns carry."""
        return short_device(self.run.device)

    @property
    def date(self) -> str:
        return self.run.date[:10]

    def heading(self) -> str:
        """'reference, measured on NVIDIA H100 80GB HBM3 on 2026-11-24 (not this machine)'"""
        return f"reference, measured on {self.run.device} on {self.date} (not this machine)"

    def step(self, n: int, index: int):
        """The reference's StepResult of step ``index`` at size ``n``, or None."""
        return next((r for r in self.run.results if r.n == n and r.index == index), None)


def load(lesson, where: Path | None = None) -> tuple[list[LessonReference], list[str]]:
    """The readable references of ``lesson`` (a Lesson) that were measured on a GPU, and a line for each file
    refused (unreadable, another lesson's, or not timed): a bad file is reported, never shown."""
    from kernels.errors import InputError
    from kernels.lessons.results import read

    found, refused = [], []
    for path in listed(lesson.name, where):
        try:
            run = read(path, "lesson reference")
        except (InputError, OSError) as exc:
            refused.append(str(exc))
            continue
        if run.lesson.name != lesson.name:
            refused.append(f"lesson reference {path.name} holds the lesson {run.lesson.name}, not {lesson.name}")
        elif not run.measured:
            refused.append(f"lesson reference {path.name} was not timed on a GPU ({run.how})")
        else:
            found.append(LessonReference(run, path))
    return found, refused


def sizes(references: list[LessonReference]) -> list[int]:
    """Every size the references were measured at, in their order."""
    out: list[int] = []
    for ref in references:
        out += [n for n in ref.run.sizes if n not in out]
    return out


def cited(references: list[LessonReference], n: int, index: int) -> str:
    """'on an H100: 1.90x, on an H200: 1.85x' (the step speedups the references measured), or ''."""
    parts = []
    for ref in references:
        r = ref.step(n, index)
        if r is not None and r.step_speedup is not None:
            parts.append(f"on {_article(ref.label)} {ref.label}: {r.step_speedup:.2f}x")
    return ", ".join(parts)


def _article(label: str) -> str:
    return "an" if label[:1].upper() in "AEFHILMNORSX" else "a"
