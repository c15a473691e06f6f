// SPDX-License-Identifier: GPL-2.0

//! Error codes verbs need that `kernel::error::code` does not define.

use crate::bindings;
use kernel::prelude::*;

/// `EOPNOTSUPP`: the operation (or a flag of it) is not supported.
pub(crate) fn eopnotsupp() -> Error {
    let errno = c_int::try_from(bindings::EOPNOTSUPP).unwrap_or(c_int::MAX);
    Error::from_errno(-errno)
}

/// `EHOSTUNREACH`: no route to the destination.
pub(crate) fn ehostunreach() -> Error {
    let errno = c_int::try_from(bindings::EHOSTUNREACH).unwrap_or(c_int::MAX);
    Error::from_errno(-errno)
}
