"""The digits example (pytorch_digits.py) as an elastic Horovod script:
the same model and data, with its state in hvd.elastic.TorchState,
committed every few batches, so that the job goes on when a host fails.

    hvdrun --min-np 2 -np 6 -H a:2,b:2,c:2 python3 examples/pytorch_digits_elastic.py

After a failure every rank goes back to the last commit, the job goes on
with the ranks that are left (ElasticSampler splits the rest of the
epoch among them: no sample twice, none skipped), and the learning rate
follows the number of ranks. Rank 0 prints one line per
epoch and one per change of ranks; the script exits 1 if the test
accuracy ends below --min-accuracy (0.97).
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_digits import Net, data_sets, evaluate, finish, hvd  # noqa


def test_loader(test_set):
    """This round's shard of the test set (not padded)."""
    sampler = DistributedSampler(test_set, num_replicas=hvd.size(),
                                 rank=hvd.rank(), shuffle=False)
    sampler.total_size = len(test_set)
    sampler.num_samples = len(range(hvd.rank(), len(test_set), hvd.size()))
    return DataLoader(test_set, batch_size=256, sampler=sampler)


def learning_rate(args, epoch):
    """The rate grows with the number of ranks, as the batch does, and
    falls along a cosine to zero by the last epoch."""
    return args.lr * hvd.size() * 0.5 * (
        1 + math.cos(math.pi * (epoch - 1) / args.epochs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--commit-every", type=int, default=5,
                        help="batches between commits")
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    hvd.init()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # the ranks of a host share its cores
    start = time.monotonic()
    train_set, test_set = data_sets()
    # the rest of each epoch is split among the ranks of the round
    sampler = hvd.elastic.ElasticSampler(train_set, shuffle=True,
                                         seed=args.seed)
    sampler.set_epoch(1)
    train_loader = DataLoader(train_set, batch_size=args.batch_size,
                              sampler=sampler)
    loaders = {"test": test_loader(test_set)}
    model = Net()
    optimizer = hvd.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=args.lr * hvd.size()),
        named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model, optimizer, sampler=sampler,
                                   epoch=1, accuracy=0.0)

    def on_reset():
        loaders["test"] = test_loader(test_set)
        if hvd.rank() == 0:
            print("now %d ranks (round %d), from epoch %d sample %d" %
                  (hvd.size(), hvd.elastic.current_round(), state.epoch,
                   sampler.processed_num), flush=True)

    state.register_reset_callbacks([on_reset])

    @hvd.elastic.run
    def train(state):
        while state.epoch <= args.epochs:
            model.train()
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(args, state.epoch)
            for i, (x, y) in enumerate(train_loader):
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
                sampler.record_batch(i, args.batch_size)
                if (i + 1) % args.commit_every == 0:
                    state.commit()
            state.accuracy = evaluate(model, loaders["test"])
            if hvd.rank() == 0:
                print("epoch %2d/%d: test accuracy %.2f%% on %d ranks "
                      "(%.1f s)" % (state.epoch, args.epochs,
                                    100 * state.accuracy, hvd.size(),
                                    time.monotonic() - start), flush=True)
            state.epoch += 1
            sampler.set_epoch(state.epoch)
            state.commit()

    train(state)
    if hvd.rank() == 0:
        print("test accuracy %.2f%% on %d images after %d epochs, ending on "
              "%d ranks, in %.1f s" % (100 * state.accuracy, len(test_set),
                                       args.epochs, hvd.size(),
                                       time.monotonic() - start), flush=True)
    finish(state.accuracy, args.min_accuracy)


if __name__ == "__main__":
    main()
