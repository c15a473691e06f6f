// SPDX-License-Identifier: GPL-2.0

//! Tests of the transport header codecs in `proto::hdr`.
//!
//! Besides round trips, every header is checked against hand-written wire bytes, because a codec
//! that swapped two fields consistently would still round-trip.

use crate::proto::hdr::Aeth;
use crate::proto::hdr::AethSyndrome;
use crate::proto::hdr::AtomicAckEth;
use crate::proto::hdr::AtomicEth;
use crate::proto::hdr::Bth;
use crate::proto::hdr::Deth;
use crate::proto::hdr::Feth;
use crate::proto::hdr::Ieth;
use crate::proto::hdr::Immdt;
use crate::proto::hdr::Reth;
use crate::proto::hdr::DEFAULT_PKEY;
use crate::proto::hdr::ICRC_LEN;
use crate::proto::hdr::ROCE_V2_UDP_PORT;
use crate::proto::opcode::Opcode;
use crate::proto::psn::Psn;
use crate::proto::Error;

/// Checks one header type against its expected wire bytes: parse, write, round trip, and errors
/// for every input prefix and every output buffer that is too short.
macro_rules! check_header {
    ($ty:ty, $value:expr, $bytes:expr) => {{
        let value: $ty = $value;
        let bytes: &[u8] = &$bytes;
        assert_eq!(bytes.len(), <$ty>::LEN);
        assert_eq!(<$ty>::parse(bytes), Ok(value));

        // Trailing bytes after the header are not part of it.
        let mut longer = bytes.to_vec();
        longer.extend_from_slice(&[0xa5; 7]);
        assert_eq!(<$ty>::parse(&longer), Ok(value));

        let mut out = [0x5a_u8; 64];
        assert_eq!(value.write(&mut out), Ok(()));
        assert_eq!(&out[..<$ty>::LEN], bytes);
        assert!(out[<$ty>::LEN..].iter().all(|&b| b == 0x5a));

        for len in 0..<$ty>::LEN {
            assert_eq!(
                <$ty>::parse(&bytes[..len]),
                Err(Error::Truncated),
                "prefix {len}"
            );
            let mut short = vec![0x5a_u8; len];
            assert_eq!(value.write(&mut short), Err(Error::NoSpace), "output {len}");
            assert!(short.iter().all(|&b| b == 0x5a), "partial write into {len}");
        }
    }};
}

/// A BTH with every flag set and distinctive values in every field.
fn busy_bth() -> Bth {
    Bth {
        opcode: Opcode::RC_WRITE_ONLY_IMM,
        solicited: true,
        mig_req: true,
        pad: 3,
        pkey: 0x8001,
        fecn: true,
        becn: true,
        dest_qpn: 0x00ab_cdef,
        ack_req: true,
        psn: Psn::new(0x0012_3456),
    }
}

#[test]
fn roce_constants() {
    assert_eq!(ROCE_V2_UDP_PORT, 4791);
    assert_eq!(DEFAULT_PKEY, 0xffff);
    assert_eq!(ICRC_LEN, 4);
    assert_eq!(Bth::LEN, 12);
}

#[test]
fn bth_wire_layout_all_fields() {
    check_header!(
        Bth,
        busy_bth(),
        [0x0b, 0xf0, 0x80, 0x01, 0xc0, 0xab, 0xcd, 0xef, 0x80, 0x12, 0x34, 0x56]
    );
}

#[test]
fn bth_wire_layout_individual_flags() {
    // What every sender starts from: the default P_Key, no pad, every flag clear.
    let plain = Bth::plain(Opcode::UD_SEND_ONLY, 1, Psn::MAX);
    check_header!(
        Bth,
        plain,
        [0x64, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth {
            solicited: true,
            ..plain
        },
        [0x64, 0x80, 0xff, 0xff, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth {
            mig_req: true,
            ..plain
        },
        [0x64, 0x40, 0xff, 0xff, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth { pad: 2, ..plain },
        [0x64, 0x20, 0xff, 0xff, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth {
            fecn: true,
            ..plain
        },
        [0x64, 0, 0xff, 0xff, 0x80, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth {
            becn: true,
            ..plain
        },
        [0x64, 0, 0xff, 0xff, 0x40, 0, 0, 1, 0, 0xff, 0xff, 0xff]
    );
    check_header!(
        Bth,
        Bth {
            ack_req: true,
            psn: Psn::ZERO,
            ..plain
        },
        [0x64, 0, 0xff, 0xff, 0, 0, 0, 1, 0x80, 0, 0, 0]
    );
}

#[test]
fn bth_rejects_every_nonzero_transport_version() {
    let mut bytes = [0u8; Bth::LEN];
    busy_bth().write(&mut bytes).unwrap();
    for tver in 1..=0x0f_u8 {
        let mut bad = bytes;
        bad[1] = (bad[1] & 0xf0) | tver;
        assert_eq!(Bth::parse(&bad), Err(Error::BadVersion), "version {tver}");
    }
}

#[test]
fn bth_ignores_reserved_bits() {
    let mut bytes = [0u8; Bth::LEN];
    busy_bth().write(&mut bytes).unwrap();
    // resv6a is the low six bits of byte 4 and resv7 the low seven bits of byte 8.
    bytes[4] |= 0x3f;
    bytes[8] |= 0x7f;
    assert_eq!(Bth::parse(&bytes), Ok(busy_bth()));
}

#[test]
fn bth_write_rejects_out_of_range_fields() {
    let mut out = [0u8; Bth::LEN];
    let too_big_qpn = Bth {
        dest_qpn: 0x0100_0000,
        ..busy_bth()
    };
    assert_eq!(too_big_qpn.write(&mut out), Err(Error::FieldRange));
    let too_big_pad = Bth {
        pad: 4,
        ..busy_bth()
    };
    assert_eq!(too_big_pad.write(&mut out), Err(Error::FieldRange));
    assert_eq!(out, [0u8; Bth::LEN]);
}

#[test]
fn reth_wire_layout() {
    check_header!(
        Reth,
        Reth {
            va: 0x0102_0304_0506_0708,
            rkey: 0x1122_3344,
            dma_len: 0xa0b0_c0d0,
        },
        [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x11, 0x22, 0x33, 0x44, 0xa0, 0xb0,
            0xc0, 0xd0
        ]
    );
}

#[test]
fn aeth_wire_layout_and_range() {
    check_header!(
        Aeth,
        Aeth {
            syndrome: Aeth::NAK_REMOTE_ACCESS_ERROR,
            msn: 0x00fe_dcba,
        },
        [0x62, 0xfe, 0xdc, 0xba]
    );
    let mut out = [0u8; Aeth::LEN];
    let bad = Aeth {
        syndrome: 0,
        msn: 0x0100_0000,
    };
    assert_eq!(bad.write(&mut out), Err(Error::FieldRange));
}

#[test]
fn aeth_syndrome_kinds() {
    let kind = |syndrome| Aeth { syndrome, msn: 0 }.kind();
    assert_eq!(
        kind(Aeth::ACK_UNLIMITED),
        AethSyndrome::Ack { credits: 0x1f }
    );
    assert_eq!(kind(0x05), AethSyndrome::Ack { credits: 5 });
    assert_eq!(kind(0x2e), AethSyndrome::RnrNak { timer: 0x0e });
    assert_eq!(kind(Aeth::NAK_PSN_SEQ_ERROR), AethSyndrome::Nak { code: 0 });
    assert_eq!(
        kind(Aeth::NAK_INVALID_REQUEST),
        AethSyndrome::Nak { code: 1 }
    );
    assert_eq!(
        kind(Aeth::NAK_REMOTE_ACCESS_ERROR),
        AethSyndrome::Nak { code: 2 }
    );
    assert_eq!(
        kind(Aeth::NAK_REMOTE_OP_ERROR),
        AethSyndrome::Nak { code: 3 }
    );
    assert_eq!(kind(0x40), AethSyndrome::Reserved);
    assert_eq!(kind(0x80), AethSyndrome::Reserved);
    assert_eq!(kind(0xff), AethSyndrome::Reserved);
}

#[test]
fn deth_wire_layout_and_range() {
    check_header!(
        Deth,
        Deth {
            qkey: 0x8001_0000,
            src_qpn: 0x0000_0001,
        },
        [0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]
    );
    // The reserved byte before the source QPN is ignored.
    let parsed = Deth::parse(&[0, 0, 0, 7, 0xff, 0x12, 0x34, 0x56]).unwrap();
    assert_eq!(parsed.src_qpn, 0x0012_3456);
    assert_eq!(parsed.qkey, 7);
    let mut out = [0u8; Deth::LEN];
    let bad = Deth {
        qkey: 0,
        src_qpn: 0x0100_0000,
    };
    assert_eq!(bad.write(&mut out), Err(Error::FieldRange));
}

#[test]
fn immdt_wire_layout() {
    check_header!(Immdt, Immdt { imm: 0xdead_beef }, [0xde, 0xad, 0xbe, 0xef]);
}

#[test]
fn ieth_wire_layout() {
    check_header!(Ieth, Ieth { rkey: 0x0102_0304 }, [0x01, 0x02, 0x03, 0x04]);
}

#[test]
fn atomic_eth_wire_layout() {
    check_header!(
        AtomicEth,
        AtomicEth {
            va: 0x1111_2222_3333_4444,
            rkey: 0x5555_6666,
            swap_add: 0x7777_8888_9999_aaaa,
            compare: 0xbbbb_cccc_dddd_eeee,
        },
        [
            0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66, 0x77, 0x77,
            0x88, 0x88, 0x99, 0x99, 0xaa, 0xaa, 0xbb, 0xbb, 0xcc, 0xcc, 0xdd, 0xdd, 0xee, 0xee
        ]
    );
}

#[test]
fn atomic_ack_eth_wire_layout() {
    check_header!(
        AtomicAckEth,
        AtomicAckEth {
            orig: 0x0123_4567_89ab_cdef,
        },
        [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]
    );
}

#[test]
fn feth_wire_layout_and_range() {
    check_header!(
        Feth,
        Feth {
            selectivity: 1,
            placement_type: 2,
        },
        [0, 0, 0, 0x12]
    );
    check_header!(
        Feth,
        Feth {
            selectivity: 3,
            placement_type: 0x0f,
        },
        [0, 0, 0, 0x3f]
    );
    // Reserved bits around the two fields are ignored.
    assert_eq!(
        Feth::parse(&[0xff, 0xff, 0xff, 0xc5]),
        Ok(Feth {
            selectivity: 0,
            placement_type: 5,
        })
    );
    let mut out = [0u8; Feth::LEN];
    let bad_sel = Feth {
        selectivity: 4,
        placement_type: 0,
    };
    assert_eq!(bad_sel.write(&mut out), Err(Error::FieldRange));
    let bad_plt = Feth {
        selectivity: 0,
        placement_type: 0x10,
    };
    assert_eq!(bad_plt.write(&mut out), Err(Error::FieldRange));
}

#[test]
fn header_lengths_match_the_iba() {
    assert_eq!(Reth::LEN, 16);
    assert_eq!(Aeth::LEN, 4);
    assert_eq!(Deth::LEN, 8);
    assert_eq!(Immdt::LEN, 4);
    assert_eq!(Ieth::LEN, 4);
    assert_eq!(AtomicEth::LEN, 28);
    assert_eq!(AtomicAckEth::LEN, 8);
    assert_eq!(Feth::LEN, 4);
}
