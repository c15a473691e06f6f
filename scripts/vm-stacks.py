#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-stacks.py MONITOR SYSTEM_MAP [MODULE_SYMS] [--samples N]
#
# Where a guest that no longer answers spends its time, read from outside through its QEMU
# monitor (HMP on the unix socket MONITOR): N samples (default 20, 0.2 s apart) of every vCPU's
# instruction pointer, symbolized with the kernel's System.map and MODULE_SYMS (lines of the
# guest's /proc/kallsyms for its modules, as scripts/guest/interop.sh keeps them), counted by
# function, with whether interrupts were enabled and the vCPU halted (idle); then, for the
# last sample of each vCPU, the kernel text addresses found on its stack (the 4 KiB above the
# stack pointer): a rough backtrace, good enough to name a lock or a loop.
#
# The test kernels have no lockup detector and a guest that spins with interrupts off prints
# nothing: scripts/interop runs this on a guest that overruns, before it stops it.
import argparse
import bisect
import re
import socket
import sys
import time

PROMPT = b"(qemu) "
ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]|\r")


def load_symbols(paths):
    syms = []
    for path in paths:
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) < 3 or parts[1] not in "tTwW":
                        continue
                    name = parts[2] + (" " + parts[3] if len(parts) > 3 else "")
                    syms.append((int(parts[0], 16), name))
        except OSError:
            pass
    syms.sort()
    return syms


class Symbolizer:
    def __init__(self, syms):
        self.syms = syms
        self.addrs = [a for a, _ in syms]

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or addr - self.addrs[i] > 0x10000:
            return None
        return "%s+0x%x" % (self.syms[i][1], addr - self.addrs[i])


class Monitor:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self._read_to_prompt()

    def _read_to_prompt(self):
        buf = b""
        while not buf.endswith(PROMPT):
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            buf += chunk
        return ANSI.sub(b"", buf).decode("ascii", "replace")

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        out = self._read_to_prompt()
        # The echo of the command comes first, the prompt last.
        lines = out.splitlines()
        return "\n".join(lines[1:-1] if len(lines) > 1 else lines)


def cpus(regs):
    """Per vCPU: (rip, rsp, interrupts enabled, halted) from `info registers -a`."""
    out = []
    for block in re.split(r"\n(?=CPU#\d+)", regs):
        rip = re.search(r"RIP=([0-9a-f]+)", block)
        rsp = re.search(r"RSP=([0-9a-f]+)", block)
        rfl = re.search(r"RFL=([0-9a-f]+)", block)
        hlt = re.search(r"HLT=(\d)", block)
        if rip and rsp and rfl:
            out.append((int(rip.group(1), 16), int(rsp.group(1), 16),
                        bool(int(rfl.group(1), 16) & 0x200), bool(hlt and hlt.group(1) == "1")))
    return out


def main():
    ap = argparse.ArgumentParser(description="Sample a QEMU guest's vCPUs through its monitor.")
    ap.add_argument("monitor")
    ap.add_argument("symbols", nargs="+", help="System.map, then the guest's module symbols")
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()
    sym = Symbolizer(load_symbols(args.symbols))
    try:
        mon = Monitor(args.monitor)
    except OSError as e:
        sys.exit("vm-stacks: no monitor at %s: %s" % (args.monitor, e))
    counts = {}
    last = {}
    try:
        for _ in range(args.samples):
            for n, (rip, rsp, irq, hlt) in enumerate(cpus(mon.cmd("info registers -a"))):
                where = "user space" if rip < 1 << 63 else (sym.name(rip) or "0x%x" % rip)
                key = (n, where.split("+")[0], irq, hlt)
                counts[key] = counts.get(key, 0) + 1
                last[n] = (rip, rsp)
            time.sleep(0.2)
    except OSError as e:
        print("vm-stacks: the monitor stopped answering: %s" % e)
    for (n, where, irq, hlt), c in sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print("vCPU %d: %2d/%d samples in %s (interrupts %s%s)" %
              (n, c, args.samples, where, "on" if irq else "OFF", ", halted: idle" if hlt else ""))
    for n, (rip, rsp) in sorted(last.items()):
        print("vCPU %d: last RIP %s; kernel text on its stack above 0x%x:" %
              (n, sym.name(rip) or "0x%x" % rip, rsp))
        try:
            dump = mon.cmd("x /512gx 0x%x" % rsp)
        except OSError as e:
            print("    (the monitor stopped answering: %s)" % e)
            continue
        names = [sym.name(int(w, 16)) for w in re.findall(r"0x([0-9a-f]{16})", dump)]
        for name in [x for x in names if x and not x.startswith(("_stext", "_etext"))][:40]:
            print("    " + name)


if __name__ == "__main__":
    main()
