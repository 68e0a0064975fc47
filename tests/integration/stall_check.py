"""Worker for integration.stall: rank 0 queues "zero.c", every other rank
"lonely.a" and "lonely.b", so that no name is queued by every rank; each
then waits. A request that fails (the expiry) prints "expired: ..." and
the worker exits 0."""
import os
import sys

import numpy as np

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective  # noqa: E402

with collective.Comm() as c:
    names = ["zero.c"] if c.rank == 0 else ["lonely.a", "lonely.b"]
    reqs = [c.allreduce_async(n, np.ones(8, np.float32)) for n in names]
    for r in reqs:
        try:
            r.wait()
            print("rank", c.rank, "unexpectedly done", flush=True)
        except collective.CollectiveError as e:
            print("rank", c.rank, "expired:", e, flush=True)
