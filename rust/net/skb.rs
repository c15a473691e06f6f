// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`) owned by the driver, and queues of them.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h).

use super::NetDevice;
use crate::{
    bindings,
    mm::Fill, //
};
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// The bytes of `skb->cb` the driver may use.
pub(crate) const CB_LEN: usize = 48;

/// An owned socket buffer, freed (`kfree_skb`) when dropped unless handed on.
///
/// # Invariants
///
/// `skb` is a valid `sk_buff` owned exclusively by this object.
pub(crate) struct SkBuff {
    skb: NonNull<bindings::sk_buff>,
}

// SAFETY: An skb may be freed and used from any context; ownership is exclusive.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Allocates an empty buffer with room for `len` bytes, filled with [`Self::put_zeroed`]
    /// and [`Self::put_filled`], and `headroom` bytes (plus the device's link-layer room) in
    /// front for headers pushed later. Atomic allocation: callable in any context.
    pub(crate) fn alloc(ndev: &NetDevice, len: usize, headroom: usize) -> Result<Self> {
        let len = u32::try_from(len).map_err(|_| EINVAL)?;
        let headroom = u32::try_from(headroom).map_err(|_| EINVAL)?;
        // SAFETY: `ndev` is valid; the helper returns a new skb or NULL.
        let skb = unsafe { bindings::rrxe_helper_skb_alloc(ndev.as_raw(), len, headroom) };
        Ok(Self {
            skb: NonNull::new(skb).ok_or(ENOMEM)?,
        })
    }

    /// Checks that `n` more bytes fit at the end of the data.
    fn tailroom_for(&self, n: usize) -> Result<u32> {
        // SAFETY: By the type invariant the skb is valid.
        let room = unsafe { bindings::rrxe_helper_skb_tailroom(self.as_raw()) };
        u32::try_from(n).ok().filter(|&n| n <= room).ok_or(EINVAL)
    }

    /// Appends `n` zeroed bytes to the data and returns them; `EINVAL` if they do not fit.
    pub(crate) fn put_zeroed(&mut self, n: usize) -> Result<&mut [u8]> {
        let n32 = self.tailroom_for(n)?;
        // SAFETY: By the type invariant the skb is valid and ours; the tailroom holds `n`
        // bytes, which `skb_put` adds to the data and which are zeroed before the slice is
        // made.
        unsafe {
            let p = bindings::rrxe_helper_skb_put(self.as_raw(), n32);
            core::ptr::write_bytes(p, 0, n);
            Ok(core::slice::from_raw_parts_mut(p, n))
        }
    }

    /// Appends `n` bytes that `fill` writes through a [`Fill`] (payload copied from memory
    /// regions, with no zeroing first). The bytes join the data only when `fill` succeeds and
    /// wrote all `n` of them: no byte nobody wrote can leave in a packet. `EINVAL` if they do
    /// not fit or `fill` wrote fewer; `fill`'s own error otherwise.
    pub(crate) fn put_filled(
        &mut self,
        n: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result,
    ) -> Result {
        let n32 = self.tailroom_for(n)?;
        // SAFETY: By the type invariant the skb is valid and ours; its tailroom holds `n`
        // bytes at the tail pointer, which nothing else accesses while `&mut self` is held.
        let mut dst =
            unsafe { Fill::from_raw(bindings::rrxe_helper_skb_tail_pointer(self.as_raw()), n) };
        fill(&mut dst)?;
        if dst.written() != n {
            return Err(EINVAL);
        }
        // SAFETY: As above; the `n` bytes were all written.
        unsafe { bindings::rrxe_helper_skb_put(self.as_raw(), n32) };
        Ok(())
    }

    /// Frees a buffer that served its purpose (`consume_skb`: drop monitors do not count it,
    /// as they count the buffers dropped with [`Drop`]).
    pub(crate) fn consume(self) {
        // SAFETY: By the type invariant we own the skb; `into_raw` gives up our ownership.
        unsafe { bindings::rrxe_helper_skb_consume(self.into_raw()) };
    }

    /// Takes ownership of a received buffer.
    ///
    /// # Safety
    ///
    /// `skb` is a valid skb whose ownership the caller passes on.
    pub(crate) unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Option<Self> {
        NonNull::new(skb).map(|skb| Self { skb })
    }

    /// Gives up ownership (to a C function that consumes it).
    pub(super) fn into_raw(self) -> *mut bindings::sk_buff {
        let raw = self.skb.as_ptr();
        core::mem::forget(self);
        raw
    }

    pub(super) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.skb.as_ptr()
    }

    /// The number of bytes from `data` to the end.
    pub(crate) fn len(&self) -> usize {
        // SAFETY: By the type invariant the skb is valid.
        unsafe { bindings::rrxe_helper_skb_len(self.as_raw()) as usize }
    }

    /// Whether more segments of the same received GSO buffer follow this one at once: the
    /// UDP socket split a train and delivers its segments in a loop. Only a hint (a buffer
    /// from elsewhere may be linked too): the caller may defer work to the last segment but
    /// must not rely on it arriving.
    pub(crate) fn segments_follow(&self) -> bool {
        // SAFETY: By the type invariant the skb is valid; `next` is only read.
        unsafe { bindings::rrxe_helper_skb_segments_follow(self.as_raw()) }
    }

    /// Makes the whole buffer linear (one contiguous area); `ENOMEM` if that fails.
    pub(crate) fn linearize(&mut self) -> Result {
        // SAFETY: By the type invariant the skb is valid and ours.
        kernel::error::to_result(unsafe { bindings::rrxe_helper_skb_linearize(self.as_raw()) })
    }

    /// The linear data from `data` on. For a buffer that is not linear this is only its head;
    /// received buffers are linearised first.
    pub(crate) fn data(&self) -> &[u8] {
        // SAFETY: By the type invariant the skb is valid. Its head holds `skb_headlen` bytes at
        // `data`; the borrow of `self` keeps them alive.
        unsafe {
            let len = bindings::rrxe_helper_skb_headlen(self.as_raw()) as usize;
            let data = bindings::rrxe_helper_skb_data(self.as_raw());
            core::slice::from_raw_parts(data, len)
        }
    }

    /// The linear data, writable.
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: As in `data`; `&mut self` makes the access exclusive.
        unsafe {
            let len = bindings::rrxe_helper_skb_headlen(self.as_raw()) as usize;
            let data = bindings::rrxe_helper_skb_data(self.as_raw());
            core::slice::from_raw_parts_mut(data, len)
        }
    }

    /// The bytes from the network header to the end of the data (a received, linearised
    /// packet: IP header, UDP header, payload). Empty if the network header is not inside the
    /// buffer's head.
    pub(crate) fn network_bytes(&self) -> &[u8] {
        // SAFETY: By the type invariant the skb is valid; both pointers are into its head, and
        // the network header precedes `data` on receive (checked).
        unsafe {
            let nh = bindings::rrxe_helper_skb_network_header(self.as_raw());
            let data = bindings::rrxe_helper_skb_data(self.as_raw());
            let len = bindings::rrxe_helper_skb_headlen(self.as_raw()) as usize;
            if nh > data || (data as usize - nh as usize) > 256 {
                return &[];
            }
            let before = data as usize - nh as usize;
            core::slice::from_raw_parts(nh, before + len)
        }
    }

    /// Prepends `n` bytes and returns them (to be filled by the caller); `None` when the
    /// headroom is too small.
    pub(crate) fn push(&mut self, n: usize) -> Option<&mut [u8]> {
        let n32 = u32::try_from(n).ok()?;
        // SAFETY: By the type invariant the skb is valid. `skb_push` panics when the headroom
        // is short, so check it first through the data pointer and the head.
        unsafe {
            let skb = self.as_raw();
            let data = bindings::rrxe_helper_skb_data(skb);
            if (data as usize) - ((*skb).head as usize) < n {
                return None;
            }
            let p = bindings::skb_push(skb, n32).cast::<u8>();
            core::ptr::write_bytes(p, 0, n);
            Some(core::slice::from_raw_parts_mut(p, n))
        }
    }

    /// A clone sharing the data (`skb_clone`, atomic); `ENOMEM` on failure. The data must be
    /// treated as read-only in both afterwards.
    pub(crate) fn try_clone(&self) -> Result<Self> {
        // SAFETY: By the type invariant the skb is valid; a clone is a new skb we own.
        let c = unsafe { bindings::skb_clone(self.as_raw(), kernel::bindings::GFP_ATOMIC) };
        Ok(Self {
            skb: NonNull::new(c).ok_or(ENOMEM)?,
        })
    }

    /// A private copy of the buffer and its data (`skb_copy`, atomic); `ENOMEM` on failure.
    pub(crate) fn try_copy(&self) -> Result<Self> {
        // SAFETY: By the type invariant the skb is valid; the copy is a new skb we own.
        let c = unsafe { bindings::skb_copy(self.as_raw(), kernel::bindings::GFP_ATOMIC) };
        Ok(Self {
            skb: NonNull::new(c).ok_or(ENOMEM)?,
        })
    }

    /// Removes `n` bytes from the front of the data; `EINVAL` if there are fewer.
    pub(crate) fn pull(&mut self, n: usize) -> Result {
        let n = u32::try_from(n).map_err(|_| EINVAL)?;
        if n as usize > self.data().len() {
            return Err(EINVAL);
        }
        // SAFETY: By the type invariant the skb is valid; `n` is within the linear data.
        kernel::error::to_result(unsafe { bindings::rrxe_helper_skb_pull(self.as_raw(), n) })
    }

    /// Marks the current `data` as the start of the network header.
    pub(crate) fn reset_network_header(&mut self) {
        // SAFETY: By the type invariant the skb is valid.
        unsafe { bindings::rrxe_helper_skb_reset_network_header(self.as_raw()) };
    }

    /// Marks the current `data` as the start of the transport header.
    pub(crate) fn reset_transport_header(&mut self) {
        // SAFETY: By the type invariant the skb is valid.
        unsafe { bindings::rrxe_helper_skb_reset_transport_header(self.as_raw()) };
    }

    /// Sets the link-layer protocol (`ETH_P_IP`, `ETH_P_IPV6`).
    pub(crate) fn set_protocol(&mut self, proto: u16) {
        // SAFETY: By the type invariant the skb is valid.
        unsafe { bindings::rrxe_helper_skb_set_protocol(self.as_raw(), proto) };
    }

    /// Sets the priority the egress qdisc and a VLAN's egress map see (`skb->priority`).
    pub(crate) fn set_priority(&mut self, priority: u32) {
        // SAFETY: By the type invariant the skb is valid and ours.
        unsafe { bindings::rrxe_helper_skb_set_priority(self.as_raw(), priority) };
    }

    /// Calls `f` with the device the buffer arrived on (or is sent from), if any.
    pub(crate) fn with_dev<R>(&self, f: impl FnOnce(&NetDevice) -> R) -> Option<R> {
        // SAFETY: By the type invariant the skb is valid; a buffer being received or sent
        // keeps its device alive (RCU/driver references) while we own it.
        let dev = unsafe { bindings::rrxe_helper_skb_dev(self.as_raw()) };
        if dev.is_null() {
            return None;
        }
        // SAFETY: As above.
        Some(f(unsafe { NetDevice::from_raw(dev) }))
    }

    /// The control buffer, free for the owner's use.
    pub(crate) fn cb(&mut self) -> &mut [u8; CB_LEN] {
        // SAFETY: `cb` is a 48-byte array inside the valid skb we own exclusively.
        unsafe { &mut *bindings::rrxe_helper_skb_cb(self.as_raw()).cast::<[u8; CB_LEN]>() }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the skb.
        unsafe { bindings::rrxe_helper_skb_free(self.as_raw()) };
    }
}

/// A train of packets for UDP segmentation, chained without copying: a head buffer whose
/// `data` starts at its IPv4 header, and members, each with its own IPv4 and UDP headers in
/// front of its packet, in the head's `frag_list` (`SKB_GSO_FRAGLIST`). The stack, at transmit
/// or in the receiving socket, splits it back into the buffers (`skb_segment_list`), giving each
/// the head's link-layer header and rewriting each IPv4 header's length, identification (the
/// head's plus the member's index) and checksum.
pub(crate) struct SkbTrain {
    head: SkBuff,
    segs: u16,
}

impl SkbTrain {
    /// A train of one: `head`, whose headers are complete (network and transport header set).
    pub(crate) fn new(head: SkBuff) -> Self {
        Self { head, segs: 1 }
    }

    /// Appends `member`, whose `data` starts at its IPv4 header (network header set) with the
    /// UDP header behind it (transport header set): its 28 bytes of headers stay in front of
    /// its data, the packet is what the train carries.
    pub(crate) fn push(&mut self, mut member: SkBuff) -> Result {
        member.pull(28)?;
        self.segs = self.segs.checked_add(1).ok_or(EINVAL)?;
        // SAFETY: Both skbs are valid and ours; the head takes ownership of the member, which
        // is linear (built by `alloc`) and not shared.
        unsafe { bindings::rrxe_helper_skb_fraglist_append(self.head.as_raw(), member.into_raw()) };
        Ok(())
    }

    /// The train as one buffer for `ip_local_out`, marked for UDP segmentation with `gso_size`
    /// bytes of UDP payload in the head (the members may be shorter). `EINVAL` (and the train
    /// freed) for a train of one or a head whose payload is not `gso_size` bytes.
    pub(crate) fn finish(self, gso_size: u16) -> Result<SkBuff> {
        let head_payload = self.head.data().len().checked_sub(28);
        if self.segs < 2 || head_payload != Some(gso_size.into()) {
            return Err(EINVAL);
        }
        // SAFETY: The head is valid and ours; the helper sets GSO fields only.
        unsafe {
            bindings::rrxe_helper_skb_udp_gso_fraglist(
                self.head.as_raw(),
                gso_size.into(),
                self.segs.into(),
            )
        };
        Ok(self.head)
    }
}

/// A queue of socket buffers (`struct sk_buff_head`, with its own interrupt-safe lock): any
/// context may add and take.
#[pin_data(PinnedDrop)]
pub(crate) struct SkbQueue {
    #[pin]
    head: Opaque<bindings::sk_buff_head>,
}

// SAFETY: The queue is protected by its own spinlock.
unsafe impl Send for SkbQueue {}
// SAFETY: As above.
unsafe impl Sync for SkbQueue {}

impl SkbQueue {
    /// An empty queue.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `skb_queue_head_init` initialises the head in place.
            head <- Opaque::ffi_init(|p| unsafe { bindings::rrxe_helper_skb_queue_init(p) }),
        })
    }

    /// Appends a buffer.
    pub(crate) fn push(&self, skb: SkBuff) {
        // SAFETY: The head is initialised; the queue takes ownership of the skb.
        unsafe { bindings::skb_queue_tail(self.head.get(), skb.into_raw()) };
    }

    /// Puts a buffer back at the head of the queue (it is taken next).
    pub(crate) fn push_front(&self, skb: SkBuff) {
        // SAFETY: The head is initialised; the queue takes ownership of the skb.
        unsafe { bindings::skb_queue_head(self.head.get(), skb.into_raw()) };
    }

    /// The number of buffers queued, read without the lock (a racy figure, as
    /// `skb_queue_len_lockless` reads it).
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: The head is initialised; `qlen` is a plain integer, read once.
        unsafe { core::ptr::read_volatile(&raw const (*self.head.get()).qlen) }
    }

    /// Appends a buffer unless the queue already holds `max`; gives it back if it does.
    pub(crate) fn push_bounded(&self, skb: SkBuff, max: u32) -> Result<(), SkBuff> {
        if self.len() >= max {
            return Err(skb);
        }
        self.push(skb);
        Ok(())
    }

    /// Takes the first buffer.
    pub(crate) fn pop(&self) -> Option<SkBuff> {
        // SAFETY: The head is initialised; a dequeued skb is ours.
        unsafe { SkBuff::from_raw(bindings::skb_dequeue(self.head.get())) }
    }
}

#[pinned_drop]
impl PinnedDrop for SkbQueue {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The head is initialised; the queue owns the buffers it frees.
        unsafe {
            bindings::skb_queue_purge_reason(
                self.head.get(),
                bindings::skb_drop_reason_SKB_DROP_REASON_QUEUE_PURGE,
            )
        };
    }
}
