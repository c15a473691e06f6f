// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the header writer (`TransportHeaders::write`) against its documented checks, and
//! of the packet length helpers.

use super::packet::{
    check_parse,
    copy_ext,
    implemented_opcodes,
    present,
    random_headers,
    random_opcode,
    ALL_EXT, //
};
use super::*;

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
