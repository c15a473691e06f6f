// SPDX-License-Identifier: GPL-2.0

//! The two traces, parsed: the victim's log of connections, posts and completions, and the
//! fuzzer's log of the packets it saw and sent.
//!
//! Both are text, one event per line. A line that cannot be read is counted and skipped, never
//! fatal: the judge reports how many it skipped. Lines about QPs other than RC and UC (the
//! victim's UD QP) are skipped without being counted as malformed.

use super::wire::Packet;

/// The two connected QPs of the victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum QpKind {
    /// The RC QP.
    Rc,
    /// The UC QP.
    Uc,
}

impl QpKind {
    /// Both kinds, in report order.
    pub(crate) const ALL: [Self; 2] = [Self::Rc, Self::Uc];

    /// Index into per-QP arrays.
    pub(crate) const fn idx(self) -> usize {
        self as usize
    }

    /// The victim log's name of the QP.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Rc => "rc",
            Self::Uc => "uc",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "rc" => Some(Self::Rc),
            "uc" => Some(Self::Uc),
            _ => None,
        }
    }
}

/// The operation of a posted send work request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrOp {
    /// SEND.
    Send,
    /// SEND with immediate.
    SendImm,
    /// RDMA WRITE.
    Write,
    /// RDMA WRITE with immediate.
    WriteImm,
    /// RDMA READ.
    Read,
    /// CmpSwap.
    Cas,
    /// FetchAdd.
    Faa,
    /// ATOMIC WRITE.
    AWrite,
    /// FLUSH.
    Flush,
    /// A local operation (memory window bind, local invalidate): no PSN, nothing on the wire.
    Local,
}

impl WrOp {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "send" => Self::Send,
            "send_imm" => Self::SendImm,
            "write" => Self::Write,
            "write_imm" => Self::WriteImm,
            "read" => Self::Read,
            "cas" | "cmp_swap" => Self::Cas,
            "faa" | "fetch_add" => Self::Faa,
            "awrite" | "atomic_write" => Self::AWrite,
            "flush" => Self::Flush,
            "bind" | "bind_mw" | "local_inv" => Self::Local,
            _ => return None,
        })
    }

    /// The name the victim log uses.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::SendImm => "send_imm",
            Self::Write => "write",
            Self::WriteImm => "write_imm",
            Self::Read => "read",
            Self::Cas => "cas",
            Self::Faa => "faa",
            Self::AWrite => "awrite",
            Self::Flush => "flush",
            Self::Local => "local",
        }
    }

    /// Returns whether the operation is answered by an ATOMIC Acknowledge.
    pub(crate) const fn is_atomic(self) -> bool {
        matches!(self, Self::Cas | Self::Faa)
    }

    /// Returns whether the operation is answered by a zero-length READ response (Annex A19).
    pub(crate) const fn is_a19(self) -> bool {
        matches!(self, Self::AWrite | Self::Flush)
    }

    /// Returns whether the operation is acknowledged by ACKs (SEND and RDMA WRITE).
    pub(crate) const fn is_acked(self) -> bool {
        matches!(
            self,
            Self::Send | Self::SendImm | Self::Write | Self::WriteImm
        )
    }
}

/// `conn`: a QP entered RTS for a generation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conn {
    pub(crate) t: u64,
    pub(crate) q: QpKind,
    pub(crate) gen: u32,
    pub(crate) qpn: u32,
    pub(crate) sq_psn: u32,
    pub(crate) rq_psn: u32,
    pub(crate) mtu: u32,
}

/// `post`: a send work request posted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Post {
    pub(crate) t: u64,
    pub(crate) q: QpKind,
    pub(crate) gen: u32,
    pub(crate) seq: u64,
    pub(crate) op: WrOp,
    pub(crate) len: u32,
}

/// What a completion says beyond its QP, generation and status.
#[derive(Clone, Debug)]
pub(crate) enum WcBody {
    /// A send completion: its work request and the value field (hashes, atomic value or "-").
    Send { seq: u64, val: String },
    /// A receive completion.
    Recv {
        len: u32,
        imm: Option<u32>,
        inv: Option<u32>,
        chunks: Vec<u64>,
        /// The receive buffer's length, if logged (after the chunks).
        buf: Option<u64>,
    },
}

/// `wc`: a completion.
#[derive(Clone, Debug)]
pub(crate) struct Wc {
    pub(crate) t: u64,
    pub(crate) q: QpKind,
    pub(crate) gen: u32,
    pub(crate) status: u32,
    pub(crate) body: WcBody,
    /// The line of the victim log (1-based), for the report.
    pub(crate) line: usize,
}

/// The victim's log.
#[derive(Debug, Default)]
pub(crate) struct VictimLog {
    pub(crate) conns: Vec<Conn>,
    pub(crate) posts: Vec<Post>,
    pub(crate) wcs: Vec<Wc>,
    /// `err T Q GEN`: the victim moved the QP to the Error state itself.
    pub(crate) errs: Vec<(u64, QpKind, u32)>,
    pub(crate) malformed: usize,
}

/// The fuzzer's trace.
#[derive(Debug, Default)]
pub(crate) struct FuzzerTrace {
    /// Packets from the victim.
    pub(crate) rx: Vec<Packet>,
    /// Packets to the victim that reach its transport, in send order.
    pub(crate) tx_ok: Vec<Packet>,
    /// Packets to the victim that must have no effect.
    pub(crate) tx_bad: usize,
    /// Packets from the victim the fuzzer's socket dropped.
    pub(crate) lost: u64,
    /// `gen` lines: when the fuzzer started to follow a generation of a QP.
    pub(crate) gens: Vec<(u64, QpKind, u32)>,
    /// Lines that could not be read, including `ok` packets whose headers could not be decoded.
    pub(crate) malformed: usize,
}

/// Parses a decimal number.
fn dec<T: core::str::FromStr>(s: Option<&str>) -> Option<T> {
    s?.parse().ok()
}

/// Parses a hex number of at most 16 digits (an optional `0x` allowed).
pub(crate) fn hex64(s: &str) -> Option<u64> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Parses a 32-bit hex number.
fn hex32(s: &str) -> Option<u32> {
    hex64(s).and_then(|v| u32::try_from(v).ok())
}

/// Parses a list of chunk hashes: comma-separated hex, or "-" for none.
pub(crate) fn chunks(s: &str) -> Option<Vec<u64>> {
    if s == "-" {
        return Some(Vec::new());
    }
    s.split(',').map(hex64).collect()
}

impl VictimLog {
    /// Parses the victim's log.
    pub(crate) fn parse(text: &str) -> Self {
        let mut log = Self::default();
        for (i, line) in text.lines().enumerate() {
            let mut f = line.split_ascii_whitespace();
            let Some(kind) = f.next() else { continue };
            if kind.starts_with('#') {
                continue;
            }
            let ok = match kind {
                "conn" | "post" | "wc" => log.parse_event(kind, f, i + 1),
                "err" => {
                    let (t, q, gen) = (dec(f.next()), f.next(), dec(f.next()));
                    match (t, q.map(QpKind::parse), gen) {
                        (Some(t), Some(Some(q)), Some(gen)) => {
                            log.errs.push((t, q, gen));
                            true
                        }
                        (Some(_), Some(None), Some(_)) => true,
                        _ => false,
                    }
                }
                "end" => true,
                _ => false,
            };
            if !ok {
                log.malformed += 1;
            }
        }
        log
    }

    /// Parses a `conn`, `post` or `wc` line after its first word; false if it is malformed.
    fn parse_event<'a>(
        &mut self,
        kind: &str,
        mut f: impl Iterator<Item = &'a str>,
        line: usize,
    ) -> bool {
        let Some(t) = dec::<u64>(f.next()) else {
            return false;
        };
        let qs = f.next().unwrap_or("");
        let Some(q) = QpKind::parse(qs) else {
            return qs == "ud";
        };
        let Some(gen) = dec::<u32>(f.next()) else {
            return false;
        };
        match kind {
            "conn" => {
                let (Some(qpn), Some(sq_psn), Some(rq_psn), Some(mtu)) =
                    (dec(f.next()), dec(f.next()), dec(f.next()), dec(f.next()))
                else {
                    return false;
                };
                if mtu == 0 {
                    return false;
                }
                self.conns.push(Conn {
                    t,
                    q,
                    gen,
                    qpn,
                    sq_psn,
                    rq_psn,
                    mtu,
                });
            }
            "post" => {
                let (Some(seq), Some(op), Some(len)) =
                    (dec(f.next()), f.next().and_then(WrOp::parse), dec(f.next()))
                else {
                    return false;
                };
                self.posts.push(Post {
                    t,
                    q,
                    gen,
                    seq,
                    op,
                    len,
                });
            }
            _ => {
                let (Some(seq), Some(dir), Some(status)) =
                    (dec::<u64>(f.next()), f.next(), dec(f.next()))
                else {
                    return false;
                };
                let body = match dir {
                    "send" => WcBody::Send {
                        seq,
                        val: f.next().unwrap_or("-").to_owned(),
                    },
                    "recv" => {
                        let (Some(len), Some(flags)) = (dec(f.next()), dec::<u32>(f.next())) else {
                            return false;
                        };
                        let (imm, inv) = (f.next().and_then(hex32), f.next().and_then(hex32));
                        // A flag without a readable value makes the line unusable.
                        if (flags & 1 != 0 && imm.is_none()) || (flags & 2 != 0 && inv.is_none()) {
                            return false;
                        }
                        let imm = imm.filter(|_| flags & 1 != 0);
                        let inv = inv.filter(|_| flags & 2 != 0);
                        let Some(chunks) = f.next().map_or(Some(Vec::new()), chunks) else {
                            return false;
                        };
                        WcBody::Recv {
                            len,
                            imm,
                            inv,
                            chunks,
                            buf: dec(f.next()),
                        }
                    }
                    _ => return false,
                };
                self.wcs.push(Wc {
                    t,
                    q,
                    gen,
                    status,
                    body,
                    line,
                });
            }
        }
        true
    }
}

impl FuzzerTrace {
    /// Parses the fuzzer's trace.
    pub(crate) fn parse(text: &str) -> Self {
        let mut tr = Self::default();
        for line in text.lines() {
            let mut f = line.split_ascii_whitespace();
            let Some(kind) = f.next() else { continue };
            if kind.starts_with('#') {
                continue;
            }
            let ok = match kind {
                "gen" => {
                    let (t, q, gen) = (dec(f.next()), f.next(), dec(f.next()));
                    match (t, q.map(QpKind::parse), gen) {
                        (Some(t), Some(Some(q)), Some(gen)) => {
                            tr.gens.push((t, q, gen));
                            true
                        }
                        (Some(_), Some(None), Some(_)) => true,
                        _ => false,
                    }
                }
                "lost" => match dec::<u64>(f.next()) {
                    Some(n) => {
                        tr.lost = tr.lost.saturating_add(n);
                        true
                    }
                    None => false,
                },
                "rx" | "tx" => tr.parse_packet(kind == "tx", f),
                _ => false,
            };
            if !ok {
                tr.malformed += 1;
            }
        }
        tr
    }

    /// Parses an `rx` or `tx` line after its first word; false if it is malformed.
    fn parse_packet<'a>(&mut self, tx: bool, mut f: impl Iterator<Item = &'a str>) -> bool {
        let Some(t) = dec::<u64>(f.next()) else {
            return false;
        };
        let ok = if tx {
            match f.next() {
                Some("ok") => true,
                Some("bad") => false,
                _ => return false,
            }
        } else {
            true
        };
        if !ok {
            // A mangled packet must have no effect whatever its bytes say: it is only counted.
            self.tx_bad += 1;
            return true;
        }
        let (Some(hdr), Some(len), Some(hash)) =
            (f.next(), dec(f.next()), f.next().and_then(hex64))
        else {
            return false;
        };
        let Ok(p) = Packet::parse(t, hdr, len, hash) else {
            return false;
        };
        if tx {
            self.tx_ok.push(p);
        } else {
            self.rx.push(p);
        }
        true
    }
}
