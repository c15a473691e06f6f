// SPDX-License-Identifier: GPL-2.0

//! The driver's debugfs directory (`/sys/kernel/debug/rrxe`) and, under it, per-device
//! directories of `u32` settings that root reads and writes as numbers, as mlx5's `cc_params`
//! (`debugfs_create_u32`). Debugfs may be absent (not built, locked down, not mounted): the
//! settings then keep their values and only the files are missing.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h).

use crate::bindings;
use core::{
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// The `rrxe` directory, while the module's [`DebugfsRoot`] lives (null without debugfs).
static ROOT: AtomicPtr<bindings::dentry> = AtomicPtr::new(ptr::null_mut());

/// A directory entry from debugfs, or null for an error pointer (debugfs absent or failing).
fn entry(d: *mut bindings::dentry) -> *mut bindings::dentry {
    // SAFETY: `IS_ERR` only looks at the pointer's value.
    if d.is_null() || unsafe { bindings::rrxe_helper_is_err(d.cast()) } {
        ptr::null_mut()
    } else {
        d
    }
}

/// Owns `/sys/kernel/debug/rrxe` for the module's life. It must outlive every
/// [`DebugfsU32s`] (the module drops its devices first).
pub(crate) struct DebugfsRoot(());

impl DebugfsRoot {
    /// Creates the directory (nothing without debugfs). Process context.
    pub(crate) fn create() -> Self {
        // SAFETY: A NUL-terminated name and no parent (the debugfs root).
        let d =
            entry(unsafe { bindings::debugfs_create_dir(c"rrxe".as_char_ptr(), ptr::null_mut()) });
        ROOT.store(d, Ordering::Release);
        Self(())
    }
}

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        let d = ROOT.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: `d` is the directory created above, or null (which debugfs ignores); the
        // devices' directories under it were removed first.
        unsafe { bindings::debugfs_remove(d) };
    }
}

/// `N` settings, each a `u32` the driver reads at any time and that a file
/// `rrxe/DIR/SUB/NAME` shows and sets. The values are owned here and outlive the files:
/// dropping this removes the directory (waiting for readers and writers in progress) before
/// the values go.
///
/// # Invariants
///
/// `dir` is null or a directory under [`ROOT`] whose files point into `values`.
pub(crate) struct DebugfsU32s<const N: usize> {
    dir: *mut bindings::dentry,
    values: Pin<KBox<[Atomic<u32>; N]>>,
}

// SAFETY: The directory is only removed (once, on drop); the values are atomics.
unsafe impl<const N: usize> Send for DebugfsU32s<N> {}
// SAFETY: As above.
unsafe impl<const N: usize> Sync for DebugfsU32s<N> {}

impl<const N: usize> DebugfsU32s<N> {
    /// Values `init` with files `names` in `rrxe/dir/sub` (no files if debugfs is absent or
    /// `dir` exists already). Process context.
    pub(crate) fn new(dir: &CStr, sub: &CStr, names: &[&CStr; N], init: [u32; N]) -> Result<Self> {
        let values = KBox::pin(init.map(Atomic::new), GFP_KERNEL)?;
        let root = ROOT.load(Ordering::Acquire);
        if root.is_null() {
            return Ok(Self {
                dir: ptr::null_mut(),
                values,
            });
        }
        // SAFETY: NUL-terminated names; `root` lives while the module does, longer than this.
        let top = entry(unsafe { bindings::debugfs_create_dir(dir.as_char_ptr(), root) });
        if !top.is_null() {
            // SAFETY: As above, under `top`.
            let sub = entry(unsafe { bindings::debugfs_create_dir(sub.as_char_ptr(), top) });
            if !sub.is_null() {
                for (name, v) in names.iter().zip(values.iter()) {
                    // SAFETY: `v` is boxed and pinned: it stays at this address until after
                    // the directory is removed (drop). The file reads and writes it with
                    // plain 32-bit accesses, as the driver's atomic loads do.
                    unsafe {
                        bindings::debugfs_create_u32(name.as_char_ptr(), 0o600, sub, v.as_ptr())
                    };
                }
            }
        }
        Ok(Self { dir: top, values })
    }

    /// The value at `i` (0 past the end).
    pub(crate) fn get(&self, i: usize) -> u32 {
        self.values.get(i).map_or(0, |v| v.load(Relaxed))
    }
}

impl<const N: usize> Drop for DebugfsU32s<N> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `dir` is ours (or null, ignored); removal waits for
        // the files' users, after which nothing points into `values`.
        unsafe { bindings::debugfs_remove(self.dir) };
    }
}
