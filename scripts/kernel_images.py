"""Build the kernel images the app ships (kernels/launch/images.py) from the kernels themselves, or check
that the shipped ones are current. No GPU needed: numba-cuda compiles each kernel to PTX for sm_80 and sm_90
with NVIDIA's compiler packages (the test extras), and ptxas makes a cubin of each.

    python scripts/kernel_images.py [--check] [--images NAME,...]

Writes, next to each image's algorithm, ``images/<name>.json`` (entry name, parameters and their layout
(numba-cuda's: the loader packs it), the source files and their key, numba-cuda's version, the compiler),
``<name>.<arch>.ptx`` and ``<name>.<arch>.cubin``. With
``--check`` it writes nothing and exits 1 naming each image that no longer matches its kernel (run it
without ``--check`` then, and commit what it wrote).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENTRY = re.compile(r"\.visible\s+\.entry\s+(\S+)\(")
PARAM = re.compile(r"\.param\s+\.(\w+)\s+\S+_param_\d+\s*[,)]?")


def kernel_sources(fn) -> list[str]:
    """Modules the image's key covers: the kernel's, each jitted function's it calls, and every ``kernels``
    module those import (the constants a kernel reads are frozen into it at compile time)."""
    from kernels.inspector.offline_compile import callee_sources

    by_file = {getattr(m, "__file__", None): name for name, m in list(sys.modules.items())}
    modules = {by_file[block["file"]] for block in callee_sources(fn)}
    for name in list(modules):
        tree = ast.parse(Path(sys.modules[name].__file__).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kernels":
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(a.name for a in node.names if a.name.split(".")[0] == "kernels")
    return sorted(modules)


def entry_and_params(ptx: str) -> tuple[str, list[str]]:
    found = ENTRY.search(ptx)
    if found is None:
        raise SystemExit("the PTX has no kernel entry")
    head = ptx[found.end():ptx.index(")", found.end())]
    if ".align" in head or "[" in head:
        raise SystemExit(f"{found.group(1)[:60]}... takes a by-value aggregate: not an image this loader packs")
    return found.group(1), PARAM.findall(head)


def compiler_of(ptx: str) -> str:
    return next((ln.strip("/ ").strip() for ln in ptx.splitlines() if "compilation tools" in ln), "unknown")


def canonical(ptx: str) -> str:
    """The PTX with its module-scope ``.common`` declarations sorted in place: numba lists its environment
    globals in set order, which varies from run to run, and the same text makes the same cubin."""
    lines = ptx.split("\n")
    at = [i for i, ln in enumerate(lines) if ln.startswith(".common ")]
    for i, ln in zip(at, sorted(lines[i] for i in at)):
        lines[i] = ln
    return "\n".join(lines)


def body(ptx: str) -> str:
    """The PTX without its comment header (which names the compiler's build), its module-scope
    declarations sorted (numba lists its environment globals in set order, which varies from run to run)."""
    lines = [ln for ln in ptx.splitlines() if not ln.startswith("//")]
    declared = sorted(ln for ln in lines if ln.startswith(".common "))
    return "\n".join(declared + [ln for ln in lines if not ln.startswith(".common ")])


def build(image) -> dict:
    """{file name: bytes or text} of one image, made from its kernel now."""
    import importlib

    from kernels.backend.numba_private import numba_cuda_version, ptx_for_each, target_device
    from kernels.inspector import toolchain
    from kernels.launch.images import ARCHS, LAYOUT, PARAM_BYTES, arch_name, signature_widths, source_key

    fn = getattr(importlib.import_module(image.module), image.function)
    fn = getattr(fn, "py_func", fn)
    with target_device(ARCHS[0]):
        ptxes = [canonical(p) for p in ptx_for_each(fn, image.signature, list(ARCHS), lineinfo=False)]
    sources = kernel_sources(fn)
    entries = {(e, tuple(ps)) for e, ps in map(entry_and_params, ptxes)}
    if len(entries) != 1:
        raise SystemExit(f"{image.name}: the architectures' PTX name or take parameters differently")
    (entry, params), = entries
    params = list(params)
    if [PARAM_BYTES.get(p) for p in params] != signature_widths(image.signature, LAYOUT):
        raise SystemExit(f"{image.name}: its parameters {params} are not {LAYOUT}'s layout of {image.signature}")
    files = {}
    for cc, ptx in zip(ARCHS, ptxes):
        files[f"{image.name}.{arch_name(cc)}.ptx"] = ptx
        files[f"{image.name}.{arch_name(cc)}.cubin"] = toolchain.assemble(ptx, arch_name(cc), lineinfo=False).cubin
    manifest = {"name": image.name, "module": image.module, "function": image.function,
                "signature": image.signature, "entry": entry, "params": params, "layout": LAYOUT, "sources": sources,
                "source_key": source_key(sources), "numba_cuda": numba_cuda_version(),
                "compiler": compiler_of(ptxes[0]), "archs": [list(cc) for cc in ARCHS],
                "cubins_sha256": {arch: hashlib.sha256(files[f"{image.name}.{arch}.cubin"]).hexdigest()
                                  for arch in map(arch_name, ARCHS)}}
    files[f"{image.name}.json"] = json.dumps(manifest, indent=1) + "\n"
    return files


def differences(image, made: dict) -> list[str]:
    """What differs between the shipped files of ``image`` and ``made``: the entry, parameters and sources'
    key always; where the same compiler made them (another NVVM or ptxas writes alike code differently), the
    PTX compared as :func:`body`s and each shipped cubin against ptxas's cubin of the shipped PTX."""
    from kernels.inspector import toolchain

    folder = image.folder
    shipped_manifest = folder / f"{image.name}.json"
    if not shipped_manifest.is_file():
        return [f"{image.name}: not shipped"]
    old, new = json.loads(shipped_manifest.read_text()), json.loads(made[f"{image.name}.json"])
    problems = [f"{image.name}: {key} was {old.get(key)!r}, now {new[key]!r}"
                for key in ("entry", "params", "sources", "source_key", "signature") if old.get(key) != new[key]]
    same_compiler = old.get("compiler") == new["compiler"]
    if not same_compiler:
        print(f"{image.name}: made with {old.get('compiler')}, here {new['compiler']}: code not compared")
    for name, content in made.items():
        path = folder / name
        if name.endswith(".ptx") and same_compiler and (not path.is_file() or body(path.read_text()) != body(content)):
            problems.append(f"{image.name}: {name} differs from the kernel's PTX now")
        elif name.endswith(".cubin") and same_compiler:
            ptx, arch = folder / (name[:-len("cubin")] + "ptx"), name.split(".")[-2]
            if not (path.is_file() and ptx.is_file()
                    and path.read_bytes() == toolchain.assemble(ptx.read_text(), arch, lineinfo=False).cubin):
                problems.append(f"{image.name}: {name} is not ptxas's cubin of the shipped PTX")
    return problems


def main(argv=None) -> int:
    from kernels.backend.compiler import NUMBA_CUDA, choose
    from kernels.registry import IMAGES

    choose(NUMBA_CUDA)  # the shipped images are numba-cuda's cubins, whatever RAYTRACER_COMPILER says

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped images; write nothing")
    parser.add_argument("--images", default="",
                        help="comma-separated image names to write or check (default: all; all are compiled)")
    args = parser.parse_args(argv)
    wanted = [n for n in args.images.split(",") if n]
    unknown = set(wanted) - {i.name for i in IMAGES}
    if unknown:
        print(f"unknown images: {', '.join(sorted(unknown))}; known: {', '.join(i.name for i in IMAGES)}",
              file=sys.stderr)
        return 2
    stale = []
    for image in IMAGES:
        # every image is compiled, in one order: numba numbers the names it mangles in the order it compiles,
        # so an image compiled alone would come out under other names than the full build ships
        made = build(image)
        if wanted and image.name not in wanted:
            continue
        if args.check:
            problems = differences(image, made)
            stale += problems
            print(f"{image.name}: {'STALE' if problems else 'current'}")
            continue
        image.folder.mkdir(exist_ok=True)
        for name, content in made.items():
            path = image.folder / name
            path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        print(f"{image.name}: wrote {len(made)} files to {image.folder.relative_to(ROOT)}")
    for problem in stale:
        print(problem, file=sys.stderr)
    if stale:
        print("run `python scripts/kernel_images.py` and commit what it writes", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
