// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the completer's acknowledgement handling: ACKs during a retransmission,
//! late ACKs of a first transmission, and how the requester resumes after them.

#[kernel::prelude::kunit_tests(rrxe_pipeline_completer)]
mod tests {
    use super::super::super::state::{
        Progress,
        QpPipe,
        Track, //
    };
    use super::super::*;
    use crate::proto::{
        hdr::Aeth,
        wqe::{
            Payload,
            SendFlags,
            SendWqe,
            WrDetail, //
        },
    };

    /// A SEND of `npkts` packets from `first`, being sent with `sent` packets out.
    fn sending(st: &mut SendState, first: Psn, npkts: u32, sent: u32) {
        let mut t = Track::new(7, WrOpcode::Send, true, first, npkts * 1024);
        t.last_psn = first.wrapping_add(npkts - 1);
        assert!(st.push(t));
        let wqe = SendWqe {
            wr_id: 7,
            opcode: WrOpcode::Send,
            flags: SendFlags(SendFlags::SIGNALED),
            ex: 0,
            detail: WrDetail::None,
            iova: 0,
            length: npkts * 1024,
            num_sge: 0,
            payload: Payload::None,
        };
        st.cur = (sent < npkts).then_some(Progress {
            wqe,
            offset: sent * 1024,
            sent,
            npkts,
        });
        st.advance(sent);
    }

    #[test]
    fn a_late_ack_of_the_first_transmission_finishes_the_wqe_being_sent_again() {
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // Sent whole (PSNs 100..=163), then the timer: it goes again, 16 packets are out.
        sending(&mut st, Psn::new(100), 64, 64);
        rewind(&mut st);
        assert_eq!(st.count, 0);
        assert_eq!(st.psn, Psn::new(100));
        sending(&mut st, Psn::new(100), 64, 16);
        assert_eq!(st.sent_to, Psn::new(164));
        // The first transmission's ACK arrives: the SEND is done and nothing more of it goes.
        let aeth = Aeth {
            syndrome: Aeth::ACK_UNLIMITED,
            msn: 1,
        };
        let d = seq::classify_ack(aeth, Psn::new(163), st.comp_psn, st.sent_to);
        assert!(
            d == AckDecision::Ack {
                last_acked: Psn::new(163)
            }
        );
        assert!(!ack_up_to(&mut st, Psn::new(163)));
        assert!(st.cur.is_none());
        assert_eq!(st.psn, Psn::new(164));
        assert_eq!(st.comp_psn, Psn::new(164));
        assert_eq!(st.entry(0).and_then(|t| t.done), Some(WcStatus::Success));
        // Past everything ever sent: not an acknowledgement.
        let d = seq::classify_ack(aeth, Psn::new(164), st.comp_psn, st.sent_to);
        assert!(d == AckDecision::Ignore);
    }

    #[test]
    fn a_late_ack_before_the_wqes_are_started_again_finishes_them_when_they_are() {
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // Two SENDs (100..=163, 164..=227) sent whole, then the timer: nothing is tracked.
        sending(&mut st, Psn::new(100), 64, 64);
        sending(&mut st, Psn::new(164), 64, 64);
        rewind(&mut st);
        assert_eq!(st.count, 0);
        // The first transmission's ACK of the first SEND and 8 packets of the second.
        assert!(!ack_up_to(&mut st, Psn::new(171)));
        assert_eq!(st.acked_ahead, Some(Psn::new(171)));
        assert_eq!(st.comp_psn, Psn::new(100));
        // Started again: the first is done whole, the second goes on from its ninth packet.
        assert_eq!(st.take_acked(Psn::new(100), 64), 64);
        st.skip_acked(Psn::new(164));
        assert_eq!((st.psn, st.comp_psn), (Psn::new(164), Psn::new(164)));
        assert_eq!(st.take_acked(Psn::new(164), 64), 8);
        assert_eq!(st.acked_ahead, None);
        assert_eq!(st.take_acked(Psn::new(228), 1), 0);
    }

    #[test]
    fn a_late_ack_inside_the_wqe_being_sent_again_moves_no_further_than_sent() {
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(0xff_fff0));
        sending(&mut st, Psn::new(0xff_fff0), 64, 64);
        rewind(&mut st);
        sending(&mut st, Psn::new(0xff_fff0), 64, 8);
        // PSN 0x1f (wrapped) acknowledges 48 packets; 8 were sent again.
        assert!(!ack_up_to(&mut st, Psn::new(0x1f)));
        assert!(st.cur.is_some());
        assert_eq!(st.comp_psn, Psn::new(0xff_fff8));
        assert_eq!(st.entry(0).and_then(|t| t.done), None);
    }

    #[test]
    fn a_nak_fails_only_the_request_it_names() {
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(200));
        let err = WcStatus::RemAccessErr;
        // A one-packet WRITE at PSN 200, sent, then rewound by the timer before the NAK.
        sending(&mut st, Psn::new(200), 1, 1);
        rewind(&mut st);
        assert!(!fail_at(&mut st, Psn::new(200), err));
        // Sent again: the NAK now fails it.
        sending(&mut st, Psn::new(200), 1, 1);
        assert!(!fail_at(&mut st, Psn::new(201), err));
        assert!(fail_at(&mut st, Psn::new(200), err));
        assert_eq!(st.entry(0).and_then(|t| t.done), Some(err));
    }
}
