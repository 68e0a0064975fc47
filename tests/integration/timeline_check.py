"""Worker for integration.timeline: named async requests (allreduce,
allgather, broadcast; rank 0 queues "grads.b" 50 ms after the others) and
blocking calls, then, with a count argument, that many more rounds of
async allreduces (a job to kill mid-way: "round N" lines say how far)."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective  # noqa: E402

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 0
with collective.Comm() as c:
    a = c.allreduce_async("grads.a", np.ones(1000, np.float32))
    if c.rank == 0:
        time.sleep(0.05)
    b = c.allreduce_async("grads.b", np.ones(5000, np.float32))
    g = c.allgather_async("gather.x", np.full(3, c.rank, np.int32))
    y = c.broadcast_async("bcast.y", np.arange(4, dtype=np.float64))
    assert (a.wait() == c.size).all() and (b.wait() == c.size).all()
    assert (g.wait()[:, 0] == np.arange(c.size)).all()
    assert (y.wait() == np.arange(4)).all()
    assert (c.allreduce(np.ones(10, np.float64)) == c.size).all()
    c.broadcast(np.zeros(6, np.int64))
    c.allgather(np.ones(2, np.float32))
    for k in range(rounds):
        c.allreduce_async("loop.%d" % (k % 7), np.ones(256, np.float32)).wait()
        if c.rank == 0 and k % 50 == 0:
            print("round", k, flush=True)
    print("rank", c.rank, "done", flush=True)
