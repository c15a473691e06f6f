// SPDX-License-Identifier: GPL-2.0

//! Memory abstractions: zeroed `vmalloc_user` buffers that are shared with user space through
//! `mmap` (the queue rings of CQs, QPs and SRQs).
//!
//! C header: [`include/linux/vmalloc.h`](srctree/include/linux/vmalloc.h).

mod user_buf;

pub(crate) use user_buf::UserBuf;
