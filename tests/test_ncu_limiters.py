"""scripts/ncu_limiters.py: ncu's per-launch CSV to one line of limiters per kernel (render-best stage)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "ncu_limiters.py"
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
SORTED = "kernels::spheres::sorted::shade_sorted[abi:v1](Array<float, 1, C, mutable, aligned>, int)"
JULIA64 = "kernels::julia::gpu::render_julia_grouped_float64[abi:v2](Array<unsigned int>, double, double)"


def row(launch, kernel, metric, unit, value):
    return (f'"{launch}","1","python3","h","{kernel}","1","7","(16, 16, 1)","(64, 64, 1)","0","9.0","Command line",'
            f'"{metric}","{unit}","{value}"')


def test_one_line_per_kernel_with_the_median_of_its_launches(tmp_path):
    lines = ["==PROF== Connected to process 1", "a line the bench printed", HEADER]
    for launch, (sm, us) in enumerate([(80.0, "120,000"), (82.0, "110,000"), (90.0, "100,000")]):
        lines.append(row(launch, SORTED, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", sm))
        lines.append(row(launch, SORTED, "gpu__time_duration.sum", "nsecond", us))
    lines.append(row(3, JULIA64, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "3.5"))
    lines.append(row(3, JULIA64, "gpu__time_duration.sum", "msecond", "0.5"))
    (tmp_path / "ncu.csv").write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "ncu.csv")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["shade_sorted: sm% 82, us 110",
                                        "render_julia_grouped_float64 (float64): dram% 3.5, us 500"]


def test_no_table_is_one_clear_line_and_exit_2(tmp_path):
    (tmp_path / "ncu.csv").write_text("==ERROR== ERR_NVGPUCTRPERM\n")
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "ncu.csv")], capture_output=True, text=True)
    assert done.returncode == 2 and "holds no ncu table" in done.stderr and "ERR_NVGPUCTRPERM" in done.stderr
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "missing.csv")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
