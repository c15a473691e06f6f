// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 congestion notification packet (CNP, IBA Annex A17 section A17.9.2): what a
//! receiver (the notification point) sends to the QP whose packet arrived with a CE mark. It
//! is a BTH with opcode 0x81 (the CNP service), P_Key 0xffff, the BECN bit set and the
//! destination QP of the QP to slow down, PSN 0, then 16 reserved bytes of zeros and the ICRC.
//! RoCE NICs (mlx5, irdma, bnxt_re) send and parse exactly this; C rxe drops it as an
//! opcode it does not know.

use super::{
    hdr::Bth,
    opcode::Opcode,
    psn::Psn,
    Error, //
};

/// The CNP opcode: the CNP transport service (0x80) with operation 1.
pub(crate) const CNP_OPCODE: Opcode = Opcode(0x81);

/// The reserved bytes after the BTH.
pub(crate) const CNP_RESERVED: usize = 16;

/// The CNP's transport bytes before the ICRC: the BTH and the reserved bytes.
pub(crate) const CNP_LEN: usize = Bth::LEN + CNP_RESERVED;

/// The BTH of a CNP to QP `dest_qpn`.
pub(crate) const fn cnp_bth(dest_qpn: u32) -> Bth {
    Bth {
        becn: true,
        ..Bth::plain(CNP_OPCODE, dest_qpn, Psn::new(0))
    }
}

/// Writes a CNP to QP `dest_qpn` into the first [`CNP_LEN`] bytes of `buf` (the ICRC goes after
/// them, computed by the sender over the final headers).
pub(crate) fn write_cnp(buf: &mut [u8], dest_qpn: u32) -> Result<(), Error> {
    let b = buf.get_mut(..CNP_LEN).ok_or(Error::Truncated)?;
    cnp_bth(dest_qpn).write(b)?;
    b[Bth::LEN..].fill(0);
    Ok(())
}

/// Whether a received transport packet (BTH through ICRC, the ICRC already checked) is a CNP
/// this driver acts on: the CNP opcode and the length of one. A CNP's BECN bit, P_Key and
/// reserved bytes are not checked: NICs differ there (some leave BECN clear), and a CNP can
/// do nothing but slow the QP it names down, which only the connection's peer may do (the
/// receive path checks the addresses as for every RC packet).
pub(crate) fn is_cnp(transport: &[u8], bth: &Bth) -> bool {
    bth.opcode == CNP_OPCODE && transport.len() >= CNP_LEN
}
