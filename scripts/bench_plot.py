#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/bench_plot.py CSV [PNG] [--builtin]
#
# Draws the table of scripts/bench as a PNG (default: CSV with .png): bandwidth in Gb/s per
# bw workload and message size, latency in usec per lat workload (average and median, a panel
# each), rxe and rrxe side by side.
# Uses matplotlib when it can be imported; otherwise (or with --builtin) a small built-in
# rasteriser that needs nothing but the standard library (zlib, struct).
import csv
import math
import struct
import sys
import zlib

DRIVERS = ("rxe", "rrxe")


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def size_label(n):
    n = int(n)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n // 1024)
    return "%d B" % n


def load(path):
    """Rows of the bench CSV: the bw, average latency and median latency groups (name, size,
    [value per driver]) and the one-copy limit per driver."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    bw, lat, med, limit = [], [], [], {}
    for r in rows:
        w = r["workload"]
        if w == "limit_tmpfs_copy_to_user":
            limit = {d: num(r[d]) for d in DRIVERS}
        elif w.startswith("limit"):
            continue
        elif r["unit"] == "usec":
            # latencies: t_avg, and t_typical in "WORKLOAD(median)"
            name = w[:-len("(median)")] if w.endswith("(median)") else w
            g = (name.replace("ib_", "", 1), size_label(r["size"]), [num(r[d]) for d in DRIVERS])
            (med if name != w else lat).append(g)
        else:
            bw.append((w.replace("ib_", "", 1), size_label(r["size"]), [num(r[d]) for d in DRIVERS]))
    return bw, lat, med, limit


def limit_note(limit):
    parts = ["%s %.1f" % (d, limit[d]) for d in DRIVERS if limit.get(d) is not None]
    return ("one-copy limit (Gb/s): " + ", ".join(parts)) if parts else ""


# --- matplotlib ----------------------------------------------------------------------------


def plot_matplotlib(panels, title, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [max(len(p[0]), 1) + 1 for p in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(sum(ratios) * 1.1, 5), gridspec_kw={"width_ratios": ratios})
    for ax, (groups, ylabel, note) in zip(axes, panels):
        width = 0.38
        xs = range(len(groups))
        top = max([v for g in groups for v in g[2] if v is not None] or [1.0])
        for i, d in enumerate(DRIVERS):
            pos = [x + (i - 0.5) * width for x in xs]
            vals = [g[2][i] for g in groups]
            bars = ax.bar(pos, [v or 0 for v in vals], width, label=d, color=COLORS_HEX[i])
            for b, v in zip(bars, vals):
                txt = "fail" if v is None else ("%.3g" % v)
                ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=8, xytext=(0, 2), textcoords="offset points",
                            color="red" if v is None else "black")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(["%s\n%s" % (g[0], g[1]) for g in groups])
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, top * 1.15)
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
        if note:
            ax.set_title(note, fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=100)


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
    return "%.3f" % v


def fmt_tick(v):
    return ("%g" % v)


def panel(cv, x0, y0, x1, y1, groups, title, subtitle):
    """A grouped bar chart in the box (x0, y0)-(x1, y1): one group per workload, a bar per driver."""
    cv.text((x0 + x1) // 2, y0, title, 2, BLACK, "c")
    if subtitle:
        cv.text((x0 + x1) // 2, y0 + 20, subtitle, 1, GREY, "c")
    px0, py0, px1, py1 = x0 + 70, y0 + 70, x1 - 10, y1 - 50  # plot area
    vals = [v for g in groups for v in g[2] if v is not None]
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
    for gi, (name, size, gvals) in enumerate(groups):
        cx = int(px0 + gw * (gi + 0.5))
        for i, v in enumerate(gvals):
            bx = cx + (i - 1) * bw + (i * 2 - 1) * 2
            if v is None:
                cv.text(bx + bw // 2, py1 - 12, "fail", 1, RED, "c")
                continue
            y = ypos(v)
            cv.rect(bx, y, bx + bw, py1, COLORS[i])
            cv.text(bx + bw // 2, y - 10, fmt_val(v), 1, BLACK, "c")
        cv.text(cx, py1 + 10, name, 2, BLACK, "c")
        cv.text(cx, py1 + 30, size, 2, BLACK, "c")


def plot_builtin(panels, title, png):
    unit, h = 130, 520
    widths = [unit * (max(len(p[0]), 1) + 1) for p in panels]
    w = 20 + sum(w + 20 for w in widths)
    cv = Canvas(w, h)
    cv.text(w // 2, 12, title, 2, BLACK, "c")
    x = 20
    for pw, (groups, name, note) in zip(widths, panels):
        panel(cv, x, 45, x + pw, h - 10, groups, name, note)
        x += pw + 20
    with open(png, "wb") as f:
        f.write(cv.png())


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if not args or len(args) > 2:
        sys.exit("usage: scripts/bench_plot.py CSV [PNG] [--builtin]")
    src = args[0]
    png = args[1] if len(args) > 1 else (src[:-4] if src.endswith(".csv") else src) + ".png"
    bw, lat, med, limit = load(src)
    panels = [
        (bw, "bandwidth Gb/s (higher is better)", limit_note(limit)),
        (lat, "latency avg, usec", "t_avg (lower is better)"),
        (med, "latency median, usec", "t_typical (lower is better)"),
    ]
    panels = [p for p in panels if p[0]] or panels[:1]
    title = "rrxe bench: C rxe vs rrxe (perftest loopback, one VM)"
    use_mpl = "--builtin" not in argv
    if use_mpl:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            use_mpl = False
    (plot_matplotlib if use_mpl else plot_builtin)(panels, title, png)
    print(png)


if __name__ == "__main__":
    main(sys.argv[1:])
