// SPDX-License-Identifier: GPL-2.0

//! Kernel UDP tunnel sockets (`udp_sock_create` + `setup_udp_tunnel_sock`): every datagram to
//! the bound port is handed to a Rust receiver instead of a socket queue.
//!
//! C header: [`include/net/udp_tunnel.h`](srctree/include/net/udp_tunnel.h).

use super::{
    NetDevice,
    SkBuff, //
};
use crate::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// Receives the datagrams of a [`UdpTunnel`], in softirq context.
pub(crate) trait UdpReceiver: 'static {
    /// Takes ownership of one datagram; `skb->data` is at the UDP header.
    fn receive(skb: SkBuff);
}

/// A UDP tunnel socket bound to a port in a network namespace, closed on drop. It holds no
/// reference on the namespace: see [`super::NetnsTunnel`], which closes it when the namespace
/// goes.
///
/// # Invariants
///
/// `sk` is the sock of a kernel socket set up as a UDP tunnel whose `encap_rcv` is `rcv::<R>`
/// for the `R` it was opened with; it is released once, on drop.
pub(crate) struct UdpTunnel {
    sk: NonNull<bindings::sock>,
}

// SAFETY: The socket is only released (any process context) through `&mut`.
unsafe impl Send for UdpTunnel {}
// SAFETY: `&UdpTunnel` gives no access to the socket.
unsafe impl Sync for UdpTunnel {}

/// The `encap_rcv` callback.
///
/// # Safety
///
/// Called by the UDP layer with a valid skb whose ownership it passes on.
unsafe extern "C" fn rcv<R: UdpReceiver>(
    _sk: *mut bindings::sock,
    skb: *mut bindings::sk_buff,
) -> c_int {
    // SAFETY: The UDP layer passes us ownership of a valid skb (returning 0 means consumed).
    if let Some(skb) = unsafe { SkBuff::from_raw(skb) } {
        R::receive(skb);
    }
    0
}

impl UdpTunnel {
    /// Opens a tunnel socket on UDP `port` in the network namespace of `ndev` (IPv6-only when
    /// `ipv6`) whose datagrams go to `R`. Process context.
    pub(crate) fn open<R: UdpReceiver>(ndev: &NetDevice, port: u16, ipv6: bool) -> Result<Self> {
        let mut sock = core::ptr::null_mut();
        // SAFETY: `ndev` is valid, so is its namespace; on success the helper stores a new
        // socket in `sock` set up with `rcv::<R>`, which stays valid for the socket's life.
        let err = unsafe {
            let net = bindings::rrxe_helper_dev_net(ndev.as_raw());
            bindings::rrxe_helper_udp_tunnel_open(net, port, ipv6, Some(rcv::<R>), &mut sock)
        };
        kernel::error::to_result(err)?;
        // SAFETY: A created socket has its `sk`.
        let sk = unsafe { (*sock).sk };
        Ok(Self {
            sk: NonNull::new(sk).ok_or(ENOMEM)?,
        })
    }
}

impl Drop for UdpTunnel {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the socket is ours and released only here; the UDP
        // layer waits for receivers in flight (RCU) before it is freed.
        unsafe { bindings::udp_tunnel_sock_release(self.sk.as_ptr()) };
    }
}
