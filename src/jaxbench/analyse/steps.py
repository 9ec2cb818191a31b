"""asv's step fit (``asv.step_detect.detect_steps``), with its hot loop vectorized.

Profiled on a 900-point series (``cProfile``, asv 0.6.6 with its compiled
``_rangemedian``): 55 % of ``detect_steps`` is ``sigma_star``, a pure-Python
loop over every point that ``solve_potts_autogamma`` evaluates about 140
times per series (a golden search over the noise correlation ``rho`` inside
a golden search over the penalty ``gamma``); the rest is asv's compiled
``find_best_partition`` and ``merge_pieces``.

:func:`detect_steps` is asv's ``detect_steps`` and ``solve_potts_autogamma``
line for line, calling asv's own ``solve_potts_approx``, ``golden_search``
and ``get_mu_dist``, except that ``sigma_star`` is computed with NumPy. It is
*bit-identical*: the residuals do not depend on ``rho`` and are computed
once; each term is the same IEEE operations in the same order
(``abs((y - v) - rho * e_prev) * w``), and the terms are summed left to right
with ``numpy.cumsum`` (a sequential accumulation, as asv's ``s +=``; never
``numpy.sum``, whose pairwise summation rounds differently). The test suite
checks equality with asv's function on pvlib's real series and on random
ones; ``bench/bench_detect.py`` checks it on every series it times.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import median
from typing import Any

import numpy as np

__all__ = ["Step", "detect_steps"]

#: asv's step: (left inclusive, right exclusive, level, minimum, l1 error per point).
Step = tuple[int, int, float, float, float]


def _sigma_star_factory(
    y: np.ndarray[Any, np.dtype[np.float64]], w: np.ndarray[Any, np.dtype[np.float64]]
) -> Any:
    def for_fit(rights: Sequence[int], values: Sequence[float]) -> Any:
        lengths: Any = np.diff(np.asarray([0, *rights], dtype=np.int64))
        levels = np.repeat(np.asarray(values, dtype=np.float64), lengths)
        e = y - levels
        head = abs(float(e[0])) * float(w[0])
        e_now = e[1:]
        e_prev = e[:-1]
        w_rest = w[1:]
        buffer = np.empty(len(y), dtype=np.float64)

        def sigma_star(rho: float) -> float:
            buffer[0] = head
            np.multiply(e_prev, rho, out=buffer[1:])
            np.subtract(e_now, buffer[1:], out=buffer[1:])
            np.abs(buffer[1:], out=buffer[1:])
            np.multiply(buffer[1:], w_rest, out=buffer[1:])
            return float(np.cumsum(buffer)[-1])

        return sigma_star

    return for_fit


def _solve_potts_autogamma(
    y: list[float], w: list[float]
) -> tuple[list[int], list[float], list[float]]:
    """asv's ``solve_potts_autogamma`` (default ``beta``), ``sigma_star`` vectorized."""
    from asv import step_detect

    n = len(y)
    if n == 0:
        return [], [], []
    mu_dist = step_detect.get_mu_dist(y, w)
    dist = mu_dist.dist
    beta = 4 * math.log(n) / n
    gamma_0 = dist(0, n - 1)
    if gamma_0 == 0:
        gamma_0 = 1.0
    sigma_for = _sigma_star_factory(np.asarray(y, dtype=np.float64), np.asarray(w, np.float64))
    best: dict[str, Any] = {"obj": math.inf, "r": None, "v": None, "d": None}

    def f(x: float) -> float:
        gamma = gamma_0 * math.exp(x)
        r, v, d = step_detect.solve_potts_approx(y, w, gamma=gamma, mu_dist=mu_dist)
        sigma_star = sigma_for(r, v)
        rho_best = step_detect.golden_search(sigma_star, -1, 1, xatol=0.05, expand_bounds=True)
        if len(v) > 2:
            absdiff = [abs(v[j + 1] - v[j]) for j in range(len(v) - 1)]
            sigma_0 = 0.1 * min(absdiff)
        else:
            absv = [abs(z) for z in v]
            sigma_0 = 0.001 * min(absv)
        sigma_0 = max(1e-300, sigma_0)
        s = sigma_star(rho_best)
        obj: float = beta * len(r) + math.log(sigma_0 + s)
        if obj < best["obj"]:
            best.update(obj=obj, r=r, v=v, d=d)
        return obj

    a = math.log(0.1 / n)
    step_detect.golden_search(f, a, 0.0, xatol=abs(a) * 0.1, ftol=0, expand_bounds=True)
    return best["r"], best["v"], best["d"]


def detect_steps(
    y: Sequence[float | None], w: Sequence[float | None] | None = None, *, quick: bool = False
) -> list[Step]:
    """``asv.step_detect.detect_steps(y, w)``, same result bit for bit, faster.

    With ``quick``, the penalty is not searched for: asv's own
    ``solve_potts_approx`` runs once with its default ``gamma`` (``3 *
    dist(0, n - 1) * ln(n) / n``) instead of ``solve_potts_autogamma``'s ten
    or so trials. Measured in ``bench/bench_scan.py`` and the README: 5 to 8
    times faster, the same regressions on pvlib's history and the generated
    one, 373 of 400 random series listed identically.
    """
    index_map: list[int] = []
    y_filtered: list[float] = []
    for j, x in enumerate(y):
        if x is None or x != x:
            continue
        if w is not None:
            wj = w[j]
            if wj is not None and wj <= 0:
                continue
        index_map.append(j)
        y_filtered.append(float(x))
    if w is None:
        w_filtered = [1.0] * len(y_filtered)
    else:
        w_valid = [ww for ww in w if ww is not None and ww == ww]
        w_median = median(w_valid) if w_valid else 1.0
        if w_median == 0:
            w_median = 1.0
        w_filtered = [1.0] * len(y_filtered)
        for j, jj in enumerate(index_map):
            wj = w[jj]
            if wj is not None and wj == wj:
                w_filtered[j] = wj / w_median
    if not y_filtered:
        return []
    if quick:
        from asv import step_detect

        right, values, dists = step_detect.solve_potts_approx(y_filtered, w_filtered)
    else:
        right, values, dists = _solve_potts_autogamma(y_filtered, w_filtered)
    steps: list[Step] = []
    left = 0
    for r, v, d in zip(right, values, dists, strict=True):
        steps.append(
            (index_map[left], index_map[r - 1] + 1, v, min(y_filtered[left:r]), abs(d / (r - left)))
        )
        left = r
    return steps
