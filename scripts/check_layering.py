#!/usr/bin/python3
"""Checks which library may include which (docs/architecture.md, "Layering").

Each folder of lib/ (with its headers under include/strata/) may include the strata headers of
the layers listed for it and nothing else; LLVM headers only where `llvm` is listed. The runtime
and support layers are what an AOT library carries, so they stay free of LLVM and of every
compiler rung. Exits 1 listing each offending include.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# layer -> (source folders, header folders or files, layers it may include). "errors" is the
# llvm::Error glue (support/Error.h): every compiler layer may use it, the runtime may not.
COMPILER = {"support", "errors", "llvm"}
LAYERS = {
    "support": (["lib/support"], ["include/strata/support"], {"support"}),
    "errors": ([], ["include/strata/support/Error.h"], {"support", "llvm"}),
    "runtime": (["lib/runtime"], ["include/strata/runtime"], {"support", "runtime", "capi"}),
    "io": (["lib/io"], ["include/strata/io"], COMPILER | {"io"}),
    "graph": (["lib/graph"], ["include/strata/graph"], COMPILER | {"graph"}),
    "interp": (["lib/interp"], ["include/strata/interp"], COMPILER | {"graph", "interp"}),
    "passes": (["lib/graph/passes"], ["include/strata/graph/passes"],
               COMPILER | {"graph", "interp", "passes"}),
    "import": (["lib/import"], ["include/strata/import"],
               COMPILER | {"graph", "interp", "import"}),
    "loop": (["lib/loop"], ["include/strata/loop"], COMPILER | {"loop"}),
    "codegen": (["lib/codegen"], ["include/strata/codegen"], COMPILER | {"loop", "codegen"}),
    "lower": (["lib/lower"], ["include/strata/lower"], COMPILER | {"graph", "loop", "lower"}),
    "driver": (["lib/driver"], ["include/strata/driver"],
               COMPILER | {"graph", "passes", "interp", "loop", "lower", "codegen", "runtime",
                           "capi", "driver"}),
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def layer_of(header: str):
    """The layer a strata include belongs to, 'llvm' for LLVM, None for anything else."""
    if header.startswith("llvm/") or header.startswith("llvm-c/"):
        return "llvm"
    if header == "strata/strata_model.h":
        return "capi"
    if header == "strata/support/Error.h":
        return "errors"
    m = re.match(r"strata/([a-z_]+)/", header)
    if not m:
        return None
    if m.group(1) == "graph" and header.startswith("strata/graph/passes/"):
        return "passes"
    return m.group(1)


def files(folder: str, nested_layers):
    base = ROOT / folder
    if base.is_file():
        yield base
        return
    for path in sorted(base.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".def", ".inc") or not path.is_file():
            continue
        # A nested folder that is a layer of its own (lib/graph/passes) is checked as that layer.
        rel = path.relative_to(ROOT).as_posix()
        if rel in nested_layers or any(rel.startswith(n + "/") for n in nested_layers
                                       if n != folder):
            continue
        yield path


def main() -> int:
    all_folders = [f for srcs, hdrs, _ in LAYERS.values() for f in srcs + hdrs]
    problems = []
    for name, (srcs, hdrs, allowed) in LAYERS.items():
        for folder in srcs + hdrs:
            for path in files(folder, all_folders):
                for lineno, line in enumerate(path.read_text().splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    dep = layer_of(m.group(1))
                    if dep is not None and dep not in allowed:
                        problems.append(f"{path.relative_to(ROOT)}:{lineno}: layer '{name}' "
                                        f"includes {m.group(1)} (layer '{dep}')")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layering: {len(problems)} include(s) cross the layering", file=sys.stderr)
        return 1
    print(f"check_layering: {len(LAYERS)} layers, no include crosses the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
