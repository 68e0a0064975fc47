"""A Horovod training script, run on libcollective: a small CNN learns the
8x8 handwritten digits that scikit-learn ships (1797 real images, no
download). The only line that differs from the same script on Horovod is
the import.

    hvdrun -np 4 -H localhost:4 python3 examples/pytorch_digits.py

Rank 0 prints one line per epoch; the script exits 1 if the test
accuracy ends below --min-accuracy (0.97).
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

try:
    import collective.torch as hvd  # was: import horovod.torch as hvd
except ImportError:  # run from the source tree, not installed
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "libcollective", "python"))
    import collective.torch as hvd


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = torch.nn.Linear(64 * 4 * 4, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.dropout(F.relu(self.fc1(x.flatten(1))), 0.25, self.training)
        return self.fc2(x)


def data_sets():
    """Train and test sets, the same split on every rank."""
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y)
    return TensorDataset(x_train, y_train), TensorDataset(x_test, y_test)


def metric_average(value, name):
    """The mean over the ranks of a number each rank measured."""
    return hvd.allreduce(torch.tensor(value), name=name).item()


def evaluate(model, loader):
    """Accuracy over the whole test set: each rank counts its shard."""
    model.eval()
    correct = seen = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum())
            seen += len(y)
    counts = hvd.allreduce(torch.tensor([correct, seen]), op=hvd.Sum,
                           name="test.counts")
    return float(counts[0]) / float(counts[1])


def train_epoch(model, optimizer, loader, sampler, epoch):
    model.train()
    sampler.set_epoch(epoch)
    total, batches = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total, batches = total + loss.item(), batches + 1
    return metric_average(total / max(batches, 1), "train.loss")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    hvd.init()
    torch.manual_seed(args.seed)
    # one thread per rank: the ranks of a host share its cores
    torch.set_num_threads(1)
    start = time.monotonic()

    train_set, test_set = data_sets()
    train_sampler = DistributedSampler(train_set, num_replicas=hvd.size(),
                                       rank=hvd.rank(), shuffle=True,
                                       seed=args.seed)
    test_sampler = DistributedSampler(test_set, num_replicas=hvd.size(),
                                      rank=hvd.rank(), shuffle=False)
    # DistributedSampler pads the test shards to equal length; drop it
    test_sampler.total_size = len(test_set)
    test_sampler.num_samples = len(range(hvd.rank(), len(test_set),
                                         hvd.size()))
    train_loader = DataLoader(train_set, batch_size=args.batch_size,
                              sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=256, sampler=test_sampler)

    model = Net()
    # the learning rate grows with the number of ranks, as the batch does
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr * hvd.size())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    optimizer = hvd.DistributedOptimizer(
        optimizer, named_parameters=model.named_parameters())

    # the rate falls along a cosine to zero by the last epoch
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer,
                                                          args.epochs)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train_epoch(model, optimizer, train_loader, train_sampler,
                           epoch)
        schedule.step()
        accuracy = evaluate(model, test_loader)
        if hvd.rank() == 0:
            print("epoch %2d/%d: train loss %.4f, test accuracy %.2f%% "
                  "(%.1f s)" % (epoch, args.epochs, loss, 100 * accuracy,
                                time.monotonic() - start), flush=True)
    if hvd.rank() == 0:
        print("test accuracy %.2f%% on %d images after %d epochs on %d ranks "
              "in %.1f s" % (100 * accuracy, len(test_set), args.epochs,
                             hvd.size(), time.monotonic() - start),
              flush=True)
    finish(accuracy, args.min_accuracy)


def finish(accuracy, least):
    """Leaves the job; exits 1 (rank 0 says why) below the least
    accuracy."""
    rank = hvd.rank()
    hvd.shutdown()
    if accuracy < least and rank == 0:
        print("test accuracy %.2f%% is below %.2f%%"
              % (100 * accuracy, 100 * least), file=sys.stderr)
    sys.exit(1 if accuracy < least else 0)


if __name__ == "__main__":
    main()
