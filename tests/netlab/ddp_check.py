"""Stock PyTorch DDP (gloo backend, init_method="env://") under hvdrun:
a small model trained on each rank's own data for 20 steps; at the end
every rank's weights must be the same. Prints one line per rank and exits
non-zero when they differ. Run with Debian's /usr/bin/python3."""
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo", init_method="env://")
rank, size = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)  # the same start everywhere; DDP broadcasts it too
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 1))
ddp = DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data
x = torch.randn(64, 8, generator=gen)
y = x.sum(1, keepdim=True)
for step in range(20):
    opt.zero_grad()
    loss = ((ddp(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
flat = torch.cat([p.detach().flatten() for p in model.parameters()])
high, low = flat.clone(), flat.clone()
dist.all_reduce(high, op=dist.ReduceOp.MAX)
dist.all_reduce(low, op=dist.ReduceOp.MIN)
same = torch.equal(high, low)
print("rank %d: ddp loss %.4f, weights %s on %d ranks"
      % (rank, loss.item(), "equal" if same else "DIFFER", size), flush=True)
dist.destroy_process_group()
sys.exit(0 if same else 1)
