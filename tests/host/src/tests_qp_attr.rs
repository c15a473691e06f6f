// SPDX-License-Identifier: GPL-2.0

//! Tests of the QP attribute checks in `proto::qp_attr`: ranges, timers, path MTUs and
//! RDMA READ/atomic depths.

use crate::proto::qp_attr::check_min_rnr_timer;
use crate::proto::qp_attr::check_path_mtu;
use crate::proto::qp_attr::check_retry_cnt;
use crate::proto::qp_attr::check_rnr_retry;
use crate::proto::qp_attr::check_timeout;
use crate::proto::qp_attr::effective_path_mtu;
use crate::proto::qp_attr::local_ack_timeout_ns;
use crate::proto::qp_attr::path_mtu_ok;
use crate::proto::qp_attr::rd_atomic_depth;
use crate::proto::qp_attr::rnr_timer_us;
use crate::proto::qp_attr::PathMtu;
use crate::proto::qp_attr::QpAttrError;

#[test]
fn attribute_ranges() {
    assert_eq!(check_timeout(0), Ok(0));
    assert_eq!(check_timeout(31), Ok(31));
    assert_eq!(check_timeout(32), Err(QpAttrError::Timeout));
    assert_eq!(check_timeout(u8::MAX), Err(QpAttrError::Timeout));
    assert_eq!(check_retry_cnt(7), Ok(7));
    assert_eq!(check_retry_cnt(8), Err(QpAttrError::RetryCount));
    assert_eq!(check_rnr_retry(7), Ok(7));
    assert_eq!(check_rnr_retry(8), Err(QpAttrError::RnrRetry));
    assert_eq!(check_min_rnr_timer(0), Ok(0));
    assert_eq!(check_min_rnr_timer(31), Ok(31));
    assert_eq!(check_min_rnr_timer(32), Err(QpAttrError::MinRnrTimer));
}

#[test]
fn timers() {
    assert_eq!(local_ack_timeout_ns(0), Ok(None));
    assert_eq!(local_ack_timeout_ns(1), Ok(Some(8192)));
    // 14 is the usual default: 4.096 us * 2^14 = 67.1 ms.
    assert_eq!(local_ack_timeout_ns(14), Ok(Some(67_108_864)));
    assert_eq!(local_ack_timeout_ns(31), Ok(Some(4096 << 31)));
    assert_eq!(local_ack_timeout_ns(32), Err(QpAttrError::Timeout));
    assert_eq!(rnr_timer_us(0), Some(655_360));
    assert_eq!(rnr_timer_us(1), Some(10));
    assert_eq!(rnr_timer_us(12), Some(640));
    assert_eq!(rnr_timer_us(25), Some(61_440));
    assert_eq!(rnr_timer_us(31), Some(491_520));
    assert_eq!(rnr_timer_us(32), None);
    // Codes 1 to 31 grow monotonically.
    for code in 1..31 {
        assert!(rnr_timer_us(code).unwrap() < rnr_timer_us(code + 1).unwrap());
    }
}

#[test]
fn path_mtu() {
    for (raw, bytes) in [(1, 256), (2, 512), (3, 1024), (4, 2048), (5, 4096)] {
        let mtu = PathMtu::from_raw(raw).unwrap();
        assert_eq!(mtu.to_raw(), raw);
        assert_eq!(mtu.bytes(), bytes);
    }
    assert_eq!(PathMtu::from_raw(0), None);
    assert_eq!(PathMtu::from_raw(6), None);
    assert_eq!(check_path_mtu(3, 3), Ok(PathMtu::Mtu1024));
    assert_eq!(check_path_mtu(1, 5), Ok(PathMtu::Mtu256));
    assert_eq!(check_path_mtu(5, 3), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(0, 5), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(6, 5), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(3, 0), Err(QpAttrError::PathMtu));
    assert!(path_mtu_ok(4, 5));
    assert!(!path_mtu_ok(5, 4));
    assert_eq!(
        effective_path_mtu(PathMtu::Mtu4096, PathMtu::Mtu1024),
        PathMtu::Mtu1024
    );
    assert_eq!(
        effective_path_mtu(PathMtu::Mtu512, PathMtu::Mtu1024),
        PathMtu::Mtu512
    );
}

#[test]
fn rd_atomic_depths() {
    assert_eq!(rd_atomic_depth(0, 128), Ok(0));
    assert_eq!(rd_atomic_depth(1, 128), Ok(1));
    assert_eq!(rd_atomic_depth(3, 128), Ok(4));
    assert_eq!(rd_atomic_depth(16, 128), Ok(16));
    assert_eq!(rd_atomic_depth(65, 128), Ok(128));
    assert_eq!(rd_atomic_depth(128, 128), Ok(128));
    assert_eq!(rd_atomic_depth(129, 128), Err(QpAttrError::RdAtomic));
    assert_eq!(rd_atomic_depth(255, 128), Err(QpAttrError::RdAtomic));
    assert_eq!(
        rd_atomic_depth(u32::MAX, u32::MAX),
        Err(QpAttrError::RdAtomic)
    );
    // A limit that is not a power of two bounds the rounded depth.
    assert_eq!(rd_atomic_depth(65, 100), Err(QpAttrError::RdAtomic));
    assert_eq!(rd_atomic_depth(0, 0), Ok(0));
    assert_eq!(rd_atomic_depth(1, 0), Err(QpAttrError::RdAtomic));
}
