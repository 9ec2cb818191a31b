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
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "load":
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
            reply: dict[str, object] = {"number": NUMBER}
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
