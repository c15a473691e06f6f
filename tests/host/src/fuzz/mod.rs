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

use crate::proto::abi;
use crate::proto::abi::CQE_LEN;
use crate::proto::abi::MAX_MSG_SIZE;
use crate::proto::abi::MAX_QPN;
use crate::proto::abi::OFF_ATOMIC_RKEY;
use crate::proto::abi::OFF_ATOMIC_SWAP;
use crate::proto::abi::OFF_DMA_LENGTH;
use crate::proto::abi::OFF_DMA_NUM_SGE;
use crate::proto::abi::OFF_EX;
use crate::proto::abi::OFF_FLUSH_TYPE;
use crate::proto::abi::OFF_IOVA;
use crate::proto::abi::OFF_OPCODE;
use crate::proto::abi::OFF_RDMA_RKEY;
use crate::proto::abi::OFF_RECV_DMA_LENGTH;
use crate::proto::abi::OFF_RECV_DMA_NUM_SGE;
use crate::proto::abi::OFF_REMOTE_ADDR;
use crate::proto::abi::OFF_SEND_FLAGS;
use crate::proto::abi::OFF_UD_AH_NUM;
use crate::proto::abi::OFF_UD_REMOTE_QPN;
use crate::proto::abi::OFF_WR_ID;
use crate::proto::abi::RECV_WQE_HDR_LEN;
use crate::proto::abi::SEND_WQE_HDR_LEN;
use crate::proto::abi::SGE_LEN;
use crate::proto::attr_mask::AttrMask;
use crate::proto::cqe::Cqe;
use crate::proto::cqe::WcOpcode;
use crate::proto::cqe::WcStatus;
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
use crate::proto::qp_attr::check_min_rnr_timer;
use crate::proto::qp_attr::check_path_mtu;
use crate::proto::qp_attr::check_retry_cnt;
use crate::proto::qp_attr::check_rnr_retry;
use crate::proto::qp_attr::check_timeout;
use crate::proto::qp_attr::local_ack_timeout_ns;
use crate::proto::qp_attr::rd_atomic_depth;
use crate::proto::qp_attr::rnr_timer_us;
use crate::proto::qp_state::check_sq_drain;
use crate::proto::qp_state::check_transition;
use crate::proto::qp_state::is_valid_transition;
use crate::proto::qp_state::optional;
use crate::proto::qp_state::required;
use crate::proto::qp_state::resolve_states;
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
use crate::proto::window::AnswerPsn;
use crate::proto::window::Outstanding;
use crate::proto::window::SendWindow;
use crate::proto::wqe::allowed;
use crate::proto::wqe::Payload;
use crate::proto::wqe::RecvWqe;
use crate::proto::wqe::SendFlags;
use crate::proto::wqe::SendWqe;
use crate::proto::wqe::Sge;
use crate::proto::wqe::WqeError;
use crate::proto::wqe::WrDetail;
use crate::proto::wqe::WrOpcode;
use crate::proto::wqe_encode::encode_recv_wqe;
use crate::proto::wqe_parse::parse_recv_wqe;
use crate::proto::wqe_parse::parse_send_wqe;
use crate::proto::wqe_parse::peek_wr_id;
use crate::proto::wqe_parse::send_wqe_extent;
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

mod icrc;
mod other;
mod packet;
mod recv_wqe;
mod rings;
mod seq;
mod wqe;
mod write;
