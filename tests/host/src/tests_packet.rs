// SPDX-License-Identifier: GPL-2.0

//! Tests of whole-packet parsing and header writing in `proto::packet`.
//!
//! Packets are assembled byte by byte here, with the header lengths from the hand-written table in
//! `tests_opcode`, so the offsets `parse_headers` reports are checked against an independent
//! layout.

use crate::proto::hdr::Aeth;
use crate::proto::hdr::AtomicAckEth;
use crate::proto::hdr::AtomicEth;
use crate::proto::hdr::Bth;
use crate::proto::hdr::Deth;
use crate::proto::hdr::Feth;
use crate::proto::hdr::Ieth;
use crate::proto::hdr::Immdt;
use crate::proto::hdr::Reth;
use crate::proto::opcode::info;
use crate::proto::opcode::ExtHeader;
use crate::proto::opcode::Opcode;
use crate::proto::packet::ip_packet_len;
use crate::proto::packet::packet_len;
use crate::proto::packet::pad_for;
use crate::proto::packet::parse_headers;
use crate::proto::packet::TransportHeaders;
use crate::proto::psn::Psn;
use crate::proto::Error;
use crate::tests_opcode::EXPECTED;

/// Wire length of an extension header, written out independently of the code under test.
fn ext_len(ext: ExtHeader) -> usize {
    match ext {
        ExtHeader::Reth => 16,
        ExtHeader::Aeth | ExtHeader::Immdt | ExtHeader::Ieth | ExtHeader::Feth => 4,
        ExtHeader::Deth | ExtHeader::AtomicAckEth => 8,
        ExtHeader::AtomicEth => 28,
    }
}

/// Assembles a transport packet by hand: BTH, `ext_bytes` of patterned extension headers, the
/// payload, `pad` zero bytes and a 4-byte placeholder ICRC.
fn build(op: u8, pad_field: u8, ext_bytes: usize, payload: &[u8], pad: usize) -> Vec<u8> {
    let mut pkt = vec![
        op,
        0x80 | (pad_field << 4),
        0xff,
        0xff,
        0x00,
        0x12,
        0x34,
        0x56,
        0x80,
        0x00,
        0x00,
        0x07,
    ];
    pkt.extend((0..ext_bytes).map(|i| 0x90 + i as u8));
    pkt.extend_from_slice(payload);
    pkt.extend(std::iter::repeat_n(0, pad));
    pkt.extend_from_slice(&[0xee; 4]);
    pkt
}

/// Headers with every extension header filled in, for writing tests.
fn all_headers(opcode: Opcode) -> TransportHeaders {
    TransportHeaders {
        bth: Bth {
            opcode,
            solicited: false,
            mig_req: true,
            pad: 1,
            pkey: 0xffff,
            fecn: false,
            becn: true,
            dest_qpn: 0x0000_0042,
            ack_req: true,
            psn: Psn::new(0x00ff_ffff),
        },
        reth: Some(Reth {
            va: 0x1000_2000_3000_4000,
            rkey: 0x0bad_cafe,
            dma_len: 1 << 20,
        }),
        aeth: Some(Aeth {
            syndrome: 0x1f,
            msn: 0x00ab_cdef,
        }),
        deth: Some(Deth {
            qkey: 0x1111_1111,
            src_qpn: 0x00fe_dcba,
        }),
        immdt: Some(Immdt { imm: 0x1234_5678 }),
        ieth: Some(Ieth { rkey: 0x8765_4321 }),
        atomic_eth: Some(AtomicEth {
            va: 8,
            rkey: 9,
            swap_add: 10,
            compare: 11,
        }),
        atomic_ack_eth: Some(AtomicAckEth { orig: u64::MAX }),
        feth: Some(Feth {
            selectivity: 1,
            placement_type: 1,
        }),
    }
}

/// Returns `headers` with the extension headers that `opcode` does not carry removed.
fn only_carried(mut headers: TransportHeaders, ext: &[ExtHeader]) -> TransportHeaders {
    let keep = |h| ext.contains(&h);
    if !keep(ExtHeader::Reth) {
        headers.reth = None;
    }
    if !keep(ExtHeader::Aeth) {
        headers.aeth = None;
    }
    if !keep(ExtHeader::Deth) {
        headers.deth = None;
    }
    if !keep(ExtHeader::Immdt) {
        headers.immdt = None;
    }
    if !keep(ExtHeader::Ieth) {
        headers.ieth = None;
    }
    if !keep(ExtHeader::AtomicEth) {
        headers.atomic_eth = None;
    }
    if !keep(ExtHeader::AtomicAckEth) {
        headers.atomic_ack_eth = None;
    }
    if !keep(ExtHeader::Feth) {
        headers.feth = None;
    }
    headers
}

#[test]
fn every_opcode_parses_with_correct_payload_bounds() {
    for e in EXPECTED {
        let ext_bytes: usize = e.ext.iter().map(|&h| ext_len(h)).sum();
        let max_payload = if e.payload { 9 } else { 0 };
        for payload_len in 0..=max_payload {
            let payload: Vec<u8> = (0..payload_len).map(|i| 0x30 + i as u8).collect();
            let pad = (4 - payload_len % 4) % 4;
            let pkt = build(e.op, pad as u8, ext_bytes, &payload, pad);
            let parsed =
                parse_headers(&pkt).unwrap_or_else(|err| panic!("opcode {:#04x}: {err:?}", e.op));
            assert_eq!(parsed.payload_offset, e.len, "opcode {:#04x}", e.op);
            assert_eq!(parsed.payload_len, payload_len, "opcode {:#04x}", e.op);
            assert_eq!(parsed.icrc_offset, pkt.len() - 4);
            let start = parsed.payload_offset;
            assert_eq!(&pkt[start..start + parsed.payload_len], &payload[..]);
            assert_eq!(parsed.headers.bth.opcode, Opcode(e.op));
            assert_eq!(parsed.headers.bth.pad, pad as u8);
            assert_eq!(parsed.headers.bth.dest_qpn, 0x0012_3456);
            assert_eq!(parsed.headers.bth.psn, Psn::new(7));
            assert_eq!(Some(parsed.info), info(Opcode(e.op)));
        }
    }
}

#[test]
fn every_opcode_decodes_its_extension_headers_at_the_right_offsets() {
    for e in EXPECTED {
        let ext_bytes: usize = e.ext.iter().map(|&h| ext_len(h)).sum();
        let pkt = build(e.op, 0, ext_bytes, &[], 0);
        let h = parse_headers(&pkt).unwrap().headers;
        let mut offset = 12;
        for &ext in e.ext {
            let at = &pkt[offset..];
            match ext {
                ExtHeader::Reth => assert_eq!(h.reth, Some(Reth::parse(at).unwrap())),
                ExtHeader::Aeth => assert_eq!(h.aeth, Some(Aeth::parse(at).unwrap())),
                ExtHeader::Deth => assert_eq!(h.deth, Some(Deth::parse(at).unwrap())),
                ExtHeader::Immdt => assert_eq!(h.immdt, Some(Immdt::parse(at).unwrap())),
                ExtHeader::Ieth => assert_eq!(h.ieth, Some(Ieth::parse(at).unwrap())),
                ExtHeader::AtomicEth => {
                    assert_eq!(h.atomic_eth, Some(AtomicEth::parse(at).unwrap()))
                }
                ExtHeader::AtomicAckEth => {
                    assert_eq!(h.atomic_ack_eth, Some(AtomicAckEth::parse(at).unwrap()))
                }
                ExtHeader::Feth => assert_eq!(h.feth, Some(Feth::parse(at).unwrap())),
            }
            offset += ext_len(ext);
        }
        // Headers the opcode does not carry stay absent.
        assert_eq!(only_carried(h, e.ext), h, "opcode {:#04x}", e.op);
    }
}

#[test]
fn immediate_data_is_read_from_the_right_place() {
    let mut pkt = build(0x0b, 0, 20, &[], 0);
    pkt[28..32].copy_from_slice(&[0xca, 0xfe, 0xba, 0xbe]);
    let parsed = parse_headers(&pkt).unwrap();
    assert_eq!(parsed.headers.immdt, Some(Immdt { imm: 0xcafe_babe }));
}

#[test]
fn pad_larger_than_payload_is_rejected() {
    for e in EXPECTED {
        let ext_bytes: usize = e.ext.iter().map(|&h| ext_len(h)).sum();
        for payload_len in 0..3_usize {
            let payload = vec![0x55; payload_len];
            for pad_field in (payload_len as u8 + 1)..=3 {
                let pkt = build(e.op, pad_field, ext_bytes, &payload, 0);
                assert_eq!(
                    parse_headers(&pkt),
                    Err(Error::BadPad),
                    "opcode {:#04x} payload {payload_len} pad {pad_field}",
                    e.op
                );
            }
        }
    }
}

#[test]
fn packets_shorter_than_headers_and_icrc_are_rejected() {
    for e in EXPECTED {
        let ext_bytes: usize = e.ext.iter().map(|&h| ext_len(h)).sum();
        let pkt = build(e.op, 0, ext_bytes, &[], 0);
        assert_eq!(pkt.len(), e.len + 4);
        assert!(parse_headers(&pkt).is_ok());
        for len in 0..pkt.len() {
            assert_eq!(
                parse_headers(&pkt[..len]),
                Err(Error::Truncated),
                "opcode {:#04x} length {len}",
                e.op
            );
        }
    }
}

#[test]
fn unknown_opcodes_are_rejected() {
    for op in 0..=255_u8 {
        if info(Opcode(op)).is_some() {
            continue;
        }
        let pkt = build(op, 0, 48, &[], 0);
        assert_eq!(
            parse_headers(&pkt),
            Err(Error::BadOpcode),
            "opcode {op:#04x}"
        );
    }
}

#[test]
fn bad_transport_version_is_rejected_first() {
    let mut pkt = build(0x04, 0, 0, &[1, 2, 3, 4], 0);
    pkt[1] |= 0x01;
    assert_eq!(parse_headers(&pkt), Err(Error::BadVersion));
    // Even an unknown opcode reports the version problem, as the BTH is decoded first.
    pkt[0] = 0x40;
    assert_eq!(parse_headers(&pkt), Err(Error::BadVersion));
}

#[test]
fn written_headers_parse_back_for_every_opcode() {
    for e in EXPECTED {
        let headers = all_headers(Opcode(e.op));
        let mut buf = vec![0u8; 128];
        let len = headers.write(&mut buf).unwrap();
        assert_eq!(len, e.len, "opcode {:#04x}", e.op);
        buf.truncate(len);
        // Three payload bytes and the pad of one the BTH announces, then the ICRC.
        buf.extend_from_slice(&[7, 8, 9, 0, 0, 0, 0, 0]);
        let parsed = parse_headers(&buf).unwrap();
        assert_eq!(parsed.headers, only_carried(headers, e.ext));
        assert_eq!(parsed.payload_len, 3);
    }
}

#[test]
fn writing_requires_every_carried_header() {
    for e in EXPECTED {
        for &missing in e.ext {
            let without: Vec<ExtHeader> = e.ext.iter().copied().filter(|&h| h != missing).collect();
            let headers = only_carried(all_headers(Opcode(e.op)), &without);
            let mut buf = [0u8; 64];
            assert_eq!(headers.write(&mut buf), Err(Error::MissingHeader));
        }
    }
}

#[test]
fn writing_into_a_short_buffer_fails_without_writing() {
    for e in EXPECTED {
        let headers = all_headers(Opcode(e.op));
        for len in 0..e.len {
            let mut buf = vec![0xa5_u8; len];
            assert_eq!(headers.write(&mut buf), Err(Error::NoSpace));
            assert!(buf.iter().all(|&b| b == 0xa5));
        }
    }
}

#[test]
fn writing_an_unknown_opcode_fails() {
    let mut buf = [0u8; 64];
    assert_eq!(
        all_headers(Opcode(0x40)).write(&mut buf),
        Err(Error::BadOpcode)
    );
}

#[test]
fn pad_and_packet_length_helpers() {
    assert_eq!(
        (0..9).map(pad_for).collect::<Vec<_>>(),
        [0, 3, 2, 1, 0, 3, 2, 1, 0]
    );
    let send = Opcode::RC_SEND_ONLY.info().unwrap();
    assert_eq!(packet_len(&send, 0), Some(16));
    assert_eq!(packet_len(&send, 5), Some(12 + 5 + 3 + 4));
    let ud = Opcode::UD_SEND_ONLY_IMM.info().unwrap();
    assert_eq!(packet_len(&ud, 4096), Some(24 + 4096 + 4));
    assert_eq!(packet_len(&ud, usize::MAX), None);
    // What the port counters count: the IP and UDP headers in front of the transport packet.
    assert_eq!(ip_packet_len(16, false), 20 + 8 + 16);
    assert_eq!(ip_packet_len(16, true), 40 + 8 + 16);
}
