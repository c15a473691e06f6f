// SPDX-License-Identifier: GPL-2.0

//! A peer that never answers: the most reported soft-RoCE "hang". An RC QP whose transport
//! retries run out without a single answer since it moved to RTS sends to where no RoCE v2 QP
//! listens: a wrong GID index (an address the peer does not have, or RoCE v1's), UDP port 4791
//! filtered on the path or at the peer, or a peer QP not in RTR or of another number. The QP
//! fails its WQE with a retry-exceeded error as any QP does; this says why, once per five
//! seconds per device in the kernel log, and counts `peer_silent` always.

use super::Counter;
use crate::{
    device::RrxeDevice,
    ib::Qp,
    kernel_ext::now_ns,
    pipeline::state::Snapshot, //
};
use kernel::fmt;
use kernel::prelude::*;

/// Reports that `qp`'s peer never answered its `retries` retries.
pub(super) fn report(qp: &Qp<RrxeDevice>, snap: &Snapshot, retries: u8) {
    qp.counts().inc(Counter::PeerSilent);
    let dev = qp.device();
    if !dev.may_report(now_ns()) {
        return;
    }
    pr_warn!(
        "{}: QP {:#x} had no answer from its peer (QP {:#x} at {}) to {} retries: no RoCE v2 QP \
         answers there, or its answers are dropped here (drop_* counters). Check the GID index \
         (an address the peer has; IPv4-mapped for IPv4), that UDP port 4791 is open on the \
         path and at the peer, and that the peer's QP is in RTR with this QP's number as its \
         destination.\n",
        dev.name(),
        snap.qpn,
        snap.dest_qpn,
        Gid(&snap.av.dgid),
        retries
    );
}

/// A GID as an address: dotted IPv4 when IPv4-mapped, else eight groups of IPv6.
struct Gid<'a>(&'a [u8; 16]);

impl fmt::Display for Gid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.0;
        if g[..10].iter().all(|&b| b == 0) && g[10] == 0xff && g[11] == 0xff {
            return write!(f, "{}.{}.{}.{}", g[12], g[13], g[14], g[15]);
        }
        for (i, pair) in g.chunks_exact(2).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{:x}", u16::from_be_bytes([pair[0], pair[1]]))?;
        }
        Ok(())
    }
}
