"""Roofline ceilings per architecture from published figures of a reference part, and placing a
measured (bytes, operations, time) point under them.

Peak arithmetic = SMs x lanes per SM x clock (x 2 for floating point: a fused multiply-add counts as
two operations). On a GPU, pass the measured copy bandwidth and the device's own SM count and clock
instead (:func:`ceilings_for_device`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.errors import InputError


@dataclass(frozen=True)
class Ceilings:
    label: str  # where the figures come from
    sm_count: int
    clock_ghz: float
    lanes_per_sm: dict  # 'fp32' / 'fp64' / 'int32' -> operations per clock per SM
    bandwidth_gbs: float
    measured_ops: tuple = ()  # (kind, operations per second) measured on the device: replace the formula's

    def peak_ops(self, kind: str) -> float:
        """Operations per second of ``kind`` ('fp32', 'fp64', 'int32')."""
        measured = dict(self.measured_ops).get(kind)
        if measured:
            return measured
        fma = 2 if kind.startswith("fp") else 1
        return self.sm_count * self.lanes_per_sm[kind] * fma * self.clock_ghz * 1e9


def _published(part, sms, clock, fp32, fp64, int32, bandwidth):
    return Ceilings(f"published figure for {part}", sms, clock, {"fp32": fp32, "fp64": fp64, "int32": int32},
                    bandwidth)


# Vendor data sheets and whitepapers: SM count, boost clock, FP32/FP64/INT32 lanes per SM, memory bandwidth
PUBLISHED: dict[str, Ceilings] = {
    "sm_75": _published("Tesla T4", 40, 1.59, 64, 2, 64, 320),
    "sm_80": _published("A100 SXM4 80GB", 108, 1.41, 64, 32, 64, 2039),
    "sm_86": _published("GeForce RTX 3090", 82, 1.695, 128, 2, 64, 936),
    "sm_89": _published("GeForce RTX 4090", 128, 2.52, 128, 2, 64, 1008),
    "sm_90": _published("H100 SXM5", 132, 1.98, 128, 64, 64, 3350),
    "sm_120": _published("GeForce RTX 5090", 170, 2.407, 128, 2, 64, 1792),
}


def published(arch: str) -> Ceilings:
    try:
        return PUBLISHED[arch]
    except KeyError:
        raise InputError(f"no published roofline figures stored for {arch}; known: {', '.join(PUBLISHED)}") from None


def ceilings_for_device(arch: str, name: str, sm_count: int, clock_ghz: float, copy_bandwidth_gbs: float) -> Ceilings:
    """Ceilings of a real device: its SM count and clock, the architecture's per-SM rates, and the
    measured copy bandwidth."""
    lanes = published(arch).lanes_per_sm
    return Ceilings(f"{name}: {sm_count} SMs at {clock_ghz:g} GHz, measured copy bandwidth", sm_count, clock_ghz,
                    dict(lanes), copy_bandwidth_gbs)


def with_measured_ceilings(ceilings: Ceilings, measured: dict) -> Ceilings:
    """``ceilings`` with the ceilings a run measured on this device (kernels/harness/ceilings.py, {name: rate per
    second}): the FMA issue rates replace the compute peaks (an FMA is two operations), random 32-byte sector
    reads the memory roof (32 bytes each: what a hash table's traffic model counts per key)."""
    import dataclasses

    ops = dict(ceilings.measured_ops)
    for name, kind in (("fma-float32", "fp32"), ("fma-float64", "fp64")):
        if measured.get(name):
            ops[kind] = 2 * measured[name]
    said = [w for n, w in (("fma-float32", "float32 FMA"), ("fma-float64", "float64 FMA"),
                           ("sector-reads", "random 32-byte sectors")) if measured.get(n)]
    if not said:
        return ceilings
    sectors = measured.get("sector-reads")
    return dataclasses.replace(ceilings, measured_ops=tuple(sorted(ops.items())),
                               bandwidth_gbs=32 * sectors / 1e9 if sectors else ceilings.bandwidth_gbs,
                               label=f"measured in the run: {', '.join(said)}; {ceilings.label}")


@dataclass(frozen=True)
class RooflinePoint:
    intensity: float  # operations per byte
    achieved_ops: float  # per second
    achieved_gbs: float
    ceiling_ops: float  # min(peak, intensity x bandwidth): the most the roofline allows at this intensity
    bound: str  # 'memory' or 'compute': which ceiling is the lower one at this intensity
    percent_of_ceiling: float


def place(bytes_moved: float, ops: float, seconds: float, ceilings: Ceilings, kind: str = "fp32") -> RooflinePoint:
    if bytes_moved <= 0 or seconds <= 0:
        raise InputError("a roofline point needs bytes > 0 and a time > 0")
    intensity = ops / bytes_moved
    memory_roof = intensity * ceilings.bandwidth_gbs * 1e9
    peak = ceilings.peak_ops(kind)
    ceiling = min(memory_roof, peak)
    achieved = ops / seconds
    return RooflinePoint(intensity, achieved, bytes_moved / seconds / 1e9, ceiling,
                         "memory" if memory_roof < peak else "compute", 100.0 * achieved / ceiling)


def place_run(target: str, variant: str, n: int, threads_per_block: int, blocks: int, seconds: float,
              ceilings: Ceilings) -> RooflinePoint:
    """A benchmark row on the roofline: the variant's own traffic model (its declaration) at the row's size and
    launch, and its measured time."""
    from kernels.inspector.declarations import declaration

    traffic = declaration(target, variant).traffic(n, threads_per_block, blocks)
    return place(traffic.bytes, traffic.ops, seconds, ceilings, traffic.ops_kind)
