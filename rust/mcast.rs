// SPDX-License-Identifier: GPL-2.0

//! Multicast groups: which UD QPs are attached to which multicast GID (IBA 10.5), within rxe's
//! limits. The receive path delivers a packet for QPN 0xffffff to every QP attached to its
//! destination GID (`members`, any context); the lock is interrupt-safe for that reason and
//! attach allocates atomically under it.

use crate::{
    limits,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::prelude::*;

/// One group: its members, each with the number of attaches not yet detached. ib_core counts
/// every successful attach as a use of the QP (and uverbs attaches once per group and LID), so
/// every one of them must be detachable: a QP attached twice is detached twice.
struct Group {
    gid: [u8; 16],
    qpns: KVec<(u32, u32)>,
}

/// The multicast groups of one device. Attach/detach run in process context (they may sleep).
#[pin_data]
pub(crate) struct McastTable {
    #[pin]
    groups: SpinLockIrq<KVec<Group>>,
}

/// Whether `gid` is a multicast address: IPv6 `ff00::/8`, or IPv4-mapped `224.0.0.0/4`.
pub(crate) fn is_multicast(gid: &[u8; 16]) -> bool {
    let v4_mapped = gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff;
    if v4_mapped {
        gid[12] & 0xf0 == 0xe0
    } else {
        gid[0] == 0xff
    }
}

impl McastTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            groups <- new_spinlock_irq!(KVec::new(), "rrxe_mcast"),
        })
    }

    /// Attaches `qpn` to `gid`; attaching again counts one more attach.
    pub(crate) fn attach(&self, gid: &[u8; 16], qpn: u32) -> Result {
        if !is_multicast(gid) {
            return Err(EINVAL);
        }
        let mut groups = self.groups.lock();
        let total: usize = groups.iter().map(|g| g.qpns.len()).sum();
        let idx = match groups.iter().position(|g| g.gid == *gid) {
            Some(i) => i,
            None => {
                if groups.len() >= limits::MAX_MCAST_GRP as usize {
                    return Err(ENOMEM);
                }
                groups.push(
                    Group {
                        gid: *gid,
                        qpns: KVec::new(),
                    },
                    GFP_ATOMIC,
                )?;
                groups.len() - 1
            }
        };
        let g = &mut groups[idx];
        if let Some(m) = g.qpns.iter_mut().find(|m| m.0 == qpn) {
            m.1 = m.1.checked_add(1).ok_or(ENOMEM)?;
            return Ok(());
        }
        let full = g.qpns.len() >= limits::MAX_MCAST_QP_ATTACH as usize
            || total >= limits::MAX_TOTAL_MCAST_QP_ATTACH as usize;
        let r = if full {
            Err(ENOMEM)
        } else {
            g.qpns.push((qpn, 1), GFP_ATOMIC).map_err(Error::from)
        };
        if g.qpns.is_empty() {
            groups.remove(idx)?;
        }
        r
    }

    /// Detaches `qpn` from `gid`; `EINVAL` if it was not attached.
    /// Copies the QP numbers attached to `gid` into `out`; returns how many (at most
    /// `out.len()`). Any context: the receive path delivers multicast with it.
    pub(crate) fn members(&self, gid: &[u8; 16], out: &mut [u32]) -> usize {
        let groups = self.groups.lock();
        let Some(g) = groups.iter().find(|g| g.gid == *gid) else {
            return 0;
        };
        let n = g.qpns.len().min(out.len());
        for (o, m) in out.iter_mut().zip(g.qpns.iter()) {
            *o = m.0;
        }
        n
    }

    pub(crate) fn detach(&self, gid: &[u8; 16], qpn: u32) -> Result {
        let mut groups = self.groups.lock();
        let idx = groups.iter().position(|g| g.gid == *gid).ok_or(EINVAL)?;
        let g = &mut groups[idx];
        let pos = g.qpns.iter().position(|m| m.0 == qpn).ok_or(EINVAL)?;
        if g.qpns[pos].1 > 1 {
            g.qpns[pos].1 -= 1;
            return Ok(());
        }
        g.qpns.remove(pos)?;
        if g.qpns.is_empty() {
            groups.remove(idx)?;
        }
        Ok(())
    }
}

#[kernel::prelude::kunit_tests(rrxe_mcast)]
mod tests {
    use super::*;

    #[test]
    fn multicast_gids() {
        let mut v4 = [0u8; 16];
        v4[10] = 0xff;
        v4[11] = 0xff;
        v4[12] = 239;
        assert!(is_multicast(&v4));
        v4[12] = 10;
        assert!(!is_multicast(&v4));
        let mut v6 = [0u8; 16];
        v6[0] = 0xff;
        assert!(is_multicast(&v6));
        v6[0] = 0xfe;
        assert!(!is_multicast(&v6));
    }
}
