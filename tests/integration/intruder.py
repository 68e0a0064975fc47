#!/usr/bin/python3
"""What a stranger on the job's host can do to a job's TCP ring, for
trust.sh. Every mode is bounded in time; it talks only to the addresses it
is given (loopback in the tests).

  intruder.py impostor HOST PORT RANK TARGET SECONDS
      connect to a ring listener and claim to be RANK, in the old hello
      ("HVDR" + rank) and in the current one with a made-up proof; keep
      the connections open for SECONDS
  intruder.py silent HOST PORT COUNT SECONDS
      open COUNT connections that send nothing, for SECONDS
  intruder.py relay ADDRFILE HOST PORT SECONDS
      listen on 127.0.0.1, write "127.0.0.1 PORT" to ADDRFILE, and relay
      the first connection to HOST:PORT, flipping one byte of every chunk
      after the first 256 bytes each way, for SECONDS
"""
import os
import select
import socket
import struct
import sys
import time


def impostor(host, port, rank, target, seconds):
    conns = []
    old = socket.create_connection((host, port), timeout=5)
    old.sendall(b"HVDR" + struct.pack(">I", rank))
    conns.append(old)
    new = socket.create_connection((host, port), timeout=5)
    new.sendall(b"HVR1" + struct.pack(">II", rank, target) + os.urandom(16))
    conns.append(new)
    new.settimeout(2)
    try:
        challenge = new.recv(56)
        if challenge:
            new.sendall(os.urandom(32))  # a proof it cannot compute
    except OSError:
        pass
    print("impostor: connected as rank %d" % rank, flush=True)
    time.sleep(seconds)


def silent(host, port, count, seconds):
    conns = [socket.create_connection((host, port), timeout=5)
             for _ in range(count)]
    print("silent: %d connections open" % len(conns), flush=True)
    time.sleep(seconds)


def relay(addrfile, host, port, seconds):
    end = time.monotonic() + seconds
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    with open(addrfile + ".tmp", "w") as f:
        f.write("127.0.0.1 %d" % lsock.getsockname()[1])
    os.rename(addrfile + ".tmp", addrfile)
    lsock.settimeout(seconds)
    try:
        victim, _ = lsock.accept()
    except OSError:
        return
    real = socket.create_connection((host, port), timeout=5)
    moved = {victim: 0, real: 0}
    other = {victim: real, real: victim}
    flipped = 0
    while time.monotonic() < end:
        ready, _, _ = select.select([victim, real], [], [], 0.2)
        for s in ready:
            data = s.recv(65536)
            if not data:
                print("relay: flipped %d bytes" % flipped, flush=True)
                return
            if moved[s] >= 256:
                data = bytearray(data)
                data[len(data) // 2] ^= 0x01
                data = bytes(data)
                flipped += 1
            moved[s] += len(data)
            other[s].sendall(data)
    print("relay: flipped %d bytes" % flipped, flush=True)


def main(argv):
    mode = argv[1]
    if mode == "impostor":
        impostor(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
                 float(argv[6]))
    elif mode == "silent":
        silent(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    elif mode == "relay":
        relay(argv[2], argv[3], int(argv[4]), float(argv[5]))
    else:
        sys.exit("intruder.py: unknown mode '%s'" % mode)


if __name__ == "__main__":
    main(sys.argv)
