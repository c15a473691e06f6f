// SPDX-License-Identifier: GPL-2.0

//! Tests of the shared-ring geometry and index arithmetic in `proto::ring`.

use crate::proto::abi::CQE_LEN;
use crate::proto::abi::HDR_CONSUMER;
use crate::proto::abi::HDR_INDEX_MASK;
use crate::proto::abi::HDR_LEN;
use crate::proto::abi::HDR_LOG2_ELEM_SIZE;
use crate::proto::abi::HDR_PRODUCER;
use crate::proto::abi::MAX_INLINE_DATA;
use crate::proto::abi::MAX_SEND_WQE_SIZE;
use crate::proto::abi::MAX_WQE_SGE;
use crate::proto::ring::advance;
use crate::proto::ring::available;
use crate::proto::ring::checked_consume;
use crate::proto::ring::checked_produce;
use crate::proto::ring::count;
use crate::proto::ring::free_space;
use crate::proto::ring::is_empty;
use crate::proto::ring::is_full;
use crate::proto::ring::next;
use crate::proto::ring::recv_wqe_size;
use crate::proto::ring::resize_fits;
use crate::proto::ring::round_send_caps;
use crate::proto::ring::sanitize;
use crate::proto::ring::send_wqe_size;
use crate::proto::ring::RingError;
use crate::proto::ring::RingGeometry;
use crate::proto::ring::SendCaps;
use crate::proto::ring::MAX_BUF_SIZE;

/// The rxe limit on work requests per queue (`RXE_MAX_QP_WR`).
const MAX_QP_WR: u32 = 1 << 20;

/// A small xorshift generator, so that the "random" hostile indices are reproducible.
struct XorShift(u32);

impl XorShift {
    /// Returns the next pseudo-random word.
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// Returns `n` as `usize` for comparisons with byte sizes.
fn us(n: u32) -> usize {
    usize::try_from(n).unwrap()
}

#[test]
fn header_layout_matches_the_rxe_uabi() {
    assert_eq!(HDR_LOG2_ELEM_SIZE, 0);
    assert_eq!(HDR_INDEX_MASK, 4);
    assert_eq!(HDR_PRODUCER, 128);
    assert_eq!(HDR_CONSUMER, 256);
    assert_eq!(HDR_LEN, 384);
}

#[test]
fn one_element_needs_two_slots() {
    let g = RingGeometry::new(1, 64, MAX_QP_WR).unwrap();
    assert_eq!(g.slots(), 2);
    assert_eq!(g.index_mask(), 1);
    assert_eq!(g.capacity(), 1);
}

#[test]
fn slot_count_rounds_num_elem_plus_one_up() {
    for k in 1..=20 {
        let pow = 1u32 << k;
        // 2^k - 1 entries fit exactly in 2^k slots.
        let g = RingGeometry::new(pow - 1, 64, MAX_QP_WR).unwrap();
        assert_eq!(g.slots(), pow, "k = {k}");
        assert_eq!(g.capacity(), pow - 1);
        // 2^k entries need 2^(k+1) slots.
        let g = RingGeometry::new(pow, 64, MAX_QP_WR).unwrap();
        assert_eq!(g.slots(), pow << 1, "k = {k}");
        assert_eq!(g.capacity(), (pow << 1) - 1);
        assert!(g.capacity() >= pow);
    }
    let g = RingGeometry::new(100, 64, MAX_QP_WR).unwrap();
    assert_eq!(g.capacity(), 127);
}

#[test]
fn element_count_limits() {
    assert_eq!(RingGeometry::new(0, 64, 16), Err(RingError::Empty));
    assert!(RingGeometry::new(16, 64, 16).is_ok());
    assert_eq!(
        RingGeometry::new(17, 64, 16),
        Err(RingError::TooManyElements)
    );
    assert_eq!(
        RingGeometry::new_allow_empty(17, 64, 16),
        Err(RingError::TooManyElements)
    );
    // The largest queue rxe allows, with the largest send WQE, still fits.
    let g = RingGeometry::new(MAX_QP_WR, MAX_SEND_WQE_SIZE, MAX_QP_WR).unwrap();
    assert_eq!(g.slots(), 1 << 21);
    assert_eq!(g.elem_size(), 1024);
    assert_eq!(g.buf_size(), HDR_LEN + (1 << 31));
}

#[test]
fn an_empty_work_queue_has_one_slot() {
    let g = RingGeometry::new_allow_empty(0, 64, 16).unwrap();
    assert_eq!(g.slots(), 1);
    assert_eq!(g.index_mask(), 0);
    assert_eq!(g.capacity(), 0);
    assert_eq!(g.buf_size(), HDR_LEN + 64);
    // A capacity-zero ring is always empty for the consumer and full for the producer.
    assert!(is_empty(5, 9, 0));
    assert!(is_full(5, 9, 0));
    assert_eq!(checked_consume(u32::MAX, 0, 0), None);
    assert_eq!(checked_produce(0, u32::MAX, 0), None);
    assert_eq!(g.slot_offset(u32::MAX), HDR_LEN);
}

#[test]
fn element_size_rounds_to_a_cache_line_power_of_two() {
    let cases = [
        (0, 64),
        (1, 64),
        (CQE_LEN as u32, 64),
        (63, 64),
        (64, 64),
        (65, 128),
        (128, 128),
        (129, 256),
        (224, 256),
        (552, 1024),
        (MAX_SEND_WQE_SIZE, 1024),
        (1025, 2048),
    ];
    for (elem, rounded) in cases {
        let g = RingGeometry::new(1, elem, 16).unwrap();
        assert_eq!(g.elem_size(), rounded, "elem {elem}");
        assert_eq!(1usize << g.log2_elem_size(), rounded);
    }
}

#[test]
fn buf_size_is_header_plus_slots() {
    for (num, elem) in [(1, 64), (3, 100), (255, 48), (1000, 300), (4096, 720)] {
        let g = RingGeometry::new(num, elem, MAX_QP_WR).unwrap();
        assert_eq!(g.buf_size(), 384 + us(g.slots()) * g.elem_size());
        assert_eq!(g.slot_offset(0), HDR_LEN);
        assert_eq!(
            g.slot_offset(g.index_mask()) + g.elem_size(),
            g.buf_size(),
            "the last slot ends the buffer"
        );
    }
}

#[test]
fn overflow_is_rejected() {
    // num_elem + 1 overflows.
    assert_eq!(
        RingGeometry::new(u32::MAX, 64, u32::MAX),
        Err(RingError::TooLarge)
    );
    // The slot count 2^32 does not fit a u32.
    assert_eq!(
        RingGeometry::new(1 << 31, 64, u32::MAX),
        Err(RingError::TooLarge)
    );
    // The element size cannot be rounded up to a power of two.
    assert_eq!(RingGeometry::new(1, u32::MAX, 16), Err(RingError::TooLarge));
    assert_eq!(
        RingGeometry::new(1, (1 << 31) + 1, 16),
        Err(RingError::TooLarge)
    );
    // Slot count times element size overflows a u32 and exceeds the mmap size limit.
    assert_eq!(RingGeometry::new(1, 1 << 31, 16), Err(RingError::TooLarge));
    assert_eq!(
        RingGeometry::new(1 << 21, 1024, u32::MAX),
        Err(RingError::TooLarge)
    );
    // 2^25 slots of 64 bytes is 2 GiB, which fits; 2^26 slots is 4 GiB plus the header, which
    // does not.
    let g = RingGeometry::new((1 << 25) - 1, 64, u32::MAX).unwrap();
    assert_eq!(g.buf_size(), HDR_LEN + (1 << 31));
    assert_eq!(
        RingGeometry::new((1 << 26) - 1, 64, u32::MAX),
        Err(RingError::TooLarge)
    );
    // The largest accepted geometries never exceed the limit.
    for log2 in 6..31 {
        for log2_slots in 0..32 - log2 {
            let num = (1u32 << log2_slots) - 1;
            match RingGeometry::new_allow_empty(num, 1 << log2, u32::MAX) {
                Ok(g) => assert!(u64::try_from(g.buf_size()).unwrap() <= MAX_BUF_SIZE),
                Err(e) => assert_eq!(e, RingError::TooLarge),
            }
        }
    }
}

#[test]
fn index_math_wraps() {
    let mask = 7;
    assert_eq!(next(6, mask), 7);
    assert_eq!(next(7, mask), 0);
    assert_eq!(advance(6, 5, mask), 3);
    assert_eq!(advance(0, 8, mask), 0);
    assert_eq!(advance(3, u32::MAX, mask), 2);
    assert_eq!(count(1, 6, mask), 3);
    assert_eq!(count(6, 1, mask), 5);
    assert_eq!(count(4, 4, mask), 0);
    assert!(is_empty(4, 4, mask));
    assert!(!is_empty(5, 4, mask));
    assert!(is_full(5, 6, mask));
    assert!(is_full(7, 0, mask));
    assert!(!is_full(7, 1, mask));
    assert!(!is_full(0, 0, mask));
    assert_eq!(free_space(5, 6, mask), 0);
    assert_eq!(free_space(0, 0, mask), 7);
    assert_eq!(available(1, 6, mask), 3);
}

#[test]
fn a_full_cycle_across_the_wrap_matches_a_model() {
    let g = RingGeometry::new(7, 64, 16).unwrap();
    let mask = g.index_mask();
    let (mut prod, mut cons, mut used) = (0u32, 0u32, 0u32);
    let mut rng = XorShift(0x1234_5678);
    for _ in 0..10_000 {
        if rng.next() % 2 == 0 {
            match checked_produce(prod, cons, mask) {
                Some(slot) => {
                    assert!(used < g.capacity());
                    assert_eq!(slot, prod);
                    prod = next(slot, mask);
                    used += 1;
                }
                None => assert_eq!(used, g.capacity()),
            }
        } else {
            match checked_consume(prod, cons, mask) {
                Some(slot) => {
                    assert!(used > 0);
                    assert_eq!(slot, cons);
                    cons = next(slot, mask);
                    used -= 1;
                }
                None => assert_eq!(used, 0),
            }
        }
        assert_eq!(count(prod, cons, mask), used);
        assert_eq!(available(prod, cons, mask), used);
        assert_eq!(free_space(prod, cons, mask), g.capacity() - used);
        assert_eq!(is_empty(prod, cons, mask), used == 0);
        assert_eq!(is_full(prod, cons, mask), used == g.capacity());
    }
}

/// Checks every property a hostile user-space index must not be able to break.
fn check_hostile(g: &RingGeometry, hostile: u32, own: u32) {
    let mask = g.index_mask();
    let own = own & mask;
    let off = g.slot_offset(hostile);
    assert!(off >= HDR_LEN, "slot {hostile:#x} in the header");
    assert!(
        off + g.elem_size() <= g.buf_size(),
        "slot {hostile:#x} past the end"
    );
    assert_eq!(
        (off - HDR_LEN) % g.elem_size(),
        0,
        "slot {hostile:#x} misaligned"
    );
    assert!(sanitize(hostile, mask) <= mask);
    assert!(available(hostile, own, mask) <= g.capacity());
    assert!(free_space(own, hostile, mask) <= g.capacity());
    if let Some(slot) = checked_consume(hostile, own, mask) {
        assert_eq!(slot, own);
    }
    if let Some(slot) = checked_produce(own, hostile, mask) {
        assert_eq!(slot, own);
    }
}

#[test]
fn hostile_indices_stay_inside_the_ring() {
    let mut rng = XorShift(0xdead_beef);
    for (num, elem) in [(1, 48), (7, 64), (100, 224), (1000, 720), (MAX_QP_WR, 48)] {
        let g = RingGeometry::new(num, elem, MAX_QP_WR).unwrap();
        let mask = g.index_mask();
        let edge = [
            0,
            1,
            mask,
            mask + 1,
            mask + 2,
            mask << 1,
            u32::MAX,
            u32::MAX - 1,
            1 << 31,
            0x8000_0001,
        ];
        for &hostile in &edge {
            for &own in &edge {
                check_hostile(&g, hostile, own);
            }
        }
        for _ in 0..10_000 {
            check_hostile(&g, rng.next(), rng.next());
        }
        assert_eq!(g.slot_offset(mask + 1), g.slot_offset(0));
        assert_eq!(g.slot_offset(u32::MAX), g.slot_offset(mask));
    }
}

#[test]
fn resize_below_the_fill_level_fails() {
    assert!(resize_fits(15, 15));
    assert!(resize_fits(15, 0));
    assert!(resize_fits(31, 15));
    assert!(!resize_fits(7, 8));
    assert!(!resize_fits(0, 1));
}

#[test]
fn wqe_sizes() {
    assert_eq!(send_wqe_size(0, 0), Some(208));
    assert_eq!(send_wqe_size(1, 0), Some(224));
    assert_eq!(send_wqe_size(1, 100), Some(308));
    assert_eq!(send_wqe_size(32, 0), Some(720));
    assert_eq!(send_wqe_size(0, 512), Some(720));
    assert_eq!(send_wqe_size(u32::MAX, 0), None);
    assert_eq!(send_wqe_size(0, u32::MAX), None);
    assert_eq!(send_wqe_size(0, u32::MAX - 208), Some(u32::MAX));
    assert_eq!(recv_wqe_size(0), Some(40));
    assert_eq!(recv_wqe_size(1), Some(56));
    assert_eq!(recv_wqe_size(32), Some(552));
    assert_eq!(recv_wqe_size(u32::MAX), None);
    assert_eq!(recv_wqe_size(0x1000_0000), None);
    assert_eq!(MAX_INLINE_DATA, 512);
    assert_eq!(MAX_SEND_WQE_SIZE, 720);
    assert_eq!(CQE_LEN, 48);
}

#[test]
fn send_caps_round_like_rxe() {
    let caps = |max_sge, max_inline, wqe_size| SendCaps {
        max_sge,
        max_inline,
        wqe_size,
    };
    assert_eq!(round_send_caps(0, 0), Ok(caps(0, 0, 208)));
    assert_eq!(round_send_caps(1, 0), Ok(caps(1, 16, 224)));
    // Inline data larger than the SGE list raises the granted SGE count too.
    assert_eq!(round_send_caps(1, 100), Ok(caps(6, 100, 308)));
    assert_eq!(round_send_caps(4, 64), Ok(caps(4, 64, 272)));
    assert_eq!(round_send_caps(4, 65), Ok(caps(4, 65, 273)));
    assert_eq!(round_send_caps(0, 512), Ok(caps(32, 512, 720)));
    assert_eq!(round_send_caps(32, 0), Ok(caps(32, 512, 720)));
    assert_eq!(round_send_caps(32, 512), Ok(caps(32, 512, 720)));
    assert_eq!(round_send_caps(33, 0), Err(RingError::TooManySge));
    assert_eq!(round_send_caps(u32::MAX, 0), Err(RingError::TooManySge));
    assert_eq!(round_send_caps(1, 513), Err(RingError::InlineTooLarge));
    assert_eq!(round_send_caps(0, u32::MAX), Err(RingError::InlineTooLarge));
    // Every accepted request is granted at least what it asked for, within the device limits,
    // and the WQE size agrees with send_wqe_size.
    for sge in 0..=MAX_WQE_SGE {
        for inline in (0..=MAX_INLINE_DATA).step_by(7) {
            let c = round_send_caps(sge, inline).unwrap();
            assert!(c.max_sge >= sge && c.max_sge <= MAX_WQE_SGE);
            assert!(c.max_inline >= inline && c.max_inline <= MAX_INLINE_DATA);
            assert!(c.max_sge * 16 <= c.max_inline);
            assert_eq!(Some(c.wqe_size), send_wqe_size(sge, inline));
            assert!(c.wqe_size <= MAX_SEND_WQE_SIZE);
        }
    }
}
