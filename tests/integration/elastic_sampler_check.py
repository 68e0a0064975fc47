"""ElasticSampler without a job: the ranks of a round see every sample of
the epoch once (up to the padding), and after a change of ranks the rest
of the epoch is split among the new ones, with none seen twice or
skipped. Prints "elastic sampler ok"; raises at the first wrong split.

    python3 elastic_sampler_check.py
"""
import os
import sys

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective.torch.elastic as elastic  # noqa: E402


def split(dataset, ranks, processed, epoch):
    """Every rank's indices of a round of `ranks` ranks."""
    out = []
    for r in range(ranks):
        elastic.size, elastic.rank = (lambda: ranks), (lambda r=r: r)
        s = elastic.ElasticSampler(dataset, shuffle=True, seed=3)
        s.set_epoch(epoch)
        s.processed_num = processed
        s.reset()
        out.append(list(s))
    return out


data = list(range(100))
four = split(data, 4, 0, 1)
assert sorted(set(i for part in four for i in part)) == data, "4 ranks"
assert all(len(p) == 25 for p in four), "25 each"
# 2 batches of 5 on each of the 4 ranks are done: 40 samples
done = [i for k in range(10) for i in (p[k] for p in four)]
three = split(data, 3, 40, 1)
rest = set(i for part in three for i in part)
assert rest.isdisjoint(done), "a sample seen twice"
assert rest | set(done) == set(data), "a sample skipped"
assert split(data, 3, 40, 2) != three, "another epoch, another order"
print("elastic sampler ok")
