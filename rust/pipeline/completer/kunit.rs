// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the completer's acknowledgement handling: ACKs during a retransmission, late
//! ACKs, how the requester resumes after them, what probes' answers show (selective recovery).

#[kernel::prelude::kunit_tests(rrxe_pipeline_completer)]
mod tests {
    use super::super::super::state::{
        AloneWhy,
        Progress,
        QpPipe,
        Track, //
    };
    use super::super::*;
    use crate::proto::{
        hdr::Aeth,
        read_gaps::{
            Mark,
            ReadAsk, //
        },
        recovery::{
            PeerRecovery,
            MISSES_FOR_GO_BACK_N, //
        },
        wqe::{
            Payload,
            SendFlags,
            SendWqe,
            WrDetail, //
        },
    };

    /// The pipeline state of a connected QP with a 16-slot send queue.
    fn small_pipe() -> Pin<KBox<QpPipe>> {
        KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap()
    }

    /// An ACK of `psn`, which must lie in `st`'s send window.
    fn acked(st: &SendState, psn: u32) -> AckedThrough {
        window_of(st)
            .outstanding(Psn::new(psn))
            .expect("an outstanding PSN")
            .acks_through()
    }

    /// The completer's decision on an ACK with `aeth` at `psn`: nothing outside the window.
    fn ack_in_window(st: &SendState, aeth: Aeth, psn: u32) -> AckDecision {
        window_of(st)
            .outstanding(Psn::new(psn))
            .map_or(AckDecision::Ignore, |p| seq::classify_ack(aeth, p))
    }

    /// A SEND of `npkts` packets from `first`, being sent with `sent` packets out.
    fn sending(st: &mut SendState, first: Psn, npkts: u32, sent: u32) {
        let mut t = Track::new(7, WrOpcode::Send, true, first, npkts * 1024);
        t.last_psn = first.wrapping_add(npkts - 1);
        assert!(st.push(t));
        sending_from(st, npkts, sent);
        if sent == npkts {
            st.cur = None;
        }
        st.advance(sent);
    }

    /// The tracked SEND of `npkts` packets being sent again from its packet `sent`.
    fn sending_from(st: &mut SendState, npkts: u32, sent: u32) {
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
        st.cur = Some(Progress {
            wqe,
            offset: sent * 1024,
            sent,
            npkts,
            mtu: 1024,
        });
    }

    #[test]
    fn a_late_ack_of_the_first_transmission_finishes_the_wqe_being_sent_again() {
        let pipe = small_pipe();
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
        let d = ack_in_window(&st, aeth, 163);
        assert!(matches!(d, AckDecision::Ack { last_acked } if last_acked.psn() == Psn::new(163)));
        let a = acked(&st, 163);
        assert!(!ack_up_to(&mut st, a));
        assert!(st.cur.is_none());
        assert_eq!(st.psn, Psn::new(164));
        assert_eq!(st.comp_psn, Psn::new(164));
        assert_eq!(st.entry(0).and_then(|t| t.done), Some(WcStatus::Success));
        // Past everything ever sent: not an acknowledgement.
        assert!(window_of(&st).classify(Psn::new(164)) == AnswerPsn::Unsent);
        assert!(ack_in_window(&st, aeth, 164) == AckDecision::Ignore);
    }

    #[test]
    fn a_late_ack_before_the_wqes_are_started_again_finishes_them_when_they_are() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // Two SENDs (100..=163, 164..=227) sent whole, then the timer: nothing is tracked.
        sending(&mut st, Psn::new(100), 64, 64);
        sending(&mut st, Psn::new(164), 64, 64);
        rewind(&mut st);
        assert_eq!(st.count, 0);
        // The first transmission's ACK of the first SEND and 8 packets of the second.
        let a = acked(&st, 171);
        assert!(!ack_up_to(&mut st, a));
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
    fn a_late_ack_inside_the_wqe_being_sent_again_skips_what_it_covers() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(0xff_fff0));
        sending(&mut st, Psn::new(0xff_fff0), 64, 64);
        rewind(&mut st);
        sending(&mut st, Psn::new(0xff_fff0), 64, 8);
        // PSN 0x1f (wrapped) acknowledges 48 packets; 8 were sent again: the other 40 are not,
        // the SEND goes on from its 49th packet.
        let a = acked(&st, 0x1f);
        assert!(!ack_up_to(&mut st, a));
        let cur = st.cur.as_ref().map(|c| (c.sent, c.offset));
        assert_eq!(cur, Some((48, 48 * 1024)));
        assert_eq!((st.psn, st.comp_psn), (Psn::new(0x20), Psn::new(0x20)));
        assert_eq!(st.entry(0).and_then(|t| t.done), None);
        // An ACK of the last PSN finishes it.
        let a = acked(&st, 0x2f);
        assert!(!ack_up_to(&mut st, a));
        assert!(st.cur.is_none());
        assert_eq!(st.entry(0).and_then(|t| t.done), Some(WcStatus::Success));
    }

    #[test]
    fn a_probe_answered_past_it_shows_a_peer_that_kept_the_rest() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // A SEND of 64 packets sent whole; the peer NAKs 110; only 110 goes again (the probe).
        sending(&mut st, Psn::new(100), 64, 64);
        let a = acked(&st, 109);
        assert!(!ack_up_to(&mut st, a));
        rewind(&mut st);
        assert_eq!(st.psn, Psn::new(110));
        st.probe = Some(Psn::new(110));
        // Started again from its 11th packet (as `resume_point` does), which goes.
        let mut t = Track::new(7, WrOpcode::Send, true, Psn::new(100), 64 * 1024);
        t.last_psn = Psn::new(163);
        assert!(st.push(t));
        sending_from(&mut st, 64, 10);
        assert!(!st.probe_waits());
        st.advance(1);
        if let Some(c) = st.cur.as_mut() {
            c.sent += 1;
            c.offset += 1024;
        }
        assert!(st.probe_waits());
        // The peer had kept 111..=150: its answer acknowledges through 150.
        probe::learn(&mut st, Psn::new(150));
        assert_eq!(st.peer, PeerRecovery::Keeps);
        let a = acked(&st, 150);
        assert!(!ack_up_to(&mut st, a));
        assert_eq!(st.probe, None);
        assert_eq!((st.psn, st.comp_psn), (Psn::new(151), Psn::new(151)));
        assert_eq!(st.cur.as_ref().map(|c| c.sent), Some(51));
    }

    #[test]
    fn a_probe_answered_at_it_shows_a_peer_that_dropped_the_rest() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sending(&mut st, Psn::new(100), 64, 64);
        for round in 1..=MISSES_FOR_GO_BACK_N {
            st.probe = Some(Psn::new(110));
            probe::learn(&mut st, Psn::new(110));
            let want = if round < MISSES_FOR_GO_BACK_N {
                PeerRecovery::Unknown { misses: round }
            } else {
                PeerRecovery::GoBackN
            };
            assert_eq!(st.peer, want);
        }
        assert!(!st.peer.probes());
        // A new connection knows nothing of its peer.
        st.start_at(Psn::new(500));
        assert_eq!(st.peer, PeerRecovery::default());
    }

    #[test]
    fn a_nak_fails_only_the_request_it_names() {
        let pipe = small_pipe();
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

    #[test]
    fn an_answer_for_a_psn_never_sent_acknowledges_nothing() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // One SEND (100..=103), sent and acknowledged: nothing is outstanding.
        sending(&mut st, Psn::new(100), 4, 4);
        let a = acked(&st, 103);
        assert!(!ack_up_to(&mut st, a));
        assert_eq!(st.comp_psn, Psn::new(104));
        // Whatever an answer from ahead claims, it is never sent: no PSN of it is outstanding,
        // and nothing is remembered as acknowledged ahead for the WQEs posted next.
        for p in [104, 105, 1000, 104 + 0x7f_ffff] {
            assert!(window_of(&st).classify(Psn::new(p)) == AnswerPsn::Unsent);
        }
        assert!(window_of(&st).classify(Psn::new(103)) == AnswerPsn::Stale);
        assert_eq!(st.acked_ahead, None);
        // The next SEND goes out whole.
        sending(&mut st, Psn::new(104), 2, 0);
        assert_eq!(st.take_acked(Psn::new(104), 2), 0);
    }

    /// A READ of `npkts` responses from `first`, sent (its request takes `npkts` PSNs).
    fn reading(st: &mut SendState, first: Psn, npkts: u32) {
        let mut t = Track::new(9, WrOpcode::RdmaRead, true, first, npkts * 1024);
        t.last_psn = first.wrapping_add(npkts - 1);
        assert!(st.push(t));
        st.rd_outstanding += 1;
        st.advance(npkts);
    }

    #[test]
    fn read_responses_past_a_gap_are_asked_for_run_by_run_and_complete_together() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // READ A (100..=103), a SEND (104), READ B (105..=108).
        reading(&mut st, Psn::new(100), 4);
        sending(&mut st, Psn::new(104), 1, 1);
        reading(&mut st, Psn::new(105), 4);
        // 100 and 103 lost; A's 101 and 102 and all of B placed.
        for p in [101, 102, 105, 106, 107, 108] {
            assert_eq!(st.placed.mark(Psn::new(p)), Mark::Fresh);
        }
        // Nothing completes past the gap.
        read_gaps::advance(&mut st);
        assert_eq!(st.comp_psn, Psn::new(100));
        assert_eq!(st.oldest_unfinished(), Some(0));
        // The first missing run of the oldest READ alone is asked for.
        assert!(read_gaps::recover(&mut st, Psn::new(105), false));
        let ask = st.read_ask.expect("an ask");
        assert_eq!((ask.start, ask.end), (Psn::new(100), Psn::new(100)));
        // Not sent yet: later answers change nothing.
        assert!(read_gaps::recover(&mut st, Psn::new(108), false));
        assert_eq!(st.read_ask, Some(ask));
        st.read_ask = Some(ReadAsk {
            after: Some(Psn::new(109)),
            ..ask
        });
        // Its answer: 100 in order, then the placed 101 and 102; 103 is missing now.
        st.comp_psn = Psn::new(101);
        read_gaps::advance(&mut st);
        assert_eq!(st.comp_psn, Psn::new(103));
        assert!(read_gaps::recover(&mut st, Psn::new(100), false));
        let ask = st.read_ask.expect("the next run");
        assert_eq!(
            (ask.start, ask.end, ask.after),
            (Psn::new(103), Psn::new(103), None)
        );
        // 103 comes: A, the SEND (B's responses acknowledge it) and B all complete.
        st.placed.mark(Psn::new(103));
        read_gaps::advance(&mut st);
        assert_eq!(st.comp_psn, Psn::new(109));
        assert_eq!(st.oldest_unfinished(), None);
        assert_eq!(st.rd_outstanding, 0);
        for i in 0..3 {
            assert_eq!(st.entry(i).and_then(|t| t.done), Some(WcStatus::Success));
        }
    }

    #[test]
    fn an_ack_past_an_unanswered_read_asks_for_its_rest() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // READ (100..=103), then a SEND (104) that the peer acknowledges: the READ's
        // responses were all lost.
        reading(&mut st, Psn::new(100), 4);
        sending(&mut st, Psn::new(104), 1, 1);
        let a = acked(&st, 104);
        // An implicit NAK.
        assert!(ack_up_to(&mut st, a));
        assert!(read_gaps::recover(&mut st, Psn::new(104), true));
        let ask = st.read_ask.expect("an ask");
        assert_eq!((ask.start, ask.end), (Psn::new(100), Psn::new(103)));
        // Answered by a request sent after it while a response is still missing: again.
        st.read_ask = Some(ReadAsk {
            after: Some(Psn::new(105)),
            ..ask
        });
        st.placed.mark(Psn::new(102));
        st.comp_psn = Psn::new(102);
        read_gaps::advance(&mut st);
        assert_eq!(st.comp_psn, Psn::new(103));
        assert!(read_gaps::recover(&mut st, Psn::new(105), true));
        let ask = st.read_ask.expect("asked again");
        assert_eq!(
            (ask.start, ask.end, ask.after),
            (Psn::new(103), Psn::new(103), None)
        );
    }

    #[test]
    fn the_answer_to_a_probe_for_a_reads_first_response_asks_for_the_rest() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // READ (100..=115), none of whose responses came: the tail probe asked for 100 alone.
        reading(&mut st, Psn::new(100), 16);
        st.read_ask = Some(ReadAsk {
            after: Some(Psn::new(116)),
            ..ReadAsk::new(Psn::new(100), Psn::new(100))
        });
        // Its answer, in order and ending the run asked for: the rest is asked for at once.
        st.comp_psn = Psn::new(101);
        read_gaps::advance(&mut st);
        assert!(read_gaps::rest_missing(&st, Psn::new(115)));
        assert!(read_gaps::recover(&mut st, Psn::new(100), true));
        let ask = st.read_ask.expect("the rest");
        assert_eq!((ask.start, ask.end), (Psn::new(101), Psn::new(115)));
        assert!(ask.after.is_none());
        st.read_ask = None;
        st.placed.mark(Psn::new(110));
        assert!(read_gaps::recover(&mut st, Psn::new(100), true));
        let ask = st.read_ask.expect("the run before 110");
        assert_eq!((ask.start, ask.end), (Psn::new(101), Psn::new(109)));
        // A READ whose last response came is missing nothing.
        st.comp_psn = Psn::new(116);
        assert!(!read_gaps::rest_missing(&st, Psn::new(115)));
    }

    /// The peer NAKed `probe` (acknowledging what came before): it went alone.
    fn probed_alone(st: &mut SendState, probe: u32) {
        let a = acked(st, probe - 1);
        assert!(!ack_up_to(st, a));
        probe::send_again(st, Some(Psn::new(probe)));
        assert_eq!(st.alone_due(), Some(Psn::new(probe)));
        st.alone_sent(true);
    }

    /// The probe at `probe`, sent alone for `why`, is answered by an ACK through `through`.
    fn answered(st: &mut SendState, probe: u32, why: AloneWhy, through: u32) {
        probe::learn(st, Psn::new(through));
        let a = acked(st, through);
        assert!(!ack_up_to(st, a));
        probe::answered_alone(st, Psn::new(probe), why, Psn::new(through));
    }

    #[test]
    fn a_nak_sends_the_packet_it_names_alone_and_what_followed_stays_tracked() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        st.peer = PeerRecovery::Keeps;
        // A SEND of 64 packets (100..=163), then a READ of 32 responses (164..=195), all sent.
        sending(&mut st, Psn::new(100), 64, 64);
        reading(&mut st, Psn::new(164), 32);
        // Neither a READ's response nor a PSN not sent goes alone; its request does.
        assert!(!st.can_send_alone(Psn::new(170)));
        assert!(!st.can_send_alone(Psn::new(196)));
        assert!(st.can_send_alone(Psn::new(164)));
        // The peer NAKs 110: 110 goes alone; the sender stays at 196 and nothing is dropped.
        probed_alone(&mut st, 110);
        assert!(st.probe_waits());
        assert_eq!((st.psn, st.count, st.rd_outstanding), (Psn::new(196), 2, 1));
        // Its answer acknowledges through 150 alone: 151 was lost too, and goes alone next.
        answered(&mut st, 110, AloneWhy::Nak, 150);
        assert_eq!(st.alone_due(), Some(Psn::new(151)));
        st.alone_sent(true);
        // Answered through the SEND's end: next is the READ's request, which the peer may have
        // kept; its responses answer it. Nothing goes alone and the sender goes on.
        answered(&mut st, 151, AloneWhy::Next, 163);
        assert_eq!((st.probe, st.probe_waits()), (None, false));
        let at = (st.psn, st.comp_psn, st.count);
        assert_eq!(at, (Psn::new(196), Psn::new(164), 2));
        assert_eq!(st.entry(0).and_then(|t| t.done), Some(WcStatus::Success));
    }

    #[test]
    fn a_probe_sent_alone_answered_at_it_by_an_unknown_peer_goes_back() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sending(&mut st, Psn::new(100), 64, 64);
        probed_alone(&mut st, 110);
        // Answered at the probe: the peer may have dropped 111..=163 (C rxe does). Go-back-N
        // from 111, resuming the SEND at its 12th packet.
        answered(&mut st, 110, AloneWhy::Nak, 110);
        assert_eq!(st.peer, PeerRecovery::Unknown { misses: 1 });
        let at = (st.psn, st.comp_psn, st.count);
        assert_eq!(at, (Psn::new(111), Psn::new(111), 0));
        assert_eq!(st.resume.map(|r| r.packets), Some(11));
    }

    #[test]
    fn a_tail_probe_answered_at_it_by_an_unknown_peer_goes_on() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // A SEND (100), then a READ of 20 responses (101..=120), sent, none answered: the
        // tail probe sends the SEND alone.
        sending(&mut st, Psn::new(100), 1, 1);
        reading(&mut st, Psn::new(101), 20);
        st.probe_alone(Psn::new(100), AloneWhy::Tail);
        st.alone_sent(true);
        // The SEND's late ACK: the READ's responses follow it; nothing goes back.
        answered(&mut st, 100, AloneWhy::Tail, 100);
        assert_eq!(st.peer, PeerRecovery::Unknown { misses: 0 });
        let at = (st.psn, st.comp_psn, st.alone_due());
        assert_eq!(at, (Psn::new(121), Psn::new(101), None));
        // A peer known to drop what follows a gap gets the READ again.
        st.peer = PeerRecovery::GoBackN;
        probe::answered_alone(&mut st, Psn::new(100), AloneWhy::Tail, Psn::new(100));
        assert_eq!((st.psn, st.comp_psn), (Psn::new(101), Psn::new(101)));
    }

    #[test]
    fn a_probe_for_the_next_gap_answered_at_it_goes_back() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        st.peer = PeerRecovery::Keeps;
        sending(&mut st, Psn::new(100), 64, 64);
        probed_alone(&mut st, 110);
        // The peer kept 111..=120; 121 goes alone next.
        answered(&mut st, 110, AloneWhy::Nak, 120);
        assert_eq!(st.alone_due(), Some(Psn::new(121)));
        st.alone_sent(true);
        // Answered at 121 alone: the peer holds nothing after it (its store was full, or all
        // of it was lost): everything from 122 goes again.
        answered(&mut st, 121, AloneWhy::Next, 121);
        let at = (st.psn, st.comp_psn, st.count);
        assert_eq!(at, (Psn::new(122), Psn::new(122), 0));
        assert_eq!(st.probe, None);
    }

    #[test]
    fn a_probe_answered_past_it_behind_a_read_still_missing_responses_is_over() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        st.peer = PeerRecovery::Keeps;
        reading(&mut st, Psn::new(100), 32);
        sending(&mut st, Psn::new(132), 32, 32);
        reading(&mut st, Psn::new(164), 4);
        st.probe_alone(Psn::new(140), AloneWhy::Nak);
        st.alone_sent(true);
        // An ACK through the SEND ends the probe though the READ keeps the oldest PSN.
        let a = acked(&st, 163);
        assert!(ack_up_to(&mut st, a));
        probe::answered_alone(&mut st, Psn::new(140), AloneWhy::Nak, Psn::new(163));
        assert_eq!((st.probe, st.comp_psn), (None, Psn::new(100)));
    }
}
