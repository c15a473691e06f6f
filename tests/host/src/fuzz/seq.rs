// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the sequencing decisions: ACKs, request PSNs, opcode sequences.

use super::packet::{
    implemented_opcodes,
    random_opcode, //
};
use super::wqe::SEND_OPCODES;
use super::*;

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
            last_acked: outstanding(psn),
        },
        1 => AckDecision::RnrNak {
            timer_us: rnr_timer_us(value).expect("5-bit codes have a delay"),
        },
        3 => match value {
            0 => AckDecision::NakSeqErr {
                expected: outstanding(psn),
            },
            1 => AckDecision::NakInvalidRequest,
            2 => AckDecision::NakRemoteAccess,
            _ => AckDecision::NakRemoteOperation,
        },
        _ => AckDecision::Ignore,
    }
}

/// `psn` as an outstanding PSN (of a window that holds just it).
fn outstanding(psn: u32) -> Outstanding {
    let p = Psn::new(psn);
    SendWindow::new(p, p.next())
        .outstanding(p)
        .expect("in its own window")
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
        let w = SendWindow::new(Psn::new(oldest), Psn::new(next));
        let class = w.classify(Psn::new(psn));
        // Outside the window: behind its start by the serial rule is stale, the rest unsent.
        let d = psn.wrapping_sub(oldest) & U24_MAX;
        let expected_class = if d < window {
            AnswerPsn::Outstanding(outstanding(psn))
        } else if d >= 0x80_0000 {
            AnswerPsn::Stale
        } else {
            AnswerPsn::Unsent
        };
        assert_eq!(
            class, expected_class,
            "psn {psn:#x} window [{oldest:#x}, {next:#x})"
        );
        let got = w
            .outstanding(Psn::new(psn))
            .map_or(AckDecision::Ignore, |p| classify_ack(aeth, p));
        assert_eq!(
            got,
            expected_ack(aeth.syndrome, psn, oldest, next),
            "{aeth:?} psn {psn:#x} window [{oldest:#x}, {next:#x})"
        );
        if let AckDecision::Ack { last_acked } = got {
            acks += 1;
            // The acknowledged PSN is one of the outstanding [oldest, next).
            let offset = last_acked.psn().value().wrapping_sub(oldest) & U24_MAX;
            assert!(offset < window);
            assert_eq!(last_acked.psn(), Psn::new(psn));
            // What it acknowledges ends at a PSN sent, never past the window.
            let through = last_acked.acks_through().last().value();
            assert!(through.wrapping_sub(oldest) & U24_MAX < window);
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
