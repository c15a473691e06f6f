// SPDX-License-Identifier: GPL-2.0

//! Tests of the performance management agent's rules in `proto::mad`.
//!
//! The expected values are the raw ones of `include/rdma/ib_mad.h` and `include/rdma/ib_pma.h`
//! and of IBA Vol 1 13.4.5 (methods), 13.4.7 (status) and 16.1.3 (PerfMgt attributes), not the
//! module's constants.

use crate::proto::mad::encode;
use crate::proto::mad::reply_for;
use crate::proto::mad::MadReply;
use crate::proto::mad::MadStatus;
use crate::proto::mad::PmaAttr;
use crate::proto::mad::PmaCounters;

const PERF: u8 = 0x04;
const GET: u8 = 0x01;
const SET: u8 = 0x02;
const GET_RESP: u8 = 0x81;
const CPI: u16 = 0x0001;
const PC: u16 = 0x0012;
const PC_EXT: u16 = 0x001d;

fn status(r: MadReply) -> Option<u16> {
    match r {
        MadReply::Status(s) => Some(s.raw()),
        _ => None,
    }
}

#[test]
fn get_of_the_three_attributes_is_answered_with_them() {
    assert_eq!(
        reply_for(PERF, 1, GET, CPI),
        MadReply::Attr(PmaAttr::ClassPortInfo)
    );
    assert_eq!(
        reply_for(PERF, 1, GET, PC),
        MadReply::Attr(PmaAttr::PortCounters)
    );
    assert_eq!(
        reply_for(PERF, 1, GET, PC_EXT),
        MadReply::Attr(PmaAttr::PortCountersExt)
    );
}

#[test]
fn get_of_another_attribute_is_an_unsupported_method_attribute() {
    for attr in [0x0000, 0x0002, 0x0016, 0x0011, 0x001e, 0xff00, 0xffff] {
        assert_eq!(
            status(reply_for(PERF, 1, GET, attr)),
            Some(0x000c),
            "attr {attr:#x}"
        );
    }
}

#[test]
fn set_is_an_unsupported_method_attribute_whatever_the_attribute() {
    // Clearing PortCounters (IBA 16.1.3.5) is not implemented.
    for attr in [CPI, PC, PC_EXT, 0x0016, 0xffff] {
        assert_eq!(
            status(reply_for(PERF, 1, SET, attr)),
            Some(0x000c),
            "attr {attr:#x}"
        );
    }
}

#[test]
fn other_requests_are_an_unsupported_method() {
    // Reserved, GetTable, GetTraceTable, GetMulti, Delete, the highest request method.
    for m in [0x00, 0x04, 0x08, 0x12, 0x13, 0x14, 0x15, 0x7f] {
        assert_eq!(
            status(reply_for(PERF, 1, m, PC)),
            Some(0x0008),
            "method {m:#x}"
        );
    }
}

#[test]
fn a_request_of_another_class_version_is_a_bad_version() {
    for v in [0, 2, 0xff] {
        assert_eq!(status(reply_for(PERF, v, GET, PC)), Some(0x0004));
        assert_eq!(status(reply_for(PERF, v, SET, PC)), Some(0x0004));
    }
}

#[test]
fn responses_traps_reports_and_sends_are_never_answered() {
    for v in [0, 1, 2] {
        for attr in [CPI, PC, PC_EXT, 0x0016, 0xffff] {
            for m in 0x80..=0xffu8 {
                assert_eq!(reply_for(PERF, v, m, attr), MadReply::Pass, "method {m:#x}");
            }
            // Send, Trap, Report, TrapRepress.
            for m in [0x03, 0x05, 0x06, 0x07] {
                assert_eq!(reply_for(PERF, v, m, attr), MadReply::Pass, "method {m:#x}");
            }
        }
    }
}

#[test]
fn other_classes_are_left_to_ib_core() {
    for class in [0x00, 0x01, 0x03, 0x05, 0x07, 0x81, 0xff] {
        for m in [GET, SET, GET_RESP, 0x05, 0x12] {
            assert_eq!(reply_for(class, 1, m, PC), MadReply::Pass);
        }
    }
}

#[test]
fn no_answer_is_answered() {
    // Every answer is a GetResp; whatever it carries, the agent at the other end (this one)
    // leaves it alone, so two agents cannot keep each other busy.
    for v in 0..=0xffu8 {
        for m in 0..=0xffu8 {
            for attr in [CPI, PC, PC_EXT, 0x0016] {
                if reply_for(PERF, v, m, attr) != MadReply::Pass {
                    assert_eq!(m & 0x80, 0);
                    assert_eq!(reply_for(PERF, v, GET_RESP, attr), MadReply::Pass);
                }
            }
        }
    }
}

#[test]
fn status_values_are_the_iba_ones() {
    assert_eq!(MadStatus::BadVersion.raw(), 0x0004);
    assert_eq!(MadStatus::UnsupportedMethod.raw(), 0x0008);
    assert_eq!(MadStatus::UnsupportedMethodAttr.raw(), 0x000c);
}

fn be64(d: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(d[at..at + 8].try_into().unwrap())
}

fn be32(d: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(d[at..at + 4].try_into().unwrap())
}

const C: PmaCounters = PmaCounters {
    xmit_bytes: 4000,
    rcv_bytes: 8000,
    xmit_packets: 7,
    rcv_packets: 9,
    link_downed: 300,
};

#[test]
fn class_port_info_announces_the_extended_counters() {
    let mut d = [0u8; 232];
    encode(PmaAttr::ClassPortInfo, &C, &mut d);
    assert_eq!(&d[40..44], &[1, 1, 0x02, 0x00]);
    assert!(d[..40].iter().chain(&d[44..]).all(|&b| b == 0));
}

#[test]
fn port_counters_saturate_and_count_data_in_four_octets() {
    let mut d = [0u8; 232];
    encode(PmaAttr::PortCounters, &C, &mut d);
    assert_eq!(d[40 + 1], 1);
    assert_eq!(d[40 + 7], 255);
    assert_eq!(be32(&d, 40 + 24), 1000);
    assert_eq!(be32(&d, 40 + 28), 2000);
    assert_eq!(be32(&d, 40 + 32), 7);
    assert_eq!(be32(&d, 40 + 36), 9);
    let big = PmaCounters {
        xmit_packets: 1 << 40,
        ..C
    };
    encode(PmaAttr::PortCounters, &big, &mut d);
    assert_eq!(be32(&d, 40 + 32), u32::MAX);
}

#[test]
fn port_counters_ext_are_64_bit() {
    let mut d = [0u8; 232];
    let c = PmaCounters {
        xmit_packets: 1 << 40,
        ..C
    };
    encode(PmaAttr::PortCountersExt, &c, &mut d);
    assert_eq!(d[40 + 1], 1);
    assert_eq!(be64(&d, 40 + 8), 1000);
    assert_eq!(be64(&d, 40 + 16), 2000);
    assert_eq!(be64(&d, 40 + 24), 1 << 40);
    assert_eq!(be64(&d, 40 + 32), 9);
}

#[test]
fn a_short_buffer_is_left_as_it_is() {
    let mut d = [0u8; 44];
    encode(PmaAttr::PortCountersExt, &C, &mut d);
    assert_eq!(d[41], 1);
    assert!(d[42..].iter().all(|&b| b == 0));
}
