// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the requester's tail probes (`tail.rs`): which READ a tail probe asks for
//! again, and what it asks for; what a probe sent alone holds back; which later runs of READ
//! responses are asked for at once (`state/extra_asks.rs`); what a placed READ response does
//! to a probe's deadline.

#[kernel::prelude::kunit_tests(rrxe_pipeline_requester)]
mod tests {
    use super::super::super::{
        sinks::Remote,
        state::{
            AloneWhy,
            QpPipe,
            SendState,
            Track, //
        },
    };
    use super::super::tail::{
        read_probe,
        replan_of,
        Replan, //
    };
    use crate::proto::{
        psn::Psn,
        read_gaps::{
            Mark,
            ReadAsk, //
        },
        recovery::{
            PeerRecovery,
            PAST_PROBE_PSNS, //
        },
        wqe::WrOpcode, //
    };
    use kernel::prelude::*;

    /// The pipeline state of a connected QP with a 16-slot send queue.
    fn small_pipe() -> Pin<KBox<QpPipe>> {
        KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap()
    }

    /// A WQE of `opcode` over PSNs `first..first + npsn` (a READ: its responses), sent; a READ
    /// or atomic with its sink.
    fn sent(st: &mut SendState, opcode: WrOpcode, first: u32, npsn: u32) {
        let mut t = Track::new(1, opcode, true, Psn::new(first), npsn * 1024);
        t.last_psn = Psn::new(first + npsn - 1);
        if opcode.wants_response() {
            let remote = Remote {
                va: 0x10000,
                rkey: 0x1234,
            };
            t.sink = st.sinks.take(st.rd_outstanding, |_| None, 0, remote);
            assert!(t.sink.is_some());
            st.rd_outstanding += 1;
        }
        assert!(st.push(t));
        st.advance(npsn);
    }

    /// The ask a tail probe leaves, as (start, end, sent).
    fn ask(st: &SendState) -> Option<(u32, u32, bool)> {
        st.read_ask
            .map(|a| (a.start.value(), a.end.value(), a.after.is_some()))
    }

    #[test]
    fn a_read_none_of_whose_responses_came_is_asked_for_whole() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaRead, 100, 4);
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((100, 103, false)));
        assert_eq!(st.probes_unanswered, 1);
    }

    #[test]
    fn a_large_read_none_of_whose_responses_came_is_asked_for_by_its_first() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaRead, 100, 16);
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((100, 100, false)));
    }

    #[test]
    fn an_ask_whose_answer_is_late_is_replaced_by_its_oldest_missing_response() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaRead, 100, 64);
        // Asked for 110..=163 and sent; 25 of its answer came.
        st.read_ask = Some(ReadAsk {
            after: Some(Psn::new(164)),
            ..ReadAsk::new(Psn::new(110), Psn::new(163))
        });
        st.comp_psn = Psn::new(135);
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((135, 135, false)));
        // The first ask's early LAST may still come, and fits.
        assert_eq!(st.read_ask.and_then(|a| a.late_end), Some(Psn::new(163)));
    }

    #[test]
    fn a_read_with_responses_asks_for_its_oldest_missing_one() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaRead, 100, 4);
        st.comp_psn = Psn::new(102);
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((102, 102, false)));
    }

    #[test]
    fn a_read_behind_a_write_waiting_for_its_ack_is_asked_for_whole() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        // A WRITE (100..=101), unacknowledged, then a READ (102..=105) none of whose responses
        // came: its request or every response was lost, and the WRITE's ACK with them.
        sent(&mut st, WrOpcode::RdmaWrite, 100, 2);
        sent(&mut st, WrOpcode::RdmaRead, 102, 4);
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((102, 105, false)));
        // A probe left unanswered sends the same ask again.
        st.read_ask = Some(ReadAsk {
            after: Some(Psn::new(106)),
            ..st.read_ask.unwrap()
        });
        assert!(read_probe(&mut st));
        assert_eq!(ask(&st), Some((102, 105, false)));
        assert_eq!(st.probes_unanswered, 2);
    }

    #[test]
    fn an_atomic_behind_a_write_is_no_read_to_ask_for() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaWrite, 100, 2);
        sent(&mut st, WrOpcode::AtomicFetchAndAdd, 102, 1);
        assert!(!read_probe(&mut st));
        assert_eq!(ask(&st), None);
    }

    #[test]
    fn a_send_alone_is_no_read_to_ask_for() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::Send, 100, 2);
        assert!(!read_probe(&mut st));
        assert_eq!(ask(&st), None);
    }

    #[test]
    fn a_probe_sent_alone_holds_back_new_packets_only_from_a_peer_not_known_to_keep() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaWrite, 100, 8);
        st.probe_alone(Psn::new(103), AloneWhy::Nak);
        // It waits to go.
        assert!(st.probe_holds_back());
        st.alone_sent(true);
        // A peer not known to keep may drop what follows.
        assert!(st.probe_holds_back());
        st.peer = PeerRecovery::Keeps;
        // A keeping peer keeps what goes meanwhile.
        assert!(!st.probe_holds_back());
        sent(&mut st, WrOpcode::RdmaWrite, 108, PAST_PROBE_PSNS - 8);
        // No more than its store keeps.
        assert!(st.probe_holds_back());
        st.peer = PeerRecovery::GoBackN;
        st.comp_psn = Psn::new(104);
        assert!(st.probe_holds_back());
    }

    #[test]
    fn the_later_runs_known_missing_are_asked_for_at_once_from_a_keeping_peer() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaRead, 100, 64);
        for p in [103, 110, 120] {
            assert_eq!(st.placed.mark(Psn::new(p)), Mark::Fresh);
        }
        assert!(st.ask_missing_read_run(false));
        assert_eq!(ask(&st), Some((100, 102, false)));
        // The asks slot by slot (nothing allocated under the lock).
        let extras = |st: &SendState| {
            st.extra_asks
                .map(|a| a.map(|a| (a.start.value(), a.end.value())))
        };
        st.plan_extra_asks();
        // Not to a peer not known to keep.
        assert!(extras(&st).iter().all(Option::is_none));
        st.peer = PeerRecovery::Keeps;
        st.plan_extra_asks();
        // Nothing is placed after 121: 121..=163 is not known missing.
        assert_eq!(extras(&st)[..3], [Some((104, 109)), Some((111, 119)), None]);
        st.plan_extra_asks();
        // A run asked for is not asked for again.
        assert_eq!(extras(&st).iter().flatten().count(), 2);
        // The oldest PSN not yet acknowledged reaches the second run: its ask becomes the
        // oldest run's, cut to start there.
        let a = st.take_extra_ask(Psn::new(112)).unwrap();
        assert_eq!((a.start.value(), a.end.value()), (112, 119));
        assert_eq!(extras(&st)[..2], [Some((104, 109)), None]);
    }

    #[test]
    fn an_ack_sooner_than_a_round_trip_after_a_probe_is_not_its_answer() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        st.alone_sent_ns = 5_000_000;
        assert!(!st.too_soon_for_alone(5_000_100));
        // The shortest round trip is 1 ms.
        st.rtt.sending(Psn::new(100), 1_000_000, Psn::new(100));
        assert!(st.rtt.acked(Psn::new(100), 2_000_000, None).is_some());
        // 0.2 ms after the probe left, and a round trip after.
        assert!(st.too_soon_for_alone(5_200_000));
        assert!(!st.too_soon_for_alone(6_000_000));
    }

    #[test]
    fn a_placed_response_moves_a_probes_answer_wait_and_never_drops_it() {
        let pipe = small_pipe();
        let mut st = pipe.send.lock();
        st.start_at(Psn::new(100));
        sent(&mut st, WrOpcode::RdmaWrite, 100, 4);
        sent(&mut st, WrOpcode::RdmaRead, 104, 8);
        // No probe: the tail probe is planned again from now.
        st.tail_probe_at = Some(7);
        assert_eq!(replan_of(&mut st), Replan::TailProbe);
        assert_eq!(st.tail_probe_at, None);
        // A probe sent alone waits for its answer until its deadline: it is moved on.
        st.probe_alone(Psn::new(101), AloneWhy::Nak);
        assert_eq!(replan_of(&mut st), Replan::Nothing);
        st.alone_sent(true);
        st.tail_probe_at = Some(7);
        assert_eq!(replan_of(&mut st), Replan::AnswerWait);
        assert_eq!(st.tail_probe_at, Some(7));
    }
}
