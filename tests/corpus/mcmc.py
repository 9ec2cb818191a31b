"""An MCMC library as its authors write it: samplers whose first call takes seconds.

A small stand-in for a real sampling library (HMC with a hand-unrolled
leapfrog, a No-U-Turn-style doubling sampler, dual-averaging warm-up), written
the way such libraries are: a log density, its gradient by ``jax.grad``, a
kernel of a few hundred operations, and ``lax.scan`` over the draws. jit
traces and compiles the whole chain once, so a first call takes seconds on a
CPU while a warm call takes milliseconds: the suite ``jaxbench review`` must
keep within its time budget (``bench/bench_review.py --suite mcmc``).

The randomness is passed in (momenta and uniforms drawn by the caller from a
seeded NumPy generator), so a call is a deterministic function of its inputs.
It is used as the package ``tinymcmc`` of a scratch project (this file is
its ``__init__.py``); :data:`SUITE` is that project's asv benchmark module.
Only jax and numpy: no jaxbench import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

__all__ = [
    "LEAPFROG",
    "SUITE",
    "eight_schools",
    "hmc",
    "logistic",
    "nuts_like",
    "warmup",
]

LogDensity = Callable[[Any], Any]

#: Leapfrog steps per HMC proposal, unrolled in Python (as libraries do for a
#: fixed trajectory length): each step is the gradient of the log density again.
LEAPFROG = 8


def eight_schools(y: Any, sigma: Any) -> LogDensity:
    """The non-centred eight-schools model: ``theta = (mu, log_tau, eta_1..J)``."""

    def log_density(theta: Any) -> Any:
        mu, log_tau, eta = theta[0], theta[1], theta[2:]
        tau = jnp.exp(log_tau)
        prior = -0.5 * (mu / 5.0) ** 2 - 0.5 * (tau / 5.0) ** 2 + log_tau - 0.5 * jnp.sum(eta**2)
        school = mu + tau * eta
        return prior - 0.5 * jnp.sum(((y - school) / sigma) ** 2)

    return log_density


def logistic(x: Any, labels: Any) -> LogDensity:
    """Bayesian logistic regression with a standard normal prior on the weights."""

    def log_density(w: Any) -> Any:
        logits = x @ w
        likelihood = jnp.sum(labels * logits - jnp.logaddexp(0.0, logits))
        return likelihood - 0.5 * jnp.sum(w**2)

    return log_density


def _leapfrog(
    grad: Callable[[Any], Any], theta: Any, momentum: Any, step: Any, steps: int
) -> tuple[Any, Any]:
    momentum = momentum + 0.5 * step * grad(theta)
    for i in range(steps):  # unrolled: a fixed trajectory, as libraries write it
        theta = theta + step * momentum
        scale = 0.5 if i == steps - 1 else 1.0
        momentum = momentum + scale * step * grad(theta)
    return theta, momentum


def _accept(
    log_density: LogDensity, old: tuple[Any, Any], new: tuple[Any, Any], uniform: Any
) -> tuple[Any, Any]:
    (theta, momentum), (proposal, end) = old, new
    before = log_density(theta) - 0.5 * jnp.sum(momentum**2)
    after = log_density(proposal) - 0.5 * jnp.sum(end**2)
    log_ratio = jnp.nan_to_num(after - before, nan=-jnp.inf)
    accept = jnp.log(uniform) < log_ratio
    return jnp.where(accept, proposal, theta), jnp.minimum(1.0, jnp.exp(log_ratio))


def hmc(
    log_density: LogDensity, theta: Any, momenta: Any, uniforms: Any, step: float
) -> tuple[Any, Any]:
    """Draws of HMC (one per row of ``momenta``) and their acceptance probabilities."""
    grad = jax.grad(log_density)

    def kernel(theta: Any, draw: tuple[Any, Any]) -> tuple[Any, tuple[Any, Any]]:
        momentum, uniform = draw
        proposal = _leapfrog(grad, theta, momentum, step, LEAPFROG)
        theta, accepted = _accept(log_density, (theta, momentum), proposal, uniform)
        return theta, (theta, accepted)

    _, (draws, accepted) = jax.lax.scan(kernel, theta, (momenta, uniforms))
    return draws, accepted


def nuts_like(
    log_density: LogDensity, theta: Any, momenta: Any, uniforms: Any, step: float, depth: int = 4
) -> tuple[Any, Any]:
    """Draws of a doubling sampler: trajectories of 1, 2, 4, ... leapfrog steps, the
    first that makes a U-turn (or the longest) proposed, as NUTS builds its tree."""
    grad = jax.grad(log_density)

    def kernel(theta: Any, draw: tuple[Any, Any]) -> tuple[Any, tuple[Any, Any]]:
        momentum, uniform = draw
        chosen = (theta, momentum)
        turned = jnp.array(False)
        for level in range(depth):  # each level doubles the trajectory, unrolled
            end = _leapfrog(grad, theta, momentum, step, 2**level)
            u_turn = jnp.dot(end[0] - theta, end[1]) < 0
            keep = turned | u_turn
            chosen = jax.tree.map(lambda c, e, k=keep: jnp.where(k, c, e), chosen, end)
            turned = keep
        theta, accepted = _accept(log_density, (theta, momentum), chosen, uniform)
        return theta, (theta, accepted)

    _, (draws, accepted) = jax.lax.scan(kernel, theta, (momenta, uniforms))
    return draws, accepted


def warmup(
    log_density: LogDensity, theta: Any, momenta: Any, uniforms: Any, target: float = 0.8
) -> tuple[Any, Any]:
    """Dual-averaging warm-up of the step size (Hoffman and Gelman), then the final step."""
    grad = jax.grad(log_density)

    def adapt(state: Any, draw: tuple[Any, Any]) -> tuple[Any, Any]:
        theta, log_step, avg_log_step, h_bar, t = state
        momentum, uniform = draw
        step = jnp.exp(log_step)
        proposal = _leapfrog(grad, theta, momentum, step, LEAPFROG)
        theta, accepted = _accept(log_density, (theta, momentum), proposal, uniform)
        t = t + 1.0
        h_bar = (1 - 1 / (t + 10)) * h_bar + (target - accepted) / (t + 10)
        log_step = jnp.log(10 * 0.1) - jnp.sqrt(t) / 0.05 * h_bar
        weight = t**-0.75
        avg_log_step = weight * log_step + (1 - weight) * avg_log_step
        return (theta, log_step, avg_log_step, h_bar, t), accepted

    start = (theta, jnp.log(0.1), jnp.log(0.1), 0.0, 0.0)
    (theta, _, avg_log_step, _, _), accepted = jax.lax.scan(adapt, start, (momenta, uniforms))
    return theta, jnp.exp(avg_log_step) + 0.0 * jnp.mean(accepted)


#: The scratch project's asv benchmark module (``benchmarks/samplers.py``): the
#: samplers above on both models, as the library's authors would benchmark them.
SUITE = '''\
"""tinymcmc's samplers: first calls of seconds, warm calls of milliseconds."""

import numpy as np

from jaxbench.measure import Unchecked, Workload, jax_suite

import tinymcmc

UNCHECKED = Unchecked("a sampler: float32 and float64 trajectories part ways at accept steps")
Y = np.array([28, 8, -3, 7, -1, 1, 18, 12], np.float32)
SIGMA = np.array([15, 10, 16, 11, 9, 11, 10, 18], np.float32)


def _draws(rng, dim, n):
    momenta = rng.normal(size=(n, dim)).astype(np.float32)
    return momenta, rng.uniform(size=(n,)).astype(np.float32)


def _schools(name, sampler, n, **options):
    def run(theta, momenta, uniforms):
        density = tinymcmc.eight_schools(Y, SIGMA)
        return sampler(density, theta, momenta, uniforms, **options)

    def inputs(rng):
        return (np.zeros(10, np.float32), *_draws(rng, 10, n))

    return Workload(name=name, fn=run, inputs=inputs, reference=UNCHECKED, params={"draws": n})


def _logistic(name, sampler, n, features, **options):
    def run(x, labels, w, momenta, uniforms):
        return sampler(tinymcmc.logistic(x, labels), w, momenta, uniforms, **options)

    def inputs(rng):
        x = rng.normal(size=(200, features)).astype(np.float32)
        labels = (rng.uniform(size=200) < 0.5).astype(np.float32)
        return (x, labels, np.zeros(features, np.float32), *_draws(rng, features, n))

    return Workload(
        name=name, fn=run, inputs=inputs, reference=UNCHECKED,
        params={"draws": n, "features": features},
    )


def hmc_schools(draws):
    return _schools("hmc_schools", tinymcmc.hmc, draws, step=0.1)


def nuts_schools(draws):
    return _schools("nuts_schools", tinymcmc.nuts_like, draws, step=0.1)


def warmup_schools(draws):
    return _schools("warmup_schools", tinymcmc.warmup, draws)


def hmc_logistic(draws, features):
    return _logistic("hmc_logistic", tinymcmc.hmc, draws, features, step=0.02)


def nuts_logistic(draws, features):
    return _logistic("nuts_logistic", tinymcmc.nuts_like, draws, features, step=0.02)


HmcSchools, HmcSchoolsFigures = jax_suite("HmcSchools", hmc_schools, params={"draws": [100]})
NutsSchools, NutsSchoolsFigures = jax_suite("NutsSchools", nuts_schools, params={"draws": [100]})
WarmupSchools, WarmupSchoolsFigures = jax_suite(
    "WarmupSchools", warmup_schools, params={"draws": [100]}
)
HmcLogistic, HmcLogisticFigures = jax_suite(
    "HmcLogistic", hmc_logistic, params={"draws": [100], "features": [8, 32]}
)
NutsLogistic, NutsLogisticFigures = jax_suite(
    "NutsLogistic", nuts_logistic, params={"draws": [100], "features": [8]}
)
'''
