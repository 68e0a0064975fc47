"""Test worker: rank 1 stops in the middle of training, by SIGKILL (the
argument KILL) or by SIGSTOP (STOP: it hangs); every other rank must
raise HorovodInternalError from its next step, never hang: at once for a
dead peer, within HOROVOD_GLOO_TIMEOUT_SECONDS for a hung one. A survivor
prints "rank R raised HorovodInternalError after S s" and exits 1.

SIGTERM is only recorded here: hvdrun sends it to the survivors as soon
as rank 1 dies, and the test wants to see the error they would raise.
A second argument, if given, only marks the processes for the test's
cleanup.
"""
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective.torch as hvd  # noqa: E402

how = getattr(signal, "SIG" + sys.argv[1])
hvd.init()
r = hvd.rank()
signal.signal(signal.SIGTERM, lambda *_: None)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                          torch.nn.Linear(64, 4))
opt = hvd.DistributedOptimizer(torch.optim.SGD(net.parameters(), lr=0.01),
                               named_parameters=net.named_parameters())
x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
for step in range(1000):
    if step == 3 and r == 1:
        os.kill(os.getpid(), how)
    if step == 3:
        died = time.monotonic()
    try:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    except hvd.HorovodInternalError as e:
        print("rank %d raised HorovodInternalError after %.1f s: %s"
              % (r, time.monotonic() - died, e), flush=True)
        # hvdrun reports the first failure it hears of; across hosts a
        # survivor exiting at once could be heard before rank 1's agent
        time.sleep(2)
        sys.exit(1)
print("rank %d finished 1000 steps without an error" % r, flush=True)
