// SPDX-License-Identifier: GPL-2.0

//! Memory windows (types 1 and 2B): an index above the MR indices and an rkey
//! (`index << 8 | random byte`); binding comes with the data path.

use crate::{
    device::RrxeDevice,
    ib::{
        Device,
        MwType, //
    },
    index::PoolIndex,
    kernel_ext::random_u8,
};
use kernel::prelude::*;

/// The driver data of a memory window.
pub(crate) struct RrxeMw {
    /// The MW index, returned to the device's pool on dealloc.
    _index: PoolIndex,
    _mw_type: MwType,
}

impl RrxeMw {
    /// Allocates a window; returns it with its initial rkey.
    pub(crate) fn alloc(dev: &Device<RrxeDevice>, mw_type: MwType) -> Result<(Self, u32)> {
        let index = PoolIndex::alloc(dev.mw_pool())?;
        let rkey = index.get() << 8 | u32::from(random_u8());
        Ok((
            Self {
                _index: index,
                _mw_type: mw_type,
            },
            rkey,
        ))
    }
}
