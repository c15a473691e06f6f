// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`struct ib_cq`) with the driver's data as a Rust tail.
//!
//! ib_core allocates `size_ib_cq` bytes (our [`Cq<T>`]), calls `create_cq`, where the driver
//! data is written in place, and frees the memory after `destroy_cq` dropped it. ib_core refuses
//! to destroy a CQ that QPs still use.

use super::{
    object::{
        CqKind,
        Obj, //
    },
    DeviceOps, //
};
use crate::bindings;
use core::ptr::NonNull;

/// A completion queue: the C `struct ib_cq` at offset 0, then the driver data.
pub(crate) type Cq<T> = Obj<T, CqKind>;

impl<T: DeviceOps> Obj<T, CqKind> {
    /// Calls the consumer's completion handler (an event on the uverbs completion channel for
    /// user CQs). Any context; the caller serialises calls for one CQ (the driver clears its
    /// arming under its lock before calling).
    pub(crate) fn notify_completion(&self) {
        let cq = self.as_raw();
        // SAFETY: `comp_handler` and `cq_context` are set by the core before the CQ is used and
        // stay valid until it is destroyed, which cannot happen during a call on it.
        unsafe {
            if let Some(handler) = (*cq).comp_handler {
                handler(cq, (*cq).cq_context);
            }
        }
    }
}

/// A CQ a QP was created with.
///
/// ib_core counts the QP as a user of the CQ (`usecnt`) and refuses to destroy the CQ before the
/// QP, so the reference is valid as long as the QP's driver data lives: store it only there.
///
/// # Invariants
///
/// Points to a created `Cq<T>` that outlives the QP holding this reference.
pub(crate) struct CqRef<T: DeviceOps>(NonNull<Cq<T>>);

// SAFETY: `Cq<T>` is shared between contexts through `&`; `T::Cq: Send + Sync`.
unsafe impl<T: DeviceOps> Send for CqRef<T> {}
// SAFETY: As above.
unsafe impl<T: DeviceOps> Sync for CqRef<T> {}

impl<T: DeviceOps> CqRef<T> {
    /// A reference to the CQ of a QP being created.
    ///
    /// # Safety
    ///
    /// `cq` is NULL or a created CQ of a `Device<T>` that ib_core keeps alive until the QP being
    /// created is destroyed.
    pub(super) unsafe fn new(cq: *mut bindings::ib_cq) -> Option<Self> {
        NonNull::new(cq.cast::<Cq<T>>()).map(Self)
    }
}

impl<T: DeviceOps> core::ops::Deref for CqRef<T> {
    type Target = Cq<T>;

    fn deref(&self) -> &Cq<T> {
        // SAFETY: By the type invariant the CQ is alive.
        unsafe { self.0.as_ref() }
    }
}

/// The attributes of `ibv_create_cq`/`ib_alloc_cq`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CqAttr {
    /// Minimum number of entries requested.
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*` creation flags; rxe supports none.
    pub(crate) flags: u32,
}

/// Which completions trigger the next event (`enum ib_cq_notify_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NotifyFlags(u32);

impl NotifyFlags {
    /// From the raw value.
    pub(super) fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// Arm for the next solicited completion only.
    pub(crate) fn solicited(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED
    }

    /// Arm for the next completion of any kind.
    pub(crate) fn next_comp(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP != 0
    }

    /// Report whether completions arrived before arming (return 1 from `req_notify_cq`).
    pub(crate) fn report_missed(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0
    }
}
