// SPDX-License-Identifier: GPL-2.0

//! Memory abstractions: zeroed `vmalloc_user` buffers that are shared with user space through
//! `mmap` (the queue rings of CQs, QPs and SRQs), and byte access to pinned user pages and to
//! kernel memory posted by kernel verbs consumers.
//!
//! C headers: [`include/linux/vmalloc.h`](srctree/include/linux/vmalloc.h),
//! [`include/linux/highmem.h`](srctree/include/linux/highmem.h).

mod fill;
mod pages;
mod user_buf;

pub(crate) use fill::Fill;
pub(crate) use pages::{
    copy_page,
    copy_span,
    kernel_atomic_u64,
    kernel_read,
    kernel_write,
    page_atomic_u64,
    KernelConsumer,
    PinnedPages,
    Span, //
};
pub(crate) use user_buf::UserBuf;
