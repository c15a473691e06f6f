#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/bench-agent.py ADDR PORT [IDLE_SECONDS]
#
# The server guest's side of the bench's wire family (scripts/guest/bench-wire.sh starts it in
# guest a): it listens on the private wire address ADDR:PORT of the two bench guests and does
# what the controller (scripts/guest/bench.sh in guest b) asks, one request per connection:
#   run CMD     runs "bash -c CMD" in the repo (stdin /dev/null, stdout and stderr together),
#               streams its output back, then one line "@@rrxe-exit:RC"; when the connection
#               closes first (the controller gave up on it), the command's process group is
#               ended (SIGTERM, SIGKILL 5 s later);
#   kcpu        then one line per "k" line received: this guest's kernel CPU time so far in
#               USER_HZ ticks (system + irq + softirq of /proc/stat, all CPUs), read the moment
#               the request arrives; for the CPU cost of the server's side of a row;
#   quit        the agent exits.
# It exits by itself when no request has come for IDLE_SECONDS (default 900) and none is
# running, so a guest whose controller died does not wait for its VM timeout. The wire is a
# QEMU socket netdev between the two guests and nothing else: only guest b can reach ADDR.
import os
import signal
import socket
import subprocess
import sys
import threading
import time

EXIT_MARK = b"@@rrxe-exit:"
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def log(msg):
    print("bench-agent: %s" % msg, flush=True)


def kcpu():
    with open("/proc/stat", "rb") as f:
        v = f.readline().split()
    return int(v[3]) + int(v[6]) + int(v[7])


def readline(conn):
    """One line from conn without its newline; None at EOF before any byte."""
    buf = b""
    while True:
        try:
            b = conn.recv(1)
        except OSError:
            b = b""
        if not b:
            return buf if buf else None
        if b == b"\n":
            return buf
        buf += b


class Agent:
    def __init__(self, addr, port, idle):
        self.addr, self.port, self.idle = addr, port, idle
        self.lock = threading.Lock()
        self.active = 0
        self.last = time.monotonic()
        self.quit = False

    def serve(self):
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((self.addr, self.port))
        srv.listen(16)
        srv.settimeout(1)
        log("listening on %s:%d" % (self.addr, self.port))
        while not self.quit:
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                with self.lock:
                    idle = self.active == 0 and time.monotonic() - self.last > self.idle
                if idle:
                    log("no request for %d s: exiting" % self.idle)
                    break
                continue
            with self.lock:
                self.active += 1
                self.last = time.monotonic()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
        srv.close()

    def handle(self, conn):
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            line = readline(conn)
            if line is None:
                return
            if line == b"quit":
                log("quit")
                self.quit = True
                conn.sendall(b"bye\n")
            elif line == b"kcpu":
                while line is not None:
                    conn.sendall(b"%d\n" % kcpu())
                    line = readline(conn)
            elif line.startswith(b"run "):
                self.run(conn, line[4:].decode(errors="replace"))
            else:
                conn.sendall(b"unknown request\n" + EXIT_MARK + b"2\n")
        except OSError as e:
            log("connection: %s" % e)
        finally:
            conn.close()
            with self.lock:
                self.active -= 1
                self.last = time.monotonic()

    def run(self, conn, cmd):
        p = subprocess.Popen(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                             start_new_session=True)

        def end():
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 0)):
                if p.poll() is not None:
                    return
                try:
                    os.killpg(p.pid, sig)
                except OSError:
                    return
                try:
                    p.wait(wait)
                except subprocess.TimeoutExpired:
                    pass

        def watch():
            # The controller sends nothing more: EOF means it closed or was killed.
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            if p.poll() is None:
                log("controller went away: ending %s" % cmd[:80])
                end()

        threading.Thread(target=watch, daemon=True).start()
        gone = False
        while True:
            b = p.stdout.read1(65536)
            if not b:
                break
            if not gone:
                try:
                    conn.sendall(b)
                except OSError:
                    gone = True
        rc = p.wait()
        if rc < 0:
            rc = 128 - rc
        if not gone:
            conn.sendall(EXIT_MARK + b"%d\n" % rc)


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: bench-agent.py ADDR PORT [IDLE_SECONDS]")
    Agent(argv[0], int(argv[1]), int(argv[2]) if len(argv) > 2 else 900).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
