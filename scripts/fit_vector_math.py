#!/usr/bin/python3
"""Refit the polynomial coefficients of lib/codegen/VectorMath*.cpp.

Usage: /usr/bin/python3 scripts/fit_vector_math.py [NAME ...]   (default: all)

Each fit is a discrete weighted minimax problem solved as a linear program (scipy's HiGHS) over
Chebyshev-spaced points: minimize E subject to |w(x) (p(x) - t(x))| <= E. Coefficients are fixed
one at a time from the lowest degree up: each is rounded to f32 and the rest refitted, so the
printed error already includes the f32 rounding of the coefficients. The LP solves for a scaled
correction to the least-squares fit, which keeps HiGHS's absolute tolerances far below the
(tiny) error being minimized. Targets are evaluated with mpmath at 40 digits.
"""
import sys

import mpmath as mp
import numpy as np
from scipy.optimize import linprog

mp.mp.dps = 40


def fit(target, weight, lo, hi, deg, var=lambda x: x, npts=2000):
    xs = [mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * (1 - mp.cos(mp.pi * k / (npts - 1))) / 2
          for k in range(npts)]
    xs = [x for x in xs if x != 0]
    T = np.array([float(target(x)) for x in xs])
    W = np.array([float(weight(x)) for x in xs])
    V = np.array([float(var(x)) for x in xs])
    M = np.stack([V**j for j in range(deg + 1)], axis=1)
    fixed, err = [], 0.0
    for j in range(deg + 1):
        t = T - (M[:, :j] @ np.array(fixed) if j else 0)
        A0 = W[:, None] * M[:, j:]
        ls = np.linalg.lstsq(A0, W * t, rcond=None)[0]
        r0 = A0 @ ls - W * t
        s = float(np.max(np.abs(r0)))
        col = np.max(np.abs(A0), axis=0)
        n = deg + 1 - j
        ones = np.ones((len(T), 1))
        A = np.vstack([np.hstack([A0 / col, -ones]), np.hstack([-A0 / col, -ones])])
        b = np.concatenate([-r0 / s, r0 / s])
        c = np.zeros(n + 1)
        c[-1] = 1
        res = linprog(c, A_ub=A, b_ub=b, bounds=[(None, None)] * (n + 1), method="highs")
        coef = ls + res.x[:n] * s / col
        err = res.x[-1] * s
        fixed.append(float(np.float32(coef[0])))
    return fixed, err


def nz(f, at0):
    return lambda x: f(x) if x != 0 else mp.mpf(at0)


L2 = mp.log(2) / 2
FITS = {
    # e^r = 1 + r + r^2 Q(r), relative error
    "exp": (nz(lambda r: (mp.exp(r) - 1 - r) / r**2, 0.5), lambda r: r**2 / mp.exp(r), -L2, L2, 4),
    # log(1+f) = f - f^2/2 + f^3 P(f), f in [sqrt(1/2)-1, sqrt(2)-1], relative error
    "log": (nz(lambda f: (mp.log1p(f) - f + f**2 / 2) / f**3, mp.mpf(1) / 3),
            nz(lambda f: abs(f**3 / mp.log1p(f)), 0), mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 7),
    # sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) on [0, pi/4], relative error
    "sin": (nz(lambda r: (mp.sin(r) - r) / r**3, -mp.mpf(1) / 6), nz(lambda r: r**3 / mp.sin(r), 0),
            0, mp.pi / 4, 3, lambda r: r * r),
    "cos": (nz(lambda r: (mp.cos(r) - 1 + r**2 / 2) / r**4, mp.mpf(1) / 24),
            lambda r: r**4 / mp.cos(r), 0, mp.pi / 4, 3, lambda r: r * r),
    # atan t = t + t^3 P(t^2) on [0, 1], relative error
    "atan": (nz(lambda t: (mp.atan(t) - t) / t**3, -mp.mpf(1) / 3), nz(lambda t: t**3 / mp.atan(t), 0),
             0, 1, 8, lambda t: t * t),
    # tanh a = a + a^3 P(a^2) on [0, 0.625], relative error
    "tanh": (nz(lambda x: (mp.tanh(x) - x) / x**3, -mp.mpf(1) / 3), nz(lambda x: x**3 / mp.tanh(x), 0),
             0, 0.625, 5, lambda x: x * x),
    # erf a = a + a Q(a^2) on [0, 0.921875], relative error
    "erf-small": (nz(lambda x: mp.erf(x) / x - 1, 2 / mp.sqrt(mp.pi) - 1),
                  nz(lambda x: x / mp.erf(x), mp.sqrt(mp.pi) / 2), 0, 0.921875, 6, lambda x: x * x),
    # log(erfc a) on [0.921875, 3.9375]; weight erfc/erf turns it into erf's relative error
    "erf-large": (lambda x: mp.log(mp.erfc(x)), lambda x: mp.erfc(x) / mp.erf(x), 0.921875, 3.9375, 7),
}

for name in sys.argv[1:] or FITS:
    coefs, err = fit(*FITS[name])
    print(f"{name}: weighted max error {err:.3e} ({err / 2**-24:.3f} half-ulp)")
    print("   ", ", ".join(float.hex(c).replace("0000000p", "p") for c in coefs))
