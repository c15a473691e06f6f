// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the ring index arithmetic, ring geometry and capability rounding.

use super::*;

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
            abi::HDR_LEN + g.slots() as usize * g.elem_size()
        );
        assert!(g.buf_size() as u64 <= ring::MAX_BUF_SIZE);
        for _ in 0..4 {
            let index = rng.edgy_u32();
            let off = g.slot_offset(index);
            assert!(off >= abi::HDR_LEN);
            assert_eq!((off - abi::HDR_LEN) % g.elem_size(), 0);
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
                assert!(sge <= abi::MAX_WQE_SGE && inline <= abi::MAX_INLINE_DATA);
                assert!(caps.max_sge >= sge && caps.max_sge <= abi::MAX_WQE_SGE);
                assert!(caps.max_inline >= inline && caps.max_inline <= abi::MAX_INLINE_DATA);
                assert_eq!(caps.max_sge, caps.max_inline / 16);
                assert_eq!(caps.max_inline, (sge * 16).max(inline));
                assert_eq!(caps.wqe_size, 208 + caps.max_inline);
                assert!(caps.wqe_size <= abi::MAX_SEND_WQE_SIZE);
            }
            Err(RingError::TooManySge) => assert!(sge > abi::MAX_WQE_SGE),
            Err(RingError::InlineTooLarge) => {
                assert!(sge <= abi::MAX_WQE_SGE && inline > abi::MAX_INLINE_DATA);
            }
            Err(e) => panic!("unexpected {e:?}"),
        }
    });
}
