#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/bench_plot.py CSV [PREFIX] [--builtin]
#
# Draws the table of scripts/bench as one PNG per family (PREFIX-FAMILY.png; PREFIX defaults to
# CSV without .csv) and prints their paths. Its panels, rxe and rrxe side by side: bandwidth in
# Gb/s per workload and message size (with the family's limits in the subtitle); message rate in
# Mpps, latency p50 and latency p99 in usec; NVMe-oF MB/s and IOPS (fio) where the family has
# them. A bar is the median of the runs, its whisker the min-max spread. A CSV of the older
# layout (no family column, latency as t_avg and "(median)" rows) is drawn as the family loop.
# Uses matplotlib when it can be imported; otherwise (or with --builtin) a small built-in
# rasteriser that needs nothing but the standard library (zlib, struct).
import csv
import math
import re
import struct
import sys
import zlib

DRIVERS = ("rxe", "rrxe")
FAMILY_TITLES = {
    "loop": "loopback through one device",
    "veth1500": "two namespaces over a veth, MTU 1500 (RoCE path MTU 1024)",
    "veth9000": "two namespaces over a veth, MTU 9000 (RoCE path MTU 4096)",
    "wire": "two VMs over a QEMU socket wire, MTU 1500 (RoCE path MTU 1024)",
    "congestion": "netem loss both ways (goodput by loss); a 60 Mbit/s bottleneck (bneck_qN)",
}


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def size_label(n):
    n = int(n)
    if n >= 1048576 and n % 1048576 == 0:
        return "%d MiB" % (n // 1048576)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n // 1024)
    return "%d B" % n


class Family:
    """The rows of one family: groups (name, size label, [median], [min], [max]) per panel."""

    def __init__(self):
        self.bw, self.rate, self.lat, self.nvme, self.drops = [], [], {}, {}, []
        self.limits = []  # (name, {driver: value})


def group(name, r):
    vals = [num(r.get(d)) for d in DRIVERS]
    los = [num(r.get(d + "_min")) for d in DRIVERS]
    his = [num(r.get(d + "_max")) for d in DRIVERS]
    return (name.replace("ib_", "", 1), size_label(r["size"]), vals, los, his)


def load(path):
    """The families of the bench CSV, in file order."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fams = {}
    for r in rows:
        fam = fams.setdefault(r.get("family") or "loop", Family())
        w, unit = r["workload"], r["unit"]
        if w.startswith("limit"):
            if w in ("limit_memcpy_python", "limit_dd_zero"):
                continue
            label = {"limit_copy_to_user": "copy %s" % size_label(r["size"]),
                     "limit_iperf3_tcp": "iperf3 TCP",
                     "limit_iperf3_udp": "UDP %s B" % r["size"]}.get(w, w)
            fam.limits.append((label, {d: num(r.get(d)) for d in DRIVERS}))
        elif unit == "usec":
            m = re.match(r"(.*)\.(p50|p99|p99\.9|max)$", w)
            if m:
                name, stat = m.group(1), m.group(2)
            elif w.endswith("(median)"):
                name, stat = w[:-len("(median)")], "p50"
            else:
                name, stat = w, "avg"
            fam.lat.setdefault(stat, []).append(group(name, r))
        elif unit == "Mpps":
            fam.rate.append(group(w, r))
        elif unit in ("MB/s", "IOPS"):
            fam.nvme.setdefault(unit, []).append(group(w, r))
        elif unit == "%":
            fam.drops.append(group(w, r))
        elif unit in ("s", "KiB/QP"):
            continue  # the scale rows: in the table only
        else:
            fam.bw.append(group(w, r))
    return fams


def limit_note(fam):
    parts = []
    for label, v in fam.limits:
        vals = ["%s %.2f" % (d, v[d]) for d in DRIVERS if v.get(d) is not None]
        if vals:
            parts.append("%s: %s" % (label, ", ".join(vals)))
    return ("limits (Gb/s) " + "; ".join(parts)) if parts else ""


def panels_of(fam):
    """Rows of panels: [(groups, title, subtitle)], the bandwidth alone on the first row, rate
    and latency on the second, NVMe-oF and the bottleneck's drops on the third."""
    top = [(fam.bw, "bandwidth Gb/s (higher is better)", limit_note(fam))]
    low = [(fam.rate, "message rate Mpps (higher is better)", "16 work requests per post")]
    for stat, what in (("p50", "latency p50 usec (t_typical)"), ("p99", "latency p99 usec"),
                       ("avg", "latency avg usec")):
        if fam.lat.get(stat):
            low.append((fam.lat[stat], what, "lower is better"))
    nvme = [(fam.nvme.get(u, []), "NVMe-oF %s (higher is better)" % u,
             "fio on nvme-rdma, null_blk target") for u in ("MB/s", "IOPS")]
    nvme.append((fam.drops, "packets dropped % (lower is better)", "at the bottleneck"))
    rows = [[p for p in r if p[0]] for r in (top, low, nvme)]
    return [r for r in rows if r]


# --- matplotlib ----------------------------------------------------------------------------


def spread(v, lo, hi):
    """The length of a whisker from lo to hi (0 when a value is missing)."""
    if v is None or lo is None or hi is None:
        return 0
    return max(hi - lo, 0)


def plot_matplotlib(rows, title, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = [[max(len(p[0]), 1) + 1 for p in r] for r in rows]
    width = max(sum(u) for u in units)
    fig = plt.figure(figsize=(max(width * 0.9, 8), 4.6 * len(rows)))
    grid = fig.add_gridspec(len(rows), width)
    for ri, (row, us) in enumerate(zip(rows, units)):
        col = 0
        for pi, ((groups, ylabel, note), u) in enumerate(zip(row, us)):
            span = width - col if pi == len(row) - 1 else max(u * width // sum(us), 1)
            ax = fig.add_subplot(grid[ri, col:col + span])
            col += span
            w = 0.38
            xs = range(len(groups))
            top = max([v for g in groups for v in g[2] + g[4] if v is not None] or [1.0])
            for i, d in enumerate(DRIVERS):
                pos = [x + (i - 0.5) * w for x in xs]
                vals = [g[2][i] for g in groups]
                err = [[spread(v, g[3][i], v) for g, v in zip(groups, vals)],
                       [spread(v, v, g[4][i]) for g, v in zip(groups, vals)]]
                bars = ax.bar(pos, [v or 0 for v in vals], w, yerr=err, capsize=2, label=d,
                              color=COLORS_HEX[i], error_kw={"elinewidth": 0.8})
                for b, v in zip(bars, vals):
                    txt = "fail" if v is None else ("%.3g" % v)
                    ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                                va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points",
                                color="red" if v is None else "black")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(["%s\n%s" % (g[0], g[1]) for g in groups], fontsize=8)
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, top * 1.15)
            ax.grid(axis="y", alpha=0.3)
            ax.legend(fontsize=8)
            if note:
                ax.set_title(note, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


COLORS_HEX = ("#4c72b0", "#dd8452")

# --- built-in rasteriser -------------------------------------------------------------------

# A 5x7 font: seven rows per glyph, bit 4 is the leftmost pixel. Lower case is drawn as upper.
FONT = {
    "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E), "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F), "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
    "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02), "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
    "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E), "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    "8": (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E), "9": (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
    "A": (0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11), "B": (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
    "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E), "D": (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
    "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F), "F": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
    "G": (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F), "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "I": (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E), "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
    "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11), "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    "M": (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11), "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
    "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
    "Q": (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D), "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    "S": (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E), "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
    "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A), "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
    "Y": (0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04), "Z": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
    " ": (0, 0, 0, 0, 0, 0, 0), ".": (0, 0, 0, 0, 0, 0x0C, 0x0C), ",": (0, 0, 0, 0, 0x0C, 0x04, 0x08),
    "-": (0, 0, 0, 0x1F, 0, 0, 0), "_": (0, 0, 0, 0, 0, 0, 0x1F), "/": (0, 0x01, 0x02, 0x04, 0x08, 0x10, 0),
    ":": (0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0), "(": (0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02),
    ")": (0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08), "[": (0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E),
    "]": (0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E), "%": (0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03),
    "=": (0, 0, 0x1F, 0, 0x1F, 0, 0), "<": (0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02),
    ">": (0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08), "+": (0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0),
    "?": (0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04),
}

WHITE, BLACK, GREY, LIGHT, RED = (255, 255, 255), (0, 0, 0), (110, 110, 110), (225, 225, 225), (200, 0, 0)
COLORS = ((76, 114, 176), (221, 132, 82))


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(WHITE * (w * h))

    def rect(self, x0, y0, x1, y1, c):
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        if x0 >= x1:
            return
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def text_width(self, s, k):
        return len(s) * 6 * k - k

    def text(self, x, y, s, k=2, c=BLACK, anchor="l"):
        """Draws s with its top at y; anchor l/c/r places x at its left, centre or right."""
        if anchor == "c":
            x -= self.text_width(s, k) // 2
        elif anchor == "r":
            x -= self.text_width(s, k)
        for ch in s.upper():
            for r, bits in enumerate(FONT.get(ch, FONT["?"])):
                for col in range(5):
                    if bits & (0x10 >> col):
                        self.rect(x + col * k, y + r * k, x + (col + 1) * k, y + (r + 1) * k, c)
            x += 6 * k

    def png(self):
        raw = b"".join(b"\0" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def nice_ticks(top):
    """0 and 4-6 round steps covering top."""
    if top <= 0:
        top = 1.0
    mag = 10 ** math.floor(math.log10(top / 5))
    for m in (1, 2, 2.5, 5, 10):
        step = m * mag
        if top / step <= 6:
            break
    n = int(-(-top // step))
    return [i * step for i in range(n + 1)]


def fmt_val(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_tick(v):
    return ("%g" % v)


def panel(cv, x0, y0, x1, y1, groups, title, subtitle):
    """A grouped bar chart in the box (x0, y0)-(x1, y1): one group per workload, a bar per driver
    with its min-max whisker."""
    cv.text((x0 + x1) // 2, y0, title, 2, BLACK, "c")
    if subtitle:
        cv.text((x0 + x1) // 2, y0 + 20, subtitle[:(x1 - x0) // 6], 1, GREY, "c")
    px0, py0, px1, py1 = x0 + 70, y0 + 70, x1 - 10, y1 - 50  # plot area
    vals = [v for g in groups for v in g[2] + g[4] if v is not None]
    ticks = nice_ticks(max(vals) * 1.1 if vals else 1.0)
    top = ticks[-1]

    def ypos(v):
        return py1 - int((py1 - py0) * v / top)

    for t in ticks:
        y = ypos(t)
        cv.rect(px0, y, px1, y + 1, LIGHT)
        cv.text(px0 - 8, y - 7, fmt_tick(t), 2, GREY, "r")
    cv.rect(px0, py0, px0 + 1, py1 + 1, BLACK)
    cv.rect(px0, py1, px1, py1 + 1, BLACK)
    # legend, top right
    lx = px1 - 150
    for i, d in enumerate(DRIVERS):
        cv.rect(lx + i * 80, y0 + 42, lx + i * 80 + 16, y0 + 58, COLORS[i])
        cv.text(lx + i * 80 + 22, y0 + 44, d, 2)
    if not groups:
        return
    gw = (px1 - px0) / len(groups)
    bw = int(gw * 0.32)
    for gi, (name, size, gvals, los, his) in enumerate(groups):
        cx = int(px0 + gw * (gi + 0.5))
        for i, v in enumerate(gvals):
            bx = cx + (i - 1) * bw + (i * 2 - 1) * 2
            if v is None:
                cv.text(bx + bw // 2, py1 - 12, "fail", 1, RED, "c")
                continue
            y = ypos(v)
            cv.rect(bx, y, bx + bw, py1, COLORS[i])
            label_y = y
            if los[i] is not None and his[i] is not None and his[i] > los[i]:
                mx, ylo, yhi = bx + bw // 2, ypos(los[i]), ypos(his[i])
                cv.rect(mx, yhi, mx + 1, ylo + 1, BLACK)
                cv.rect(mx - 3, yhi, mx + 4, yhi + 1, BLACK)
                cv.rect(mx - 3, ylo, mx + 4, ylo + 1, BLACK)
                label_y = min(y, yhi)
            cv.text(bx + bw // 2, label_y - 10, fmt_val(v), 1, BLACK, "c")
        k = 2 if cv.text_width(name, 2) <= gw - 4 else 1
        cv.text(cx, py1 + 10, name, k, BLACK, "c")
        cv.text(cx, py1 + 30, size, 2, BLACK, "c")


def plot_builtin(rows, title, png):
    unit, h = 130, 520
    widths = [[unit * (max(len(p[0]), 1) + 1) for p in r] for r in rows]
    w = 20 + max(sum(x + 20 for x in ws) for ws in widths)
    cv = Canvas(w, 45 + h * len(rows))
    cv.text(w // 2, 12, title, 2, BLACK, "c")
    y = 45
    for row, ws in zip(rows, widths):
        # a row's panels share out the canvas width in proportion to their groups
        scale = min((w - 20) / sum(x + 20 for x in ws), 2.0)
        x = 20
        for pw, (groups, name, note) in zip(ws, row):
            pw = int((pw + 20) * scale) - 20
            panel(cv, x, y, x + pw, y + h - 10, groups, name, note)
            x += pw + 20
        y += h
    with open(png, "wb") as f:
        f.write(cv.png())


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if not args or len(args) > 2:
        sys.exit("usage: scripts/bench_plot.py CSV [PREFIX] [--builtin]")
    src = args[0]
    prefix = args[1] if len(args) > 1 else (src[:-4] if src.endswith(".csv") else src)
    if prefix.endswith(".png"):
        prefix = prefix[:-4]
    use_mpl = "--builtin" not in argv
    if use_mpl:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            use_mpl = False
    for name, fam in load(src).items():
        rows = panels_of(fam)
        if not rows:
            continue
        png = "%s-%s.png" % (prefix, name)
        title = "rrxe bench: C rxe vs rrxe, %s: %s (median of the runs, min-max whiskers)" % (
            name, FAMILY_TITLES.get(name, name))
        (plot_matplotlib if use_mpl else plot_builtin)(rows, title, png)
        print(png)


if __name__ == "__main__":
    main(sys.argv[1:])
