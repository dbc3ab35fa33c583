"""The one list of scripts under scripts/: what each shows, how to run it at a tiny size (the smoke test in
tests/test_scripts.py runs every entry), and whether it needs a real GPU."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Script:
    file: str
    what: str
    smoke: tuple[str, ...]  # arguments that finish in seconds, offscreen ("{tmp}": a temporary folder)
    needs_gpu: bool = False
    needs: tuple[str, ...] = ()  # optional packages it imports (an extra's): skipped with the reason without them


SCRIPTS = (
    Script("gui_fps.py", "first-frame time and frames per second of the real window under Render Continuously",
           ("--backend", "cpu", "--seconds", "0.5")),
    Script("bare_loop.py", "the same frames drawn by a bare pyqtgraph ImageItem + Numba loop: the window's target",
           ("--backend", "cpu", "--seconds", "0.3", "--size", "64x64")),
    Script("gui_memory.py", "resident memory of the window rendering continuously, every few seconds",
           ("--backend", "cpu", "--seconds", "1.5", "--every", "0.5")),
    Script("screenshot.py", "the README's screenshots: the real window with a benchmark run in a panel, or "
           "(--inspector, smoke-tested in tests/test_scripts.py) the Inspector dock on the reduction's best kernel, "
           "or (--every-tool DIR) every workspace's tool at work, one grab each",
           ("--size", "1366x768", "--spheres", "4", "--out", "{tmp}/screenshot.png")),
    Script("compare_rates.py", "how often compare's verdicts are wrong: identical runs called FASTER / SLOWER, and "
           "3% / 10% slowdowns missed, on synthetic samples and on result files (docs/results.md)",
           ("--rows", "20", "--sigmas", "0.005")),
    Script("reference_results.py", "the GPU results the app ships (assets/reference-results/): bench --json for "
           "reduction, histogram, hashtable and the sphere count curve, one file per device and target "
           "(stage reference-results of gpu-session.sh; tried here on the CPU)",
           ("--backend", "cpu", "--targets", "reduction", "--repeats", "2", "--out", "{tmp}/ref")),
    Script("variant_run_time.py", "the variant editor's Run as a user sees it: seconds from Run to the row in the "
           "benchmark panel, compile included, then a re-run without edits (docs/user-variants.md)",
           ("--backend", "sim", "--from", "sequential", "--n", "1000", "--repeats", "1")),
    Script("hashmap_bench.py", "the hash tables of issue 38: every op at several load factors, G ops/s per variant "
           "and load beside the sorted-search peers and cuCollections, % of copy bandwidth for find, the goals; "
           "--tune sweeps best's bucket width, keys in flight and block (stages hashmap-bench and "
           "hashmap-tune of gpu-session.sh)",
           ("--backend", "cpu", "--n", "2000", "--ops", "insert,find", "--loads", "0.5,0.9", "--variants",
            "cpu,cpu-two-choice", "--repeats", "1", "--out", "{tmp}/hashmap")),
    Script("hashmap_candidates.py", "issue 52: every candidate layout of best's hash map (best-bB[-fF], "
           "rounds-bB[-hH][-fF], linear) by block and keys in flight, insert and find of present and absent keys "
           "at several loads, G ops/s and the fastest per op and load (stage hashmap-candidates of gpu-session.sh)",
           ("--backend", "sim", "--n", "64", "--loads", "0.9", "--designs", "best-b4-f4,rounds-b8-h3-f8",
            "--blocks", "32", "--items", "2", "--repeats", "1", "--out", "{tmp}/candidates")),
    Script("hashmap_probe_counts.py", "issue 52: buckets and 32-byte sectors a find (present, absent) and an insert "
           "of best's table read, counted on the CPU twin by bucket width, hashes, filter bits and load: the "
           "designs' proxy without a GPU (docs/measurements.md)",
           ("--n", "2000", "--loads", "0.9", "--buckets", "4", "--choices", "4", "--filters", "1,8")),
    Script("peer_bench.py", "the hash-table peers built with nvcc (cuco-static-map, bght-bcht) and the libraries' "
           "own benchmarks as stand-alone harnesses (scripts/cuco_bench.cu, scripts/bght_bench.cu) beside the "
           "app's workload: why the cuco row is slower than cuCollections' figures (stage hash-peers of "
           "gpu-session.sh); here the build only, which names the unset folders", ("--build-only", "--arch", "sm_90")),
    Script("access_table.py", "the access trace's predicted-against-measured table (docs/measurements.md) from "
           "`access --measured --json` files, stage access-measured of gpu-session.sh; tried here on one trace "
           "made without a GPU (predicted only)", ("--example", "{tmp}")),
    Script("lineinfo_timing.py", "whether line information changes kernel times: the same bench alternately "
           "without and with it (as the per-line counters compile), result files compared (stage lines of "
           "gpu-session.sh; tried here on the CPU)",
           ("--out", "{tmp}/lineinfo", "--rounds", "1", "--", "bench", "reduction", "--backend", "cpu",
            "--variants", "numpy", "--sizes", "4096", "--repeats", "3")),
    Script("kernel_images.py", "the kernel images shipped for a GPU's first frames (kernels/launch/images.py): "
           "builds them from the kernels with NVIDIA's compiler packages, or checks that they are current (here one "
           "image, which compiles them all: a subset alone would be named otherwise)",
           ("--check", "--images", "julia-float64")),
    Script("cluster_bench.py", "a Dask cluster of this host's GPUs (issue 47, docs/cluster.md): a reduction sweep in "
           "this process, on one GPU worker and on every GPU worker, cold and warm (result files compared), row "
           "and Stop latency, the remote render's frame rate at 1024x1024; tried here on two cpu workers",
           ("--backend", "cpu", "--sizes", "4096,8192", "--variants", "numpy", "--repeats", "1", "--no-local", "--no-cold",
            "--frames-seconds", "0.3", "--frame-size", "64x64", "--port", "0", "--out", "{tmp}/cluster"),
           needs=("distributed",)),
    Script("compiler_overheads.py", "issue 51's gates cold compile and launch overhead: each compiler in a fresh "
           "process, every declared kernel compiled and an empty kernel launched many times, side by side",
           ("--no-launch", "--compilers", "numba-cuda", "--kernels", "1")),
    Script("render_proxies.py", "CPU-side proxies of the renderers' GPU work (issue 52): sphere tests per pixel and "
           "per warp for binned and sorted tiles, the Julia set's iterations per pixel and per warp's slowest lane",
           ("--spheres", "300", "--julia", "64", "--size", "64")),
    Script("ncu_limiters.py", "one line of limiters per kernel (SM, DRAM, L1 throughput, occupancy, duration) from "
           "ncu's CSV (stage render-best of gpu-session.sh); tried here on an example", ("--example", "{tmp}")),
    Script("constant_proof.py", "the constant-memory kernel's PTX, symbol-write time against a recompile",
           ("--writes", "2"), needs_gpu=True),
    Script("gpu_peers_steps.py", "the benchmarks of scripts/gpu_peers.sh against CUB, Triton, PyTorch and CuPy, "
           "a process per group", ("whole-call", "{tmp}"), needs_gpu=True),
    Script("pc_table.py", "records a real per-PC table of ncu's source counters (tests/data/lines/, folded by "
           "tests/test_lines_recorded.py): best's kernels at 2^20", ("{tmp}/pcs.json",), needs_gpu=True),
    Script("counters_record.py", "records the ncu metric sets the counters tests replay (tests/data/counters/): "
           "one ncu run per target over its GPU variants at the default size", ("{tmp}", "reduction"), needs_gpu=True),
)
