// SPDX-License-Identifier: GPL-2.0

//! The socket that owns what an object transmits (`skb->sk`, `skb->destructor`): the stack sees
//! the object's buffers as one flow, and the object learns when each is released.
//!
//! A buffer handed to the IP output path is released when the stack is done with it: on a veth
//! or the loopback netdev when the receiving side takes it off its CPU's backlog (`ip_rcv`
//! orphans it), on a NIC when the transmission completed (or earlier, where the driver orphans
//! it), or when it is dropped on the way. Until then it holds a counted reference to its owner
//! ([`ObjRef`]), so the owner's destroy waits for its buffers as C rxe's does.
//!
//! C header: [`include/net/sock.h`](srctree/include/net/sock.h).

use super::SkBuff;
use crate::bindings;
use crate::sync::{
    Counted,
    ObjRef, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};
use kernel::prelude::*;

/// An object that sends buffers owned by its [`TxSocket`].
pub(crate) trait TxOwner: Counted + Sized + 'static {
    /// The object's socket, if it has one (an object whose buffers never reach the stack needs
    /// none).
    fn tx_socket(&self) -> Option<&TxSocket<Self>>;

    /// One of the buffers sent with [`TxSocket::charge`] was released. Any context but hard
    /// interrupts (softirq, process). `received`: it is being received on this host (a veth
    /// or the loopback device carried it back in, and the IP layer let go of it before its
    /// receiver has it); otherwise it left through a device, or was dropped.
    fn tx_released(this: &ObjRef<Self>, received: bool);
}

/// A kernel UDP socket (never bound, never used to send or receive) that owns the buffers one
/// `O` sends. It lives in the initial network namespace, which never goes away; the owner's
/// namespace does not matter (the buffers are routed by the owner).
///
/// # Invariants
///
/// `sock` is a kernel socket released once, on drop. Its `sk_user_data` is null or the `O`
/// whose [`TxOwner::tx_socket`] it is, set by the first [`Self::charge`] and never changed.
pub(crate) struct TxSocket<O: TxOwner> {
    sock: NonNull<bindings::socket>,
    _owner: PhantomData<fn() -> O>,
}

// SAFETY: The socket is released through `&mut` (drop); `&TxSocket` only marks buffers, which
// the stack allows from any context.
unsafe impl<O: TxOwner> Send for TxSocket<O> {}
// SAFETY: As above.
unsafe impl<O: TxOwner> Sync for TxSocket<O> {}

/// The buffer's destructor: hands the owner's reference back and tells the owner.
///
/// # Safety
///
/// Called by the stack, once, for a buffer marked by [`TxSocket::charge`].
unsafe extern "C" fn released<O: TxOwner>(skb: *mut bindings::sk_buff) {
    // SAFETY: `charge` set `skb->sk` to an `O`'s socket and took a reference on it for this
    // buffer; the socket's user data is that `O` (set before).
    let sk = unsafe { bindings::rrxe_helper_skb_sk(skb) };
    // SAFETY: As above: `sk` is valid while the buffer holds it.
    let owner = unsafe { bindings::rrxe_helper_sk_user_data(sk) }.cast::<O>();
    // SAFETY: `charge` gave up one counted reference to `owner` for this buffer.
    let owner = unsafe { ObjRef::from_raw(owner) };
    // SAFETY: `skb` is valid for the destructor's duration.
    let received = unsafe { bindings::rrxe_helper_skb_received(skb) };
    O::tx_released(&owner, received);
    drop(owner);
    // SAFETY: The reference `charge` took for this buffer.
    unsafe { bindings::rrxe_helper_sock_put(sk) };
}

impl<O: TxOwner> TxSocket<O> {
    /// Creates the socket. Process context.
    pub(crate) fn new() -> Result<Self> {
        let mut sock = core::ptr::null_mut();
        // SAFETY: `init_net` is always valid; on success `sock` is a new kernel socket.
        kernel::error::to_result(unsafe {
            bindings::sock_create_kern(
                &raw mut bindings::init_net,
                bindings::AF_INET as i32,
                bindings::sock_type_SOCK_DGRAM as i32,
                bindings::IPPROTO_UDP as i32,
                &mut sock,
            )
        })?;
        // INVARIANT: Created above; its user data starts null.
        Ok(Self {
            sock: NonNull::new(sock).ok_or(ENOMEM)?,
            _owner: PhantomData,
        })
    }

    /// The socket's sock, for the route cache ([`super::Route4::lookup_cached`]).
    pub(super) fn raw_sk(&self) -> *mut bindings::sock {
        // SAFETY: By the type invariant `sock` is a live socket with its sock.
        unsafe { bindings::rrxe_helper_socket_sk(self.sock.as_ptr()) }
    }

    /// Marks `skb`, about to be sent by `owner`, as `owner`'s: the stack counts it in the
    /// owner's flow, and [`TxOwner::tx_released`] is called once it is released. The buffer
    /// holds a reference to `owner` until then. `EHOSTUNREACH` if `owner` has no socket (it
    /// was not set up to send to the network); the buffer is left as it was.
    pub(crate) fn charge(owner: &O, skb: &mut SkBuff) -> Result {
        let socket = owner
            .tx_socket()
            .ok_or_else(crate::kernel_ext::ehostunreach)?;
        // SAFETY: By the type invariant `sock` is a live socket with its sock.
        let sk = unsafe { bindings::rrxe_helper_socket_sk(socket.sock.as_ptr()) };
        let me = core::ptr::from_ref(owner);
        // SAFETY: `sk` is valid. INVARIANT: the user data is null or `owner` already: the
        // socket is reached only through its owner's `tx_socket`.
        unsafe {
            if bindings::rrxe_helper_sk_user_data(sk)
                .cast_const()
                .cast::<O>()
                != me
            {
                bindings::rrxe_helper_sk_set_user_data(sk, me.cast_mut().cast());
            }
        }
        let reference = ObjRef::new(owner).into_raw();
        debug_assert!(core::ptr::eq(reference, me));
        // SAFETY: `skb` is owned; the helper orphans it, takes a reference on `sk` and sets the
        // destructor, which gives back that reference and the owner's.
        unsafe { bindings::rrxe_helper_skb_set_owner(skb.as_raw(), sk, Some(released::<O>)) };
        Ok(())
    }
}

impl<O: TxOwner> Drop for TxSocket<O> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the socket is released once, here. Buffers it still
        // owns hold their own reference to its sock (but none can: each holds a reference to
        // the owner, whose data, this socket included, is dropped only when none is left).
        unsafe { bindings::sock_release(self.sock.as_ptr()) };
    }
}
