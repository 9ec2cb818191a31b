"""A bare synchronized loop behind ``jaxbench.lockstep.coordinator``'s worker protocol.

``bench/bench_fidelity.py`` runs it beside the real worker (which times the
suite's asv benchmark with asv_runner's own timer), so that the bare loop and
the suite are sampled in turn, in two processes pinned to the same CPU. No
asv here: each sample is a ``perf_counter`` loop of 50 calls of predict
(64 x 32 @ 32 x 16, tanh), each ending in ``jax.block_until_ready`` (the
lesson's loop), divided by 50; or, when the directory argument is named
``...method``, in the output array's own ``block_until_ready()`` (the
suite's wait for a single-array output). Usage:
``python bare_worker.py DIR [CPUS]`` (DIR is not read, only its name).

With ``BARE_WORKLOAD=module:factory`` (a module of ``BARE_BENCHMARKS``, e.g.
``programs:train_step_workload``) the loop is that workload's call instead,
written bare: its seeded inputs ``jax.device_put``, ``jax.jit`` with its
static and donated arguments, and for a training step the state threaded
into the next call as ``carry`` says, each call ending in
``jax.block_until_ready`` on the whole output. No jaxbench harness code runs.
When DIR is named ``...harness``, the loop is instead jaxbench's own path
without asv (``protocol.prepare`` and ``block(call())``), a diagnostic that
tells asv's per-call layers from the harness's.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
from collections.abc import Callable
from typing import Any

NUMBER = 50


def main(argv: list[str]) -> int:
    if len(argv) > 2:  # as the real worker: pinned before jax starts
        from jaxbench.lockstep.worker import pin_threads

        pin_threads({int(c) for c in argv[2].split(",")})
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    call = None
    reply: dict[str, object]
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "load" and os.environ.get("BARE_WORKLOAD"):
            spec, benchmarks = os.environ["BARE_WORKLOAD"], os.environ["BARE_BENCHMARKS"]
            if argv[1].rstrip("/").endswith("harness"):
                call = _harness_call(spec, benchmarks)
            elif argv[1].rstrip("/").endswith("harnessbare"):
                call = _harness_call(spec, benchmarks, bare_loop=True)
            else:
                call = _workload_call(spec, benchmarks)
            end = time.perf_counter() + 0.1
            while time.perf_counter() < end:
                call()
            reply = {"number": NUMBER}
        elif op == "load":
            import jax
            import jax.numpy as jnp
            import numpy as np

            rng = np.random.default_rng(4)
            x = jax.device_put(rng.normal(size=(64, 32)).astype(np.float32))
            w = jax.device_put(rng.normal(size=(32, 16)).astype(np.float32))
            jax.block_until_ready((x, w))
            f = jax.jit(lambda x, w: jnp.tanh(x @ w))
            block: Callable[[Any], Any] = jax.block_until_ready
            if argv[1].rstrip("/").endswith("method"):
                block = operator.methodcaller("block_until_ready")
            for _ in range(200):
                block(f(x, w))

            def call(block=block, f=f, x=x, w=w) -> float:  # type: ignore[no-untyped-def]
                start = time.perf_counter()
                for _ in range(NUMBER):
                    block(f(x, w))
                return (time.perf_counter() - start) / NUMBER

            end = time.perf_counter() + 0.1  # the same warm-up as the asv worker
            while time.perf_counter() < end:
                call()
            reply = {"number": NUMBER}
        elif op == "sample":
            assert call is not None
            reply = {"samples": [call() for _ in range(int(request["count"]))]}
        else:
            reply = {"ok": True}
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if op == "close":
            return 0
    return 0


def _workload_call(spec: str, benchmarks: str) -> Any:
    """A bare loop of one workload's call (see the module docstring)."""
    import importlib

    import jax
    import numpy as np

    sys.path.insert(0, benchmarks)
    module, factory = spec.split(":")
    workload = getattr(importlib.import_module(module), factory)()
    built = workload.inputs(np.random.default_rng(workload.seed))
    args, kwargs = (built, {}) if isinstance(built, tuple) else (built.args, dict(built.kwargs))

    def put(value: Any) -> Any:
        return jax.tree_util.tree_map(
            lambda leaf: (
                jax.device_put(leaf)
                if isinstance(leaf, np.ndarray | np.generic | jax.Array)
                else leaf
            ),
            value,
        )

    static = set(workload.static_argnums) | set(workload.static_argnames)
    args = tuple(a if i in static else put(a) for i, a in enumerate(args))
    kwargs = {k: v if k in static else put(v) for k, v in kwargs.items()}
    jax.block_until_ready((args, kwargs))
    f = jax.jit(
        workload.fn,
        static_argnums=workload.static_argnums,
        static_argnames=workload.static_argnames,
        donate_argnums=workload.donate_argnums,
    )
    return _bare_loop(f, tuple(args), dict(kwargs), workload.carry)


def _bare_loop(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any], carry: Any) -> Any:
    """The bare synchronized loop of ``f``, threading ``carry``'s state; warmed up."""
    import jax

    state = {"args": args}

    def call() -> float:
        args = state["args"]
        start = time.perf_counter()
        for _ in range(NUMBER):
            out = f(*args, **kwargs)
            if carry is not None:
                args = tuple(carry(_Args(args, kwargs), out))
            jax.block_until_ready(out)
        elapsed = time.perf_counter() - start
        state["args"] = args
        return elapsed / NUMBER

    for _ in range(20):
        call()
    return call


def _harness_call(spec: str, benchmarks: str, bare_loop: bool = False) -> Any:
    """jaxbench's call path without asv: ``prepare``, then ``block(call())``.

    ``bare_loop``: after ``prepare``, the bare loop's own threading of the
    prepared function and state (tells the process's state from the call path).
    """
    import importlib

    from jaxbench.measure import protocol

    sys.path.insert(0, benchmarks)
    module, factory = spec.split(":")
    prepared = protocol.prepare(getattr(importlib.import_module(module), factory)())
    step, block = prepared.call, prepared.block
    if bare_loop:  # carry is called with the bare loop's own args holder
        return _bare_loop(step.fn, tuple(step.args.args), dict(step.args.kwargs), step.carry)

    def call() -> float:
        start = time.perf_counter()
        for _ in range(NUMBER):
            block(step())
        return (time.perf_counter() - start) / NUMBER

    for _ in range(20):
        call()
    return call


class _Args:
    """What a workload's ``carry`` reads: ``.args`` and ``.kwargs``."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.args, self.kwargs = args, kwargs


if __name__ == "__main__":
    sys.exit(main(sys.argv))
