#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sends hostile RoCEv2 packets to an RDMA device's netdev (run from another network namespace).

usage: hostile_packets.py SRC_IP DST_IP COUNT SEED

Each packet is a full IPv4/UDP datagram to port 4791 sent through a raw socket, so the IP
identification (which the ICRC covers) is ours. The mix: random bytes after the UDP header;
well-formed headers of every opcode byte with random fields, lengths and pad; the same aimed at
the QP numbers a driver hands out first (16..63) with random PSNs, keys, addresses and lengths,
most with a correct ICRC so they get past the first check; truncated packets. Prints how many
packets were sent and how many carried a correct ICRC.
"""

import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import gen_icrc_vectors as ib  # noqa: E402  (the independent ICRC implementation)

# Opcode -> extension headers, for building well-formed packets of every kind.
RC, UC, UD = 0x00, 0x20, 0x60
EXT = {}
for base in (RC, UC):
    for op, ext in {0x00: "", 0x01: "", 0x02: "", 0x03: "I", 0x04: "", 0x05: "I",
                    0x06: "R", 0x07: "", 0x08: "", 0x09: "I", 0x0a: "R", 0x0b: "RI"}.items():
        EXT[base | op] = ext
EXT.update({0x0c: "R", 0x0d: "A", 0x0e: "", 0x0f: "A", 0x10: "A", 0x11: "A", 0x12: "AK",
            0x13: "T", 0x14: "T", 0x16: "V", 0x17: "V", 0x1c: "RF", 0x1d: "R",
            UD | 0x04: "D", UD | 0x05: "DI"})


def ext_bytes(kinds, rnd):
    out = b""
    for k in kinds:
        if k == "R":
            length = rnd.choice([0, 1, 8, 4096, 65536, 0x7FFFFFFF, 0xFFFFFFFF, rnd.getrandbits(32)])
            out += ib.reth(rnd.getrandbits(64), rnd.getrandbits(32), length)
        elif k == "A":
            out += ib.aeth(rnd.getrandbits(8), rnd.getrandbits(24))
        elif k == "D":
            out += ib.deth(rnd.choice([0, 0x80010000, rnd.getrandbits(32)]), rnd.getrandbits(24))
        elif k in "IV":
            out += ib.word(rnd.getrandbits(32))
        elif k == "K":
            out += struct.pack("!Q", rnd.getrandbits(64))
        elif k == "T":
            out += struct.pack("!QIQQ", rnd.getrandbits(64) & ~7 if rnd.random() < 0.7
                               else rnd.getrandbits(64), rnd.getrandbits(32),
                               rnd.getrandbits(64), rnd.getrandbits(64))
        elif k == "F":
            out += ib.feth(rnd.getrandbits(2), rnd.getrandbits(2))
    return out


def transport(rnd):
    """A BTH-and-beyond packet without ICRC; mostly well formed."""
    if rnd.random() < 0.6:
        opcode = rnd.choice(list(EXT))
    else:
        opcode = rnd.getrandbits(8)
    if rnd.random() < 0.7:
        qpn = rnd.choice([1, rnd.randrange(16, 64), 0xFFFFFF])
    else:
        qpn = rnd.getrandbits(24)
    psn = rnd.getrandbits(24) if rnd.random() < 0.5 else rnd.randrange(0, 64)
    payload = os.urandom(rnd.choice([0, 1, 3, 8, 100, 1024, rnd.randrange(0, 1500)]))
    pad = (-len(payload)) % 4 if rnd.random() < 0.8 else rnd.getrandbits(2)
    hdr = ib.bth(opcode, qpn, psn, se=rnd.getrandbits(1), pad=pad,
                 ackreq=rnd.getrandbits(1))
    if rnd.random() < 0.05:
        hdr = bytes([hdr[0], hdr[1] | 0x0F]) + hdr[2:]  # bad transport version
    return hdr + ext_bytes(EXT.get(opcode, ""), rnd) + payload + bytes(pad)


def datagram(src, dst, body, rnd, good_icrc):
    sport = 0xC000 | rnd.getrandbits(14)
    udp = ib.udp_header(sport, 8 + len(body) + 4, 0)
    ident = rnd.randrange(1, 0xFFFF)
    ip = ib.ipv4_header(src, dst, 8 + len(body) + 4, 0, 64, ident)
    if len(body) < 12:
        # Too short for a BTH: no ICRC to get right.
        crc = rnd.getrandbits(32)
    else:
        crc = ib.icrc(ib.masked_ipv4(ip), udp, body)
    if not good_icrc:
        crc ^= 1 << rnd.randrange(32)
    return ip + udp + body + struct.pack("<I", crc)


def main():
    src, dst, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    good = 0
    for _ in range(count):
        r = rnd.random()
        if r < 0.1:
            body = os.urandom(rnd.randrange(0, 200))
            pkt = datagram(src, dst, body, rnd, rnd.random() < 0.5)
        elif r < 0.15:
            # Truncated: shorter than a BTH plus ICRC, with a consistent UDP length.
            body = os.urandom(rnd.randrange(0, 12))
            ip = ib.ipv4_header(src, dst, 8 + len(body), 0, 64, 7)
            pkt = ip + ib.udp_header(0xC000, 8 + len(body), 0) + body
        else:
            ok = rnd.random() < 0.9
            good += ok
            pkt = datagram(src, dst, transport(rnd), rnd, ok)
        try:
            s.sendto(pkt, (dst, 0))
        except OSError:
            pass
    print(f"sent {count} packets, {good} with a correct ICRC")


if __name__ == "__main__":
    main()
