// SPDX-License-Identifier: GPL-2.0

//! IPv4 routes and the IP output path: what a RoCEv2 packet needs between its UDP payload and
//! the netdev (route lookup, IP identification, `ip_local_out`).
//!
//! C headers: [`include/net/route.h`](srctree/include/net/route.h),
//! [`include/net/ip.h`](srctree/include/net/ip.h).

use super::{
    NetDevice,
    SkBuff,
    TxOwner,
    TxSocket, //
};
use crate::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// A held IPv4 route (`struct rtable`), released on drop.
///
/// # Invariants
///
/// `rt` is a valid route holding one reference, which this object owns.
pub(crate) struct Route4 {
    rt: NonNull<bindings::rtable>,
}

// SAFETY: A held route may be used and released from any context.
unsafe impl Send for Route4 {}
// SAFETY: Shared use only reads it.
unsafe impl Sync for Route4 {}

impl Route4 {
    /// Looks up the route from `saddr` to `daddr` (network byte order as bytes) out of `ndev`,
    /// through the cache of `socket` (one route: a QP's packets mostly go to one peer). A hit
    /// costs no FIB lookup; a route the tables have since changed is looked up again.
    /// `EHOSTUNREACH` when there is none. Not with interrupts disabled.
    pub(crate) fn lookup_cached<O: TxOwner>(
        socket: &TxSocket<O>,
        ndev: &NetDevice,
        saddr: [u8; 4],
        daddr: [u8; 4],
    ) -> Result<Self> {
        // SAFETY: The socket's sock and `ndev` are valid; the helper returns a held route or an
        // `ERR_PTR`, and serialises its use of the socket's cache under the socket's lock.
        let rt = unsafe {
            bindings::rrxe_helper_route4_cached(
                socket.raw_sk(),
                ndev.as_raw(),
                u32::from_ne_bytes(saddr),
                u32::from_ne_bytes(daddr),
            )
        };
        let rt = kernel::error::from_err_ptr(rt).map_err(|_| crate::kernel_ext::ehostunreach())?;
        Ok(Self {
            rt: NonNull::new(rt).ok_or_else(crate::kernel_ext::ehostunreach)?,
        })
    }

    /// Attaches the route to `skb`, whose `data` starts at a complete IPv4 header (pushed by
    /// the caller; its `tot_len` and checksum are filled by the output path), picks the IP
    /// identification, and returns the buffer for [`Self::output`]. A buffer the stack will
    /// cut into `segs` packets (UDP GSO) gets `segs` consecutive identifications, the first in
    /// its header.
    pub(crate) fn prepare(&self, skb: &mut SkBuff, segs: u16) -> Result {
        if skb.data().len() < 20 {
            return Err(EINVAL);
        }
        skb.reset_network_header();
        // SAFETY: The skb is valid and ours; the route is held. `data` points at an IPv4
        // header of at least 20 bytes (checked), which `__ip_select_ident` writes `id` of.
        unsafe {
            bindings::rrxe_helper_skb_set_dst4(skb.as_raw(), self.rt.as_ptr());
            let net = bindings::rrxe_helper_rt_net(self.rt.as_ptr());
            let iph = bindings::rrxe_helper_skb_data(skb.as_raw()).cast::<bindings::iphdr>();
            bindings::__ip_select_ident(net, iph, segs.max(1).into());
        }
        Ok(())
    }

    /// Sends a buffer [`Self::prepare`]d with this route (`ip_local_out`). Must not be called
    /// with interrupts disabled.
    pub(crate) fn output(&self, skb: SkBuff) -> Result {
        // SAFETY: The route is held; the skb carries a reference to it (`prepare`) and is
        // consumed by `ip_local_out` whatever it returns.
        let ret = unsafe {
            let net = bindings::rrxe_helper_rt_net(self.rt.as_ptr());
            bindings::ip_local_out(net, core::ptr::null_mut(), skb.into_raw())
        };
        // NET_XMIT_DROP and friends are positive; only negative values are errors.
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(())
    }
}

impl Drop for Route4 {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference.
        unsafe { bindings::rrxe_helper_rt_put(self.rt.as_ptr()) };
    }
}

/// A held IPv6 route (`struct dst_entry`), released on drop.
///
/// # Invariants
///
/// `dst` is a valid route holding one reference, which this object owns.
pub(crate) struct Route6 {
    dst: NonNull<bindings::dst_entry>,
}

// SAFETY: A held route may be used and released from any context.
unsafe impl Send for Route6 {}
// SAFETY: Shared use only reads it.
unsafe impl Sync for Route6 {}

impl Route6 {
    /// Looks up the route from `saddr` to `daddr` out of `ndev` (for UDP: no socket takes
    /// part, as for IPv4). `EHOSTUNREACH` when there is none. Any context.
    pub(crate) fn lookup(ndev: &NetDevice, saddr: &[u8; 16], daddr: &[u8; 16]) -> Result<Self> {
        // SAFETY: `ndev` is valid; the addresses are 16 bytes each. The helper returns a held
        // route or an `ERR_PTR`.
        let dst =
            unsafe { bindings::rrxe_helper_route6(ndev.as_raw(), saddr.as_ptr(), daddr.as_ptr()) };
        let dst =
            kernel::error::from_err_ptr(dst).map_err(|_| crate::kernel_ext::ehostunreach())?;
        Ok(Self {
            dst: NonNull::new(dst).ok_or_else(crate::kernel_ext::ehostunreach)?,
        })
    }

    /// Attaches the route to `skb`, whose `data` starts at a complete IPv6 header.
    pub(crate) fn prepare(&self, skb: &mut SkBuff) -> Result {
        if skb.data().len() < 40 {
            return Err(EINVAL);
        }
        skb.reset_network_header();
        // SAFETY: The skb is valid and ours; the route is held.
        unsafe { bindings::rrxe_helper_skb_set_dst6(skb.as_raw(), self.dst.as_ptr()) };
        Ok(())
    }

    /// Sends a buffer [`Self::prepare`]d with this route (`ip6_local_out`). Not with interrupts
    /// disabled.
    pub(crate) fn output(&self, skb: SkBuff) -> Result {
        // SAFETY: The route is held; the skb carries a reference to it and is consumed.
        let ret = unsafe {
            let net = bindings::rrxe_helper_dst_net(self.dst.as_ptr());
            bindings::ip6_local_out(net, core::ptr::null_mut(), skb.into_raw())
        };
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(())
    }
}

impl Drop for Route6 {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference.
        unsafe { bindings::rrxe_helper_dst_release(self.dst.as_ptr()) };
    }
}
