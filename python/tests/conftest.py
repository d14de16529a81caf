"""Shared fixtures: where the build, its zoo and the sources are (set by ctest; defaults for a
manual `PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests` from the repository)."""
import os
import sys

import numpy as np
import pytest

SOURCE = os.environ.get("STRATA_SOURCE",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("STRATA_BUILD", os.path.join(SOURCE, "build"))
ZOO = os.path.join(BUILD, "zoo")
DIGITS = os.path.join(SOURCE, "models", "digits", "digits.onnx")
# Torch's outputs against strata's: max |diff| <= TOLERANCE * max |reference| (check_zoo.py's).
TOLERANCE = 1e-4

sys.path.insert(0, os.path.join(SOURCE, "scripts"))


def assert_close(got, want, tolerance=TOLERANCE):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()), 1e-12)
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= tolerance * scale, f"max |diff| {err:.3g} > {tolerance} * {scale:.3g}"


def zoo_file(name):
    path = os.path.join(ZOO, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} missing (make test-data)")
    return path


@pytest.fixture(scope="session")
def digits_model():
    import strata
    return strata.compile(DIGITS, threads=1)


@pytest.fixture(scope="session")
def digits_x():
    return np.load(os.path.join(SOURCE, "models", "digits", "digits_test_x.npy"))
