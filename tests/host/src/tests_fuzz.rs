// SPDX-License-Identifier: GPL-2.0

//! Deterministic randomized fuzzing of every `proto` function that parses hostile input.
//!
//! This module is the project's equivalent of a `cargo fuzz` target: it needs no nightly toolchain
//! or libFuzzer and runs with the ordinary `cargo test`, so every change is fuzzed a little. The
//! tests feed random and mutated inputs to the packet parser, the ICRC check, the WQE parsers, the
//! sequencing decisions, the ring index arithmetic and the Modify QP attribute checks. They check
//! that nothing panics (an arithmetic overflow or an out-of-bounds index panics in this debug
//! build) and, whenever a call succeeds, the invariants its documentation promises, most of them
//! against a small independent model of the documented behaviour.
//!
//! The inputs come from a xorshift64* generator. Every case of a test gets its own generator,
//! seeded from the test's fixed seed and the case index, so runs are reproducible and a failing
//! case is named by its index. Three environment variables tune a run:
//!
//! - `RRXE_FUZZ_ITERS=n` runs `n` cases in every test instead of the defaults, which keep the
//!   whole module well under five seconds in a debug build;
//! - `RRXE_FUZZ_SEED=s` mixes `s` into every seed, for a fresh campaign;
//! - `RRXE_FUZZ_CASE=i` runs only case `i` of the selected tests, to reproduce a failure.
//!
//! Numbers may be decimal or `0x` hexadecimal, for example
//! `RRXE_FUZZ_ITERS=2000000 cargo test --release tests_fuzz`.

use crate::proto::cqe::Cqe;
use crate::proto::cqe::CQE_LEN;
use crate::proto::hdr::Aeth;
use crate::proto::hdr::AtomicAckEth;
use crate::proto::hdr::AtomicEth;
use crate::proto::hdr::Bth;
use crate::proto::hdr::Deth;
use crate::proto::hdr::Feth;
use crate::proto::hdr::Ieth;
use crate::proto::hdr::Immdt;
use crate::proto::hdr::Reth;
use crate::proto::hdr::ICRC_LEN;
use crate::proto::hdr::ROCE_V2_UDP_PORT;
use crate::proto::hdr::U24_MAX;
use crate::proto::icrc::icrc_ipv4;
use crate::proto::icrc::icrc_ipv6;
use crate::proto::icrc::icrc_to_wire;
use crate::proto::icrc::split_icrc;
use crate::proto::icrc::verify_ipv4;
use crate::proto::icrc::verify_ipv6;
use crate::proto::icrc::Icrc;
use crate::proto::icrc::IPV4_HDR_LEN;
use crate::proto::icrc::IPV6_HDR_LEN;
use crate::proto::icrc::UDP_HDR_LEN;
use crate::proto::opcode::ExtHeader;
use crate::proto::opcode::OpKind;
use crate::proto::opcode::Opcode;
use crate::proto::opcode::Position;
use crate::proto::opcode::Service;
use crate::proto::packet::packet_len;
use crate::proto::packet::pad_for;
use crate::proto::packet::parse_headers;
use crate::proto::packet::ParsedHeaders;
use crate::proto::packet::TransportHeaders;
use crate::proto::psn::Psn;
use crate::proto::qp_state::check_min_rnr_timer;
use crate::proto::qp_state::check_path_mtu;
use crate::proto::qp_state::check_retry_cnt;
use crate::proto::qp_state::check_rnr_retry;
use crate::proto::qp_state::check_sq_drain;
use crate::proto::qp_state::check_timeout;
use crate::proto::qp_state::check_transition;
use crate::proto::qp_state::is_valid_transition;
use crate::proto::qp_state::local_ack_timeout_ns;
use crate::proto::qp_state::optional;
use crate::proto::qp_state::rd_atomic_depth;
use crate::proto::qp_state::required;
use crate::proto::qp_state::resolve_states;
use crate::proto::qp_state::rnr_timer_us;
use crate::proto::qp_state::AttrMask;
use crate::proto::qp_state::QpState;
use crate::proto::qp_state::QpStateError;
use crate::proto::qp_state::QpType;
use crate::proto::ring;
use crate::proto::ring::RingError;
use crate::proto::ring::RingGeometry;
use crate::proto::seq::check_request_sequence;
use crate::proto::seq::classify_ack;
use crate::proto::seq::classify_request_psn;
use crate::proto::seq::duplicate_action;
use crate::proto::seq::packets_for;
use crate::proto::seq::position;
use crate::proto::seq::read_response_opcode;
use crate::proto::seq::request_opcode;
use crate::proto::seq::AckDecision;
use crate::proto::seq::RespPsn;
use crate::proto::seq::SeqError;
use crate::proto::wqe::allowed;
use crate::proto::wqe::encode_recv_wqe;
use crate::proto::wqe::parse_recv_wqe;
use crate::proto::wqe::parse_send_wqe;
use crate::proto::wqe::peek_wr_id;
use crate::proto::wqe::Payload;
use crate::proto::wqe::RecvWqe;
use crate::proto::wqe::SendFlags;
use crate::proto::wqe::SendWqe;
use crate::proto::wqe::Sge;
use crate::proto::wqe::WqeError;
use crate::proto::wqe::WrDetail;
use crate::proto::wqe::WrOpcode;
use crate::proto::wqe::MAX_MSG_SIZE;
use crate::proto::wqe::MAX_QPN;
use crate::proto::wqe::OFF_ATOMIC_RKEY;
use crate::proto::wqe::OFF_ATOMIC_SWAP;
use crate::proto::wqe::OFF_DMA_LENGTH;
use crate::proto::wqe::OFF_DMA_NUM_SGE;
use crate::proto::wqe::OFF_EX;
use crate::proto::wqe::OFF_IOVA;
use crate::proto::wqe::OFF_OPCODE;
use crate::proto::wqe::OFF_RDMA_RKEY;
use crate::proto::wqe::OFF_RECV_DMA_LENGTH;
use crate::proto::wqe::OFF_RECV_DMA_NUM_SGE;
use crate::proto::wqe::OFF_REMOTE_ADDR;
use crate::proto::wqe::OFF_SEND_FLAGS;
use crate::proto::wqe::OFF_UD_AH_NUM;
use crate::proto::wqe::OFF_UD_REMOTE_QPN;
use crate::proto::wqe::OFF_WR_ID;
use crate::proto::wqe::RECV_WQE_HDR_LEN;
use crate::proto::wqe::SEND_WQE_HDR_LEN;
use crate::proto::wqe::SGE_LEN;
use crate::proto::Error;
use std::panic::catch_unwind;
use std::panic::resume_unwind;
use std::panic::AssertUnwindSafe;

// ---------------------------------------------------------------------------------------------
// The harness: a seeded generator per case and the environment knobs.
// ---------------------------------------------------------------------------------------------

/// The SplitMix64 finalizer, used to turn a seed and a case index into a generator state.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Interesting 32-bit values: the ends of the bit fields and integer types the code handles.
const EDGE_U32: [u32; 20] = [
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    63,
    64,
    65,
    0x00ff,
    0x0100,
    0x007f_ffff,
    0x0080_0000,
    0x00ff_ffff,
    0x0100_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
];

/// A xorshift64* pseudo-random generator (Vigna, "An experimental exploration of Marsaglia's
/// xorshift generators, scrambled"): tiny, fast and good enough to drive a fuzzer.
struct Rng(u64);

impl Rng {
    /// Returns the generator of case `case` of a test seeded with `seed`.
    fn for_case(seed: u64, case: u64) -> Self {
        // The state of a xorshift generator must not be zero.
        Self(splitmix64(seed ^ splitmix64(case)).max(1))
    }

    /// Returns the next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Returns 32 random bits (the high half, the better one of xorshift64*).
    fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Returns 16 random bits.
    fn u16(&mut self) -> u16 {
        (self.next_u64() >> 48) as u16
    }

    /// Returns 8 random bits.
    fn u8(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }

    /// Returns a random boolean.
    fn bool(&mut self) -> bool {
        self.next_u64() >> 63 != 0
    }

    /// Returns a value in `0..n`; `n` must not be zero.
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Returns a value in `0..=max`.
    fn upto(&mut self, max: usize) -> usize {
        match (max as u64).checked_add(1) {
            Some(n) => (self.next_u64() % n) as usize,
            None => self.next_u64() as usize,
        }
    }

    /// Returns `true` with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// Returns one of `items`, which must not be empty.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.upto(items.len() - 1)]
    }

    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }

    /// Returns `len` random bytes.
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut buf = vec![0; len];
        self.fill(&mut buf);
        buf
    }

    /// Returns a length in `0..=max`, short ones (up to 96) half of the time.
    fn len_upto(&mut self, max: usize) -> usize {
        if self.bool() {
            self.upto(max.min(96))
        } else {
            self.upto(max)
        }
    }

    /// Returns a 32-bit value that is often at the edge of a field or type.
    fn edgy_u32(&mut self) -> u32 {
        match self.below(5) {
            0 | 1 => self.pick(&EDGE_U32),
            2 => self.pick(&EDGE_U32) ^ (1 << self.below(32)),
            3 => self.u32() & 0xff,
            _ => self.u32(),
        }
    }
}

/// Reads the environment variable `name` as a decimal or `0x` hexadecimal number.
fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={value:?} is not a number")))
}

/// Runs `body` on `default_cases` cases (or as the environment asks), each with its own generator.
///
/// `body` also receives the case index, which tests use to cycle through opcodes. A panicking case
/// is reported with its index and the command that reruns it before the panic continues.
fn fuzz(seed: u64, default_cases: u64, mut body: impl FnMut(&mut Rng, u64)) {
    let extra_seed = env_u64("RRXE_FUZZ_SEED");
    let seed = seed ^ extra_seed.unwrap_or(0);
    let cases = match env_u64("RRXE_FUZZ_CASE") {
        Some(case) => case..case + 1,
        None => 0..env_u64("RRXE_FUZZ_ITERS").unwrap_or(default_cases),
    };
    for case in cases {
        let mut rng = Rng::for_case(seed, case);
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(&mut rng, case))) {
            // The test harness names each test's thread after the test.
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("tests_fuzz");
            let seed_var = extra_seed.map_or(String::new(), |s| format!("RRXE_FUZZ_SEED={s:#x} "));
            eprintln!(
                "{test}: fuzz case {case} failed (seed {seed:#x}); rerun it alone with\n  \
                 {seed_var}RRXE_FUZZ_CASE={case} cargo test -- --exact {test}"
            );
            resume_unwind(panic);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Packets: parse_headers, TransportHeaders::write and the ICRC.
// ---------------------------------------------------------------------------------------------

/// Every extension header kind.
const ALL_EXT: [ExtHeader; 8] = [
    ExtHeader::Reth,
    ExtHeader::Aeth,
    ExtHeader::Deth,
    ExtHeader::Immdt,
    ExtHeader::Ieth,
    ExtHeader::AtomicEth,
    ExtHeader::AtomicAckEth,
    ExtHeader::Feth,
];

/// The wire length of an extension header, written out independently of the code under test.
fn wire_len(ext: ExtHeader) -> usize {
    match ext {
        ExtHeader::Reth => 16,
        ExtHeader::Aeth | ExtHeader::Immdt | ExtHeader::Ieth | ExtHeader::Feth => 4,
        ExtHeader::Deth | ExtHeader::AtomicAckEth => 8,
        ExtHeader::AtomicEth => 28,
    }
}

/// Returns whether `headers` holds extension header `ext`.
fn present(headers: &TransportHeaders, ext: ExtHeader) -> bool {
    match ext {
        ExtHeader::Reth => headers.reth.is_some(),
        ExtHeader::Aeth => headers.aeth.is_some(),
        ExtHeader::Deth => headers.deth.is_some(),
        ExtHeader::Immdt => headers.immdt.is_some(),
        ExtHeader::Ieth => headers.ieth.is_some(),
        ExtHeader::AtomicEth => headers.atomic_eth.is_some(),
        ExtHeader::AtomicAckEth => headers.atomic_ack_eth.is_some(),
        ExtHeader::Feth => headers.feth.is_some(),
    }
}

/// Copies extension header `ext` from `src` into `dst`.
fn copy_ext(dst: &mut TransportHeaders, src: &TransportHeaders, ext: ExtHeader) {
    match ext {
        ExtHeader::Reth => dst.reth = src.reth,
        ExtHeader::Aeth => dst.aeth = src.aeth,
        ExtHeader::Deth => dst.deth = src.deth,
        ExtHeader::Immdt => dst.immdt = src.immdt,
        ExtHeader::Ieth => dst.ieth = src.ieth,
        ExtHeader::AtomicEth => dst.atomic_eth = src.atomic_eth,
        ExtHeader::AtomicAckEth => dst.atomic_ack_eth = src.atomic_ack_eth,
        ExtHeader::Feth => dst.feth = src.feth,
    }
}

/// Returns every opcode byte that [`Opcode::info`] describes.
fn implemented_opcodes() -> Vec<Opcode> {
    (0..=u8::MAX)
        .map(Opcode)
        .filter(|op| op.info().is_some())
        .collect()
}

/// Returns a random opcode: an implemented one three times out of four, else any byte.
fn random_opcode(rng: &mut Rng, implemented: &[Opcode]) -> Opcode {
    if rng.chance(3, 4) {
        rng.pick(implemented)
    } else {
        Opcode(rng.u8())
    }
}

/// Returns headers with opcode `opcode` and random in-range fields.
///
/// The extension headers `opcode` carries are filled in, or all of them when `all_ext` is set.
fn random_headers(rng: &mut Rng, opcode: Opcode, all_ext: bool) -> TransportHeaders {
    let mut h = TransportHeaders::new(Bth {
        opcode,
        solicited: rng.bool(),
        mig_req: rng.bool(),
        pad: rng.below(4) as u8,
        pkey: rng.u16(),
        fecn: rng.bool(),
        becn: rng.bool(),
        dest_qpn: rng.u32() & U24_MAX,
        ack_req: rng.bool(),
        psn: Psn::new(rng.u32()),
    });
    let info = opcode.info();
    for ext in ALL_EXT {
        if !all_ext && !info.is_some_and(|i| i.has_ext(ext)) {
            continue;
        }
        match ext {
            ExtHeader::Reth => {
                h.reth = Some(Reth {
                    va: rng.next_u64(),
                    rkey: rng.u32(),
                    dma_len: rng.u32(),
                });
            }
            ExtHeader::Aeth => {
                h.aeth = Some(Aeth {
                    syndrome: rng.u8(),
                    msn: rng.u32() & U24_MAX,
                });
            }
            ExtHeader::Deth => {
                h.deth = Some(Deth {
                    qkey: rng.u32(),
                    src_qpn: rng.u32() & U24_MAX,
                });
            }
            ExtHeader::Immdt => h.immdt = Some(Immdt { imm: rng.u32() }),
            ExtHeader::Ieth => h.ieth = Some(Ieth { rkey: rng.u32() }),
            ExtHeader::AtomicEth => {
                h.atomic_eth = Some(AtomicEth {
                    va: rng.next_u64(),
                    rkey: rng.u32(),
                    swap_add: rng.next_u64(),
                    compare: rng.next_u64(),
                });
            }
            ExtHeader::AtomicAckEth => {
                h.atomic_ack_eth = Some(AtomicAckEth {
                    orig: rng.next_u64(),
                });
            }
            ExtHeader::Feth => {
                h.feth = Some(Feth {
                    selectivity: rng.below(4) as u8,
                    placement_type: rng.below(16) as u8,
                });
            }
        }
    }
    h
}

/// A well-formed IPv4 RoCEv2 transport packet with a correct ICRC.
struct Packet {
    /// The transport packet, BTH through ICRC.
    bytes: Vec<u8>,
    /// The headers it was built from.
    headers: TransportHeaders,
    /// The payload length.
    payload_len: usize,
    /// The IPv4 header the ICRC covers.
    ip: [u8; IPV4_HDR_LEN],
    /// The UDP header the ICRC covers.
    udp: [u8; UDP_HDR_LEN],
}

/// Builds a valid packet with opcode `opcode`, random headers and payload, zero pad and the ICRC.
fn valid_packet(rng: &mut Rng, opcode: Opcode) -> Packet {
    let info = opcode
        .info()
        .expect("only implemented opcodes make valid packets");
    let payload_len = if info.has_payload {
        match rng.below(10) {
            0..=5 => rng.upto(64),
            6..=8 => rng.upto(1024),
            _ => rng.upto(4096),
        }
    } else {
        0
    };
    let mut headers = random_headers(rng, opcode, false);
    headers.bth.pad = pad_for(payload_len);
    let pad = usize::from(headers.bth.pad);
    let len = packet_len(&info, payload_len).expect("small packets do not overflow");
    assert_eq!(len, info.header_len + payload_len + pad + ICRC_LEN);
    assert_eq!((payload_len + pad) % 4, 0);

    let mut bytes = vec![0; len];
    assert_eq!(headers.write(&mut bytes), Ok(info.header_len));
    rng.fill(&mut bytes[info.header_len..info.header_len + payload_len]);
    let mut ip = [0; IPV4_HDR_LEN];
    rng.fill(&mut ip);
    ip[0] = 0x45;
    let mut udp = [0; UDP_HDR_LEN];
    rng.fill(&mut udp);
    udp[2..4].copy_from_slice(&ROCE_V2_UDP_PORT.to_be_bytes());
    let icrc_at = len - ICRC_LEN;
    let icrc = icrc_ipv4(&ip, &udp, &bytes[..icrc_at]);
    bytes[icrc_at..].copy_from_slice(&icrc_to_wire(icrc));
    Packet {
        bytes,
        headers,
        payload_len,
        ip,
        udp,
    }
}

/// What `parse_headers` must return for `pkt`, from an independent model of its documentation:
/// the checks in their documented order, with header lengths from [`wire_len`].
fn expected_parse(pkt: &[u8]) -> Result<(), Error> {
    if pkt.len() < 12 {
        return Err(Error::Truncated);
    }
    if pkt[1] & 0x0f != 0 {
        return Err(Error::BadVersion);
    }
    let info = Opcode(pkt[0]).info().ok_or(Error::BadOpcode)?;
    let header_len = 12 + info.ext_headers.iter().map(|&e| wire_len(e)).sum::<usize>();
    if pkt.len() < header_len + 4 {
        return Err(Error::Truncated);
    }
    let pad = usize::from((pkt[1] >> 4) & 3);
    if pkt.len() - header_len - 4 < pad {
        return Err(Error::BadPad);
    }
    Ok(())
}

/// Returns, per header byte of a packet with opcode byte `opcode`, the bits that the header types
/// preserve; the others are reserved, "ignored when parsing and written as zero" (`hdr.rs`).
///
/// The reserved bits are BTH byte 4 bits 0-5 (between BECN and the destination QPN), BTH byte 8
/// bits 0-6 (between AckReq and the PSN), DETH byte 4 (before the source QPN) and FETH bytes 0-2
/// and the top two bits of byte 3. The BTH version nibble must be zero for the parse to succeed
/// and is written as zero, so it round-trips.
fn preserved_bits(opcode: Opcode) -> Vec<u8> {
    let info = opcode.info().expect("implemented opcode");
    let mut mask = vec![0xff; info.header_len];
    mask[4] = 0xc0;
    mask[8] = 0x80;
    let mut off = 12;
    for &ext in info.ext_headers {
        match ext {
            ExtHeader::Deth => mask[off + 4] = 0,
            ExtHeader::Feth => mask[off..off + 4].copy_from_slice(&[0, 0, 0, 0x3f]),
            _ => {}
        }
        off += wire_len(ext);
    }
    mask
}

/// Parses `pkt`, checks the outcome against [`expected_parse`] and, on success, every invariant
/// of [`ParsedHeaders`] and the write/parse round trip.
fn check_parse(pkt: &[u8]) -> Option<ParsedHeaders> {
    let got = parse_headers(pkt);
    assert_eq!(got.map(|_| ()), expected_parse(pkt), "packet {pkt:02x?}");
    let p = got.ok()?;
    let len = pkt.len();
    let info = Opcode(pkt[0])
        .info()
        .expect("parsed opcodes are implemented");
    assert_eq!(p.info, info);
    assert_eq!(p.headers.bth.opcode, Opcode(pkt[0]));
    assert_eq!(
        info.header_len,
        12 + info.ext_headers.iter().map(|&e| wire_len(e)).sum::<usize>()
    );
    assert_eq!(p.payload_offset, info.header_len);
    assert!(p.headers.bth.pad <= 3);
    assert_eq!(
        p.payload_offset + p.payload_len + usize::from(p.headers.bth.pad) + ICRC_LEN,
        len
    );
    assert_eq!(p.icrc_offset + ICRC_LEN, len);
    for ext in ALL_EXT {
        assert_eq!(
            present(&p.headers, ext),
            info.ext_headers.contains(&ext),
            "{ext:?} in opcode {:#04x}",
            pkt[0]
        );
    }

    // Writing the parsed headers back reproduces the header bytes, except for reserved bits,
    // which are written as zero, and touches nothing after the headers.
    let hl = info.header_len;
    let mut out = vec![0xa5; hl + 8];
    assert_eq!(p.headers.write(&mut out), Ok(hl));
    assert!(out[hl..].iter().all(|&b| b == 0xa5));
    let mask = preserved_bits(Opcode(pkt[0]));
    for i in 0..hl {
        assert_eq!(out[i] & !mask[i], 0, "reserved bits of byte {i} written");
        assert_eq!(out[i], pkt[i] & mask[i], "byte {i} of {pkt:02x?}");
    }
    // The canonical packet (reserved bits cleared) parses to exactly the same result.
    let mut canonical = pkt.to_vec();
    canonical[..hl].copy_from_slice(&out[..hl]);
    assert_eq!(parse_headers(&canonical), Ok(p));
    Some(p)
}

/// Applies one to four random mutations to `pkt`, splicing in bytes from `donor` at times.
fn mutate_packet(rng: &mut Rng, pkt: &mut Vec<u8>, donor: &[u8], implemented: &[Opcode]) {
    for _ in 0..=rng.below(4) {
        let len = pkt.len();
        match rng.below(11) {
            // Flip one bit.
            0 | 1 if len > 0 => {
                let at = rng.upto(len - 1);
                pkt[at] ^= 1 << rng.below(8);
            }
            // Overwrite one byte.
            2 if len > 0 => {
                let at = rng.upto(len - 1);
                pkt[at] = rng.u8();
            }
            // Truncate.
            3 => pkt.truncate(rng.upto(len)),
            // Shrink or grow by a few bytes, moving where the ICRC and the payload end.
            4 => {
                let delta = rng.upto(8);
                if rng.bool() {
                    pkt.truncate(len.saturating_sub(delta));
                } else {
                    pkt.extend(rng.bytes(delta));
                }
            }
            // Extend with random bytes.
            5 => {
                let extra = 1 + rng.upto(63);
                pkt.extend(rng.bytes(extra));
            }
            // Overwrite a stretch with a piece of the donor.
            6 if !donor.is_empty() => {
                let from = rng.upto(donor.len() - 1);
                let piece = &donor[from..from + rng.upto((donor.len() - from).min(48))];
                let at = rng.upto(len);
                let end = at + piece.len();
                if end > pkt.len() {
                    pkt.resize(end, 0);
                }
                pkt[at..end].copy_from_slice(piece);
            }
            // Insert a piece of the donor.
            7 if !donor.is_empty() => {
                let from = rng.upto(donor.len() - 1);
                let piece = &donor[from..from + rng.upto((donor.len() - from).min(48))];
                let at = rng.upto(len);
                pkt.splice(at..at, piece.iter().copied());
            }
            // Remove a stretch.
            8 if len > 0 => {
                let at = rng.upto(len - 1);
                let end = at + rng.upto((len - at).min(48));
                pkt.drain(at..end);
            }
            // Change the opcode, which changes the header layout under the same bytes.
            9 if len > 0 => pkt[0] = random_opcode(rng, implemented).0,
            // Change the pad count, and at times the version.
            10 if len > 1 => {
                pkt[1] = (pkt[1] & !0x30) | ((rng.u8() & 3) << 4);
                if rng.chance(1, 8) {
                    pkt[1] ^= 1 << rng.below(4);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn every_opcode_byte_round_trips_or_is_rejected() {
    let implemented = implemented_opcodes();
    assert!(implemented.len() > 30);
    fuzz(0x0bc0_de00, 12, |rng, _| {
        for byte in 0..=u8::MAX {
            let op = Opcode(byte);
            let Some(info) = op.info() else {
                // Unimplemented opcodes can be neither written nor parsed.
                let h = random_headers(rng, op, true);
                assert_eq!(h.write(&mut [0; 128]), Err(Error::BadOpcode));
                let len = 12 + rng.upto(200);
                let mut pkt = rng.bytes(len);
                pkt[0] = byte;
                pkt[1] &= 0xf0;
                assert_eq!(parse_headers(&pkt), Err(Error::BadOpcode));
                continue;
            };
            let p = valid_packet(rng, op);
            let parsed = check_parse(&p.bytes).expect("valid packets parse");
            assert_eq!(parsed.headers, p.headers);
            assert_eq!(parsed.payload_len, p.payload_len);
            assert_eq!(verify_ipv4(&p.ip, &p.udp, &p.bytes), Ok(()));

            // Extension headers the opcode does not carry are ignored when writing.
            let mut full = random_headers(rng, op, true);
            full.bth = p.headers.bth;
            for &ext in info.ext_headers {
                copy_ext(&mut full, &p.headers, ext);
            }
            let mut out = vec![0; info.header_len];
            assert_eq!(full.write(&mut out), Ok(info.header_len));
            assert_eq!(out, p.bytes[..info.header_len]);

            // A buffer too short for the headers fails with nothing written.
            let len = rng.upto(info.header_len - 1);
            let mut short = rng.bytes(len);
            let before = short.clone();
            assert_eq!(p.headers.write(&mut short), Err(Error::NoSpace));
            assert_eq!(short, before);
        }
    });
}

#[test]
fn parse_headers_survives_random_bytes() {
    let implemented = implemented_opcodes();
    let mut parsed = 0u32;
    fuzz(0x7a4d_0b17, 12_000, |rng, _| {
        let len = rng.len_upto(4200);
        let mut pkt = rng.bytes(len);
        // Mostly steer past the version and opcode checks, to reach the later ones.
        if pkt.len() >= 2 && rng.chance(3, 4) {
            pkt[0] = rng.pick(&implemented).0;
            pkt[1] &= 0xf0;
        }
        parsed += u32::from(check_parse(&pkt).is_some());
    });
    assert!(parsed > 100, "only {parsed} random packets parsed");
}

#[test]
fn parse_headers_survives_mutated_valid_packets() {
    let implemented = implemented_opcodes();
    let (mut parsed, mut rejected) = (0u32, 0u32);
    fuzz(0x3117_a7e5, 2_000, |rng, case| {
        // Cycle through the opcode table, so that every opcode is mutated as often.
        let op = implemented[(case % implemented.len() as u64) as usize];
        let valid = valid_packet(rng, op);
        assert_eq!(
            check_parse(&valid.bytes).map(|p| p.headers),
            Some(valid.headers)
        );
        let donor_op = rng.pick(&implemented);
        let donor = valid_packet(rng, donor_op).bytes;
        for _ in 0..8 {
            let mut pkt = valid.bytes.clone();
            mutate_packet(rng, &mut pkt, &donor, &implemented);
            match check_parse(&pkt) {
                Some(_) => parsed += 1,
                None => rejected += 1,
            }
        }
    });
    assert!(
        parsed > 1000 && rejected > 1000,
        "{parsed} parsed, {rejected} rejected"
    );
}

/// What `TransportHeaders::write` must return for `h` and a buffer of `buf_len` bytes, from its
/// documentation: unknown opcodes, then a short buffer, then field ranges and missing headers in
/// wire order.
fn expected_write(h: &TransportHeaders, buf_len: usize) -> Result<usize, Error> {
    let info = h.bth.opcode.info().ok_or(Error::BadOpcode)?;
    if buf_len < info.header_len {
        return Err(Error::NoSpace);
    }
    if h.bth.pad > 3 || h.bth.dest_qpn > U24_MAX {
        return Err(Error::FieldRange);
    }
    for &ext in info.ext_headers {
        if !present(h, ext) {
            return Err(Error::MissingHeader);
        }
        let in_range = match ext {
            ExtHeader::Aeth => h.aeth.is_some_and(|a| a.msn <= U24_MAX),
            ExtHeader::Deth => h.deth.is_some_and(|d| d.src_qpn <= U24_MAX),
            ExtHeader::Feth => h
                .feth
                .is_some_and(|f| f.selectivity <= 3 && f.placement_type <= 15),
            _ => true,
        };
        if !in_range {
            return Err(Error::FieldRange);
        }
    }
    Ok(info.header_len)
}

#[test]
fn transport_headers_write_checks_every_field() {
    let implemented = implemented_opcodes();
    fuzz(0x00c0_ffee, 10_000, |rng, _| {
        let op = random_opcode(rng, &implemented);
        let all_ext = rng.chance(1, 4);
        let mut h = random_headers(rng, op, all_ext);
        // Knock out or corrupt a field now and then.
        match rng.below(8) {
            0 => h.bth.pad = rng.u8(),
            1 => h.bth.dest_qpn = rng.edgy_u32(),
            2 => {
                if let Some(a) = h.aeth.as_mut() {
                    a.msn = rng.edgy_u32();
                }
            }
            3 => {
                if let Some(d) = h.deth.as_mut() {
                    d.src_qpn = rng.edgy_u32();
                }
            }
            4 => {
                if let Some(f) = h.feth.as_mut() {
                    f.selectivity = rng.u8() & 7;
                    f.placement_type = rng.u8() & 31;
                }
            }
            5 => {
                let mut empty = TransportHeaders::new(h.bth);
                for ext in ALL_EXT {
                    if rng.bool() {
                        copy_ext(&mut empty, &h, ext);
                    }
                }
                h = empty;
            }
            _ => {}
        }
        let len = rng.upto(90);
        let mut buf = rng.bytes(len);
        let before = buf.clone();
        let got = h.write(&mut buf);
        assert_eq!(got, expected_write(&h, buf.len()), "{h:?}");
        match got {
            Err(Error::NoSpace) => assert_eq!(buf, before, "NoSpace must write nothing"),
            Ok(hl) => {
                // What was written parses back to the same headers, minus those not carried.
                let mut pkt = buf[..hl].to_vec();
                let payload = rng.upto(16);
                pkt.extend(rng.bytes(payload + usize::from(h.bth.pad) + ICRC_LEN));
                let parsed = check_parse(&pkt).expect("written headers parse");
                let mut expected = TransportHeaders::new(h.bth);
                for &ext in parsed.info.ext_headers {
                    copy_ext(&mut expected, &h, ext);
                }
                assert_eq!(parsed.headers, expected);
                assert_eq!(parsed.payload_len, payload);
            }
            Err(_) => {}
        }
    });
}

#[test]
fn packet_length_helpers_never_overflow() {
    let implemented = implemented_opcodes();
    fuzz(0x1e96_7400, 20_000, |rng, _| {
        let payload_len = match rng.below(3) {
            0 => rng.upto(10_000),
            1 => usize::MAX - rng.upto(200),
            _ => rng.next_u64() as usize,
        };
        let pad = usize::from(pad_for(payload_len));
        assert!(pad < 4);
        assert_eq!((payload_len as u128 + pad as u128) % 4, 0);
        let info = rng.pick(&implemented).info().expect("implemented");
        let total = info.header_len as u128 + payload_len as u128 + pad as u128 + 4;
        let expected = usize::try_from(total).ok();
        assert_eq!(packet_len(&info, payload_len), expected);
    });
}

#[test]
fn icrc_verification_survives_random_input() {
    let mut verified = 0u32;
    fuzz(0x1c2c_0000, 2_500, |rng, _| {
        let mut ip4 = [0; IPV4_HDR_LEN];
        rng.fill(&mut ip4);
        let mut ip6 = [0; IPV6_HDR_LEN];
        rng.fill(&mut ip6);
        let mut udp = [0; UDP_HDR_LEN];
        rng.fill(&mut udp);
        let len = rng.len_upto(4200);
        let mut pkt = rng.bytes(len);
        // At times carry the right ICRC, so that both outcomes are exercised.
        let make_valid = pkt.len() >= ICRC_LEN && rng.chance(1, 4);
        if make_valid {
            let at = pkt.len() - ICRC_LEN;
            let icrc = icrc_ipv4(&ip4, &udp, &pkt[..at]);
            pkt[at..].copy_from_slice(&icrc_to_wire(icrc));
        }

        let split = split_icrc(&pkt);
        let v4 = verify_ipv4(&ip4, &udp, &pkt);
        let v6 = verify_ipv6(&ip6, &udp, &pkt);
        let Some(at) = pkt.len().checked_sub(ICRC_LEN) else {
            assert_eq!(split, Err(Error::Truncated));
            assert_eq!(v4, Err(Error::Truncated));
            assert_eq!(v6, Err(Error::Truncated));
            return;
        };
        let carried = u32::from_le_bytes(pkt[at..].try_into().unwrap());
        assert_eq!(split, Ok((&pkt[..at], carried)));
        let want4 = icrc_ipv4(&ip4, &udp, &pkt[..at]) == carried;
        let want6 = icrc_ipv6(&ip6, &udp, &pkt[..at]) == carried;
        assert_eq!(v4, if want4 { Ok(()) } else { Err(Error::BadIcrc) });
        assert_eq!(v6, if want6 { Ok(()) } else { Err(Error::BadIcrc) });
        assert!(!make_valid || want4);
        verified += u32::from(want4);
    });
    assert!(verified > 100);
}

/// Returns whether flipping a bit of transport byte `at` leaves the ICRC unchanged: BTH byte 4
/// (FECN, BECN and six reserved bits) is replaced by all ones before the CRC is computed.
fn transport_byte_masked(at: usize) -> bool {
    at == 4
}

#[test]
fn icrc_detects_every_single_bit_flip() {
    let implemented = implemented_opcodes();
    fuzz(0xf11b_0000, 300, |rng, case| {
        let op = implemented[(case % implemented.len() as u64) as usize];
        let p = valid_packet(rng, op);
        assert_eq!(verify_ipv4(&p.ip, &p.udp, &p.bytes), Ok(()));
        let bits = p.bytes.len() * 8;
        // Every bit of short packets, a sample of the bits of long ones.
        let flips: Vec<usize> = if bits <= 512 {
            (0..bits).collect()
        } else {
            (0..64).map(|_| rng.upto(bits - 1)).collect()
        };
        let mut pkt = p.bytes.clone();
        for bit in flips {
            let at = bit / 8;
            pkt[at] ^= 1 << (bit % 8);
            let expected = if transport_byte_masked(at) {
                Ok(())
            } else {
                Err(Error::BadIcrc)
            };
            assert_eq!(
                verify_ipv4(&p.ip, &p.udp, &pkt),
                expected,
                "bit {bit} of {op:?}"
            );
            pkt[at] ^= 1 << (bit % 8);
        }
        // The IPv4 type of service, time to live and checksum and the UDP checksum are masked;
        // every other bit of the network headers is covered.
        for _ in 0..16 {
            let mut ip = p.ip;
            let at = rng.upto(IPV4_HDR_LEN - 1);
            ip[at] ^= 1 << rng.below(8);
            let masked = matches!(at, 1 | 8 | 10 | 11);
            let expected = if masked { Ok(()) } else { Err(Error::BadIcrc) };
            assert_eq!(verify_ipv4(&ip, &p.udp, &p.bytes), expected, "IP byte {at}");
            let mut udp = p.udp;
            let at = rng.upto(UDP_HDR_LEN - 1);
            udp[at] ^= 1 << rng.below(8);
            let masked = matches!(at, 6 | 7);
            let expected = if masked { Ok(()) } else { Err(Error::BadIcrc) };
            assert_eq!(
                verify_ipv4(&p.ip, &udp, &p.bytes),
                expected,
                "UDP byte {at}"
            );
        }
    });
}

#[test]
fn icrc_in_pieces_matches_one_shot() {
    fuzz(0x91ec_e500, 5_000, |rng, _| {
        let mut ip4 = [0; IPV4_HDR_LEN];
        rng.fill(&mut ip4);
        let mut ip6 = [0; IPV6_HDR_LEN];
        rng.fill(&mut ip6);
        let mut udp = [0; UDP_HDR_LEN];
        rng.fill(&mut udp);
        let len = rng.len_upto(600);
        let transport = rng.bytes(len);
        // Random cut points, duplicates (empty pieces) included, often around BTH byte 4.
        let mut cuts: Vec<usize> = (0..rng.upto(6))
            .map(|_| {
                if rng.bool() {
                    rng.upto(transport.len().min(8))
                } else {
                    rng.upto(transport.len())
                }
            })
            .collect();
        cuts.push(0);
        cuts.push(transport.len());
        cuts.sort_unstable();
        let mut v4 = Icrc::ipv4(&ip4, &udp);
        let mut v6 = Icrc::ipv6(&ip6, &udp);
        for pair in cuts.windows(2) {
            v4.update(&transport[pair[0]..pair[1]]);
            v6.update(&transport[pair[0]..pair[1]]);
        }
        assert_eq!(
            v4.finish(),
            icrc_ipv4(&ip4, &udp, &transport),
            "cuts {cuts:?}"
        );
        assert_eq!(
            v6.finish(),
            icrc_ipv6(&ip6, &udp, &transport),
            "cuts {cuts:?}"
        );
        assert_eq!(v4.finish_wire(), icrc_to_wire(v4.finish()));
    });
}

// ---------------------------------------------------------------------------------------------
// Work queue entries: parse_send_wqe, parse_recv_wqe and encode_recv_wqe.
// ---------------------------------------------------------------------------------------------

/// Every send opcode rrxe accepts.
const SEND_OPCODES: [WrOpcode; 12] = [
    WrOpcode::RdmaWrite,
    WrOpcode::RdmaWriteWithImm,
    WrOpcode::Send,
    WrOpcode::SendWithImm,
    WrOpcode::RdmaRead,
    WrOpcode::AtomicCmpAndSwp,
    WrOpcode::AtomicFetchAndAdd,
    WrOpcode::LocalInv,
    WrOpcode::BindMw,
    WrOpcode::SendWithInv,
    WrOpcode::Flush,
    WrOpcode::AtomicWrite,
];

/// The largest slot the fuzzer builds, the slot size of the largest send queue.
const MAX_SLOT: usize = 1024;

/// Offsets of the send WQE fields the parser reads, where mutations do the most damage.
const SEND_FIELDS: [usize; 16] = [
    OFF_WR_ID,
    OFF_OPCODE,
    OFF_SEND_FLAGS,
    OFF_EX,
    OFF_REMOTE_ADDR,
    OFF_REMOTE_ADDR + 4,
    OFF_RDMA_RKEY,
    OFF_UD_AH_NUM,
    OFF_ATOMIC_SWAP,
    OFF_ATOMIC_RKEY,
    OFF_IOVA,
    OFF_IOVA + 4,
    OFF_DMA_LENGTH,
    OFF_DMA_NUM_SGE,
    SEND_WQE_HDR_LEN + 8,
    SEND_WQE_HDR_LEN + SGE_LEN + 8,
];

/// Offsets of the receive WQE fields the parser reads.
const RECV_FIELDS: [usize; 6] = [
    OFF_WR_ID,
    OFF_RECV_DMA_LENGTH,
    OFF_RECV_DMA_NUM_SGE,
    RECV_WQE_HDR_LEN + 8,
    RECV_WQE_HDR_LEN + SGE_LEN + 8,
    RECV_WQE_HDR_LEN + 2 * SGE_LEN + 8,
];

/// Stores `bytes` at `off` of `slot`.
fn put(slot: &mut [u8], off: usize, bytes: &[u8]) {
    slot[off..off + bytes.len()].copy_from_slice(bytes);
}

/// Reads the little-endian `u32` at `off` of `slot`, if it is inside.
fn get32(slot: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(slot.get(off..off + 4)?.try_into().ok()?))
}

/// Decodes the SGE at byte `off` of `slot` independently of the code under test.
fn sge_at(slot: &[u8], off: usize) -> Sge {
    Sge {
        addr: u64::from_le_bytes(slot[off..off + 8].try_into().unwrap()),
        length: get32(slot, off + 8).unwrap(),
        lkey: get32(slot, off + 12).unwrap(),
    }
}

/// Writes `len` random SGEs at `base` of `slot` and returns the sum of their lengths.
fn put_sges(rng: &mut Rng, slot: &mut [u8], base: usize, num: usize, atomic: bool) -> u32 {
    let mut sum = 0u32;
    for i in 0..num {
        let length = match rng.below(4) {
            _ if atomic && i == 0 => 8,
            0 => 0,
            1 => rng.u32() & 0xffff,
            _ => rng.u32() & 0xff,
        };
        let off = base + i * SGE_LEN;
        put(slot, off, &rng.next_u64().to_le_bytes());
        put(slot, off + 8, &length.to_le_bytes());
        put(slot, off + 12, &rng.u32().to_le_bytes());
        sum += length;
    }
    sum
}

/// A send WQE the fuzzer knows to be valid, with the capabilities it is valid for.
struct SendCase {
    /// The slot contents.
    slot: Vec<u8>,
    /// The queue pair type.
    qp: QpType,
    /// The granted scatter/gather entry count.
    max_sge: u32,
    /// The granted inline data size.
    max_inline: u32,
    /// The opcode that was encoded.
    opcode: WrOpcode,
}

/// Builds a valid send WQE for a random opcode allowed on a random queue pair type, on top of
/// random garbage in every field the opcode does not use.
fn valid_send_wqe(rng: &mut Rng) -> SendCase {
    let qp = rng.pick(&[QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud]);
    let ops: Vec<WrOpcode> = SEND_OPCODES
        .into_iter()
        .filter(|&op| allowed(op, qp))
        .collect();
    let op = rng.pick(&ops);
    let mut max_sge = rng.upto(40) as u32;
    let max_inline = rng.upto(1024) as u32;
    let mut slot = rng.bytes(MAX_SLOT);
    put(&mut slot, OFF_OPCODE, &op.to_raw().to_le_bytes());

    let data = matches!(
        op,
        WrOpcode::Send
            | WrOpcode::SendWithImm
            | WrOpcode::SendWithInv
            | WrOpcode::RdmaWrite
            | WrOpcode::RdmaWriteWithImm
    );
    let atomic = matches!(op, WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd);
    let local = matches!(op, WrOpcode::LocalInv | WrOpcode::BindMw | WrOpcode::Flush);
    let inline = if data {
        max_inline > 0 && rng.bool()
    } else {
        // Local operations, flush and atomic write ignore the flag; reads and atomics reject it.
        (local || op == WrOpcode::AtomicWrite) && rng.bool()
    };
    let mut flags = rng.u32() & !SendFlags::INLINE;
    if inline {
        flags |= SendFlags::INLINE;
    }
    put(&mut slot, OFF_SEND_FLAGS, &flags.to_le_bytes());

    let remote = matches!(
        op,
        WrOpcode::RdmaWrite
            | WrOpcode::RdmaWriteWithImm
            | WrOpcode::RdmaRead
            | WrOpcode::AtomicWrite
            | WrOpcode::AtomicCmpAndSwp
            | WrOpcode::AtomicFetchAndAdd
            | WrOpcode::Flush
    );
    if remote {
        let mut addr = rng.next_u64();
        if atomic {
            addr &= !7;
        }
        put(&mut slot, OFF_REMOTE_ADDR, &addr.to_le_bytes());
        put(&mut slot, OFF_IOVA, &addr.to_le_bytes());
    }
    if matches!(qp, QpType::Ud | QpType::Gsi) {
        put(
            &mut slot,
            OFF_UD_REMOTE_QPN,
            &(rng.u32() & MAX_QPN).to_le_bytes(),
        );
        put(&mut slot, OFF_UD_AH_NUM, &rng.u32().max(1).to_le_bytes());
    }

    let (dma_length, used) = if local {
        (rng.u32(), 0)
    } else if op == WrOpcode::AtomicWrite {
        (8, 8)
    } else if inline {
        let len = rng.upto((max_inline as usize).min(MAX_SLOT - SEND_WQE_HDR_LEN));
        (len as u32, len)
    } else {
        if atomic {
            max_sge = max_sge.max(1);
        }
        let fit = (MAX_SLOT - SEND_WQE_HDR_LEN) / SGE_LEN;
        let limit = (max_sge as usize).min(fit).min(8);
        let num = if atomic {
            1 + rng.upto(limit - 1)
        } else {
            rng.upto(limit)
        };
        put(&mut slot, OFF_DMA_NUM_SGE, &(num as u32).to_le_bytes());
        let sum = put_sges(rng, &mut slot, SEND_WQE_HDR_LEN, num, atomic);
        (sum, num * SGE_LEN)
    };
    put(&mut slot, OFF_DMA_LENGTH, &dma_length.to_le_bytes());
    let len = SEND_WQE_HDR_LEN + used;
    slot.truncate(len + rng.upto((MAX_SLOT - len).min(64)));
    SendCase {
        slot,
        qp,
        max_sge,
        max_inline,
        opcode: op,
    }
}

/// Applies one to three random mutations to a WQE slot, aiming some at the parsed `fields`.
fn mutate_slot(rng: &mut Rng, slot: &mut Vec<u8>, fields: &[usize]) {
    for _ in 0..=rng.below(3) {
        let len = slot.len();
        match rng.below(7) {
            0 if len > 0 => {
                let at = rng.upto(len - 1);
                slot[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.upto(len - 1);
                slot[at] = rng.u8();
            }
            2 | 3 => {
                let at = rng.pick(fields);
                if at + 4 <= len {
                    put(slot, at, &rng.edgy_u32().to_le_bytes());
                }
            }
            4 => slot.truncate(rng.upto(len)),
            5 => {
                let extra = rng.upto(MAX_SLOT.saturating_sub(len).min(64));
                slot.extend(rng.bytes(extra));
            }
            _ => {
                let at = rng.pick(fields);
                if at + 8 <= len {
                    put(slot, at, &rng.next_u64().to_le_bytes());
                }
            }
        }
    }
}

/// Checks the invariants of a send WQE `w` accepted from `slot` for `qp`, `max_sge` and
/// `max_inline`, and that its accessors stay inside whatever slot they are given.
fn check_send(rng: &mut Rng, slot: &[u8], qp: QpType, max_sge: u32, max_inline: u32, w: &SendWqe) {
    assert!(allowed(w.opcode, qp));
    assert_eq!(Some(w.opcode.to_raw()), get32(slot, OFF_OPCODE));
    assert_eq!(Some(w.wr_id), peek_wr_id(slot));
    assert!(w.num_sge <= max_sge);
    let range = w.payload.byte_range();
    assert!(range.start <= range.end && range.end <= slot.len(), "{w:?}");
    match w.payload {
        Payload::Sges { start, count } => {
            assert_eq!((start, count), (SEND_WQE_HDR_LEN, w.num_sge));
            assert_eq!(range.len(), count as usize * SGE_LEN);
            let mut sum = 0u64;
            for i in 0..count {
                let off = start + i as usize * SGE_LEN;
                assert!(off + SGE_LEN <= slot.len());
                let sge = w.sge(slot, i).expect("every listed SGE is inside the slot");
                assert_eq!(sge, sge_at(slot, off));
                sum += u64::from(sge.length);
            }
            assert_eq!(sum, u64::from(w.length));
            assert!(w.length <= MAX_MSG_SIZE);
            assert_eq!(w.inline_data(slot), None);
        }
        Payload::Inline { start, len } => {
            assert_eq!(start, SEND_WQE_HDR_LEN);
            assert_eq!(w.num_sge, 0);
            // The atomic write operand is the 8 bytes after the fixed part whatever the flags
            // and limits say (documented on parse_send_wqe); all other inline data is limited.
            if w.opcode == WrOpcode::AtomicWrite {
                assert_eq!(len, 8);
            } else {
                assert!(len <= max_inline as usize);
                assert!(w.flags.contains(SendFlags::INLINE));
            }
            assert_eq!(w.inline_data(slot), Some(&slot[range]));
            assert_eq!(u64::from(w.length), len as u64);
        }
        Payload::None => {
            assert_eq!(w.num_sge, 0);
            assert!(matches!(
                w.opcode,
                WrOpcode::LocalInv | WrOpcode::BindMw | WrOpcode::Flush
            ));
        }
    }
    assert_eq!(w.sge(slot, w.num_sge), None);
    assert_eq!(w.sge(slot, u32::MAX), None);
    // The slot can change under a parsed WQE (user space shares it); the accessors must then
    // return None or data inside the slot they are given, never panic.
    let cut = &slot[..rng.upto(slot.len())];
    let i = if rng.bool() {
        rng.u32()
    } else {
        rng.below(u64::from(w.num_sge) + 2) as u32
    };
    if let Some(sge) = w.sge(cut, i) {
        assert!(i < w.num_sge);
        assert_eq!(sge, sge_at(cut, SEND_WQE_HDR_LEN + i as usize * SGE_LEN));
    }
    if let Some(data) = w.inline_data(cut) {
        assert_eq!(data, &cut[w.payload.byte_range()]);
    }
}

/// Checks the invariants of a receive WQE `r` accepted from `slot` for `max_sge`.
fn check_recv(rng: &mut Rng, slot: &[u8], max_sge: u32, r: &RecvWqe) {
    assert!(r.num_sge <= max_sge);
    assert_eq!(Some(r.wr_id), peek_wr_id(slot));
    assert_eq!(Some(r.num_sge), get32(slot, OFF_RECV_DMA_NUM_SGE));
    assert!(RECV_WQE_HDR_LEN + r.num_sge as usize * SGE_LEN <= slot.len());
    let mut sum = 0u64;
    for i in 0..r.num_sge {
        let sge = r.sge(slot, i).expect("every listed SGE is inside the slot");
        assert_eq!(sge, sge_at(slot, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
        sum += u64::from(sge.length);
    }
    assert_eq!(sum, u64::from(r.length));
    assert_eq!(r.sge(slot, r.num_sge), None);
    assert_eq!(r.sge(slot, u32::MAX), None);
    let cut = &slot[..rng.upto(slot.len())];
    let i = rng.below(u64::from(r.num_sge) + 2) as u32;
    if let Some(sge) = r.sge(cut, i) {
        assert_eq!(sge, sge_at(cut, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
    }
}

#[test]
fn send_wqe_parser_survives_random_slots() {
    let mut accepted = 0u32;
    fuzz(0x5e4d_0000, 20_000, |rng, _| {
        let len = rng.upto(MAX_SLOT);
        let mut slot = rng.bytes(len);
        // Random opcode words are almost never valid; steer the key fields into range at times.
        if slot.len() >= SEND_WQE_HDR_LEN && rng.chance(3, 4) {
            put(&mut slot, OFF_OPCODE, &(rng.below(17) as u32).to_le_bytes());
            put(&mut slot, OFF_SEND_FLAGS, &(rng.u32() & 0xf).to_le_bytes());
            put(
                &mut slot,
                OFF_DMA_NUM_SGE,
                &(rng.below(5) as u32).to_le_bytes(),
            );
            put(&mut slot, OFF_DMA_LENGTH, &(rng.u32() & 0x3f).to_le_bytes());
            if rng.bool() {
                let iova: [u8; 8] = slot[OFF_REMOTE_ADDR..OFF_REMOTE_ADDR + 8]
                    .try_into()
                    .unwrap();
                put(&mut slot, OFF_IOVA, &iova);
            }
            for i in 0..4 {
                let off = SEND_WQE_HDR_LEN + i * SGE_LEN + 8;
                if off + 4 <= slot.len() {
                    put(&mut slot, off, &(rng.u32() & 0xf).to_le_bytes());
                }
            }
        }
        let qp = rng.pick(&QpType::ALL);
        let max_sge = rng.upto(40) as u32;
        let max_inline = rng.upto(1024) as u32;
        if let Ok(w) = parse_send_wqe(&slot, qp, max_sge, max_inline) {
            accepted += 1;
            check_send(rng, &slot, qp, max_sge, max_inline, &w);
        }
    });
    assert!(accepted > 50, "only {accepted} random send WQEs accepted");
}

#[test]
fn send_wqe_parser_survives_mutated_valid_wqes() {
    let (mut accepted, mut rejected) = (0u32, 0u32);
    fuzz(0x5e4d_1111, 4_000, |rng, _| {
        let case = valid_send_wqe(rng);
        let w = parse_send_wqe(&case.slot, case.qp, case.max_sge, case.max_inline)
            .unwrap_or_else(|e| panic!("valid {:?} on {:?}: {e:?}", case.opcode, case.qp));
        assert_eq!(w.opcode, case.opcode);
        check_send(rng, &case.slot, case.qp, case.max_sge, case.max_inline, &w);
        for _ in 0..6 {
            let mut slot = case.slot.clone();
            mutate_slot(rng, &mut slot, &SEND_FIELDS);
            let (qp, max_sge, max_inline) = if rng.chance(1, 4) {
                (
                    rng.pick(&QpType::ALL),
                    rng.upto(40) as u32,
                    rng.upto(1024) as u32,
                )
            } else {
                (case.qp, case.max_sge, case.max_inline)
            };
            match parse_send_wqe(&slot, qp, max_sge, max_inline) {
                Ok(w) => {
                    accepted += 1;
                    check_send(rng, &slot, qp, max_sge, max_inline, &w);
                }
                Err(e) => {
                    rejected += 1;
                    // Every rejection maps to an error completion status.
                    let _ = e.wc_status();
                }
            }
        }
    });
    assert!(
        accepted > 1000 && rejected > 1000,
        "{accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn recv_wqe_parser_survives_random_and_mutated_slots() {
    let (mut accepted, mut encoded) = (0u32, 0u32);
    fuzz(0x4ec5_0000, 8_000, |rng, _| {
        let max_sge = rng.upto(40) as u32;
        // An encoding of random SGEs into a slot holding garbage: check encode's documented
        // failures, and that what it accepts parses back to the same entries.
        let len = rng.upto(MAX_SLOT);
        let mut slot = rng.bytes(len);
        let most = if rng.bool() { 6 } else { 60 };
        let num = rng.upto(most);
        let sges: Vec<Sge> = (0..num)
            .map(|_| Sge {
                addr: rng.next_u64(),
                length: if rng.chance(1, 8) {
                    rng.edgy_u32()
                } else {
                    rng.u32() & 0xfff
                },
                lkey: rng.u32(),
            })
            .collect();
        let wr_id = rng.next_u64();
        let total: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
        let expected = if num as u64 > u64::from(max_sge) {
            Err(WqeError::TooManySge)
        } else if RECV_WQE_HDR_LEN + num * SGE_LEN > slot.len() {
            Err(WqeError::Truncated)
        } else if total > u64::from(u32::MAX) {
            Err(WqeError::LengthOverflow)
        } else {
            Ok(())
        };
        assert_eq!(encode_recv_wqe(&mut slot, wr_id, &sges, max_sge), expected);
        if expected.is_ok() {
            encoded += 1;
            let r = parse_recv_wqe(&slot, max_sge);
            let want = RecvWqe {
                wr_id,
                length: total as u32,
                num_sge: num as u32,
            };
            assert_eq!(r, Ok(want));
            for (i, sge) in sges.iter().enumerate() {
                assert_eq!(want.sge(&slot, i as u32), Some(*sge));
            }
            check_recv(rng, &slot, max_sge, &want);
        }

        // Mutations of whatever the slot holds now, with the same or another limit.
        for _ in 0..2 {
            let mut mutated = slot.clone();
            mutate_slot(rng, &mut mutated, &RECV_FIELDS);
            let max_sge = if rng.chance(1, 4) {
                rng.upto(40) as u32
            } else {
                max_sge
            };
            if let Ok(r) = parse_recv_wqe(&mutated, max_sge) {
                accepted += 1;
                check_recv(rng, &mutated, max_sge, &r);
            }
        }
    });
    assert!(
        encoded > 1000 && accepted > 1000,
        "{encoded} encoded, {accepted} accepted"
    );
}

#[test]
fn wqe_accessors_survive_forged_values() {
    // The WQE types have public fields; even values no parser returns must not make the
    // accessors panic or reach outside the slot they are given.
    fuzz(0xacce_5500, 20_000, |rng, _| {
        let len = rng.len_upto(MAX_SLOT);
        let slot = rng.bytes(len);
        let start = match rng.below(3) {
            0 => rng.upto(MAX_SLOT + 64),
            1 => usize::MAX - rng.upto(64),
            _ => rng.next_u64() as usize,
        };
        let count = rng.edgy_u32();
        let payload = match rng.below(3) {
            0 => Payload::None,
            1 => Payload::Inline {
                start,
                len: if rng.bool() {
                    rng.upto(2048)
                } else {
                    rng.next_u64() as usize
                },
            },
            _ => Payload::Sges { start, count },
        };
        let range = payload.byte_range();
        assert!(range.start <= range.end);
        let w = SendWqe {
            wr_id: rng.next_u64(),
            opcode: rng.pick(&SEND_OPCODES),
            flags: SendFlags(rng.u32()),
            ex: rng.u32(),
            detail: WrDetail::None,
            iova: rng.next_u64(),
            length: rng.u32(),
            num_sge: count,
            payload,
        };
        let i = rng.edgy_u32();
        if let Some(sge) = w.sge(&slot, i) {
            let Payload::Sges { start, count } = payload else {
                panic!("an SGE from a non-SGE payload");
            };
            assert!(i < count);
            assert_eq!(sge, sge_at(&slot, start + i as usize * SGE_LEN));
        }
        if let Some(data) = w.inline_data(&slot) {
            assert_eq!(data, &slot[range]);
        }
        let r = RecvWqe {
            wr_id: rng.next_u64(),
            length: rng.u32(),
            num_sge: count,
        };
        if let Some(sge) = r.sge(&slot, i) {
            assert!(i < count);
            assert_eq!(sge, sge_at(&slot, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
        }
        let _ = peek_wr_id(&slot);
    });
}

// ---------------------------------------------------------------------------------------------
// Sequencing decisions: classify_ack, classify_request_psn and check_request_sequence.
// ---------------------------------------------------------------------------------------------

/// Returns a random PSN-sized window length, often at an edge.
fn random_window(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => rng.pick(&[
            0, 1, 2, 0x7f_ffff, 0x80_0000, 0x80_0001, 0xff_fffe, 0xff_ffff,
        ]),
        1 | 2 => rng.u32() & 0xff,
        _ => rng.u32(),
    }
}

/// Returns a word whose low 24 bits lie near the window `[oldest, oldest + window)`, with random
/// upper eight bits, which `Psn::new` must ignore.
fn psn_near(rng: &mut Rng, oldest: u32, window: u32) -> u32 {
    let delta = match rng.below(6) {
        0 => 0,
        1 => window.wrapping_sub(1),
        2 => window,
        3 => window.wrapping_add(1),
        4 => (rng.below(8) as u32).wrapping_sub(4),
        _ => rng.u32(),
    };
    (oldest.wrapping_add(delta) & U24_MAX) | (rng.u32() & !U24_MAX)
}

/// What `classify_ack` must decide, from its documentation and IBA 9.7.5.2: outside the
/// outstanding window (which is empty when nothing is outstanding) everything is ignored; inside
/// it, the top three syndrome bits select ACK (000), RNR NAK (001) or NAK (011), other values are
/// reserved, and the low five bits are the credit count, RNR timer code or NAK code.
fn expected_ack(syndrome: u8, psn: u32, oldest: u32, next: u32) -> AckDecision {
    let window = next.wrapping_sub(oldest) & U24_MAX;
    if psn.wrapping_sub(oldest) & U24_MAX >= window {
        return AckDecision::Ignore;
    }
    let value = syndrome & 0x1f;
    match syndrome >> 5 {
        0 => AckDecision::Ack {
            last_acked: Psn::new(psn),
        },
        1 => AckDecision::RnrNak {
            timer_us: rnr_timer_us(value).expect("5-bit codes have a delay"),
        },
        3 => match value {
            0 => AckDecision::NakSeqErr {
                expected: Psn::new(psn),
            },
            1 => AckDecision::NakInvalidRequest,
            2 => AckDecision::NakRemoteAccess,
            _ => AckDecision::NakRemoteOperation,
        },
        _ => AckDecision::Ignore,
    }
}

#[test]
fn classify_ack_only_acknowledges_outstanding_psns() {
    let mut acks = 0u32;
    fuzz(0xacc0_0000, 50_000, |rng, _| {
        let oldest = rng.u32();
        let next = oldest.wrapping_add(random_window(rng));
        let window = next.wrapping_sub(oldest) & U24_MAX;
        let psn = psn_near(rng, oldest, window);
        let aeth = Aeth {
            syndrome: rng.u8(),
            msn: rng.u32(),
        };
        let got = classify_ack(aeth, Psn::new(psn), Psn::new(oldest), Psn::new(next));
        assert_eq!(
            got,
            expected_ack(aeth.syndrome, psn, oldest, next),
            "{aeth:?} psn {psn:#x} window [{oldest:#x}, {next:#x})"
        );
        if let AckDecision::Ack { last_acked } = got {
            acks += 1;
            // The acknowledged PSN is one of the outstanding [oldest, next).
            let offset = last_acked.value().wrapping_sub(oldest) & U24_MAX;
            assert!(offset < window);
            assert_eq!(last_acked, Psn::new(psn));
        }
        let _ = got.wc_status();
    });
    assert!(acks > 1000);
}

#[test]
fn classify_request_psn_splits_the_psn_space() {
    fuzz(0x95e0_0000, 50_000, |rng, _| {
        let epsn = rng.u32();
        let window = random_window(rng);
        let psn = psn_near(rng, epsn, window);
        let got = classify_request_psn(Psn::new(psn), Psn::new(epsn));
        let d = psn.wrapping_sub(epsn) & U24_MAX;
        let expected = match d {
            0 => RespPsn::Expected,
            1..0x80_0000 => RespPsn::OutOfSequence,
            _ => RespPsn::Duplicate,
        };
        assert_eq!(got, expected, "psn {psn:#x} epsn {epsn:#x}");
        assert_eq!(
            got.nak_syndrome().is_some(),
            expected == RespPsn::OutOfSequence
        );
    });
}

/// What `check_request_sequence` must return, from a model over raw opcode bytes: RC (0x00-0x1f)
/// and UC (0x20-0x3f) SEND and RDMA WRITE messages are open after a FIRST (0x00, 0x06) or MIDDLE
/// (0x01, 0x07) packet, and only a MIDDLE or LAST of the same service and operation (SEND 0x01,
/// 0x02, 0x03 and on RC 0x16; WRITE 0x07, 0x08, 0x09) may follow one.
fn expected_sequence(prev: Option<Opcode>, next: Opcode) -> Result<(), SeqError> {
    let request =
        (next.0 < 0x40 && !matches!(next.0, 0x0d..=0x12)) || matches!(next.0, 0x64 | 0x65);
    if next.info().is_none() || !request {
        return Err(SeqError::NotRequest);
    }
    // (service, operation) of a packet that opens or continues a message: 0 SEND, 1 WRITE.
    let open = prev
        .filter(|p| p.info().is_some() && p.0 < 0x40)
        .and_then(|p| match p.0 & 0x1f {
            0x00 | 0x01 => Some((p.0 >> 5, 0)),
            0x06 | 0x07 => Some((p.0 >> 5, 1)),
            _ => None,
        });
    let continues = if next.0 < 0x40 {
        match next.0 & 0x1f {
            0x01..=0x03 | 0x16 => Some((next.0 >> 5, 0)),
            0x07..=0x09 => Some((next.0 >> 5, 1)),
            _ => None,
        }
    } else {
        None
    };
    match (open, continues) {
        (Some(o), Some(c)) if o == c => Ok(()),
        (Some(_), _) => Err(SeqError::MissingLast),
        (None, Some(_)) => Err(SeqError::MissingFirst),
        (None, None) => Ok(()),
    }
}

#[test]
fn check_request_sequence_matches_the_message_model() {
    let implemented = implemented_opcodes();
    fuzz(0x5e90_0000, 50_000, |rng, _| {
        let prev = if rng.chance(1, 8) {
            None
        } else {
            Some(random_opcode(rng, &implemented))
        };
        let next = random_opcode(rng, &implemented);
        let got = check_request_sequence(prev, next);
        assert_eq!(got, expected_sequence(prev, next), "{prev:?} then {next:?}");
        if got.is_ok() {
            assert!(next.info().is_some_and(|i| i.is_request));
        }
        if let Err(e) = got {
            let _ = (e.nak_syndrome(), e.wc_status());
        }
        assert_eq!(
            duplicate_action(next).is_some(),
            next.info().is_some_and(|i| i.is_request)
        );
    });
}

#[test]
fn message_splitting_helpers_stay_consistent() {
    fuzz(0x5b11_7000, 50_000, |rng, _| {
        let len = rng.edgy_u32();
        let mtu = if rng.bool() {
            rng.pick(&[0, 256, 512, 1024, 2048, 4096])
        } else {
            rng.edgy_u32()
        };
        let expected = (mtu != 0).then(|| u64::from(len).div_ceil(u64::from(mtu)).max(1));
        assert_eq!(packets_for(len, mtu).map(u64::from), expected);

        let count = if rng.bool() {
            rng.u32() & 7
        } else {
            rng.edgy_u32()
        };
        let index = match rng.below(3) {
            0 => count.wrapping_sub(1),
            1 => rng.u32() & 7,
            _ => rng.edgy_u32(),
        };
        let pos = position(index, count);
        let expected = if index >= count {
            None
        } else if count == 1 {
            Some(Position::Only)
        } else if index == 0 {
            Some(Position::First)
        } else if index == count - 1 {
            Some(Position::Last)
        } else {
            Some(Position::Middle)
        };
        assert_eq!(pos, expected, "index {index} of {count}");

        let rsp = read_response_opcode(index, count);
        assert_eq!(rsp.is_some(), index < count);
        if let Some(op) = rsp {
            let info = op.info().expect("read responses are implemented");
            assert_eq!(
                (info.kind, Some(info.position)),
                (OpKind::ReadResponse, pos)
            );
        }

        let qp = rng.pick(&QpType::ALL);
        let wr = rng.pick(&SEND_OPCODES);
        let at = rng.pick(&[
            Position::First,
            Position::Middle,
            Position::Last,
            Position::Only,
        ]);
        if let Some(op) = request_opcode(qp, wr, at) {
            let info = op.info().expect("request opcodes are implemented");
            assert!(info.is_request);
            assert_eq!(info.position, at);
            let service = match qp {
                QpType::Rc => Service::Rc,
                QpType::Uc => Service::Uc,
                QpType::Ud | QpType::Gsi => Service::Ud,
                QpType::Smi => panic!("SMI sends nothing"),
            };
            assert_eq!(info.service, service);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Rings: index arithmetic on hostile indices, geometry and capabilities.
// ---------------------------------------------------------------------------------------------

/// Returns a random ring index mask: mostly a real one (a power of two minus one), at times any
/// word, for the functions whose bounds hold "whatever the inputs".
fn random_mask(rng: &mut Rng) -> (u32, bool) {
    if rng.chance(3, 4) {
        let bits = if rng.bool() {
            rng.below(12) as u32
        } else {
            rng.below(33) as u32
        };
        (u32::MAX.checked_shr(32 - bits).unwrap_or(0), true)
    } else {
        (rng.edgy_u32(), false)
    }
}

/// Returns a random index near `base` or anywhere.
fn index_near(rng: &mut Rng, base: u32, mask: u32) -> u32 {
    match rng.below(4) {
        0 => base.wrapping_add(rng.u32() & mask),
        1 => base.wrapping_add(rng.below(4) as u32).wrapping_sub(2),
        2 => rng.edgy_u32(),
        _ => rng.u32(),
    }
}

#[test]
fn ring_index_arithmetic_stays_within_the_mask() {
    fuzz(0x4149_0000, 100_000, |rng, _| {
        let (mask, real) = random_mask(rng);
        let own = rng.u32();
        let user = index_near(rng, own, mask);
        let n = rng.edgy_u32();

        let c = ring::count(user, own, mask);
        assert!(c <= mask);
        assert_eq!(c, user.wrapping_sub(own) & mask);
        assert_eq!(ring::is_empty(user, own, mask), c == 0);
        assert_eq!(ring::sanitize(user, mask), user & mask);
        assert!(ring::next(own, mask) <= mask);
        assert!(ring::advance(own, n, mask) <= mask);

        // Kernel consumer, hostile producer.
        let avail = ring::available(user, own, mask);
        assert!(avail <= mask);
        match ring::checked_consume(user, own, mask) {
            Some(slot) => {
                assert!(avail > 0);
                assert!(slot <= mask);
                assert_eq!(slot, own & mask);
            }
            None => assert_eq!(avail, 0),
        }
        // Kernel producer, hostile consumer.
        let free = ring::free_space(own, user, mask);
        assert!(free <= mask);
        match ring::checked_produce(own, user, mask) {
            Some(slot) => {
                assert!(free > 0);
                assert!(slot <= mask);
                assert_eq!(slot, own & mask);
            }
            None => assert_eq!(free, 0),
        }
        let full = ring::is_full(own, user, mask);
        if real {
            // With a real mask, masking an index first changes no count, entries and free
            // slots always add up to the capacity, and full means no free slot.
            assert_eq!(avail, c);
            assert_eq!(ring::count(own, user, mask) + free, mask);
            assert_eq!(full, free == 0);
            assert_eq!(ring::advance(own, n, mask), own.wrapping_add(n) & mask);
            assert_eq!(ring::next(own, mask), ring::advance(own, 1, mask));
        }
        let capacity = rng.edgy_u32();
        assert_eq!(ring::resize_fits(capacity, c), c <= capacity);
    });
}

/// What `RingGeometry::new_allow_empty` must produce (slot count and slot size), computed in
/// wide arithmetic from its documentation.
fn expected_geometry(num: u32, elem: u32, max: u32) -> Result<(u64, u64), RingError> {
    if num > max {
        return Err(RingError::TooManyElements);
    }
    let slots = (u64::from(num) + 1).next_power_of_two();
    let size = u64::from(elem.max(64)).next_power_of_two();
    if slots > 1 << 31 || size > 1 << 31 || slots * size + 384 > ring::MAX_BUF_SIZE {
        return Err(RingError::TooLarge);
    }
    Ok((slots, size))
}

#[test]
fn ring_geometry_keeps_every_slot_inside_the_buffer() {
    let mut built = 0u32;
    fuzz(0x6e0e_0000, 30_000, |rng, _| {
        let num = if rng.bool() {
            rng.u32() & 0xffff
        } else {
            rng.edgy_u32()
        };
        let elem = match rng.below(3) {
            0 => rng.pick(&[0, 1, 48, 64, 65, 208, 720, 1024, 4096]),
            1 => rng.u32() & 0xffff,
            _ => rng.edgy_u32(),
        };
        let max = if rng.bool() { 1 << 20 } else { rng.edgy_u32() };
        let empty_ok = rng.bool();
        let got = if empty_ok {
            RingGeometry::new_allow_empty(num, elem, max)
        } else {
            RingGeometry::new(num, elem, max)
        };
        let expected = if num == 0 && !empty_ok {
            Err(RingError::Empty)
        } else {
            expected_geometry(num, elem, max)
        };
        assert_eq!(
            got.map(|g| (u64::from(g.slots()), g.elem_size() as u64)),
            expected,
            "{num} x {elem}, max {max}"
        );
        let Ok(g) = got else { return };
        built += 1;
        assert!(g.slots().is_power_of_two());
        assert_eq!(g.index_mask(), g.slots() - 1);
        assert_eq!(g.capacity(), g.slots() - 1);
        assert!(g.capacity() >= num);
        assert!(g.elem_size().is_power_of_two() && g.elem_size() >= 64);
        assert!(g.elem_size() >= elem as usize);
        assert_eq!(1usize << g.log2_elem_size(), g.elem_size());
        assert_eq!(
            g.buf_size(),
            ring::HDR_LEN + g.slots() as usize * g.elem_size()
        );
        assert!(g.buf_size() as u64 <= ring::MAX_BUF_SIZE);
        for _ in 0..4 {
            let index = rng.edgy_u32();
            let off = g.slot_offset(index);
            assert!(off >= ring::HDR_LEN);
            assert_eq!((off - ring::HDR_LEN) % g.elem_size(), 0);
            assert!(off + g.elem_size() <= g.buf_size(), "slot {index:#x}");
            assert_eq!(off, g.slot_offset(ring::sanitize(index, g.index_mask())));
        }
    });
    assert!(built > 1000);
}

#[test]
fn ring_capabilities_stay_within_the_device_limits() {
    fuzz(0xca95_0000, 30_000, |rng, _| {
        let sge = if rng.bool() {
            rng.u32() & 63
        } else {
            rng.edgy_u32()
        };
        let inline = if rng.bool() {
            rng.u32() & 1023
        } else {
            rng.edgy_u32()
        };
        let sges = u64::from(sge) * 16;
        let send = 208 + sges.max(u64::from(inline));
        assert_eq!(
            ring::send_wqe_size(sge, inline).map(u64::from),
            u32::try_from(send).ok().map(u64::from)
        );
        assert_eq!(
            ring::recv_wqe_size(sge).map(u64::from),
            u32::try_from(40 + sges).ok().map(u64::from)
        );
        match ring::round_send_caps(sge, inline) {
            Ok(caps) => {
                assert!(sge <= ring::MAX_WQE_SGE && inline <= ring::MAX_INLINE_DATA);
                assert!(caps.max_sge >= sge && caps.max_sge <= ring::MAX_WQE_SGE);
                assert!(caps.max_inline >= inline && caps.max_inline <= ring::MAX_INLINE_DATA);
                assert_eq!(caps.max_sge, caps.max_inline / 16);
                assert_eq!(caps.max_inline, (sge * 16).max(inline));
                assert_eq!(caps.wqe_size, 208 + caps.max_inline);
                assert!(caps.wqe_size <= ring::MAX_SEND_WQE_SIZE);
            }
            Err(RingError::TooManySge) => assert!(sge > ring::MAX_WQE_SGE),
            Err(RingError::InlineTooLarge) => {
                assert!(sge <= ring::MAX_WQE_SGE && inline > ring::MAX_INLINE_DATA);
            }
            Err(e) => panic!("unexpected {e:?}"),
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Other user-controlled input: Modify QP attributes and completion slots.
// ---------------------------------------------------------------------------------------------

#[test]
fn modify_qp_attributes_from_user_space() {
    fuzz(0x3d1f_0000, 30_000, |rng, _| {
        let actual = rng.pick(&QpState::ALL);
        let ty = rng.pick(&QpType::ALL);
        let bits = match rng.below(3) {
            0 => rng.u32() & ((1 << 21) - 1),
            1 => rng.u32() & rng.u32() & rng.u32() & ((1 << 26) - 1),
            _ => rng.edgy_u32(),
        };
        let mask = AttrMask::from_bits(bits);
        let raw = |rng: &mut Rng| {
            if rng.chance(3, 4) {
                rng.below(8) as u32
            } else {
                rng.edgy_u32()
            }
        };
        let (raw_cur, raw_next) = (raw(rng), raw(rng));
        match resolve_states(actual, mask, raw_cur, raw_next) {
            Ok((cur, next)) => {
                assert_eq!(cur, actual);
                if mask.contains(AttrMask::CUR_STATE) {
                    assert_eq!(raw_cur, actual.to_raw());
                }
                if mask.contains(AttrMask::STATE) {
                    assert_eq!(next.to_raw(), raw_next);
                } else {
                    assert_eq!(next, actual);
                }
                if check_transition(cur, next, ty, mask).is_ok() {
                    assert!(is_valid_transition(cur, next));
                    let req = required(cur, next, ty);
                    let allowed = AttrMask::all_of(&[
                        req,
                        optional(cur, next, ty),
                        AttrMask::STATE,
                        AttrMask::RATE_LIMIT,
                    ]);
                    assert!(mask.contains(req));
                    assert!(mask.difference(allowed).is_empty());
                    if mask.contains(AttrMask::CUR_STATE) {
                        assert!(matches!(
                            cur,
                            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
                        ));
                    }
                }
                let _ = check_sq_drain(cur, next, mask, rng.bool());
            }
            Err(QpStateError::UnknownState(v)) => {
                assert!(v == raw_cur || v == raw_next);
                assert_eq!(QpState::from_raw(v), None);
            }
            Err(QpStateError::CurStateMismatch { claimed, actual: a }) => {
                assert_eq!(a, actual);
                assert_ne!(claimed, actual);
                assert_eq!(claimed.to_raw(), raw_cur);
            }
            Err(e) => panic!("resolve_states returned {e:?}"),
        }

        let v = rng.u8();
        assert_eq!(check_timeout(v).is_ok(), v <= 31);
        assert_eq!(check_retry_cnt(v).is_ok(), v <= 7);
        assert_eq!(check_rnr_retry(v).is_ok(), v <= 7);
        assert_eq!(check_min_rnr_timer(v).is_ok(), v <= 31);
        assert_eq!(rnr_timer_us(v).is_some(), v <= 31);
        let expected = match v {
            0 => Ok(None),
            1..=31 => Ok(Some(4096u64 << v)),
            _ => Err(()),
        };
        assert_eq!(local_ack_timeout_ns(v).map_err(|_| ()), expected);

        let (req, port) = (raw(rng), raw(rng));
        match check_path_mtu(req, port) {
            Ok(mtu) => {
                assert_eq!(mtu.to_raw(), req);
                assert!((1..=5).contains(&port) && req <= port);
                assert_eq!(mtu.bytes(), 128 << req);
            }
            Err(_) => assert!(!(1..=5).contains(&req) || !(1..=5).contains(&port) || req > port),
        }

        let (want, limit) = (rng.edgy_u32(), rng.edgy_u32());
        match rd_atomic_depth(want, limit) {
            Ok(0) => assert_eq!(want, 0),
            Ok(depth) => {
                assert!(depth.is_power_of_two() && depth >= want && depth <= limit);
                assert!(u64::from(depth) < 2 * u64::from(want));
            }
            Err(_) => {
                let depth = u64::from(want).next_power_of_two();
                assert!(want != 0 && depth > u64::from(limit));
            }
        }
    });
}

#[test]
fn completion_slots_decode_and_encode_losslessly() {
    fuzz(0xc0e0_0000, 5_000, |rng, _| {
        let mut raw = [0u8; CQE_LEN];
        rng.fill(&mut raw);
        let cqe = Cqe::from_uverbs(&raw);
        let mut expected = raw;
        // The last byte is reserved: ignored when decoding and written as zero.
        expected[CQE_LEN - 1] = 0;
        assert_eq!(cqe.to_uverbs(), expected);
        assert_eq!(Cqe::from_uverbs(&expected), cqe);
    });
}
