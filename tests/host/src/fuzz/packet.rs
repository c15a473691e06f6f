// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the packet parser, and the valid packets the other packet fuzzers start from
//! (the header writer's in [`super::write`], the ICRC's in [`super::icrc`]).

use super::*;

// ---------------------------------------------------------------------------------------------
// Packets: parse_headers.
// ---------------------------------------------------------------------------------------------

/// Every extension header kind.
pub(super) const ALL_EXT: [ExtHeader; 8] = [
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
pub(super) fn present(headers: &TransportHeaders, ext: ExtHeader) -> bool {
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
pub(super) fn copy_ext(dst: &mut TransportHeaders, src: &TransportHeaders, ext: ExtHeader) {
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
pub(super) fn implemented_opcodes() -> Vec<Opcode> {
    (0..=u8::MAX)
        .map(Opcode)
        .filter(|op| op.info().is_some())
        .collect()
}

/// Returns a random opcode: an implemented one three times out of four, else any byte.
pub(super) fn random_opcode(rng: &mut Rng, implemented: &[Opcode]) -> Opcode {
    if rng.chance(3, 4) {
        rng.pick(implemented)
    } else {
        Opcode(rng.u8())
    }
}

/// Returns headers with opcode `opcode` and random in-range fields.
///
/// The extension headers `opcode` carries are filled in, or all of them when `all_ext` is set.
pub(super) fn random_headers(rng: &mut Rng, opcode: Opcode, all_ext: bool) -> TransportHeaders {
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
pub(super) struct Packet {
    /// The transport packet, BTH through ICRC.
    pub(super) bytes: Vec<u8>,
    /// The headers it was built from.
    pub(super) headers: TransportHeaders,
    /// The payload length.
    pub(super) payload_len: usize,
    /// The IPv4 header the ICRC covers.
    pub(super) ip: [u8; IPV4_HDR_LEN],
    /// The UDP header the ICRC covers.
    pub(super) udp: [u8; UDP_HDR_LEN],
}

/// Builds a valid packet with opcode `opcode`, random headers and payload, zero pad and the ICRC.
pub(super) fn valid_packet(rng: &mut Rng, opcode: Opcode) -> Packet {
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
pub(super) fn check_parse(pkt: &[u8]) -> Option<ParsedHeaders> {
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
