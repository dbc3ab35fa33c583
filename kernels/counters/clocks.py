"""Clocks, power and throttle reasons of a GPU around a row's timed repeats, through NVML (``nvidia-ml-py``,
imported as ``pynvml``; optional). Without it every clock cell stays empty and :func:`unavailable` says why,
once."""

from __future__ import annotations

import functools
from dataclasses import dataclass

# NVML's clock-event (throttle) reason bits; idle and the application-clock setting are not slow-downs
REASONS = {
    0x1: "idle", 0x2: "application clocks", 0x4: "power cap", 0x8: "hardware slowdown", 0x20: "sync boost",
    0x40: "thermal (software)", 0x80: "thermal (hardware)", 0x100: "power brake", 0x200: "display clocks",
}
HARMLESS = 0x1 | 0x2 | 0x200


@dataclass(frozen=True)
class Snapshot:
    sm_mhz: int
    memory_mhz: int
    power_w: float | None
    reasons: int  # NVML's bit mask

    @property
    def throttled(self) -> bool:
        return bool(self.reasons & ~HARMLESS)

    def reason_text(self) -> str:
        names = [text for bit, text in REASONS.items() if self.reasons & bit and not bit & HARMLESS]
        return ", ".join(names) if names else "none"


@dataclass(frozen=True)
class Clocks:
    before: Snapshot
    after: Snapshot

    @property
    def throttled(self) -> bool:
        return self.before.throttled or self.after.throttled

    def reason_text(self) -> str:
        texts = {self.before.reason_text(), self.after.reason_text()} - {"none"}
        return "; ".join(sorted(texts)) or "none"

    @classmethod
    def from_dict(cls, d: dict) -> "Clocks":
        """The record a result file (or a cluster worker's row) holds, as ``dataclasses.asdict`` wrote it;
        KeyError or TypeError when it is not one."""
        return cls(Snapshot(**d["before"]), Snapshot(**d["after"]))


@functools.lru_cache(maxsize=None)
def _nvml():
    """The pynvml module, initialised once; None when missing or failing (see :func:`unavailable`)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no GPU: NVML is simply not there
        return None
    return pynvml


def unavailable() -> str:
    """'' when NVML answers, else why the clock columns are empty."""
    try:
        import pynvml  # noqa: F401
    except ImportError:
        return "clocks and power not read: nvidia-ml-py (pynvml) is not installed (pip install nvidia-ml-py)"
    if _nvml() is None:
        return "clocks and power not read: NVML did not start (no NVIDIA driver or GPU)"
    return ""


def _handle(nvml, device: int):
    """NVML's handle of CUDA's ``device``. NVML numbers every GPU of the host and ignores
    CUDA_VISIBLE_DEVICES (a cluster worker's CUDA device 0 may be the host's GPU 3): where that variable is
    set, the GPU is found by its PCI bus id."""
    import os

    if os.environ.get("CUDA_VISIBLE_DEVICES", "").strip():
        try:
            from kernels.backend import driver

            raw = driver.call("cuDeviceGetPCIBusId", 64, driver.call("cuDeviceGet", device))
            bus = (raw if isinstance(raw, (bytes, bytearray)) else bytes(raw)).split(b"\0", 1)[0].decode()
            return nvml.nvmlDeviceGetHandleByPciBusId(bus)
        except Exception:  # noqa: BLE001 - an old driver: NVML's own numbering, as without the variable
            pass
    return nvml.nvmlDeviceGetHandleByIndex(device)


def board(device: int) -> dict:
    """What a result file's header says of the board beyond its name: driver version and power limit (W),
    where NVML answers; {} otherwise."""
    nvml = _nvml()
    if nvml is None:
        return {}
    out = {}
    try:
        version = nvml.nvmlSystemGetDriverVersion()
        out["driver"] = version.decode() if isinstance(version, bytes) else str(version)
        out["power_limit_w"] = nvml.nvmlDeviceGetPowerManagementLimit(_handle(nvml, device)) / 1000.0
    except Exception:  # noqa: BLE001 - a query this driver refuses: left out
        pass
    return out


def snapshot(device: int) -> Snapshot | None:
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        h = _handle(nvml, device)
        sm = nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)
        mem = nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)
        try:
            power = nvml.nvmlDeviceGetPowerUsage(h) / 1000.0
        except Exception:  # noqa: BLE001 - a board without a power sensor
            power = None
        getter = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        reasons = int(getter(h))
    except Exception:  # noqa: BLE001 - a query this driver refuses: no clocks for this row
        return None
    return Snapshot(int(sm), int(mem), power, reasons)
