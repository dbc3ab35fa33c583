"""What the trace knows about the compiler and the project's kernels that the simulator cannot show: which
helpers the GPU runs as one wider access (the 16-byte vector loads), which arrays are constant memory, and
the notes a line or a kernel carries so that a mismatch with Nsight Compute can be explained."""

from __future__ import annotations

from kernels.access import model as M

NOTE_VECTOR = ("16-byte vector load (ld.global.v4): the simulator reads its 4 elements one by one; traced as one "
               "16-byte access per lane, as the GPU issues it")
NOTE_CONST = ("constant memory: read through the constant cache, not the load/store unit, so a GPU counts no "
              "l1tex requests for it; a warp's distinct addresses are served one after another")
NOTE_RED = ("atomic whose result is unused: the compiler issues RED instead of ATOM, which Nsight Compute "
            "counts under ..._global_op_red")
NOTE_SHARED_ATOMIC = ("shared-memory atomic: the model counts its banks as for a load (lanes on one word share a "
                      "wavefront); the hardware also serializes lanes that update the same address")
NOTE_WIDE_SHARED = ("{width}-byte lanes: shared memory serves {lanes} lanes per wavefront, so {minimum} wavefronts "
                    "per request is no bank conflict")
NOTE_WIDE_SHARED_LOAD = ("{width}-byte lanes: a load needs a wavefront per 32 distinct words ({minimum} for a whole "
                         "warp); more is counted as bank conflicts, as Nsight Compute counts them (an H100 did so for "
                         "lanes spread over both half-warps, and not for their stores)")
NOTE_CONDITIONAL = ("not every thread of a warp makes this access: where the compiler predicates it instead of "
                    "branching around it, a GPU also issues it for warps whose threads all skip it, which Nsight "
                    "Compute counts as requests without sectors or wavefronts, so its figures per request come out "
                    "lower")
NOTE_LOOP_SKEW = ("the threads of a warp come to this access inside a loop after different numbers of iterations (a "
                  "probe or retry loop they run for different lengths): a GPU issues it once per iteration for the "
                  "threads that reach it in that iteration, so Nsight Compute counts more requests with fewer lanes "
                  "each, where the trace groups each thread's n-th execution into one request")
NOTE_CAS_RETRY = ("a compare-and-swap inside a loop: where warps running at the same time change the same word, it "
                  "fails and the loop makes it again: requests a GPU counts and a trace that runs one block after "
                  "another mostly does not see")
RUN_NOTES = (
    "each access of the Python source is counted; the compiler may keep a value in a register instead of "
    "loading it again, or merge neighbouring loads into one wider load, where the hardware counts fewer",
)
SAMPLED_NOTE = ("blocks that were not traced did not run at all: where a kernel's blocks depend on each other "
                "(a last-block ticket, a shared hash table) the traced ones see fewer of the others' writes")

_WRAPPED: list = []  # (ConstantArray, its host array) replaced during a trace, restored after


def merged_access_helpers() -> dict:
    """{code object: width}: functions the simulator runs as several loads where the GPU issues one wider
    access. Only meaningful in the simulator's process (there ``load_vector`` is plain Python)."""
    from kernels.device_functions import vector_loads

    fn = vector_loads.load_vector
    code = getattr(fn, "__code__", None)
    return {code: vector_loads.VECTOR_BYTES} if code is not None else {}


def wrap_constant_arrays(kernel_fn, recording_class) -> None:
    """Make the ConstantArrays a kernel's module holds record their reads (the simulator's constant memory
    is their host array); :func:`restore_constant_arrays` undoes it."""
    from kernels.device_functions.constant_memory import ConstantArray

    for value in list(getattr(kernel_fn, "__globals__", {}).values()):
        if isinstance(value, ConstantArray) and not isinstance(value.host, recording_class):
            _WRAPPED.append((value, value.host))
            value.host = value.host.view(recording_class)


def restore_constant_arrays() -> None:
    while _WRAPPED:
        array, host = _WRAPPED.pop()
        array.host = host


def site_note(space: str, op: str, merged: bool, width: int = 4) -> str:
    if merged:
        return NOTE_VECTOR
    if space == M.CONST:
        return NOTE_CONST
    if op == M.RED:
        return NOTE_RED
    if space == M.SHARED and op == M.ATOM:
        return NOTE_SHARED_ATOMIC
    if space == M.SHARED and width > M.BANK_BYTES:
        lanes = M.lanes_per_wavefront_group(width)
        note = NOTE_WIDE_SHARED_LOAD if op == M.LD else NOTE_WIDE_SHARED
        return note.format(width=width, lanes=lanes, minimum=M.WARP // lanes)
    return ""


def kernel_notes(kernel: M.KernelAccess) -> list[str]:
    out = []
    if not kernel.all_blocks:
        out.append(f"totals are for {kernel.scope}: nothing is scaled")
    if kernel.launches > 1:
        out.append(f"launched {kernel.launches} times in the run; the first launch was traced, the others "
                   "(the timer's repeats, or the same kernel again) were not run")
    return out
