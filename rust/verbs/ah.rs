// SPDX-License-Identifier: GPL-2.0

//! Address handles: a RoCE address vector and its `ah_num`, the index librxe puts in UD send
//! WQEs instead of a whole address vector.

use crate::table::SparseTable;
use crate::{
    device::RrxeDevice,
    ib::{
        AddressVector,
        Device,
        Udata, //
    },
    index::PoolIndex,
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// What the device's AH table holds for one AH: its address vector and the identity of its
/// protection domain (a QP may only send through AHs of its own PD).
#[derive(Clone, Copy)]
pub(crate) struct AhEntry {
    pub(crate) av: AddressVector,
    pub(crate) pd: usize,
}

/// The driver data of an address handle.
pub(crate) struct RrxeAh {
    /// The AH index (`ah_num`), returned to the device's pool on destroy.
    num: PoolIndex,
    av: AddressVector,
    /// The device's AH table, where UD sends find `av` by `ah_num`; cleared on drop.
    table: Arc<SparseTable<AhEntry>>,
}

impl Drop for RrxeAh {
    fn drop(&mut self) {
        self.table.remove(self.num.get());
    }
}

impl RrxeAh {
    /// Creates an AH. User space gets `struct rxe_create_ah_resp` (`ah_num`) when it has room
    /// for it; older providers send whole address vectors in their WQEs instead.
    pub(crate) fn create(
        dev: &Device<RrxeDevice>,
        av: &AddressVector,
        pd: usize,
        udata: Option<&mut Udata<'_>>,
        may_sleep: bool,
    ) -> Result<Self> {
        let flags = if may_sleep { GFP_KERNEL } else { GFP_ATOMIC };
        let num = PoolIndex::alloc_flags(dev.ah_pool(), flags)?;
        if let Some(u) = udata {
            if u.outlen() >= 8 {
                let mut resp = [0u8; 8];
                resp[..4].copy_from_slice(&num.get().to_ne_bytes());
                u.respond(&resp)?;
            }
        }
        let table = dev.ah_table().clone();
        table.insert(num.get(), AhEntry { av: *av, pd }, flags)?;
        Ok(Self {
            num,
            av: *av,
            table,
        })
    }

    /// The AH number (`ah_num`) UD send WQEs name it by.
    pub(crate) fn num(&self) -> u32 {
        self.num.get()
    }

    /// The address vector.
    pub(crate) fn av(&self) -> AddressVector {
        self.av
    }
}
