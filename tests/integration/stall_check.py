"""Worker for integration.stall. Without an argument: rank 0 queues
"zero.c", every other rank "lonely.a" and "lonely.b", so that no name is
queued by every rank; each then waits. "late": first 1.5 s of healthy
steps, then the same. "healthy": 3 s of steps of one name ("loss"), rank
0 30 ms behind the others at each, all completing. A request that fails
(the expiry) prints "expired: ..." and the worker exits 0."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else ""
with collective.Comm() as c:
    if mode in ("late", "healthy"):
        end = time.time() + (1.5 if mode == "late" else 3)
        more = 1
        while more:
            if c.rank == 0 and mode == "healthy":
                time.sleep(0.03)
            c.allreduce_async("loss", np.ones(8, np.float32)).wait()
            # every rank stops at the same step
            more = int(c.allreduce(np.array([time.time() < end], np.int32),
                                   op="min")[0])
        print("rank", c.rank, "healthy steps done", flush=True)
        if mode == "healthy":
            sys.exit(0)
    names = ["zero.c"] if c.rank == 0 else ["lonely.a", "lonely.b"]
    reqs = [c.allreduce_async(n, np.ones(8, np.float32)) for n in names]
    for r in reqs:
        try:
            r.wait()
            print("rank", c.rank, "unexpectedly done", flush=True)
        except collective.CollectiveError as e:
            print("rank", c.rank, "expired:", e, flush=True)
