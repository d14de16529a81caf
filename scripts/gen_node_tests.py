#!/usr/bin/python3
"""Generate ONNX backend test data (node + simple model cases) into a directory.

Usage: /usr/bin/python3 scripts/gen_node_tests.py OUTDIR [--op_type OP]

Why a wrapper: ONNX 1.12's test-case generators still reference numpy aliases
(np.float, np.int, np.bool, np.object) that numpy >= 1.24 removed.  We restore
them before importing onnx's generator, then call its generate-data entry
point directly instead of via `python3 -m`.
"""
import argparse
import sys
import warnings

import numpy as np

# Restore the deprecated builtin aliases.  Plain assignment is fine: numpy only
# raises for these names via module __getattr__, which setattr bypasses.
for _name, _type in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if _name not in np.__dict__:
        setattr(np, _name, _type)

warnings.filterwarnings("ignore")  # generators emit lots of noisy deprecation warnings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", help="directory to write <kind>/<test_name>/ folders into")
    ap.add_argument("--op_type", default=None, help="only generate cases using this op")
    args = ap.parse_args()

    # Import only after the aliases exist: the case modules are imported
    # (and some evaluate np.float etc. at import time) by this module.
    from onnx.backend.test import cmd_tools

    cmd_tools.generate_data(argparse.Namespace(output=args.output, op_type=args.op_type))
    return 0


if __name__ == "__main__":
    sys.exit(main())
