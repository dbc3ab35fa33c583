"""Every kernel of the open-addressing tables (and the chained find) compiled for real for sm_90 and sm_80 with
NVIDIA's compiler packages, as the inspector compiles (a child process per architecture, the simulator off):
the real compile types what the simulator only interprets, and its PTX shows the instructions the design
rests on."""

import pytest

from kernels.inspector import toolchain

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(toolchain.missing()), reason="the compiler packages are not "
                                                   f"installed ({toolchain.EXTRA_HINT})")]

INSERT = "void(uint32[::1], uint64[::1], int64, int32[::1])"
FIND = "void(uint32[::1], uint64[::1], uint32[::1], int64)"
ERASE = "void(uint32[::1], uint64[::1], int64)"
SIGNATURES = {"insert": INSERT, "insert-or-add": INSERT, "find": FIND, "erase": ERASE}
# the grouped kernels take the overflow flags after the slots
GROUPED = {op: sig.replace("uint64[::1], ", "uint64[::1], uint32[::1], ", 1) for op, sig in SIGNATURES.items()}
MODULE = "kernels.hashtable.open_kernels"


def jobs() -> list[dict]:
    out = [{"key": f"linear {op}", "module": MODULE, "function": "linear_kernels", "args": [op], "item": None,
            "signature": sig} for op, sig in SIGNATURES.items()]
    out.append({"key": "linear find 4", "module": MODULE, "function": "linear_kernels", "args": ["find", 4],
                "item": None, "signature": FIND})
    shapes = [(op, 8, 2, 1, False) for op in SIGNATURES] + [(op, 4, 4, 1, True) for op in SIGNATURES] + [
        ("insert", 4, 1, 1, False), ("insert", 16, 1, 1, False), ("insert", 32, 2, 1, False), ("find", 32, 1, 1, False),
        ("erase", 4, 2, 1, False), ("find", 8, 2, 4, False), ("find", 16, 4, 2, True)]
    out += [{"key": f"bucket {op} {b} {d}" + (f" items {i}" if i > 1 else "") + (" flags" if f else ""),
             "module": MODULE, "function": "bucket_kernels", "args": [op, b, d, i, f], "item": None,
             "signature": GROUPED[op]} for op, b, d, i, f in shapes]
    out.append({"key": "fill", "module": MODULE, "function": "fill_kernel", "args": [], "item": None,
                "signature": "void(uint64[::1], uint64)"})
    out.append({"key": "chained find", "module": "kernels.hashtable.gpu", "function": "table_kernels", "args": [],
                "item": 3, "signature": "void(uint32[::1], uint32[::1], int32[::1], int32[::1], uint32[::1])"})
    return out


ARCHS = ["sm_90", "sm_80"]


@pytest.fixture(scope="module")
def both_archs():
    """Every job's PTX for both architectures from one compiler process (numba lowers each kernel once)."""
    from kernels.inspector.compiler import _run_child

    return _run_child(jobs(), ARCHS)


@pytest.fixture(scope="module", params=ARCHS)
def compiled(request, both_archs):
    return request.param, both_archs[request.param]


def test_every_kernel_compiles_and_assembles(compiled):
    arch, results = compiled
    failed = {key: r["error"] for key, r in results.items() if "error" in r}
    assert not failed
    for key, r in results.items():
        report = toolchain.assemble(r["ptx"], arch).report
        # no spills, and the keys a find holds in flight stay in registers (no stack frame for them)
        assert "Used" in report and "0 bytes spill stores" in report, (arch, key, report)
        assert "0 bytes stack frame" in report, (arch, key, report)


def test_the_instructions_the_design_rests_on(compiled):
    arch, results = compiled
    ptx = {key: r["ptx"] for key, r in results.items()}
    # a group reads its bucket with 16-byte loads and agrees by ballots; finds may use L1, changes go to L2
    for key in ("bucket insert 8 2", "bucket erase 8 2", "bucket insert-or-add 8 2"):
        assert "ld.global.cg.v2.u64" in ptx[key] and "vote.sync.ballot" in ptx[key], key
    assert "ld.global.v2.u64" in ptx["bucket find 8 2"] and "ld.global.cg" not in ptx["bucket find 8 2"]
    # one 64-bit compare-and-swap claims a slot with its value; insert-or-add adds 2^32 to count
    for key in ("linear insert", "bucket insert 8 2", "linear erase"):
        assert "atom.global.cas.b64" in ptx[key], key
    assert "atom.global.add.u64" in ptx["bucket insert-or-add 8 2"]
    assert "ld.global.cg.u64" in ptx["linear insert"]
    # overflow flags: an insert sets a bucket's bit as it goes past (an atomic or, its result unused); tables
    # without flags never touch them
    assert "atom.global.or.b32" in ptx["bucket insert 4 4 flags"] or "red.global.or.b32" in ptx["bucket insert 4 4 flags"]
    assert ".or.b32" not in ptx["bucket insert 8 2"]
