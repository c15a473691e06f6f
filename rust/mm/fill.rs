// SPDX-License-Identifier: GPL-2.0

//! A destination that copies fill front to back: the payload of a packet being built, whose
//! memory nobody has initialised, or a plain slice.

use core::marker::PhantomData;
use kernel::prelude::*;

/// Memory that copies append to, `len` bytes at `ptr`, of which the first `written` hold
/// copied bytes. Nothing but this module's copies writes it and nothing reads it here, so it
/// may be memory nobody initialised: its owner takes only the bytes [`Self::written`] counts
/// (a packet's payload is put into its buffer only when every byte was written).
///
/// # Invariants
///
/// `ptr` is valid for writes of `len` bytes for `'a`, and nothing else accesses those bytes
/// during `'a`; `written <= len`.
pub(crate) struct Fill<'a> {
    ptr: *mut u8,
    len: usize,
    written: usize,
    _mem: PhantomData<&'a mut [u8]>,
}

impl<'a> Fill<'a> {
    /// Fills `buf` (its old bytes are overwritten, front to back).
    pub(crate) fn from_slice(buf: &'a mut [u8]) -> Self {
        // INVARIANT: The exclusive borrow makes `buf` ours for `'a`.
        Self {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            written: 0,
            _mem: PhantomData,
        }
    }

    /// Fills `len` bytes at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for writes of `len` bytes for `'a`, and nothing else accesses them then.
    pub(crate) unsafe fn from_raw(ptr: *mut u8, len: usize) -> Self {
        // INVARIANT: Guaranteed by the caller.
        Self {
            ptr,
            len,
            written: 0,
            _mem: PhantomData,
        }
    }

    /// The bytes written so far.
    pub(crate) fn written(&self) -> usize {
        self.written
    }

    /// The bytes still to write.
    pub(crate) fn remaining(&self) -> usize {
        self.len - self.written
    }

    /// Appends `src`; `EINVAL` (nothing written) if it does not fit.
    pub(crate) fn put(&mut self, src: &[u8]) -> Result {
        let n = src.len();
        // SAFETY: `append` hands `n` writable bytes; `src` is another object's memory.
        unsafe {
            self.append(n, |dst| {
                core::ptr::copy_nonoverlapping(src.as_ptr(), dst, n);
                Ok(())
            })
        }
    }

    /// Appends `n` bytes that `write` stores at the pointer it is given; they count as written
    /// only if it returns `Ok`. `EINVAL` (and `write` is not called) if they do not fit.
    ///
    /// # Safety
    ///
    /// `write` writes nothing but those `n` bytes, and all of them when it returns `Ok`.
    pub(crate) unsafe fn append(
        &mut self,
        n: usize,
        write: impl FnOnce(*mut u8) -> Result,
    ) -> Result {
        if n > self.remaining() {
            return Err(EINVAL);
        }
        // SAFETY: `written + n <= len`, so the pointer stays inside the memory (invariant).
        write(unsafe { self.ptr.add(self.written) })?;
        // INVARIANT: Checked above; the caller's `write` wrote the `n` bytes.
        self.written += n;
        Ok(())
    }
}

#[kernel::prelude::kunit_tests(rrxe_mm_fill)]
mod tests {
    use super::*;

    #[test]
    fn copies_append_front_to_back_and_never_past_the_end() {
        let mut buf = [0xaau8; 8];
        let mut f = Fill::from_slice(&mut buf);
        assert!(f.put(&[1, 2, 3]).is_ok());
        assert!(f.put(&[4, 5]).is_ok());
        assert_eq!((f.written(), f.remaining()), (5, 3));
        // Too long: refused whole, nothing written.
        assert!(f.put(&[9, 9, 9, 9]).is_err());
        assert_eq!(f.written(), 5);
        assert_eq!(buf, [1, 2, 3, 4, 5, 0xaa, 0xaa, 0xaa]);
    }

    #[test]
    fn a_failed_copy_is_not_counted() {
        let mut buf = [0u8; 4];
        let mut f = Fill::from_slice(&mut buf);
        // SAFETY: The writer writes nothing.
        assert!(unsafe { f.append(2, |_| Err(EFAULT)) }.is_err());
        assert_eq!(f.written(), 0);
        assert!(f.put(&[7; 4]).is_ok());
        assert_eq!(f.remaining(), 0);
    }
}
