// SPDX-License-Identifier: GPL-2.0

//! The ICRC as the pipeline computes it: the protocol code of [`crate::proto::icrc`] with the
//! kernel's accelerated `crc32_le` folding the bytes. The table CRC stays the reference of the
//! host tests; the kernel's function is the same CRC-32, and KUnit checks the two agree.

use crate::{
    kernel_ext,
    proto::icrc::{
        Crc32Engine,
        IcrcWith, //
    },
};

/// `crc32_le` as a CRC-32 engine.
pub(crate) struct KernelCrc32;

impl Crc32Engine for KernelCrc32 {
    fn feed(reg: u32, data: &[u8]) -> u32 {
        kernel_ext::crc32_le(reg, data)
    }
}

/// The ICRC computed by `crc32_le`.
pub(crate) type Icrc = IcrcWith<KernelCrc32>;

#[kernel::prelude::kunit_tests(rrxe_crc)]
mod tests {
    use super::*;
    use crate::proto::icrc::{
        self,
        TableCrc32, //
    };

    /// A deterministic byte pattern.
    fn pattern(buf: &mut [u8]) {
        let mut x = 0x9e37_79b9u32;
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
    }

    #[test]
    fn kernel_crc32_matches_the_table() {
        let mut buf = [0u8; 4200];
        pattern(&mut buf);
        // Lengths and alignments on both sides of the vector widths.
        for start in [0usize, 1, 3, 7, 8, 15, 16, 63] {
            for len in [0usize, 1, 2, 7, 15, 16, 31, 64, 127, 255, 256, 1000, 4096] {
                let data = &buf[start..start + len];
                for reg in [!0u32, 0, 0x1234_5678] {
                    assert_eq!(KernelCrc32::feed(reg, data), TableCrc32::feed(reg, data));
                }
            }
        }
    }

    #[test]
    fn kernel_icrc_matches_the_table() {
        let mut ip = [0u8; icrc::IPV4_HDR_LEN];
        let mut udp = [0u8; icrc::UDP_HDR_LEN];
        let mut transport = [0u8; 1060];
        pattern(&mut ip);
        pattern(&mut udp);
        pattern(&mut transport);
        assert_eq!(
            Icrc::of_ipv4(&ip, &udp, &transport),
            icrc::icrc_ipv4(&ip, &udp, &transport)
        );
        let mut ip6 = [0u8; icrc::IPV6_HDR_LEN];
        pattern(&mut ip6);
        assert_eq!(
            Icrc::of_ipv6(&ip6, &udp, &transport),
            icrc::icrc_ipv6(&ip6, &udp, &transport)
        );
    }
}
