// SPDX-License-Identifier: GPL-2.0

//! Device and port attributes (`struct ib_device_attr`, `struct ib_port_attr`) as plain Rust
//! values that the driver fills and the abstraction copies into the C structures.

use crate::{
    bindings,
    net::NetDevice, //
};

/// `IB_DEVICE_*` capability bits for [`DeviceAttr::device_cap_flags`].
pub(crate) mod device_cap {
    use crate::bindings;

    /// Bad P_Key counter supported.
    pub(crate) const BAD_PKEY_CNTR: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_BAD_PKEY_CNTR as u64;
    /// Bad Q_Key counter supported.
    pub(crate) const BAD_QKEY_CNTR: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_BAD_QKEY_CNTR as u64;
    /// Automatic path migration (accepted, single path).
    pub(crate) const AUTO_PATH_MIG: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_AUTO_PATH_MIG as u64;
    /// Port change supported.
    pub(crate) const CHANGE_PHY_PORT: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_CHANGE_PHY_PORT as u64;
    /// UD address vectors are checked against the QP's port.
    pub(crate) const UD_AV_PORT_ENFORCE: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE as u64;
    /// Port active events are generated.
    pub(crate) const PORT_ACTIVE_EVENT: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as u64;
    /// The system image GUID is valid.
    pub(crate) const SYS_IMAGE_GUID: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID as u64;
    /// RC RNR NAKs are generated.
    pub(crate) const RC_RNR_NAK_GEN: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64;
    /// SRQs can be resized.
    pub(crate) const SRQ_RESIZE: u64 = bindings::ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE as u64;
    /// Memory management extensions (fast registration, local invalidate).
    pub(crate) const MEM_MGT_EXTENSIONS: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64;
    /// Memory windows.
    pub(crate) const MEM_WINDOW: u64 = bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW as u64;
    /// Type 2B memory windows.
    pub(crate) const MEM_WINDOW_TYPE_2B: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B as u64;
    /// Global visibility FLUSH.
    pub(crate) const FLUSH_GLOBAL: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64;
    /// ATOMIC WRITE.
    pub(crate) const ATOMIC_WRITE: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as u64;
}

/// Atomic operation guarantees (`enum ib_atomic_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomicCap {
    /// Atomic among the QPs of this device only.
    Hca,
}

/// An IB MTU (`enum ib_mtu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl Mtu {
    /// The largest IB MTU whose packets fit in `bytes` of payload, or `None` below 256.
    pub(crate) fn fitting(bytes: u32) -> Option<Self> {
        Some(match bytes {
            4096.. => Self::Mtu4096,
            2048.. => Self::Mtu2048,
            1024.. => Self::Mtu1024,
            512.. => Self::Mtu512,
            256.. => Self::Mtu256,
            _ => return None,
        })
    }

    /// The MTU in bytes.
    pub(crate) fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// The `enum ib_mtu` value.
    pub(crate) fn to_raw(self) -> bindings::ib_mtu {
        self as bindings::ib_mtu
    }

    /// From an `enum ib_mtu` value.
    pub(crate) fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::Mtu256,
            2 => Self::Mtu512,
            3 => Self::Mtu1024,
            4 => Self::Mtu2048,
            5 => Self::Mtu4096,
            _ => return None,
        })
    }
}

/// Logical port state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortState {
    /// The link is down.
    Down,
    /// The port can send and receive.
    Active,
}

/// Physical port state (`enum ib_port_phys_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhysState {
    /// The port is administratively down.
    Disabled,
    /// The port is up and waits for a link.
    Polling,
    /// The link is up.
    LinkUp,
}

impl PhysState {
    /// The physical state of an Ethernet port on `nd`, as rxe reports it: link up when the
    /// netdev is up with carrier, polling when it is up without carrier, disabled when down.
    pub(crate) fn of_netdev(nd: &NetDevice) -> Self {
        if nd.is_running() {
            Self::LinkUp
        } else if nd.is_up() {
            Self::Polling
        } else {
            Self::Disabled
        }
    }

    fn to_raw(self) -> u8 {
        (match self {
            Self::Disabled => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED,
            Self::Polling => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING,
            Self::LinkUp => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP,
        }) as u8
    }
}

/// Device attributes reported by `query_device` (and cached by the core at registration).
#[derive(Clone, Debug, Default)]
pub(crate) struct DeviceAttr {
    /// Firmware version (a software driver reports 0).
    pub(crate) fw_ver: u64,
    /// System image GUID (network byte order).
    pub(crate) sys_image_guid: u64,
    /// Largest MR in bytes.
    pub(crate) max_mr_size: u64,
    /// Supported page sizes (bit mask).
    pub(crate) page_size_cap: u64,
    /// IEEE vendor ID.
    pub(crate) vendor_id: u32,
    /// Vendor part ID.
    pub(crate) vendor_part_id: u32,
    /// Hardware version.
    pub(crate) hw_ver: u32,
    /// Maximum number of QPs.
    pub(crate) max_qp: u32,
    /// Maximum WRs per QP.
    pub(crate) max_qp_wr: u32,
    /// `IB_DEVICE_*` capabilities, see [`device_cap`].
    pub(crate) device_cap_flags: u64,
    /// Whether `rdma link delete` may unregister the device (`IBK_ALLOW_USER_UNREG`).
    pub(crate) allow_user_unreg: bool,
    /// Whether user MRs may be paged on demand (`IBK_ON_DEMAND_PAGING`): RC may use them for
    /// every operation, UD for sends and receives, as C rxe reports (no implicit ODP).
    pub(crate) on_demand_paging: bool,
    /// Maximum send SGEs per WR.
    pub(crate) max_send_sge: u32,
    /// Maximum receive SGEs per WR.
    pub(crate) max_recv_sge: u32,
    /// Maximum SGEs per RDMA READ WR.
    pub(crate) max_sge_rd: u32,
    /// Maximum number of CQs.
    pub(crate) max_cq: u32,
    /// Maximum CQEs per CQ.
    pub(crate) max_cqe: u32,
    /// Maximum number of MRs.
    pub(crate) max_mr: u32,
    /// Maximum number of PDs.
    pub(crate) max_pd: u32,
    /// Maximum outstanding RDMA READ/atomic requests as responder, per QP.
    pub(crate) max_qp_rd_atom: u32,
    /// Maximum responder resources for the device.
    pub(crate) max_res_rd_atom: u32,
    /// Maximum outstanding RDMA READ/atomic requests as initiator, per QP.
    pub(crate) max_qp_init_rd_atom: u32,
    /// Atomic guarantees (`None`: no atomics).
    pub(crate) atomic_cap: Option<AtomicCap>,
    /// Maximum number of memory windows.
    pub(crate) max_mw: u32,
    /// Maximum multicast groups.
    pub(crate) max_mcast_grp: u32,
    /// Maximum QPs per multicast group.
    pub(crate) max_mcast_qp_attach: u32,
    /// Maximum QP attachments over all groups.
    pub(crate) max_total_mcast_qp_attach: u32,
    /// Maximum address handles.
    pub(crate) max_ah: u32,
    /// Maximum SRQs.
    pub(crate) max_srq: u32,
    /// Maximum WRs per SRQ.
    pub(crate) max_srq_wr: u32,
    /// Maximum SGEs per SRQ WR.
    pub(crate) max_srq_sge: u32,
    /// Maximum pages in a fast-registration page list.
    pub(crate) max_fast_reg_page_list_len: u32,
    /// Number of P_Keys.
    pub(crate) max_pkeys: u16,
    /// Local CA ACK delay (4.096 µs × 2^n).
    pub(crate) local_ca_ack_delay: u8,
}

impl DeviceAttr {
    /// Copies the attributes into the C structure.
    pub(super) fn write_to(&self, c: &mut bindings::ib_device_attr) {
        c.fw_ver = self.fw_ver;
        c.sys_image_guid = self.sys_image_guid;
        c.max_mr_size = self.max_mr_size;
        c.page_size_cap = self.page_size_cap;
        c.vendor_id = self.vendor_id;
        c.vendor_part_id = self.vendor_part_id;
        c.hw_ver = self.hw_ver;
        c.max_qp = clamp_int(self.max_qp);
        c.max_qp_wr = clamp_int(self.max_qp_wr);
        c.device_cap_flags = self.device_cap_flags;
        c.kernel_cap_flags = if self.allow_user_unreg {
            u64::from(bindings::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG)
        } else {
            0
        };
        if self.on_demand_paging {
            c.kernel_cap_flags |= u64::from(bindings::ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING);
            let send = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND;
            let recv = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV;
            let srq = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV;
            c.odp_caps.general_caps = u64::from(bindings::ib_odp_general_cap_bits_IB_ODP_SUPPORT);
            c.odp_caps.per_transport_caps.ud_odp_caps = send | recv | srq;
            c.odp_caps.per_transport_caps.rc_odp_caps = send
                | recv
                | srq
                | bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE
                | bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ
                | bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC
                | bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH
                | bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE;
        }
        c.max_send_sge = clamp_int(self.max_send_sge);
        c.max_recv_sge = clamp_int(self.max_recv_sge);
        c.max_sge_rd = clamp_int(self.max_sge_rd);
        c.max_cq = clamp_int(self.max_cq);
        c.max_cqe = clamp_int(self.max_cqe);
        c.max_mr = clamp_int(self.max_mr);
        c.max_pd = clamp_int(self.max_pd);
        c.max_qp_rd_atom = clamp_int(self.max_qp_rd_atom);
        c.max_res_rd_atom = clamp_int(self.max_res_rd_atom);
        c.max_qp_init_rd_atom = clamp_int(self.max_qp_init_rd_atom);
        c.atomic_cap = match self.atomic_cap {
            None => bindings::ib_atomic_cap_IB_ATOMIC_NONE,
            Some(AtomicCap::Hca) => bindings::ib_atomic_cap_IB_ATOMIC_HCA,
        };
        c.masked_atomic_cap = bindings::ib_atomic_cap_IB_ATOMIC_NONE;
        c.max_mw = clamp_int(self.max_mw);
        c.max_mcast_grp = clamp_int(self.max_mcast_grp);
        c.max_mcast_qp_attach = clamp_int(self.max_mcast_qp_attach);
        c.max_total_mcast_qp_attach = clamp_int(self.max_total_mcast_qp_attach);
        c.max_ah = clamp_int(self.max_ah);
        c.max_srq = clamp_int(self.max_srq);
        c.max_srq_wr = clamp_int(self.max_srq_wr);
        c.max_srq_sge = clamp_int(self.max_srq_sge);
        c.max_fast_reg_page_list_len = self.max_fast_reg_page_list_len;
        c.max_pkeys = self.max_pkeys;
        c.local_ca_ack_delay = self.local_ca_ack_delay;
    }
}

/// Port attributes reported by `query_port`.
#[derive(Clone, Debug)]
pub(crate) struct PortAttr {
    /// Logical state.
    pub(crate) state: PortState,
    /// Physical state.
    pub(crate) phys_state: PhysState,
    /// Virtual lanes (`IB_VL_*` encoding: 1 is VL0 only).
    pub(crate) max_vl_num: u8,
    /// Largest MTU the port supports.
    pub(crate) max_mtu: Mtu,
    /// MTU in use (follows the netdev MTU).
    pub(crate) active_mtu: Mtu,
    /// Number of GID table entries (the core fills the RoCE GIDs).
    pub(crate) gid_tbl_len: u32,
    /// Number of P_Key table entries.
    pub(crate) pkey_tbl_len: u16,
    /// `IB_PORT_*` capability bits.
    pub(crate) port_cap_flags: u32,
    /// Largest message in bytes.
    pub(crate) max_msg_sz: u32,
}

impl PortAttr {
    /// Copies the attributes into the C structure.
    pub(super) fn write_to(&self, c: &mut bindings::ib_port_attr) {
        let active = self.state == PortState::Active;
        c.state = if active {
            bindings::ib_port_state_IB_PORT_ACTIVE
        } else {
            bindings::ib_port_state_IB_PORT_DOWN
        };
        c.phys_state = self.phys_state.to_raw();
        c.max_vl_num = self.max_vl_num;
        c.max_mtu = self.max_mtu.to_raw();
        c.active_mtu = self.active_mtu.to_raw();
        c.gid_tbl_len = clamp_int(self.gid_tbl_len);
        c.pkey_tbl_len = self.pkey_tbl_len;
        c.port_cap_flags = self.port_cap_flags;
        c.max_msg_sz = self.max_msg_sz;
    }
}

/// `int` attribute fields: the limits are far below `i32::MAX`, saturate rather than wrap.
fn clamp_int(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// `IB_PORT_CM_SUP`: the port supports the communication manager.
pub(crate) const PORT_CM_SUP: u32 = bindings::ib_port_capability_mask_bits_IB_PORT_CM_SUP;

#[kernel::prelude::kunit_tests(rrxe_ib_attr)]
mod tests {
    use super::*;

    #[test]
    fn mtu_bytes_and_raw_round_trip() {
        for (m, bytes) in [
            (Mtu::Mtu256, 256),
            (Mtu::Mtu512, 512),
            (Mtu::Mtu1024, 1024),
            (Mtu::Mtu2048, 2048),
            (Mtu::Mtu4096, 4096),
        ] {
            assert_eq!(m.bytes(), bytes);
            assert_eq!(Mtu::fitting(bytes), Some(m));
            assert_eq!(Mtu::from_raw(m.to_raw()), Some(m));
        }
        assert_eq!(Mtu::fitting(255), None);
        assert_eq!(Mtu::from_raw(0), None);
        assert_eq!(Mtu::from_raw(6), None);
    }

    #[test]
    fn attr_clamps_instead_of_wrapping() {
        assert_eq!(clamp_int(5), 5);
        assert_eq!(clamp_int(u32::MAX), i32::MAX);
    }
}
