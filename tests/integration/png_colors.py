"""Counts pixels of given colours in a PNG (8-bit RGB or RGBA, as
Chromium's screenshots are), with only the standard library.
usage: png_colors.py FILE RRGGBB... -> "RRGGBB COUNT ROWS" per colour
(ROWS: how many 34-pixel bands of the image hold that colour)."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    at, idat, w, h, ctype = 8, b"", 0, 0, 0
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise SystemExit(f"{path}: not 8-bit RGB(A)")
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(
            raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else
                                      b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


w, h, bpp, rows = pixels(sys.argv[1])
for want in sys.argv[2:]:
    rgb = bytes.fromhex(want)
    count, bands = 0, set()
    for y, line in enumerate(rows):
        k = sum(1 for i in range(0, w * bpp, bpp) if line[i:i + 3] == rgb)
        count += k
        if k:
            bands.add(y // 34)
    print(want, count, len(bands))
