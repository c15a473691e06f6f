// SPDX-License-Identifier: GPL-2.0

//! Device and port limits. rrxe advertises the same limits as the C rxe (`rxe_param.h`) so that
//! applications tuned for rxe see the same device.

use crate::ib::{
    device_cap,
    AtomicCap,
    DeviceAttr,
    Mtu, //
};

/// The upper bound of most object counts (2^20).
const DEFAULT_MAX: u32 = 1 << 20;

/// The first QP index handed out (QPNs below are reserved; 1 is GSI).
pub(crate) const MIN_QP_INDEX: u32 = 16;

/// Largest MR index; memory windows use the indices above it.
pub(crate) const MAX_MR_INDEX: u32 = DEFAULT_MAX >> 1;

/// Scatter/gather entries per send or receive WR.
pub(crate) const MAX_SGE: u32 = 32;

/// Headers a RoCEv2 packet carries on top of its payload (Ethernet-less worst case: IPv6 40 +
/// UDP 8 + BTH 12 + the largest extension 16 + ICRC 4), subtracted from the netdev MTU.
pub(crate) const MAX_HDR_LENGTH: u32 = 80;

/// Work requests per send or receive queue.
pub(crate) const MAX_QP_WR: u32 = DEFAULT_MAX;

/// Largest QP index (QPNs are 24-bit; rxe hands out 16..2^20).
pub(crate) const MAX_QP_INDEX: u32 = DEFAULT_MAX;

/// Outstanding RDMA READ/atomic operations per QP, either side.
pub(crate) const MAX_QP_RD_ATOM: u32 = 128;

/// Largest SRQ index.
pub(crate) const MAX_SRQ_INDEX: u32 = DEFAULT_MAX;

/// The first SRQ index (rxe's range).
pub(crate) const MIN_SRQ_INDEX: u32 = 0x0002_0001;

/// Work requests per SRQ.
pub(crate) const MAX_SRQ_WR: u32 = DEFAULT_MAX;

/// Scatter/gather entries per SRQ work request.
pub(crate) const MAX_SRQ_SGE: u32 = 27;

/// Address handles (`ah_num` runs 1..=MAX_AH).
pub(crate) const MAX_AH: u32 = (1 << 15) - 1;

/// Multicast groups.
pub(crate) const MAX_MCAST_GRP: u32 = 8192;

/// QPs per multicast group.
pub(crate) const MAX_MCAST_QP_ATTACH: u32 = 56;

/// QP attachments over all groups.
pub(crate) const MAX_TOTAL_MCAST_QP_ATTACH: u32 = 0x70000;

/// Pages in a fast-registration page list.
pub(crate) const MAX_FAST_REG_PAGES: u32 = 512;

/// Completions per CQ.
pub(crate) const MAX_CQE: u32 = (1 << 15) - 1;

/// GID table entries per port (filled by the core from the netdev's addresses).
pub(crate) const GID_TABLE_LEN: u32 = 1024;

/// IEEE OUI of the device: none (IBA A3.3.1).
pub(crate) const VENDOR_ID: u32 = 0xff_ffff;

/// The path MTU a netdev MTU allows: the largest IB MTU that fits once the headers are
/// subtracted, and never below 256.
pub(crate) fn active_mtu(netdev_mtu: u32) -> Mtu {
    Mtu::fitting(netdev_mtu.saturating_sub(MAX_HDR_LENGTH)).unwrap_or(Mtu::Mtu256)
}

/// The attributes of a device whose system image GUID is `guid`.
pub(crate) fn device_attr(guid: u64) -> DeviceAttr {
    DeviceAttr {
        sys_image_guid: guid,
        max_mr_size: u64::MAX,
        page_size_cap: 0xffff_f000,
        vendor_id: VENDOR_ID,
        max_qp: DEFAULT_MAX - MIN_QP_INDEX,
        max_qp_wr: MAX_QP_WR,
        device_cap_flags: device_cap::BAD_PKEY_CNTR
            | device_cap::BAD_QKEY_CNTR
            | device_cap::AUTO_PATH_MIG
            | device_cap::CHANGE_PHY_PORT
            | device_cap::UD_AV_PORT_ENFORCE
            | device_cap::PORT_ACTIVE_EVENT
            | device_cap::SYS_IMAGE_GUID
            | device_cap::RC_RNR_NAK_GEN
            | device_cap::SRQ_RESIZE
            | device_cap::MEM_MGT_EXTENSIONS
            | device_cap::MEM_WINDOW
            | device_cap::FLUSH_GLOBAL
            | device_cap::MEM_WINDOW_TYPE_2B
            | device_cap::ATOMIC_WRITE,
        allow_user_unreg: true,
        on_demand_paging: true,
        max_send_sge: MAX_SGE,
        max_recv_sge: MAX_SGE,
        max_sge_rd: 32,
        max_cq: DEFAULT_MAX,
        max_cqe: MAX_CQE,
        max_mr: MAX_MR_INDEX - 1,
        max_mw: DEFAULT_MAX - (MAX_MR_INDEX + 1),
        max_pd: DEFAULT_MAX,
        max_qp_rd_atom: MAX_QP_RD_ATOM,
        max_res_rd_atom: 0x3f000,
        max_qp_init_rd_atom: MAX_QP_RD_ATOM,
        atomic_cap: Some(AtomicCap::Hca),
        max_mcast_grp: MAX_MCAST_GRP,
        max_mcast_qp_attach: MAX_MCAST_QP_ATTACH,
        max_total_mcast_qp_attach: MAX_TOTAL_MCAST_QP_ATTACH,
        max_ah: MAX_AH,
        max_srq: MAX_SRQ_INDEX - MIN_SRQ_INDEX,
        max_srq_wr: MAX_SRQ_WR,
        max_srq_sge: MAX_SRQ_SGE,
        max_fast_reg_page_list_len: MAX_FAST_REG_PAGES,
        max_pkeys: 64,
        local_ca_ack_delay: 15,
        ..DeviceAttr::default()
    }
}

#[kernel::prelude::kunit_tests(rrxe_limits)]
mod tests {
    use super::*;

    #[test]
    fn active_mtu_follows_netdev_mtu() {
        assert_eq!(active_mtu(1500), Mtu::Mtu1024);
        assert_eq!(active_mtu(9000), Mtu::Mtu4096);
        assert_eq!(active_mtu(4096 + MAX_HDR_LENGTH), Mtu::Mtu4096);
        assert_eq!(active_mtu(4096 + MAX_HDR_LENGTH - 1), Mtu::Mtu2048);
        assert_eq!(active_mtu(2048 + MAX_HDR_LENGTH), Mtu::Mtu2048);
        assert_eq!(active_mtu(1024 + MAX_HDR_LENGTH - 1), Mtu::Mtu512);
        assert_eq!(active_mtu(68), Mtu::Mtu256);
        assert_eq!(active_mtu(0), Mtu::Mtu256);
    }

    #[test]
    fn index_spaces_do_not_overlap() {
        let a = device_attr(0);
        // MR indices 1..=MAX_MR_INDEX, MW indices above, both below 2^20.
        assert!(a.max_mr < MAX_MR_INDEX);
        assert!(MAX_MR_INDEX + 1 + a.max_mw <= DEFAULT_MAX);
        assert!(a.max_qp + MIN_QP_INDEX <= DEFAULT_MAX);
    }

    #[test]
    fn advertised_limits_match_rxe() {
        let a = device_attr(0x1122_3344_5566_7788);
        assert_eq!(a.sys_image_guid, 0x1122_3344_5566_7788);
        assert_eq!(a.max_send_sge, 32);
        assert_eq!(a.max_cqe, 32767);
        assert_eq!(a.max_qp_rd_atom, 128);
        assert_eq!(a.max_ah, 32767);
        assert!(a.allow_user_unreg);
        assert_eq!(a.atomic_cap, Some(AtomicCap::Hca));
    }

    #[test]
    fn persistence_flush_is_not_advertised() {
        // IB_DEVICE_FLUSH_PERSISTENT: every IB_ACCESS_FLUSH_PERSISTENT registration is refused
        // (no persistent memory support), so the capability is not claimed.
        const FLUSH_PERSISTENT: u64 = 1 << 39;
        let a = device_attr(0);
        assert_eq!(a.device_cap_flags & FLUSH_PERSISTENT, 0);
        assert_ne!(a.device_cap_flags & device_cap::FLUSH_GLOBAL, 0);
    }
}
