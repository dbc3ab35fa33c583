"""What a sphere frame shows: the scene, the memory its kernel reads the spheres from and the access pattern
(the spheres' params object, as :class:`kernels.julia.params.JuliaParams` is the Julia set's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kernels.spheres.layout import PATTERNS, check_pattern
from kernels.spheres.scene import MAX_SPHERES, MEMORIES, Scene, check_count, generate_scene, memory_on

IMAGE_SIZE = (1024, 1024)  # the seed's image
DEFAULT_COUNT = 20


@dataclass(frozen=True)
class SphereParams:
    scene: Scene = field(default_factory=lambda: generate_scene(DEFAULT_COUNT, 0))
    memory: str = "global"  # where the kernel reads the spheres (the CPU twin reads host memory: memory_on)
    pattern: str = "uniform"

    def checked(self, flag: str = "") -> "SphereParams":
        from kernels.errors import one_of

        one_of(self.memory, MEMORIES, f"{flag}memory")
        one_of(self.pattern, PATTERNS, f"{flag}pattern")
        check_pattern(self.pattern)
        check_count(self.scene.count, MAX_SPHERES)
        return self

    def memory_used(self, backend) -> str:
        """The memory the frame's spheres are read from: the chosen one, or 'host' on the CPU twin."""
        return memory_on(backend, self.memory)
