"""Every lesson, in the order the CLI and the window list them."""

from __future__ import annotations

from kernels.errors import InputError
from kernels.lessons.atomics import ATOMICS
from kernels.lessons.constant_memory import CONSTANT_MEMORY
from kernels.lessons.hash_tables import HASH_TABLES
from kernels.lessons.lesson import Lesson
from kernels.lessons.reduction_ladder import REDUCTION

LESSONS: tuple[Lesson, ...] = (REDUCTION, CONSTANT_MEMORY, ATOMICS, HASH_TABLES)


def names() -> tuple[str, ...]:
    return tuple(lesson.name for lesson in LESSONS)


def by_name(name: str) -> Lesson:
    for lesson in LESSONS:
        if lesson.name == name:
            return lesson
    raise InputError(f"unknown lesson {name!r}; known: {', '.join(names())}")
