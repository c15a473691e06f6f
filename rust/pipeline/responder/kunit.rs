// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the responder's queue of READs to send again (`reply.rs`, `read_again`).

#[kernel::prelude::kunit_tests(rrxe_pipeline_responder)]
mod tests {
    use super::super::super::state::{
        QpPipe,
        ReadOut,
        RecvState,
        READS_QUEUED, //
    };
    use super::super::reply::read_again;
    use crate::proto::psn::Psn;
    use kernel::prelude::*;

    /// The run `sent..npkts` of the READ at PSN `psn`.
    fn run(psn: u32, sent: u32, npkts: u32) -> ReadOut {
        ReadOut {
            rkey: 0x1234,
            va: 0x10000,
            len: 128 * 1024,
            psn: Psn::new(psn),
            npkts,
            sent,
        }
    }

    /// The READ being sent and what is queued, as (psn, sent, npkts), in order (nothing
    /// allocated under the lock).
    fn order(st: &mut RecvState) -> [Option<(u32, u32, u32)>; READS_QUEUED + 2] {
        let mut v = [None; READS_QUEUED + 2];
        let mut cur = st.read;
        for slot in v.iter_mut() {
            let Some(r) = cur else {
                break;
            };
            *slot = Some((r.psn.value(), r.sent, r.npkts));
            cur = st.read_next.pop();
        }
        v
    }

    /// The pipeline state of a connected QP, nothing being sent.
    fn pipe() -> Pin<KBox<QpPipe>> {
        KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap()
    }

    #[test]
    fn asks_for_later_runs_and_other_reads_queue_in_order() {
        let pipe = pipe();
        let mut st = pipe.recv.lock();
        assert!(read_again(&mut st, run(100, 10, 12)).is_ok());
        assert!(read_again(&mut st, run(100, 30, 31)).is_ok());
        assert!(read_again(&mut st, run(300, 5, 9)).is_ok());
        let first = [
            Some((100, 10, 12)),
            Some((100, 30, 31)),
            Some((300, 5, 9)),
            None,
        ];
        assert_eq!(order(&mut st)[..4], first);
    }

    #[test]
    fn a_run_sent_already_starts_again_and_the_rest_follows() {
        let pipe = pipe();
        let mut st = pipe.recv.lock();
        // A READ of 128 responses being sent, at its 80th.
        st.read = Some(run(100, 80, 128));
        assert!(read_again(&mut st, run(100, 10, 11)).is_ok());
        assert_eq!(
            order(&mut st)[..3],
            [Some((100, 10, 11)), Some((100, 80, 128)), None]
        );
    }

    #[test]
    fn a_run_still_to_send_needs_nothing() {
        let pipe = pipe();
        let mut st = pipe.recv.lock();
        st.read = Some(run(100, 20, 128));
        assert!(read_again(&mut st, run(100, 40, 50)).is_ok());
        assert_eq!(order(&mut st)[..2], [Some((100, 20, 128)), None]);
    }

    #[test]
    fn a_run_going_past_what_is_to_be_sent_queues_the_rest() {
        let pipe = pipe();
        let mut st = pipe.recv.lock();
        st.read = Some(run(100, 20, 64));
        assert!(read_again(&mut st, run(100, 40, 128)).is_ok());
        assert_eq!(
            order(&mut st)[..3],
            [Some((100, 20, 64)), Some((100, 64, 128)), None]
        );
    }

    #[test]
    fn a_full_queue_drops_the_duplicate() {
        let pipe = pipe();
        let mut st = pipe.recv.lock();
        st.read = Some(run(100, 0, 128));
        for k in 0..READS_QUEUED as u32 {
            assert!(read_again(&mut st, run(1000 + 200 * k, 0, 4)).is_ok());
        }
        assert!(read_again(&mut st, run(5000, 0, 4)).is_err());
    }
}
