// SPDX-License-Identifier: GPL-2.0

//! Keeping rrxe and the C `rdma_rxe` apart.
//!
//! Both register `RDMA_DRIVER_RXE` devices (so the stock librxe provider binds) and both want
//! UDP port 4791. `rdma_rxe` treats every `RDMA_DRIVER_RXE` device as its own `struct rxe_dev`
//! and its module exit unregisters all of them, so the two must never share a kernel: rrxe
//! refuses to load while `rdma_rxe` is loaded, and refuses `rdma_rxe` while rrxe is loaded.

use crate::kernel_ext::{
    module_loaded,
    ModuleEvents, //
};
use kernel::prelude::*;

/// The C driver's module name.
const RXE_MODULE: &CStr = c"rdma_rxe";

/// Refuses the C `rdma_rxe` as it loads.
pub(crate) struct RxeGuard;

/// Proof that `rdma_rxe` was not loaded once [`RxeGuard`] was already watching.
pub(crate) struct RxeAbsent(());

impl RxeGuard {
    /// Fails when `rdma_rxe` is already loaded. Call it after the guard is registered so that
    /// no load can slip in between.
    pub(crate) fn check() -> Result<RxeAbsent> {
        if module_loaded(RXE_MODULE) {
            pr_err!("the C driver rdma_rxe is loaded: both claim RDMA_DRIVER_RXE; run 'rmmod rdma_rxe' first\n");
            return Err(EBUSY);
        }
        Ok(RxeAbsent(()))
    }
}

impl ModuleEvents for RxeGuard {
    fn coming(name: &CStr) -> Result {
        if name == RXE_MODULE {
            pr_err!("refusing to load rdma_rxe while rrxe is loaded: both claim RDMA_DRIVER_RXE; run 'rmmod rrxe' first\n");
            return Err(EBUSY);
        }
        Ok(())
    }
}
