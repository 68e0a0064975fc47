#!/usr/bin/python3
"""orphans.py COMMAND...: runs COMMAND as a child subreaper and prints
"orphans: N" where N is how many of COMMAND's descendants were still
around (alive or not yet reaped) when COMMAND returned, so came to this
process: what COMMAND left behind. Exits with COMMAND's status."""
import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("orphans.py: prctl: %s" % os.strerror(ctypes.get_errno()))
rc = subprocess.call(sys.argv[1:])
orphans = 0
deadline = time.monotonic() + 5  # an orphan is ours at once; wait for it
while time.monotonic() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        time.sleep(0.02)  # alive still: ours to wait for, then count
        continue
    orphans += 1
print("orphans: %d" % orphans, flush=True)
sys.exit(rc)
