// SPDX-License-Identifier: GPL-2.0

//! Counted references to verbs objects for the data path.
//!
//! The packet pipeline finds QPs by number and MRs by key in its own tables, outside any verbs
//! call on them. An [`ObjRef`] keeps such an object from being freed: its destroy trampoline
//! first lets the driver drop the references it holds in its tables, then waits (sleeping, on a
//! completion the last reference signals) until no reference is left, and only then drops the
//! driver data and lets the memory go.

use core::ptr::NonNull;
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Full,
            Relaxed,
            Release, //
        },
        Completion, //
    },
};

/// The references to an object: one that the object holds on itself while it lives, plus one
/// per [`ObjRef`]; and the completion the last reference signals once the object is being
/// destroyed.
#[pin_data]
pub(crate) struct Users {
    count: Atomic<u32>,
    #[pin]
    gone: Completion,
}

impl Users {
    /// The object's own reference only.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            count: Atomic::new(1),
            gone <- Completion::new(),
        })
    }

    /// Drops the object's own reference and sleeps until the last [`ObjRef`] is dropped: that
    /// one signals the completion. Process context, once, when the object is destroyed. The
    /// data path holds references for the length of one run or packet (the driver closes its
    /// timers and removes its table entries first), so this is short; a wait that does not end
    /// is a bug, which the hung-task detector reports.
    pub(crate) fn wait_unused(&self) {
        if self.count.fetch_sub(1, Full) == 1 {
            return;
        }
        self.gone.wait_for_completion();
    }

    fn get(&self) {
        self.count.fetch_add(1, Relaxed);
    }

    fn put(&self) {
        // The last reference of an object being destroyed (its own is gone): wakes the
        // destroyer, which frees the object once this returns (`wait_for_completion` returns
        // only after `complete_all` released the completion's lock).
        if self.count.fetch_sub(1, Release) == 1 {
            self.gone.complete_all();
        }
    }
}

/// An object that can be referenced by [`ObjRef`].
///
/// # Safety
///
/// The object's destroy path calls [`Users::wait_unused`] on [`Self::users`] before the object
/// is dropped or freed.
pub(crate) unsafe trait Counted: Send + Sync {
    /// The reference count.
    fn users(&self) -> &Users;
}

/// A counted reference to a live object `O`.
///
/// # Examples
///
/// A table of the data path holds a reference to each QP it can find, so a packet that finds
/// one can use it after the table's lock is gone; destroying the QP first removes the entry,
/// then waits for the packets' references ([`Users::wait_unused`]):
///
/// ```ignore
/// fn publish_qp(&self, qp: &Qp<RrxeDevice>) {
///     let _ = self.qp_table.insert(qp.qpn(), ObjRef::new(qp), GFP_KERNEL);
/// }
///
/// fn lookup_qp(&self, qpn: u32) -> Option<ObjRef<Qp<RrxeDevice>>> {
///     self.qp_table.get(qpn) // a clone of the table's reference
/// }
/// ```
///
/// # Invariants
///
/// `obj` is valid and counted in its `users`; by `Counted`'s contract it stays valid until this
/// reference is dropped.
pub(crate) struct ObjRef<O: Counted> {
    obj: NonNull<O>,
}

// SAFETY: `O: Send + Sync`; the reference only gives `&O`.
unsafe impl<O: Counted> Send for ObjRef<O> {}
// SAFETY: As above.
unsafe impl<O: Counted> Sync for ObjRef<O> {}

impl<O: Counted> ObjRef<O> {
    /// Takes a reference to `obj`.
    pub(crate) fn new(obj: &O) -> Self {
        obj.users().get();
        // INVARIANT: Counted above; `obj` is valid now and, counted, stays so.
        Self {
            obj: NonNull::from(obj),
        }
    }

    /// Gives the reference up as a pointer (still counted), for C code to hold: a buffer the
    /// object sent, whose release hands it back with [`Self::from_raw`].
    pub(crate) fn into_raw(self) -> *const O {
        let p = self.obj.as_ptr().cast_const();
        core::mem::forget(self);
        p
    }

    /// Takes back a reference given up with [`Self::into_raw`].
    ///
    /// # Safety
    ///
    /// `p` comes from [`Self::into_raw`] and is taken back once.
    pub(crate) unsafe fn from_raw(p: *const O) -> Self {
        // INVARIANT: `into_raw` kept the count that made the object valid.
        Self {
            // SAFETY: `p` came from a `NonNull` (the caller's guarantee).
            obj: unsafe { NonNull::new_unchecked(p.cast_mut()) },
        }
    }
}

impl<O: Counted> Clone for ObjRef<O> {
    fn clone(&self) -> Self {
        Self::new(self)
    }
}

impl<O: Counted> core::ops::Deref for ObjRef<O> {
    type Target = O;

    fn deref(&self) -> &O {
        // SAFETY: By the type invariant the object is valid while we are counted.
        unsafe { self.obj.as_ref() }
    }
}

impl<O: Counted> Drop for ObjRef<O> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the object is valid until this decrement.
        unsafe { self.obj.as_ref() }.users().put();
    }
}

/// The reference an asynchronous callback (a timer, a work item) holds on its target while it
/// is pending, and whether the callback was closed for good (its target is going away). Kept
/// under the callback's lock.
pub(crate) struct PendingRef<O: Counted> {
    target: Option<ObjRef<O>>,
    closed: bool,
}

impl<O: Counted> PendingRef<O> {
    /// Nothing pending, not closed.
    pub(crate) const fn new() -> Self {
        Self {
            target: None,
            closed: false,
        }
    }

    /// Takes a reference to `target` unless one is held; `false` once closed (the caller then
    /// does not arm or queue anything).
    pub(crate) fn hold(&mut self, target: &ObjRef<O>) -> bool {
        if self.closed {
            return false;
        }
        if self.target.is_none() {
            self.target = Some(target.clone());
        }
        true
    }

    /// Whether a reference is held.
    pub(crate) fn is_held(&self) -> bool {
        self.target.is_some()
    }

    /// Takes the reference out (the callback runs, or the closer drops it).
    pub(crate) fn take(&mut self) -> Option<ObjRef<O>> {
        self.target.take()
    }

    /// Closes for good and takes the reference out (to drop outside the lock).
    pub(crate) fn close(&mut self) -> Option<ObjRef<O>> {
        self.closed = true;
        self.target.take()
    }
}
