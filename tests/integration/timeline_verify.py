"""Checks a timeline written by timeline_check.py's job of N ranks:
usage: timeline_verify.py FILE N [--cycles]. Prints "ok - ..." lines and
exits 1 at the first wrong one."""
import json
import sys

path, size = sys.argv[1], int(sys.argv[2])
cycles = "--cycles" in sys.argv
events = json.load(open(path))
failed = 0


def check(what, cond):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    failed |= not cond


names = {e["pid"]: e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "process_name"
         and "name" in e.get("args", {})}
pid = {n: p for p, n in names.items()}


def seq(tensor):
    return [e for e in events if e.get("pid") == pid.get(tensor)
            and e.get("ph") != "M"]


def shape(tensor):
    """The phases with names, ends as "E", instants as their rank."""
    return [e.get("name", "") if e["ph"] != "E" else "E" for e in seq(tensor)]


check("the header names the start time",
      events[0].get("args", {}).get("start_time_since_epoch_in_micros", 0) > 0)
for tensor, kind, dtype, n in (("grads.a", "ALLREDUCE", "float32", 1000),
                               ("grads.b", "ALLREDUCE", "float32", 5000),
                               ("gather.x", "ALLGATHER", "int32", 3),
                               ("bcast.y", "BROADCAST", "float64", 4)):
    s = shape(tensor)
    wire = s[5 + size] if len(s) == 8 + size else ""
    want = ([f"NEGOTIATE_{kind}"] + [str(r) for r in range(size)] +
            ["E", kind, "QUEUE", "E", wire, "E", "E"])
    check(f"{tensor}: negotiation with an instant per rank, then the "
          f"operation with QUEUE and the wire inside ({s})",
          s[:1] + sorted(s[1:1 + size], key=int) + s[1 + size:] == want
          and wire.endswith(f"_{kind}"))
    end = seq(tensor)[-1].get("args", {})
    check(f"{tensor}: its end says dtype and shape ({end})",
          end == {"dtype": dtype, "shape": f"[{n}]"})
    ts = [e["ts"] for e in seq(tensor) if e["ph"] != "X"]
    check(f"{tensor}: times in order", ts == sorted(ts))
late = {e["name"]: e["ts"] for e in seq("grads.b") if e["ph"] == "X"}
check("grads.b: rank 0 (50 ms late) is ready last, by about 50 ms "
      f"({late})", late["0"] - max(v for k, v in late.items() if k != "0")
      > 30000)
for tensor, kind in (("allreduce", "ALLREDUCE"), ("broadcast", "BROADCAST"),
                     ("allgather", "ALLGATHER")):
    s = shape(tensor)
    check(f"blocking {tensor}: negotiation, then the operation with the "
          f"wire inside ({s})",
          s[:4] == [f"NEGOTIATE_{kind}", "E", kind, s[3]]
          and s[3].endswith(f"_{kind}") and s[4:] == ["E", "E"])
marks = [e for e in events if e.get("ph") == "i"]
if cycles:
    check(f"CYCLE_START marks ({len(marks)})", len(marks) > 0 and all(
        e["name"] == "CYCLE_START" and e["s"] == "g" for e in marks))
else:
    check("no CYCLE_START marks without --timeline-mark-cycles", not marks)
sys.exit(1 if failed else 0)
