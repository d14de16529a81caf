import os
import lit.formats

config.name = "strata"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".sg", ".sl", ".test"]
config.excludes = ["inputs", "lit.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_obj_root, "test")
# STRATA_BIN_DIR points the tests at another build (e.g. the AddressSanitizer one).
bin_dir = os.environ.get("STRATA_BIN_DIR", config.strata_bin_dir)
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "inputs")))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%models", os.path.join(config.strata_src_root, "models")))
config.substitutions.append(("%examples", os.path.join(config.strata_obj_root, "examples")))
# `strata run` compiles in memory here, so the tests exercise the JIT; the compile cache's own
# test turns it back on with a cache folder of its own.
config.environment["STRATA_CACHE"] = "0"
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
