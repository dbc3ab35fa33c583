"""Hardware counters beside every GPU result: Nsight Compute (ncu) runs the variants in a child process and
its report becomes a :class:`~kernels.counters.metrics.Measured` record per variant (DRAM throughput and
bytes, achieved occupancy, L2 hit rate, shared-memory bank conflicts, instructions, branch efficiency, the
top warp-stall reason, ncu's duration); NVML's clocks, power and throttle reasons around the timed repeats
(:mod:`.clocks`); and the guided analysis, rules that turn measured and static facts into sentences
(:mod:`.rules`). No Qt, and no numba at import: the child that ncu profiles imports the kernels."""
