#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Structure-aware RoCEv2 packet fuzzer against live QPs (packet_fuzz.sh runs it).

usage: packet_fuzz.py STATE_FILE COUNT SEED [--max-seconds S] [--spoof IP,...]
       packet_fuzz.py --selftest [COUNT] [SEED]

STATE_FILE is what tests/verbs/fuzz_victim writes: its RC, UC and UD QPs, the PSNs their
responders expect, its regions' keys, addresses and lengths. The fuzzer runs in another network
namespace at the address the victim's RC and UC QPs are connected to and plays their peer: it
sends COUNT IPv4/UDP/RoCEv2 datagrams through a raw socket (so the IP identification and the
ICRC are its own) built around that live state:

- requests to the RC and UC QPs at the expected PSN (tracked as it advances, resynchronised
  from the victim's ACKs and NAKs and with duplicate probes) and at PSNs next to it: every
  request opcode, multi-packet SEND and WRITE with right and wrong sizes against the path MTU
  and the RETH length, RETHs and AtomicETHs at the regions' start, end, end - 1, beyond, near
  2^64 - 1, lengths 0, 1, 2^31, 2^31 + 1 and 2^32 - 1, keys valid, invalid, with the wrong key
  byte, of the read-only region for a write, of the memory window; atomics aligned and not,
  ATOMIC_WRITE, FLUSH, SEND with immediate and with invalidate, duplicate READs and atomics;
- responses to the victim's own outstanding requests, which it reads from a UDP socket on port
  4791: ACKs and NAKs of every syndrome, READ responses with right and wrong PSNs and lengths,
  atomic ACKs, the zero-length READ response of ATOMIC_WRITE and FLUSH, and mismatched kinds;
- UD SENDs with right and wrong qkeys and lengths; opcodes for the wrong QP type and
  unimplemented opcodes at the live QPs;
- requests and responses from other source addresses (--spoof), which the connection's address
  check must drop.

Nearly every packet carries a correct ICRC, so it reaches the transport logic; a few percent are
broken on purpose (bad ICRC, truncated, wrong pad or UDP length, bad version). At the end it
prints the packets sent per category and how many distinct (opcode, case) pairs were sent; the
last line is "totals: sent=N spoofed=N pairs=N". --selftest runs the generators against a
simulated state with no sockets and checks every packet built (lengths, IP checksum, ICRC).
"""

import argparse
import collections
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import gen_icrc_vectors as ib  # noqa: E402  (the independent ICRC implementation)

PORT = 4791
M24 = 0xFFFFFF
HALF = 0x800000
U64 = (1 << 64) - 1

# Opcode -> extension headers in wire order (R RETH, A AETH, D DETH, I ImmDt, V IETH,
# K AtomicAckETH, T AtomicETH, F FETH).
EXT = {}
for _base in (0x00, 0x20):
    for _op, _e in {0x00: "", 0x01: "", 0x02: "", 0x03: "I", 0x04: "", 0x05: "I", 0x06: "R",
                    0x07: "", 0x08: "", 0x09: "I", 0x0a: "R", 0x0b: "RI"}.items():
        EXT[_base | _op] = _e
EXT.update({0x0c: "R", 0x0d: "A", 0x0e: "", 0x0f: "A", 0x10: "A", 0x11: "A", 0x12: "AK",
            0x13: "T", 0x14: "T", 0x16: "V", 0x17: "V", 0x1c: "FR", 0x1d: "R",
            0x64: "D", 0x65: "DI"})
EXT_LEN = {"R": 16, "A": 4, "D": 8, "I": 4, "V": 4, "K": 8, "T": 28, "F": 4}

NAMES = {0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
         0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
         0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM", 0x0a: "WRITE_ONLY",
         0x0b: "WRITE_ONLY_IMM", 0x0c: "READ_REQUEST", 0x0d: "READ_RESPONSE_FIRST",
         0x0e: "READ_RESPONSE_MIDDLE", 0x0f: "READ_RESPONSE_LAST", 0x10: "READ_RESPONSE_ONLY",
         0x11: "ACK", 0x12: "ATOMIC_ACK", 0x13: "CMP_SWAP", 0x14: "FETCH_ADD",
         0x16: "SEND_LAST_INV", 0x17: "SEND_ONLY_INV", 0x1c: "FLUSH", 0x1d: "ATOMIC_WRITE"}

# RC opcodes (UC = RC | 0x20 for SEND and WRITE).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = range(6)
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = range(6, 12)
READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK = range(0x0c, 0x13)
CMP_SWAP, FETCH_ADD, SEND_LAST_INV, SEND_ONLY_INV, FLUSH, ATOMIC_WRITE = (
    0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d)
UC = 0x20
UD_SEND, UD_SEND_IMM = 0x64, 0x65
RESPONSES = (RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK)
# Where the payload of the first packet of a SEND or WRITE starts (BTH, then ImmDt or RETH),
# which carries the victim's stamp (fuzz_victim.c).
STAMP_OFFSET = {SEND_FIRST: 12, SEND_ONLY: 12, SEND_ONLY_IMM: 16, WRITE_FIRST: 28,
                WRITE_ONLY: 28, WRITE_ONLY_IMM: 32}
STAMP_MAGIC = 0x5374
# Request opcodes that continue a message (the rest start one, or are one).
CONTINUES = {SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_LAST_INV, WRITE_MIDDLE, WRITE_LAST,
             WRITE_LAST_IMM}
# Opcodes no driver implements (RD, reserved, manufacturer specific).
UNIMPLEMENTED = [0x15, 0x18, 0x19, 0x1a, 0x1b, 0x1e, 0x1f, 0x2c, 0x2d, 0x30, 0x3f, 0x40, 0x44,
                 0x4c, 0x53, 0x5f, 0x60, 0x63, 0x66, 0x7f, 0x80, 0xc0, 0xff]
CNP = 0x81
# MADs to the victim's QP1 (the GSI): methods (requests, responses, traps, reports) and what
# may be answered. A transaction ID of ours starts with MAD_TID_TAG, then the method asked.
MAD_METHODS = {0x01: "get", 0x02: "set", 0x03: "send", 0x05: "trap", 0x06: "report",
               0x07: "trap_repress", 0x15: "delete", 0x81: "get_resp", 0x86: "report_resp"}
MAD_ANSWERED = {0x01, 0x02, 0x15}
MAD_TID_TAG = 0xF7
GSI_QKEY = 0x80010000

MANGLES = ["bad_icrc", "truncated", "pad", "tver", "udp_len_long", "udp_len_short",
           "extra_bytes", "resv_bits", "pkey"]
MANGLE_P = 0.05

# Categories and their weights.
CATEGORIES = [("rc_request", 36), ("uc_request", 10), ("response", 26), ("ud", 8),
              ("wrong_type", 7), ("spoofed", 4), ("cnp_mad", 3)]


def opname(op):
    if op in NAMES:
        return NAMES[op]
    if op in (UD_SEND, UD_SEND_IMM):
        return "UD_" + NAMES[op & 0x1f]
    if 0x20 <= op < 0x2c:
        return "UC_" + NAMES[op & 0x1f]
    return "OP_%#04x" % op


def padd(p, n):
    return (p + n) & M24


def ahead(a, b):
    """Whether PSN a lies ahead of b (24-bit serial order)."""
    return 0 < (a - b) & M24 < HALF


def npkts(length, mtu):
    return max(1, -(-length // mtu))


def load_state(path):
    d = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            if not k:
                continue
            try:
                d[k] = int(v, 0)
            except ValueError:
                d[k] = v
    return d


class Region:
    """A region (or window) the fuzzer knows: what a key reaches and with which rights."""

    def __init__(self, name, addr, length, rkey, rights):
        self.name, self.addr, self.len, self.rkey, self.rights = name, addr, length, rkey, rights

    @property
    def end(self):
        return self.addr + self.len


class Conn:
    """The fuzzer's view of one connected responder of the victim."""

    def __init__(self, name, uc):
        self.name, self.uc = name, uc
        self.gen = None
        self.qpn = self.peer_qpn = 0
        self.epsn = 0
        self.open = None  # ("send", bytes so far) or ("write", bytes left) after a FIRST
        self.reads = collections.deque(maxlen=6)  # (psn, npkts, va, rkey, len) accepted
        self.atomics = collections.deque(maxlen=6)  # PSNs of accepted atomics
        self.answered = collections.deque(maxlen=6)  # PSNs of ATOMIC_WRITE and FLUSH
        self.data = collections.deque(maxlen=16)  # PSNs of accepted SEND/WRITE packets
        self.since_sync = 0
        self.suspect = False  # a NAK disagreed with the tracked PSN: resynchronise soon
        # (expected PSN, NAK class) of the packets sent to be refused: their NAKs, which may
        # arrive after the PSN moved on, are no reason to doubt it.
        self.expect_naks = collections.deque(maxlen=64)

    def reset(self, st):
        self.gen = st[self.name + "_gen"]
        self.qpn = st[self.name + "_qpn"]
        self.peer_qpn = st[self.name + "_peer_qpn"]
        self.epsn = st[self.name + "_rq_psn"]
        self.open = None
        for q in (self.reads, self.atomics, self.answered, self.data):
            q.clear()
        self.since_sync = 0
        self.suspect = False
        self.expect_naks.clear()


class VReq:
    """A request packet of the victim's RC requester, seen on the wire."""

    def __init__(self, op, psn, length):
        self.op, self.psn, self.length = op, psn, length
        info = op & 0x1f
        if info == READ_REQ:
            self.kind = "read"
        elif info in (CMP_SWAP, FETCH_ADD):
            self.kind = "atomic"
        elif info in (ATOMIC_WRITE, FLUSH):
            self.kind = "empty"
        else:
            self.kind = "data"


def fnv1a(data):
    """FNV-1a, 64 bits: how the trace and the victim's log name payloads and data."""
    h = 0xcbf29ce484222325
    for x in data:
        h = ((h ^ x) * 0x100000001b3) & U64
    return h


def split(t):
    """Transport bytes (BTH to the payload's end, no ICRC) as (headers, payload): the headers
    the opcode carries, the payload without the pad the BTH names."""
    if len(t) < 12:
        return t, b""
    hl = 12 + sum(EXT_LEN[h] for h in EXT.get(t[0], ""))
    if len(t) < hl:
        return t, b""
    pad = (t[1] >> 4) & 3
    return t[:hl], t[hl:max(hl, len(t) - pad)]


class Trace:
    """The reference model's half of the run (rrxe-oracle reads it with the victim's log):
    every packet both ways, in order, with CLOCK_MONOTONIC times (the victim's clock)."""

    def __init__(self, path):
        self.f = open(path, "w") if path else None

    def line(self, kind, rest):
        if self.f:
            self.f.write("%s %d %s\n" % (kind, time.monotonic_ns(), rest))

    def packet(self, kind, t, flag=None):
        """"rx T HDR LEN HASH" or "tx T ok|bad HDR LEN HASH"."""
        if self.f:
            h, pl = split(t)
            self.line(kind, "%s%s %d %016x" % (flag + " " if flag else "", h.hex(), len(pl),
                                                fnv1a(pl)))

    def close(self, lost):
        if self.f:
            self.f.write("lost %d\n" % lost)
            self.f.close()
            self.f = None


class Wire:
    """The raw IPv4 socket (or, for --selftest, a list)."""

    def __init__(self, dst, rnd, sink=None, trace=None):
        self.dst, self.rnd, self.sink = dst, rnd, sink
        self.trace = trace or Trace(None)
        self.peer = None
        self.ident = rnd.randrange(1, 0xFFFF)
        self.sock = None
        if sink is None:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.errors = 0

    def send(self, src, body, icrc_ok=True, udp_delta=0, note=None):
        n = 8 + len(body) + 4
        self.ident = self.ident % 0xFFFF + 1
        ip = ib.ipv4_header(src, self.dst, n, 0, 64, self.ident)
        udp = ib.udp_header(0xC000 | self.rnd.getrandbits(14), n + udp_delta, 0)
        crc = ib.icrc(ib.masked_ipv4(ip), udp, body)
        if not icrc_ok:
            crc ^= 1 << self.rnd.randrange(32)
        pkt = ip + udp + body + struct.pack("<I", crc)
        # What reaches the transport: a correct ICRC and UDP length, from the peer's address
        # (what it does there is the model's business; a mangled header with a correct ICRC
        # is traced as sent).
        ok = icrc_ok and udp_delta == 0 and src == self.peer
        self.trace.packet("tx", body, "ok" if ok else "bad")
        if self.sink is not None:
            self.sink.append((src, pkt, icrc_ok, udp_delta, note))
            return
        try:
            self.sock.sendto(pkt, (self.dst, 0))
        except OSError:
            self.errors += 1


SO_RCVBUFFORCE, SO_RXQ_OVFL = 33, 40


class Sniffer:
    """The victim's packets to the peer it thinks it talks to (RoCEv2 over UDP, checksum 0).
    Its buffer is large (as root, past rmem_max) and the socket counts what it had to drop:
    the oracle judges "went on the wire" only if nothing was lost."""

    def __init__(self, ip):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
        self.sock.bind((ip, PORT))
        self.sock.setblocking(False)
        self.lost = 0

    def poll(self, fz):
        for _ in range(256):
            try:
                data, anc, _, _ = self.sock.recvmsg(8192, socket.CMSG_SPACE(4))
            except (BlockingIOError, InterruptedError):
                return
            for level, kind, v in anc:
                if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(v) >= 4:
                    self.lost = max(self.lost, struct.unpack("=I", v[:4])[0])
            fz.on_victim_packet(data)


def body(op, qpn, psn, ext=b"", payload=b"", ackreq=1, se=0, pad=None, extra=b""):
    """BTH, extension headers, payload and pad (no ICRC)."""
    p = -len(payload) % 4 if pad is None else pad
    return ib.bth(op, qpn, psn & M24, se=se, pad=p, ackreq=ackreq) + ext + payload + \
        (bytes(p) if pad is None else extra)


class Fuzzer:
    def __init__(self, path, rnd, wire, sniffer, spoof, state=None):
        self.path, self.rnd, self.wire, self.sniffer = path, rnd, wire, sniffer
        self.trace = wire.trace
        self.spoof = spoof
        self.st = {}
        self.mtime = None
        self.rc, self.uc = Conn("rc", False), Conn("uc", True)
        self.vreqs = collections.OrderedDict()  # PSN -> VReq of the victim's RC requests
        self.v_sq_psn = 0
        self.vmsn = 0
        self.stale_mw = collections.deque(maxlen=4)
        self.sent = 0
        self.by_cat = collections.Counter()
        self.pairs = set()
        self.psn_pairs = set()
        self.mangled = collections.Counter()
        self.seen = collections.Counter()
        self.reloads = collections.Counter()
        self.spoofed = 0
        self.mads = collections.Counter()  # method -> MADs sent
        self.mad_replies = collections.Counter()  # method asked -> answers seen
        self.mad_tid = 0
        self.sync_wait = None
        self.resyncs = collections.Counter()
        # The oracle's half: the stamps of the victim's RC SENDs and WRITEs seen on the wire.
        self.stamps = set()
        self.payload_pool = os.urandom(4096) if state is None else bytes(range(256)) * 16
        if state is not None:
            self.apply_state(state)
        else:
            self.reload(force=True)

    # --- the victim's state -------------------------------------------------------------

    def reload(self, force=False):
        if self.path is None:
            return
        try:
            m = os.stat(self.path).st_mtime_ns
        except OSError:
            return
        if m == self.mtime and not force:
            return
        self.mtime = m
        try:
            st = load_state(self.path)
        except OSError:
            return
        if "gen" in st:
            self.apply_state(st)

    def apply_state(self, st):
        old = self.st
        self.st = st
        self.mtu = st["mtu"]
        self.peer, self.victim = st["peer_ip"], st["ip"]
        self.wire.peer = self.peer
        for c in (self.rc, self.uc):
            if c.gen != st[c.name + "_gen"]:
                if c.gen is not None:
                    self.reloads[c.name] += 1
                c.reset(st)
                self.trace.line("gen", "%s %d" % (c.name, c.gen))
                if c is self.rc:
                    self.vreqs.clear()
                    self.v_sq_psn = st["rc_sq_psn"]
        if old.get("mw_rkey") and old["mw_rkey"] != st["mw_rkey"]:
            self.stale_mw.append(old["mw_rkey"])
        rw = set("rwaf")
        self.small = Region("small", st["small_addr"], st["small_len"], st["small_rkey"], rw)
        self.big = Region("big", st["big_addr"], st["big_len"], st["big_rkey"], rw)
        self.ro = Region("ro", st["ro_addr"], st["ro_len"], st["ro_rkey"], set("r"))
        self.mw = None
        if st.get("mw_rkey"):
            self.mw = Region("mw", st["mw_addr"], st["mw_len"], st["mw_rkey"], set("rw"))

    def regions(self):
        return [r for r in (self.small, self.big, self.ro, self.mw) if r]

    def access_ok(self, rkey, va, length, right, qp_rights="rwaf"):
        """What the victim's rkey check would say (the fuzzer's model of it)."""
        if right not in qp_rights:
            return False
        for r in self.regions():
            if r.rkey == rkey:
                if right not in r.rights:
                    return False
                return length == 0 or (r.addr <= va and va + length <= r.end)
        return False

    # --- what the victim sends ----------------------------------------------------------

    def on_victim_packet(self, d):
        if len(d) < 16:
            return
        self.trace.packet("rx", d[:-4])
        if d[0] == UD_SEND and self.on_mad_reply(d):
            return
        op = d[0]
        qpn = int.from_bytes(d[5:8], "big")
        psn = int.from_bytes(d[9:12], "big")
        c = self.rc
        if qpn != c.peer_qpn or op & 0xe0:
            self.seen["uc" if qpn == self.uc.peer_qpn else "other"] += 1
            return
        if op in RESPONSES:
            # From the victim's RC responder: where its expected PSN is.
            syn = d[12] if op != RR_MIDDLE and len(d) >= 17 else 0
            if op == ACK and syn & 0x60 in (0x20, 0x60):
                self.seen["nak" if syn & 0x60 == 0x60 else "rnr_nak"] += 1
                cand = psn  # a NAK carries the PSN the responder expects
            else:
                self.seen["ack" if op == ACK else "response"] += 1
                cand = padd(psn, 1)
            if self.sync_wait is not None:
                if self.sync_wait[0] is None or ahead(cand, self.sync_wait[0]):
                    self.sync_wait[0] = cand
                self.sync_wait[1] = time.monotonic()
            elif ahead(cand, c.epsn):
                # Nothing the responder sends names a PSN beyond the one it expects.
                c.epsn = cand
            elif op == ACK and syn & 0x60 in (0x20, 0x60) and cand != c.epsn:
                # Behind: a NAK older than the packets sent since, or a misprediction.
                cls = "rnr" if syn & 0x60 == 0x20 else "seq" if syn == 0x60 else "err"
                if (cand, cls) not in c.expect_naks:
                    c.suspect = True
            return
        # A request of the victim's requester, to be answered.
        self.seen["request"] += 1
        self.note_stamp(op, d)
        length = len(d) - 16
        if op in (READ_REQ, WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, ATOMIC_WRITE) and \
                len(d) >= 32:
            length = int.from_bytes(d[24:28], "big")
        self.vreqs.pop(psn, None)
        self.vreqs[psn] = VReq(op, psn, length)
        while len(self.vreqs) > 48:
            self.vreqs.popitem(last=False)
        end = padd(psn, npkts(length, self.mtu) if op == READ_REQ else 1)
        if ahead(end, self.v_sq_psn):
            self.v_sq_psn = end

    def note_stamp(self, op, d):
        """Records the stamp a SEND or WRITE of the victim starts with (fuzz_victim.c)."""
        off = STAMP_OFFSET.get(op)
        if off is None or len(d) < off + 8 + 4:
            return
        stamp = int.from_bytes(d[off:off + 8], "big")
        if stamp >> 48 == STAMP_MAGIC:
            self.stamps.add(stamp)

    def poll(self):
        if self.sniffer:
            self.sniffer.poll(self)

    def drain(self, seconds):
        """Reads what the victim sends for `seconds` (it keeps retransmitting: no end)."""
        if not self.sniffer:
            return
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.sniffer.poll(self)
            time.sleep(0.01)

    # --- sending ------------------------------------------------------------------------

    def payload(self, n):
        if n <= len(self.payload_pool):
            at = self.rnd.randrange(0, len(self.payload_pool) - n + 1)
            return self.payload_pool[at:at + n]
        return bytes(n)

    def emit(self, cat, op, case, b, conn=None, psn=None, adv=0, after="keep", src=None,
             mangle=True, tag=None):
        """Sends transport packet b; tracks the responder's expected PSN as predicted."""
        icrc_ok, udp_delta, mg = True, 0, None
        if mangle and src is None and self.rnd.random() < MANGLE_P:
            mg = self.rnd.choice(MANGLES)
            b, icrc_ok, udp_delta = self.mangle(mg, b)
            self.mangled[mg] += 1
            self.pairs.add((op, "mangled:" + mg))
        self.wire.send(src or self.peer, b, icrc_ok, udp_delta, mg)
        self.sent += 1
        self.by_cat[cat] += 1
        self.pairs.add((op, case))
        if tag:
            self.psn_pairs.add((op, tag))
        if conn is None or mg is not None or src is not None:
            return
        starts = op & 0x1f not in CONTINUES
        if not conn.uc:
            if ahead(psn, conn.epsn):
                conn.expect_naks.append((conn.epsn, "seq"))
            elif psn == conn.epsn and (not adv or (conn.open and starts)):
                conn.expect_naks.append((conn.epsn, "err"))
        if psn == conn.epsn:
            if conn.open and starts:
                return  # the message in progress refuses it: nothing changes
            if adv:
                conn.epsn = padd(psn, adv)
            if after == "close":
                conn.open = None
            elif adv and after != "keep":
                conn.open = after
        elif conn.uc and ahead(psn, conn.epsn):
            # UC resynchronises: a FIRST or ONLY from ahead is taken (the message in progress
            # dropped), anything else skips the expected PSN past it.
            conn.open = None
            if not starts:
                conn.epsn = padd(psn, 1)
            elif adv:
                conn.epsn = padd(psn, adv)
                if after not in ("keep", "close"):
                    conn.open = after

    def mangle(self, kind, b):
        r = self.rnd
        if kind == "bad_icrc":
            return b, False, 0
        if kind == "truncated":
            # At least 8 bytes stay (what the ICRC's masking reads); a BTH needs 12.
            return b[:max(8, len(b) - r.randrange(1, 13))], True, 0
        if kind == "pad":
            return b[:1] + bytes([(b[1] & 0xCF) | (((b[1] >> 4) + r.randrange(1, 4)) & 3) << 4]) \
                + b[2:], True, 0
        if kind == "tver":
            return b[:1] + bytes([b[1] | r.randrange(1, 16)]) + b[2:], True, 0
        if kind == "udp_len_long":
            return b, True, r.choice([4, 100])
        if kind == "udp_len_short":
            return b, True, -r.choice([4, 8])
        if kind == "extra_bytes":
            return b + os.urandom(4), True, 0
        if kind == "resv_bits":
            return b[:4] + bytes([b[4] | r.choice([0x80, 0x40, 0x3F])]) + b[5:], True, 0
        # pkey
        return b[:2] + struct.pack("!H", r.choice([0, 0x7FFF, 0x8001, r.getrandbits(16)])) + \
            b[4:], True, 0

    # --- PSNs -----------------------------------------------------------------------------

    def pick_psn(self, c):
        r = self.rnd.random()
        if r < 0.8:
            return c.epsn, None
        tag, d = self.rnd.choice([("epsn-1", -1), ("epsn+1", 1), ("epsn+2", 2),
                                  ("epsn+2^23", HALF), ("epsn+2^23-1", HALF - 1),
                                  ("epsn-2^23+1", -HALF + 1), ("random", None)])
        return (padd(c.epsn, d) if d is not None else self.rnd.getrandbits(24)), tag

    def resync_rc(self):
        """A duplicate SEND with AckReq far behind: the re-ACK names the expected PSN."""
        c = self.rc
        c.since_sync = 0
        c.suspect = False
        if not self.sniffer:
            return
        self.poll()
        self.sync_wait = [None, 0.0]
        self.emit("rc_request", SEND_ONLY, "duplicate_probe",
                  body(SEND_ONLY, c.qpn, padd(c.epsn, -(1 << 22))), mangle=False)
        # The responder answers in order, the probe last: wait until it has gone quiet and
        # take the furthest PSN named (no answer names one beyond the expected PSN).
        t_end = time.monotonic() + 0.1
        while True:
            self.poll()
            now = time.monotonic()
            if now > t_end or (self.sync_wait[0] is not None and now - self.sync_wait[1] > 0.01):
                break
            time.sleep(0.002)
        if self.sync_wait[0] is not None:
            self.resyncs["corrected" if self.sync_wait[0] != c.epsn else "confirmed"] += 1
            c.epsn = self.sync_wait[0]
        else:
            # No answer (the QP is failing or being reconnected): not again at once.
            self.resyncs["unanswered"] += 1
            c.since_sync = -24
        self.sync_wait = None

    # --- keys and addresses ---------------------------------------------------------------

    def rkey_variant(self, right, n):
        """(case, va, rkey) for an access of n bytes needing right."""
        r = self.rnd
        s, b = self.small, self.big
        x = r.random()
        if x < 0.55:
            reg = r.choice([s, s, b] + ([self.mw] if self.mw and right in "rw" else []))
            where = r.choice(["start", "end", "inside"])
            if where == "start" or reg.len <= n:
                va = reg.addr
            elif where == "end":
                va = reg.end - n
            else:
                va = reg.addr + r.randrange(0, reg.len - n + 1) // 8 * 8
            return "%s_%s" % (reg.name, where), va, reg.rkey
        case = r.choice(["end-1", "at_end", "beyond", "va_max", "va_max-7", "va_zero",
                         "before_start", "ro_rkey", "key_byte", "random_rkey", "zero_rkey",
                         "other_region_va", "stale_mw", "mw_beyond", "big_end-1"])
        if case == "end-1":
            return case, s.end - 1, s.rkey
        if case == "big_end-1":
            return case, b.end - 1, b.rkey
        if case == "at_end":
            return case, s.end, s.rkey
        if case == "beyond":
            return case, s.end + r.choice([8, 4096, 1 << 20]), s.rkey
        if case == "va_max":
            return case, U64, s.rkey
        if case == "va_max-7":
            return case, U64 - 7, s.rkey
        if case == "va_zero":
            return case, 0, s.rkey
        if case == "before_start":
            return case, s.addr - 8, s.rkey
        if case == "ro_rkey":
            return case, self.ro.addr, self.ro.rkey
        if case == "key_byte":
            return case, s.addr, s.rkey ^ r.randrange(1, 256)
        if case == "random_rkey":
            return case, s.addr, r.getrandbits(32)
        if case == "zero_rkey":
            return case, s.addr, 0
        if case == "other_region_va":
            return case, b.addr, s.rkey
        if case == "stale_mw" and self.stale_mw:
            return case, self.st["mw_addr"], r.choice(list(self.stale_mw))
        if case == "mw_beyond" and self.mw:
            return case, self.mw.end - max(1, n // 2), self.mw.rkey
        return "small_start", s.addr, s.rkey

    def dma_len(self, n):
        """(case, RETH length) for a payload of n bytes."""
        x = self.rnd.random()
        if x < 0.75:
            return "len_exact", n
        return self.rnd.choice([("len_2^31", 1 << 31), ("len_2^31+1", (1 << 31) + 1),
                                ("len_2^32-1", U64 >> 32), ("len_short", max(0, n - 1)),
                                ("len_long", n + 1), ("len_0", 0)])

    # --- RC and UC requests ---------------------------------------------------------------

    def gen_rc_request(self):
        self.connected(self.rc)

    def gen_uc_request(self):
        self.connected(self.uc)

    def connected(self, c):
        r = self.rnd
        cat = c.name + "_request"
        c.since_sync += 1
        if not c.uc and (c.since_sync >= 48 or (c.suspect and c.since_sync >= 6)):
            self.resync_rc()
        elif c.uc and c.since_sync >= 40:
            # UC takes a SEND ONLY from ahead: resynchronises the fuzzer's view.
            c.since_sync = 0
            p = padd(c.epsn, 1000)
            self.emit(cat, UC | SEND_ONLY, "resync_ahead", body(UC | SEND_ONLY, c.qpn, p),
                      c, p, 1, "close", tag="epsn+1000")
            return
        if c.open and r.random() < 0.7:
            return self.finish_open(c, cat)
        if r.random() < 0.03:
            return self.unwedge(c, cat)
        psn, tag = self.pick_psn(c)
        fams = [(self.send_only, 14), (self.send_multi, 9), (self.write_only, 14),
                (self.write_multi, 9), (self.seq_error, 3), (self.dup_data, 3)]
        if not c.uc:
            fams += [(self.send_inv, 5), (self.read, 12), (self.dup_read, 5),
                     (self.atomic, 8), (self.dup_atomic, 2), (self.atomic_write, 5),
                     (self.flush, 5)]
        fam = r.choices([f for f, _ in fams], [w for _, w in fams])[0]
        fam(c, cat, psn, tag)

    def op(self, c, rc_op):
        return rc_op | UC if c.uc else rc_op

    def recv_fits(self, n):
        return n <= min(self.st["recv_len"], 4096)

    def send_only(self, c, cat, psn, tag):
        r = self.rnd
        mtu = self.mtu
        op = self.op(c, r.choice([SEND_ONLY, SEND_ONLY, SEND_ONLY_IMM]))
        n, case = r.choice([(0, "len_0"), (1, "len_1"), (3, "len_3"), (64, "len_64"),
                            (65, "len_65"), (mtu - 1, "len_mtu-1"), (mtu, "len_mtu"),
                            (mtu + 1, "len_mtu+1"), (mtu + 300, "len_mtu+300")])
        ext = ib.word(r.getrandbits(32)) if op & 0x1f == SEND_ONLY_IMM else b""
        ok = n <= mtu
        self.emit(cat, op, case, body(op, c.qpn, psn, ext, self.payload(n),
                                      ackreq=r.random() < 0.9, se=r.getrandbits(1)),
                  c, psn, 1 if ok else 0, "close" if not ok else "keep", tag=tag)

    def send_inv(self, c, cat, psn, tag):
        r = self.rnd
        choices = [("inv_small_mr", self.small.rkey), ("inv_ro_mr", self.ro.rkey),
                   ("inv_random", r.getrandbits(32)), ("inv_zero", 0)]
        if self.mw:
            choices += [("inv_mw", self.mw.rkey)] * 4 + \
                [("inv_mw_key_byte", self.mw.rkey ^ r.randrange(1, 256))]
        if self.stale_mw:
            choices.append(("inv_stale_mw", self.stale_mw[-1]))
        case, key = r.choice(choices)
        n = r.choice([0, 8, 200])
        if r.random() < 0.7:
            self.emit(cat, SEND_ONLY_INV, case, body(SEND_ONLY_INV, c.qpn, psn, ib.word(key),
                                                     self.payload(n)), c, psn, 1, tag=tag)
        else:
            # FIRST, then LAST with invalidate.
            self.emit(cat, SEND_FIRST, "before_inv", body(SEND_FIRST, c.qpn, psn, b"",
                                                          self.payload(self.mtu)),
                      c, psn, 1, ("send", self.mtu), tag=tag)
            p = padd(psn, 1)
            self.emit(cat, SEND_LAST_INV, case, body(SEND_LAST_INV, c.qpn, p, ib.word(key),
                                                     self.payload(max(1, n))), c, p, 1, "close")
        if case == "inv_mw":
            # Most likely gone now; the victim binds it again with another key.
            self.stale_mw.append(key)
            self.mw = None

    def send_multi(self, c, cat, psn, tag):
        r = self.rnd
        mtu = self.mtu
        k = r.choice([2, 2, 3, 4, 5])  # packets; 5 overflows the 4 KiB receive buffer
        last_n = r.choice([1, 17, mtu - 1, mtu])
        flaw = r.choice([None] * 6 + ["first_short", "first_long", "middle_short",
                                      "last_empty", "last_long", "gap", "interrupted",
                                      "unfinished", "first_first"])
        last_op = self.op(c, r.choice([SEND_LAST, SEND_LAST, SEND_LAST_IMM] +
                                      ([] if c.uc else [SEND_LAST_INV])))
        total = 0
        p = psn
        for i in range(k):
            if i == 0:
                op, n, case = self.op(c, SEND_FIRST), mtu, "first"
                if flaw == "first_short":
                    n, case = mtu - 4, "first_short"
                elif flaw == "first_long":
                    n, case = mtu + 4, "first_long"
            elif i < k - 1:
                op, n, case = self.op(c, SEND_MIDDLE), mtu, "middle"
                if flaw == "middle_short" and i == 1:
                    n, case = mtu // 2, "middle_short"
            else:
                op, n, case = last_op, last_n, "last"
                if flaw == "last_empty":
                    n, case = 0, "last_empty"
                elif flaw == "last_long":
                    n, case = mtu + 8, "last_long"
                elif flaw == "unfinished":
                    return
                elif flaw == "interrupted":
                    q = self.op(c, SEND_ONLY)
                    self.emit(cat, q, "interrupts_message", body(q, c.qpn, p), c, p, 0,
                              tag=tag)
                elif flaw == "first_first":
                    op, n, case = self.op(c, SEND_FIRST), mtu, "first_again"
            if flaw == "gap" and i == 1:
                p = padd(p, 1)
                case += "_after_gap"
            if k == 5 and i == 4:
                case += "_overflows_recv"
            ext = b""
            if op & 0x1f == SEND_LAST_IMM:
                ext = ib.word(r.getrandbits(32))
            elif op == SEND_LAST_INV:
                key = self.mw.rkey if self.mw and r.random() < 0.5 else r.getrandbits(32)
                ext = ib.word(key)
            total += n
            fits = n == mtu if i < k - 1 else 0 < n <= mtu
            ok = fits and self.recv_fits(total) and case != "first_again"
            # A length error ends the message; a sequence or PSN error leaves it open.
            after = ("send", total) if i < k - 1 else "close"
            if not ok:
                after = "keep" if case == "first_again" else "close"
            if "after_gap" in case:
                ok, after = False, "keep"
            self.emit(cat, op, case, body(op, c.qpn, p, ext, self.payload(n),
                                          ackreq=i == k - 1 or r.random() < 0.2),
                      c, p, 1 if ok else 0, after, tag=tag if i == 0 else None)
            if not ok:
                return
            p = padd(p, 1)

    def write_only(self, c, cat, psn, tag):
        r = self.rnd
        mtu = self.mtu
        op = self.op(c, r.choice([WRITE_ONLY, WRITE_ONLY, WRITE_ONLY_IMM]))
        n = r.choice([0, 1, 7, 8, 64, mtu - 1, mtu, mtu + 1])
        where, va, rkey = self.rkey_variant("w", n)
        lcase, dlen = self.dma_len(n)
        ext = ib.reth(va, rkey, dlen)
        if op & 0x1f == WRITE_ONLY_IMM:
            ext += ib.word(r.getrandbits(32))
        ok = n <= mtu and dlen <= (1 << 31) and dlen == n and (
            dlen == 0 or self.access_ok(rkey, va, dlen, "w", "w" if c.uc else "rwaf"))
        self.emit(cat, op, "%s/%s/%s" % (where, lcase, {0: "n0", 1: "n1"}.get(n, "n>1")),
                  body(op, c.qpn, psn, ext, self.payload(n), ackreq=r.random() < 0.9),
                  c, psn, 1 if ok else 0, "keep", tag=tag)

    def write_multi(self, c, cat, psn, tag):
        r = self.rnd
        mtu = self.mtu
        k = r.choice([2, 2, 3, 4])
        last_n = r.choice([1, mtu // 2, mtu])
        total = (k - 1) * mtu + last_n
        reg = r.choice([self.small, self.big, self.big])
        if reg.len < total:
            reg = self.big
        place = r.choice(["start", "end", "crosses_end", "ro", "key_byte"])
        va, rkey = reg.addr, reg.rkey
        if place == "end":
            va = reg.end - total
        elif place == "crosses_end":
            va = reg.end - total + r.choice([1, 8, mtu])
        elif place == "ro":
            va, rkey = self.ro.addr, self.ro.rkey
        elif place == "key_byte":
            rkey ^= r.randrange(1, 256)
        flaw = r.choice([None] * 6 + ["reth_short", "reth_long", "last_short", "last_long",
                                      "middle_long", "first_short", "gap", "unfinished",
                                      "interrupted", "kind_change"])
        dlen = total
        if flaw == "reth_short":
            dlen = total - r.choice([1, last_n])
        elif flaw == "reth_long":
            dlen = total + r.choice([1, mtu])
        last_op = self.op(c, r.choice([WRITE_LAST, WRITE_LAST, WRITE_LAST_IMM]))
        first_ok = self.access_ok(rkey, va, dlen, "w", "w" if c.uc else "rwaf")
        left = dlen
        p = psn
        for i in range(k):
            if i == 0:
                op, n, case = self.op(c, WRITE_FIRST), mtu, "first_" + place
                if flaw == "first_short":
                    n, case = mtu - 8, "first_short"
                ext = ib.reth(va, rkey, dlen)
            elif i < k - 1:
                op, n, case, ext = self.op(c, WRITE_MIDDLE), mtu, "middle", b""
                if flaw == "middle_long" and i == 1:
                    n, case = mtu + 8, "middle_long"
            else:
                op, n, case, ext = last_op, last_n, "last", b""
                if flaw == "last_short":
                    n, case = max(1, last_n - 1), "last_fewer_than_reth"
                elif flaw == "last_long":
                    n, case = last_n + 4, "last_more_than_reth"
                elif flaw == "unfinished":
                    return
                elif flaw == "interrupted":
                    q = self.op(c, SEND_ONLY)
                    self.emit(cat, q, "interrupts_write", body(q, c.qpn, p), c, p, 0, tag=tag)
                elif flaw == "kind_change":
                    op, case = self.op(c, SEND_LAST), "send_last_in_write"
                if op & 0x1f == WRITE_LAST_IMM:
                    ext = ib.word(r.getrandbits(32))
            if flaw == "gap" and i == 1:
                p = padd(p, 1)
                case += "_after_gap"
            if flaw in ("reth_short", "reth_long") and i == 0:
                case += "_" + flaw
            fits = n == mtu if i < k - 1 else 0 < n <= mtu
            ok = fits and (first_ok or dlen == 0) and n <= left and \
                (i < k - 1 or n == left) and op & 0x1f in (WRITE_FIRST, WRITE_MIDDLE,
                                                           WRITE_LAST, WRITE_LAST_IMM)
            left -= n
            # A length or key error ends the message; a sequence or PSN error leaves it open.
            after = ("write", left) if i < k - 1 and ok else "close"
            if case == "send_last_in_write" or "after_gap" in case:
                ok, after = False, "keep"
            self.emit(cat, op, case, body(op, c.qpn, p, ext, self.payload(n),
                                          ackreq=i == k - 1 or r.random() < 0.2),
                      c, p, 1 if ok else 0, after, tag=tag if i == 0 else None)
            if not ok:
                return
            p = padd(p, 1)

    def finish_open(self, c, cat):
        kind, x = c.open
        mtu = self.mtu
        p = c.epsn
        if kind == "send":
            n = self.rnd.choice([1, mtu])
            op = self.op(c, SEND_LAST)
            self.emit(cat, op, "finishes_open", body(op, c.qpn, p, b"", self.payload(n)),
                      c, p, 1 if self.recv_fits(x + n) else 0, "close")
            return
        if x > mtu:
            op = self.op(c, WRITE_MIDDLE)
            self.emit(cat, op, "continues_open", body(op, c.qpn, p, b"", self.payload(mtu)),
                      c, p, 1, ("write", x - mtu))
        else:
            op = self.op(c, WRITE_LAST)
            self.emit(cat, op, "finishes_open", body(op, c.qpn, p, b"", self.payload(x)),
                      c, p, 1 if x else 0, "close")

    def unwedge(self, c, cat):
        """A SEND LAST and a WRITE LAST longer than the MTU at the expected PSN: whichever
        message is open ends in a length error, and with none open both are refused."""
        p = c.epsn
        for rc_op in (SEND_LAST, WRITE_LAST):
            op = self.op(c, rc_op)
            self.emit(cat, op, "unwedge_len_mtu+1", body(op, c.qpn, p, b"",
                                                         self.payload(self.mtu + 1)),
                      c, p, 0, "close", mangle=False)

    def seq_error(self, c, cat, psn, tag):
        r = self.rnd
        op = self.op(c, r.choice([SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, WRITE_MIDDLE,
                                  WRITE_LAST, WRITE_LAST_IMM] +
                                 ([] if c.uc else [SEND_LAST_INV])))
        ext = ib.word(r.getrandbits(32)) if EXT[op] in ("I", "V") else b""
        middle = op & 0x1f in (SEND_MIDDLE, WRITE_MIDDLE)
        n = self.mtu if middle else 16
        # Taken only when a message of its kind is open (then not "without first" at all).
        takes = c.open and c.open[0] in NAMES[op & 0x1f].lower() and \
            (c.open[0] == "send" or (c.open[1] >= n and (middle or c.open[1] == n)))
        after = "close"
        if middle and takes:
            after = (c.open[0], c.open[1] + n if c.open[0] == "send" else c.open[1] - n)
        self.emit(cat, op, "without_first" if not c.open else "inside_open_message",
                  body(op, c.qpn, psn, ext, self.payload(n)), c, psn, 1 if takes else 0,
                  after if takes else "keep", tag=tag)

    def dup_data(self, c, cat, psn, tag):
        r = self.rnd
        back = r.choice([1, 2, 5, 100, HALF])
        p = padd(c.epsn, -back)
        op = self.op(c, r.choice([SEND_ONLY, WRITE_ONLY]))
        ext = ib.reth(self.small.addr, self.small.rkey, 8) if op & 0x1f == WRITE_ONLY else b""
        ackreq = r.random() < 0.7
        self.emit(cat, op, "duplicate_%s" % ("ackreq" if ackreq else "silent"),
                  body(op, c.qpn, p, ext, self.payload(8), ackreq=ackreq), c, p, 0,
                  tag="epsn-%d" % back if back < HALF else "epsn-2^23")

    def read(self, c, cat, psn, tag):
        r = self.rnd
        mtu = self.mtu
        n = r.choices([0, 1, 8, mtu - 1, mtu, mtu + 1, 4 * mtu, 16384, 65536, 1 << 20],
                      [4, 6, 4, 4, 6, 6, 6, 3, 2, 1])[0]
        where, va, rkey = self.rkey_variant("r", n)
        lcase = "len_%d" % n
        if r.random() < 0.12:
            lcase, n = r.choice([("len_2^31", 1 << 31), ("len_2^31+1", (1 << 31) + 1),
                                 ("len_2^32-1", U64 >> 32)])
        ok = n <= (1 << 31) and self.access_ok(rkey, va, n, "r")
        k = npkts(n, mtu)
        self.emit(cat, READ_REQ, "%s/%s" % (where, lcase), body(READ_REQ, c.qpn, psn,
                                                               ib.reth(va, rkey, n)),
                  c, psn, k if ok else 0, "keep", tag=tag)
        if ok and psn == padd(c.epsn, -k):
            c.reads.append((psn, k, va, rkey, n))

    def dup_read(self, c, cat, psn, tag):
        r = self.rnd
        if not c.reads:
            return self.read(c, cat, psn, tag)
        p0, k, va, rkey, n = r.choice(list(c.reads))
        at = r.choice(["first", "first", "inside", "after"])
        p = p0 if at == "first" else padd(p0, r.randrange(0, k)) if at == "inside" \
            else padd(p0, k)
        if not ahead(c.epsn, p):
            p = p0  # the PSN after it is the expected one: that would be a new READ
        shift, scase = r.choice([(0, "same"), (8, "va+8"), (self.mtu, "va+mtu"),
                                 (-8, "va-8"), (1 << 20, "va+1MiB"), (1 << 63, "va+2^63")])
        ln, lcase = r.choice([(n, "same_len"), (n + 1, "len+1"), (0, "len_0"),
                              (1 << 31, "len_2^31")])
        key = rkey if r.random() < 0.8 else rkey ^ 1
        self.emit(cat, READ_REQ, "replay_%s_%s_%s%s" % (at, scase, lcase,
                                                        "" if key == rkey else "_key"),
                  body(READ_REQ, c.qpn, p, ib.reth((va + shift) & U64, key, ln)), c, p, 0,
                  tag="duplicate")

    def atomic(self, c, cat, psn, tag):
        r = self.rnd
        op = r.choice([CMP_SWAP, FETCH_ADD])
        where, va, rkey = self.rkey_variant("a", 8)
        if r.random() < 0.25:
            mis = r.randrange(1, 8)
            va, where = (va + mis) & U64, "%s+%d_misaligned" % (where, mis)
        ok = va % 8 == 0 and self.access_ok(rkey, va, 8, "a")
        ext = struct.pack("!QIQQ", va, rkey, r.choice([0, 1, U64, r.getrandbits(64)]),
                          r.choice([0, r.getrandbits(64)]))
        self.emit(cat, op, where, body(op, c.qpn, psn, ext), c, psn, 1 if ok else 0, tag=tag)
        if ok and psn == padd(c.epsn, -1):
            c.atomics.append((psn, op, va, rkey))

    def dup_atomic(self, c, cat, psn, tag):
        r = self.rnd
        if not c.atomics and not c.answered:
            return self.atomic(c, cat, psn, tag)
        if c.atomics and (not c.answered or r.random() < 0.6):
            p, op, va, rkey = r.choice(list(c.atomics))
            ext = struct.pack("!QIQQ", va, rkey, r.getrandbits(64), r.getrandbits(64))
            self.emit(cat, op, "replay", body(op, c.qpn, p, ext), c, p, 0, tag="duplicate")
            return
        p, op, va, rkey = r.choice(list(c.answered))
        ext = ib.reth(va, rkey, 8) if op == ATOMIC_WRITE else ib.feth(0, 1) + ib.reth(va, rkey, 8)
        pl = self.payload(8) if op == ATOMIC_WRITE else b""
        self.emit(cat, op, "replay", body(op, c.qpn, p, ext, pl), c, p, 0, tag="duplicate")

    def atomic_write(self, c, cat, psn, tag):
        r = self.rnd
        where, va, rkey = self.rkey_variant("w", 8)
        flaw = r.choice([None] * 5 + ["reth_len_4", "reth_len_16", "reth_len_0", "payload_4",
                                      "payload_16", "payload_0", "pad_3", "misaligned"])
        dlen, pl, pad = 8, self.payload(8), None
        if flaw and flaw.startswith("reth_len_"):
            dlen = int(flaw[9:])
        elif flaw and flaw.startswith("payload_"):
            pl = self.payload(int(flaw[8:]))
        elif flaw == "misaligned":
            va = (va + r.randrange(1, 8)) & U64
        ok = flaw is None and va % 8 == 0 and self.access_ok(rkey, va, 8, "w")
        if flaw == "pad_3":
            b = body(ATOMIC_WRITE, c.qpn, psn, ib.reth(va, rkey, dlen), pl, pad=3,
                     extra=bytes(3))
        else:
            b = body(ATOMIC_WRITE, c.qpn, psn, ib.reth(va, rkey, dlen), pl, pad=pad)
        self.emit(cat, ATOMIC_WRITE, "%s/%s" % (where, flaw or "ok"), b, c, psn,
                  1 if ok else 0, tag=tag)
        if ok and psn == padd(c.epsn, -1):
            c.answered.append((psn, ATOMIC_WRITE, va, rkey))

    def flush(self, c, cat, psn, tag):
        r = self.rnd
        sel, scase = r.choice([(0, "range"), (0, "range"), (1, "whole_mr"), (2, "sel_2"),
                               (3, "sel_3")])
        plt, pcase = r.choice([(1, "global"), (1, "global"), (1, "global"),
                               (0, "placement_0"), (2, "persistent"), (3, "global+persistent"),
                               (4, "placement_4"), (15, "placement_15")])
        n = r.choice([0, 1, 64, 4096])
        where, va, rkey = self.rkey_variant("f", n)
        pl = self.payload(4) if r.random() < 0.08 else b""
        ok = sel in (0, 1) and plt == 1 and not pl and \
            self.access_ok(rkey, va, n if sel == 0 else 0, "f")
        self.emit(cat, FLUSH, "%s/%s/%s%s" % (scase, pcase, where, "/payload" if pl else ""),
                  body(FLUSH, c.qpn, psn, ib.feth(sel, plt) + ib.reth(va, rkey, n), pl),
                  c, psn, 1 if ok else 0, tag=tag)
        if ok and psn == padd(c.epsn, -1):
            c.answered.append((psn, FLUSH, va, rkey))

    # --- responses to the victim's requests ------------------------------------------------

    def gen_response(self):
        r = self.rnd
        c = self.rc
        if not self.vreqs or r.random() < 0.12:
            return self.unsolicited()
        reqs = list(self.vreqs.values())
        v = reqs[0] if r.random() < 0.7 else r.choice(reqs)
        getattr(self, "answer_" + v.kind)(c, v)

    def aeth(self, syn, msn=None):
        if msn is None:
            msn = self.vmsn
        return ib.aeth(syn, msn & M24)

    def msn_case(self):
        x = self.rnd.random()
        if x < 0.85:
            return None, ""
        return self.rnd.choice([(0, "/msn_0"), (M24, "/msn_max"),
                                (self.rnd.getrandbits(24), "/msn_random")])

    def resp(self, op, case, psn, ext=b"", payload=b"", src=None):
        c = self.rc
        self.emit("response", op, case, body(op, c.qpn, psn, ext, payload, ackreq=0), src=src)

    def done(self, v):
        self.vreqs.pop(v.psn, None)
        self.vmsn = (self.vmsn + 1) & M24

    def ack_syndromes(self):
        r = self.rnd
        return r.choices(
            [(0x1f, "ack"), (r.randrange(0, 0x1f), "ack_credits"), (0x60, "nak_psn_seq"),
             (0x20 | r.choice(list(range(1, 17)) + [0, 31]), "rnr_nak"),
             (0x61, "nak_invalid_request"), (0x62, "nak_remote_access"),
             (0x63, "nak_remote_operational"),
             (0x60 | r.randrange(4, 32), "nak_reserved_code"),
             (0x40 | r.randrange(0, 32), "syndrome_reserved_0x40"),
             (0x80 | r.getrandbits(7), "syndrome_reserved_0x80")],
            [40, 8, 10, 8, 1, 1, 1, 1, 3, 3])[0]

    def answer_data(self, c, v):
        r = self.rnd
        syn, scase = self.ack_syndromes()
        msn, mcase = self.msn_case()
        where = r.choices(["exact", "latest", "future", "old", "read_response",
                           "atomic_ack"], [60, 12, 6, 6, 4, 4])[0]
        psn = v.psn
        if where == "latest":
            psn = padd(self.v_sq_psn, -1)
        elif where == "future":
            # Read what the victim sent first: a PSN it sent and the fuzzer has not read yet
            # is acknowledged blindly, and the oracle must see that packet (it is on the wire).
            self.poll()
            psn = padd(self.v_sq_psn, r.choice([0, 1, 5, 1000]))
        elif where == "old":
            psn = padd(v.psn, -r.choice([1, 100, HALF - 1]))
        if where == "read_response":
            self.resp(RR_ONLY, "for_send_or_write", v.psn, self.aeth(0x1f), self.payload(8))
            return
        if where == "atomic_ack":
            self.resp(ATOMIC_ACK, "for_send_or_write", v.psn, self.aeth(0x1f) +
                      struct.pack("!Q", r.getrandbits(64)))
            return
        self.resp(ACK, "%s@%s%s" % (scase, where, mcase), psn, self.aeth(syn, msn))
        if scase in ("ack", "ack_credits") and where in ("exact", "latest"):
            for p in list(self.vreqs):
                if not ahead(p, psn) and self.vreqs[p].kind == "data":
                    self.vreqs.pop(p)
            self.vmsn = (self.vmsn + 1) & M24

    def answer_read(self, c, v):
        r = self.rnd
        mtu = self.mtu
        k = npkts(v.length, mtu)
        case = r.choices(
            ["ok", "ok_twice", "last_short", "last_long", "only_over_mtu", "first_only",
             "psn_ahead", "psn_behind", "middle_first", "only_for_multi", "zero_length",
             "ack_instead", "nak_psn_seq", "rnr_nak", "atomic_ack_instead", "reordered",
             "nak_remote_access"],
            [40, 4, 4, 3, 3, 4, 4, 4, 3, 3, 3, 4, 3, 2, 3, 3, 1])[0]
        sizes = [mtu] * (k - 1) + [v.length - (k - 1) * mtu]
        ops = [RR_ONLY] if k == 1 else [RR_FIRST] + [RR_MIDDLE] * (k - 2) + [RR_LAST]
        base = v.psn
        if case == "last_short":
            sizes[-1] = max(0, sizes[-1] - r.choice([1, 4]))
        elif case == "last_long":
            sizes[-1] += r.choice([1, 4, 100])
        elif case == "only_over_mtu":
            ops, sizes = [RR_ONLY], [mtu + r.choice([1, 100])]
        elif case == "first_only":
            ops, sizes = [RR_FIRST], [mtu]
        elif case == "psn_ahead":
            base = padd(base, 1)
        elif case == "psn_behind":
            base = padd(base, -1)
        elif case == "middle_first":
            ops = [RR_MIDDLE] + ops[1:]
        elif case == "only_for_multi":
            ops, sizes = [RR_ONLY], [min(v.length, mtu)]
        elif case == "zero_length":
            ops, sizes = [RR_ONLY], [0]
        elif case in ("ack_instead", "nak_psn_seq", "rnr_nak", "nak_remote_access"):
            syn = {"ack_instead": 0x1f, "nak_psn_seq": 0x60, "rnr_nak": 0x21,
                   "nak_remote_access": 0x62}[case]
            self.resp(ACK, "for_read/" + case, v.psn, self.aeth(syn))
            return
        elif case == "atomic_ack_instead":
            self.resp(ATOMIC_ACK, "for_read", v.psn, self.aeth(0x1f) + bytes(8))
            return
        order = list(range(len(ops)))
        if case == "reordered" and len(order) > 1:
            order[0], order[1] = order[1], order[0]
        for _ in range(2 if case == "ok_twice" else 1):
            for i in order:
                op = ops[i]
                ext = b"" if op == RR_MIDDLE else self.aeth(0x1f)
                self.resp(op, "read_%s/%s" % (case, ["only", "first", "middle", "last"][
                    (op == RR_FIRST) + 2 * (op == RR_MIDDLE) + 3 * (op == RR_LAST)]),
                    padd(base, i), ext, self.payload(max(0, sizes[i])))
        if case in ("ok", "ok_twice", "last_short"):
            self.done(v)

    def answer_atomic(self, c, v):
        r = self.rnd
        case = r.choices(["ok", "twice", "psn_ahead", "psn_behind", "read_response",
                          "ack_instead", "nak_remote_access", "nak_invalid_request"],
                         [60, 6, 6, 6, 8, 8, 1, 1])[0]
        orig = struct.pack("!Q", r.getrandbits(64))
        if case == "read_response":
            self.resp(RR_ONLY, "for_atomic", v.psn, self.aeth(0x1f), orig)
            return
        if case in ("ack_instead", "nak_remote_access", "nak_invalid_request"):
            syn = {"ack_instead": 0x1f, "nak_remote_access": 0x62,
                   "nak_invalid_request": 0x61}[case]
            self.resp(ACK, "for_atomic/" + case, v.psn, self.aeth(syn))
            return
        p = {"psn_ahead": padd(v.psn, 1), "psn_behind": padd(v.psn, -1)}.get(case, v.psn)
        for _ in range(2 if case == "twice" else 1):
            self.resp(ATOMIC_ACK, "atomic_ack_" + case, p, self.aeth(0x1f) + orig)
        if case in ("ok", "twice"):
            self.done(v)

    def answer_empty(self, c, v):
        r = self.rnd
        what = NAMES[v.op & 0x1f].lower()
        case = r.choices(["ok", "with_payload", "first_empty", "atomic_ack", "ack_instead",
                          "psn_ahead", "last_empty"], [60, 8, 6, 6, 8, 6, 6])[0]
        if case == "ok":
            self.resp(RR_ONLY, "empty_for_" + what, v.psn, self.aeth(0x1f))
            self.done(v)
        elif case == "with_payload":
            self.resp(RR_ONLY, "payload_for_" + what, v.psn, self.aeth(0x1f),
                      self.payload(r.choice([1, 8])))
        elif case == "first_empty":
            self.resp(RR_FIRST, "empty_for_" + what, v.psn, self.aeth(0x1f))
        elif case == "last_empty":
            self.resp(RR_LAST, "empty_for_" + what, v.psn, self.aeth(0x1f))
        elif case == "atomic_ack":
            self.resp(ATOMIC_ACK, "for_" + what, v.psn, self.aeth(0x1f) + bytes(8))
        elif case == "ack_instead":
            self.resp(ACK, "for_" + what, v.psn, self.aeth(0x1f))
        else:
            self.resp(RR_ONLY, "empty_psn_ahead_for_" + what, padd(v.psn, 1), self.aeth(0x1f))

    def unsolicited(self):
        r = self.rnd
        op = r.choice(RESPONSES)
        psn = padd(self.v_sq_psn, r.choice([-2, -1, 0, 1, HALF, r.getrandbits(24)]))
        ext = b"" if op == RR_MIDDLE else self.aeth(r.getrandbits(8), r.getrandbits(24))
        if op == ATOMIC_ACK:
            ext += struct.pack("!Q", r.getrandbits(64))
        pl = self.payload(r.choice([0, 4, self.mtu])) if op in (RR_FIRST, RR_MIDDLE, RR_LAST,
                                                                  RR_ONLY) else b""
        self.resp(op, "unsolicited", psn, ext, pl)

    # --- UD, wrong QP types, other sources ---------------------------------------------------

    def gen_ud(self):
        r = self.rnd
        st = self.st
        op = r.choice([UD_SEND, UD_SEND, UD_SEND_IMM])
        qcase, qkey = r.choices([("qkey_ok", st["ud_qkey"]), ("qkey_wrong", st["ud_qkey"] ^ 1),
                                 ("qkey_0", 0), ("qkey_gsi", 0x80010000),
                                 ("qkey_random", r.getrandbits(32))], [70, 8, 6, 8, 8])[0]
        room = st["ud_recv_len"] - 40
        n, lcase = r.choice([(0, "len_0"), (1, "len_1"), (room - 1, "len_room-1"),
                             (room, "len_room"), (room + 1, "len_room+1"),
                             (1400, "len_1400")])
        ext = ib.deth(qkey, r.getrandbits(24))
        if op == UD_SEND_IMM:
            ext += ib.word(r.getrandbits(32))
        self.emit("ud", op, "%s/%s" % (qcase, lcase),
                  body(op, st["ud_qpn"], r.getrandbits(24), ext, self.payload(n),
                       ackreq=r.getrandbits(1), se=r.getrandbits(1)))

    def gen_wrong_type(self):
        r = self.rnd
        st = self.st
        live = {"rc": st["rc_qpn"], "uc": st["uc_qpn"], "ud": st["ud_qpn"]}
        to = r.choice(list(live))
        x = r.random()
        if x < 0.3:
            op = r.choice(UNIMPLEMENTED)
            b = body(op, live[to], self.rc.epsn if to == "rc" else self.uc.epsn, b"",
                     self.payload(r.choice([0, 4, 16, 28, 64])))
            self.emit("wrong_type", op, "unimplemented_to_" + to, b)
            return
        if x < 0.4:
            qpn, case = r.choice([(live[to] + 1, "qpn+1"), (live[to] - 1, "qpn-1"),
                                  (M24, "multicast_qpn"), (0, "qpn_0")])
            op = r.choice([SEND_ONLY, UD_SEND, ACK, READ_REQ])
        else:
            qpn, case = live[to], "to_" + to
            if to == "rc":
                op = r.choice([UC | SEND_ONLY, UC | WRITE_ONLY, UC | SEND_FIRST, UD_SEND,
                               UD_SEND_IMM])
            elif to == "uc":
                op = r.choice([READ_REQ, CMP_SWAP, FETCH_ADD, ATOMIC_WRITE, FLUSH,
                               SEND_ONLY_INV, SEND_ONLY, WRITE_ONLY] + list(RESPONSES))
            else:
                op = r.choice([SEND_ONLY, WRITE_ONLY, READ_REQ, UC | SEND_ONLY, CMP_SWAP,
                               ACK, RR_ONLY])
        psn = self.rc.epsn if to == "rc" else self.uc.epsn if to == "uc" else 0
        ext = b""
        for h in EXT.get(op, ""):
            if h == "R":
                ext += ib.reth(self.small.addr, self.small.rkey, 8)
            elif h == "A":
                ext += self.aeth(0x1f)
            elif h == "D":
                ext += ib.deth(st["ud_qkey"], 1)
            elif h in "IV":
                ext += ib.word(r.getrandbits(32))
            elif h == "K":
                ext += bytes(8)
            elif h == "T":
                ext += struct.pack("!QIQQ", self.small.addr, self.small.rkey, 1, 0)
            elif h == "F":
                ext += ib.feth(0, 1)
        n = 0 if op in (READ_REQ, CMP_SWAP, FETCH_ADD, FLUSH, ACK, ATOMIC_ACK) else 8
        self.emit("wrong_type", op, case, body(op, qpn, psn, ext, self.payload(n)))

    def gen_cnp_mad(self):
        """Congestion notifications into the live connections (they must change nothing a
        completion shows), and MADs to QP1: every method, PerfMgt and other classes. Only a
        Get, Set or Delete may be answered, never a response, trap or report."""
        r = self.rnd
        st = self.st
        if r.random() < 0.4:
            c = self.rc if r.random() < 0.7 else self.uc
            n, case = r.choice([(16, "cnp"), (16, "cnp"), (0, "cnp_short"), (20, "cnp_long")])
            b = ib.bth(CNP, c.qpn, r.choice([0, c.epsn, r.getrandbits(24)]), becn=1) + bytes(n)
            self.emit("cnp_mad", CNP, "%s_to_%s" % (case, c.name), b)
            return
        method = r.choice(list(MAD_METHODS))
        cls, cver, case = r.choices([(0x04, 1, "perfmgt"), (0x04, 2, "perfmgt_v2"),
                                     (0x0a, 1, "unknown_class"), (0x81, 1, "dr_smp")],
                                    [70, 10, 10, 10])[0]
        attr = r.choice([0x0001, 0x0012, 0x001d, 0x7777])
        self.mad_tid = (self.mad_tid + 1) & 0xFFFFFFFF
        tid = MAD_TID_TAG << 56 | method << 48 | self.mad_tid
        mad = struct.pack("!BBBBHHQHHI", 1, cls, cver, method, 0, 0, tid, attr, 0, 1)
        mad += bytes(256 - len(mad))
        self.mads[method] += 1
        b = body(UD_SEND, 1, r.getrandbits(24), ib.deth(GSI_QKEY, 1), mad, ackreq=0)
        self.emit("cnp_mad", UD_SEND, "mad_%s_%s" % (case, MAD_METHODS[method]), b,
                  mangle=False)

    def on_mad_reply(self, d):
        """A UD packet of the victim to QP1 of ours: an answer to one of our MADs."""
        if int.from_bytes(d[5:8], "big") != 1:
            return False
        mad = d[20:-4]
        if len(mad) >= 24 and mad[8] == MAD_TID_TAG:
            self.mad_replies[mad[9]] += 1
        else:
            self.mad_replies[-1] += 1
        return True

    def mad_wrong(self):
        """Answers to MADs that must not be answered, or more than were asked."""
        bad = 0
        for m, n in self.mad_replies.items():
            bad += n if m not in MAD_ANSWERED else max(0, n - self.mads[m])
        return bad

    def gen_spoofed(self):
        """Well-formed packets for the connected QPs from an address they are not connected
        to: the address check drops them before anything else looks at them."""
        r = self.rnd
        src = r.choice(self.spoof)
        x = r.random()
        c = self.rc if x < 0.7 else self.uc
        if x < 0.35:
            op = SEND_ONLY
            b = body(op, c.qpn, c.epsn, b"", self.payload(16))
        elif x < 0.55:
            op = WRITE_ONLY
            b = body(op, c.qpn, c.epsn, ib.reth(self.small.addr, self.small.rkey, 16),
                     self.payload(16))
        elif x < 0.7:
            op = ACK
            b = body(op, c.qpn, padd(self.v_sq_psn, -1), self.aeth(0x1f), b"", ackreq=0)
        else:
            op = UC | SEND_ONLY
            b = body(op, c.qpn, c.epsn, b"", self.payload(16))
        self.spoofed += 1
        self.emit("spoofed", op, "from_" + src, b, src=src, mangle=False)

    # --- the run ---------------------------------------------------------------------------

    def run(self, count, max_seconds, sleep=True):
        cats = [getattr(self, "gen_" + n) for n, _ in CATEGORIES]
        weights = [w for _, w in CATEGORIES]
        t_end = time.monotonic() + max_seconds
        self.timed_out = False
        step = 0
        while self.sent < count:
            step += 1
            if step % 4 == 0:
                # A reconnect of the victim makes every PSN stale: look often (one stat).
                self.reload()
            if step % 16 == 0:
                if time.monotonic() > t_end:
                    self.timed_out = True
                    break
                if sleep:
                    # Pacing: the victim and its requester get a turn.
                    time.sleep(0.002)
            self.poll()
            self.rnd.choices(cats, weights)[0]()

    def report(self):
        cats = " ".join("%s=%d" % (n, self.by_cat[n]) for n, _ in CATEGORIES)
        print("# sent %d packets: %s, mangled=%d (%s)" % (
            self.sent, cats, sum(self.mangled.values()),
            ", ".join("%s %d" % kv for kv in sorted(self.mangled.items()))))
        ops = collections.Counter(op for op, _ in self.pairs)
        print("# %d distinct (opcode, case) pairs over %d opcodes; %d (opcode, PSN offset) "
              "pairs" % (len(self.pairs), len(ops), len(self.psn_pairs)))
        line = "#  "
        for op in sorted(ops):
            item = " %s %d," % (opname(op), ops[op])
            if len(line) + len(item) > 100:
                print(line.rstrip(","))
                line = "#  "
            line += item
        print(line.rstrip(","))
        print("# seen from the victim: %s; victim reconnects seen: rc %d, uc %d" % (
            ", ".join("%s %d" % kv for kv in sorted(self.seen.items())) or "nothing",
            self.reloads["rc"], self.reloads["uc"]))
        print("# RC expected PSN resynchronisations: %s" % (
            ", ".join("%s %d" % kv for kv in sorted(self.resyncs.items())) or "none"))
        if self.wire.errors:
            print("# %d sends failed" % self.wire.errors)
        if getattr(self, "timed_out", False):
            print("# stopped by the time limit")
        name = lambda m: MAD_METHODS.get(m, "unknown")  # noqa: E731
        print("# MADs sent: %s; answers seen: %s" % (
            ", ".join("%s %d" % (name(m), n) for m, n in sorted(self.mads.items())) or "none",
            ", ".join("to %s %d" % (name(m), n) for m, n in sorted(self.mad_replies.items()))
            or "none"))
        lost = self.sniffer.lost if self.sniffer else 0
        print("# the victim's packets the sniffer's socket dropped: %d" % lost)
        print("totals: sent=%d spoofed=%d pairs=%d mads=%d mad_wrong=%d sniffer_lost=%d" % (
            self.sent, self.spoofed, len(self.pairs), sum(self.mads.values()), self.mad_wrong(),
            lost))


# --- self-test (host, no sockets) -------------------------------------------------------------

def check_packet(pkt, icrc_ok, udp_delta, mangled):
    """Checks one built datagram: IPv4 header, UDP length and ICRC; and, unless it was broken
    on purpose, that its opcode's headers, payload and pad fit in it."""
    ip, udp, transport = pkt[:20], pkt[20:28], pkt[28:]
    assert ip[0] == 0x45 and ip[9] == 17, "IPv4/UDP"
    assert struct.unpack("!H", ip[2:4])[0] == len(pkt), "IP total length"
    assert ib.ipv4_checksum(ip[:10] + b"\0\0" + ip[12:]) == struct.unpack("!H", ip[10:12])[0]
    assert struct.unpack("!H", udp[2:4])[0] == PORT
    assert struct.unpack("!H", udp[4:6])[0] == 8 + len(transport) + udp_delta, "UDP length"
    crc = ib.icrc(ib.masked_ipv4(ip), udp, transport[:-4])
    assert (struct.pack("<I", crc) == transport[-4:]) == icrc_ok, "ICRC"
    assert len(pkt) <= 1500, "longer than the veth MTU"
    t = transport[:-4]
    if mangled is None and t[0] in EXT:
        assert t[1] & 0x0f == 0, "BTH version"
        hdr = 12 + sum(EXT_LEN[h] for h in EXT[t[0]])
        pad = (t[1] >> 4) & 3
        assert len(t) - hdr - pad >= 0, ("headers and pad", opname(t[0]), len(t))
        assert pad == 0 or not any(t[-pad:]) or t[0] == ATOMIC_WRITE, "pad bytes"
    return t


def selftest(count, seed):
    rnd = random.Random(seed)
    st = {"gen": 1, "ip": "192.168.81.2", "peer_ip": "192.168.81.1", "mtu": 1024,
          "rc_qpn": 17, "rc_gen": 1, "rc_peer_qpn": 0x123456, "rc_rq_psn": 0xFFFFF0,
          "rc_sq_psn": 0xFFFFFE, "uc_qpn": 18, "uc_gen": 1, "uc_peer_qpn": 0x123457,
          "uc_rq_psn": 5, "uc_sq_psn": 9, "ud_qpn": 19, "ud_gen": 1, "ud_qkey": 0x11111111,
          "recv_len": 4096, "ud_recv_len": 1064, "small_addr": 0x5600000000, "small_len": 4096,
          "small_rkey": 0x1234, "big_addr": 0x7f0000000000, "big_len": 1 << 20,
          "big_rkey": 0x1301, "ro_addr": 0x5600010000, "ro_len": 4096, "ro_rkey": 0x1402,
          "mw_rkey": 0x200003, "mw_addr": 0x5600000800, "mw_len": 1024}
    sink = []
    wire = Wire(st["ip"], rnd, sink)
    fz = Fuzzer(None, rnd, wire, None, ["192.168.81.3"], state=st)
    psn = st["rc_sq_psn"]
    for i in range(count):
        # The victim's requester, as the sniffer would see it.
        if i % 7 == 0:
            op = rnd.choice([SEND_ONLY, WRITE_ONLY, READ_REQ, CMP_SWAP, ATOMIC_WRITE, FLUSH])
            ln = rnd.choice([0, 1, 1024, 4096])
            ext = ib.reth(0x1000, 5, ln) if EXT[op] in ("R", "FR") else b""
            ext = (ib.feth(0, 1) + ext) if op == FLUSH else ext
            if op == CMP_SWAP:
                ext = bytes(28)
            fz.on_victim_packet(body(op, st["rc_peer_qpn"], psn, ext) + bytes(4))
            psn = padd(psn, npkts(ln, 1024) if op == READ_REQ else 1)
        if i % 11 == 0:
            syn = rnd.choice([0x1f, 0x60, 0x61, 0x21])
            fz.on_victim_packet(body(ACK, st["rc_peer_qpn"], fz.rc.epsn, ib.aeth(syn, 1),
                                     ackreq=0) + bytes(4))
        if i % 500 == 250:
            st = dict(st, gen=st["gen"] + 1, rc_gen=st["rc_gen"] + 1,
                      rc_rq_psn=rnd.getrandbits(24), mw_rkey=st["mw_rkey"] + 1)
            fz.apply_state(st)
        fz.run(fz.sent + 1, 3600, sleep=False)
    spoofed = 0
    for src, pkt, icrc_ok, udp_delta, mangled in sink:
        check_packet(pkt, icrc_ok, udp_delta, mangled)
        assert (mangled is None) == (icrc_ok and udp_delta == 0) or mangled != "bad_icrc" and \
            not mangled.startswith("udp_len"), mangled
        spoofed += src != st["peer_ip"]
    assert spoofed == fz.spoofed, (spoofed, fz.spoofed)
    # Every opcode family got built.
    ops = {op for op, _ in fz.pairs}
    for op in (SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM,
               WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY,
               WRITE_ONLY_IMM, READ_REQ, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK,
               ATOMIC_ACK, CMP_SWAP, FETCH_ADD, SEND_LAST_INV, SEND_ONLY_INV, FLUSH,
               ATOMIC_WRITE, UC | SEND_FIRST, UC | WRITE_FIRST, UC | SEND_ONLY, UD_SEND,
               UD_SEND_IMM):
        assert op in ops, "never built: " + opname(op)
    fz.report()
    print("# selftest: %d packets built and checked" % len(sink))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("state", nargs="?")
    ap.add_argument("count", nargs="?", type=int, default=3000)
    ap.add_argument("seed", nargs="?", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=150)
    ap.add_argument("--spoof", default="192.168.81.3,192.168.81.77,192.168.81.254")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--stamps", help="write the stamps of the victim's SENDs and WRITEs seen")
    ap.add_argument("--trace", help="write every packet both ways for rrxe-oracle")
    a = ap.parse_args()
    if a.selftest:
        # "--selftest [COUNT] [SEED]": the positional arguments shift by one.
        count = int(a.state) if a.state else 4000
        seed = a.count if a.state else a.seed
        return selftest(count, seed)
    if not a.state:
        ap.error("STATE_FILE is needed")
    rnd = random.Random(a.seed)
    st = load_state(a.state)
    wire = Wire(st["ip"], rnd, trace=Trace(a.trace))
    sniffer = Sniffer(st["peer_ip"])
    fz = Fuzzer(a.state, rnd, wire, sniffer, a.spoof.split(","))
    fz.run(a.count, a.max_seconds)
    # The victim's last packets: for the counts, and every request an answer may have covered.
    fz.drain(2.0)
    fz.report()
    wire.trace.close(sniffer.lost)
    if a.stamps:
        with open(a.stamps, "w") as f:
            f.writelines("%016x\n" % s for s in sorted(fz.stamps))
        print("# %d stamped SENDs and WRITEs of the victim seen on the wire" % len(fz.stamps))


if __name__ == "__main__":
    sys.exit(main())
