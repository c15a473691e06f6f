// SPDX-License-Identifier: GPL-2.0

//! The ACK Extended Transport Header (IBA 9.3.5) and the meaning of its syndrome byte: what
//! ACKs, NAKs, RNR NAKs and READ responses carry back to the requester.

use super::{
    check_u24,
    get_be32,
    head,
    head_mut,
    put_be32,
    Error,
    U24_MAX, //
};

/// The ACK Extended Transport Header carried by acknowledgements and read responses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aeth {
    /// ACK, RNR NAK or NAK syndrome; see [`AethSyndrome`].
    pub(crate) syndrome: u8,
    /// Message sequence number: the count of completed request messages (24 bits).
    pub(crate) msn: u32,
}

impl Aeth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 4;

    /// Syndrome of an ACK that grants no end-to-end credit information (unlimited credits).
    pub(crate) const ACK_UNLIMITED: u8 = 0x1f;
    /// Syndrome of a NAK for a PSN sequence error.
    pub(crate) const NAK_PSN_SEQ_ERROR: u8 = 0x60;
    /// Syndrome of a NAK for an invalid request.
    pub(crate) const NAK_INVALID_REQUEST: u8 = 0x61;
    /// Syndrome of a NAK for a remote access error.
    pub(crate) const NAK_REMOTE_ACCESS_ERROR: u8 = 0x62;
    /// Syndrome of a NAK for a remote operational error.
    pub(crate) const NAK_REMOTE_OP_ERROR: u8 = 0x63;
    /// Syndrome bits that select the kind of acknowledgement.
    const TYPE_MASK: u8 = 0xe0;
    /// Syndrome bits that hold the credit count, RNR timer code or NAK code.
    const VALUE_MASK: u8 = 0x1f;

    /// Parses an AETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            syndrome: b[0],
            msn: get_be32(b, 0) & U24_MAX,
        })
    }

    /// Writes the AETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        let msn = check_u24(self.msn)?;
        let b = head_mut::<{ Self::LEN }>(buf)?;
        put_be32(b, 0, (u32::from(self.syndrome) << 24) | msn);
        Ok(())
    }

    /// Decodes the syndrome into the kind of acknowledgement it encodes.
    pub(crate) const fn kind(&self) -> AethSyndrome {
        let value = self.syndrome & Self::VALUE_MASK;
        match self.syndrome & Self::TYPE_MASK {
            0x00 => AethSyndrome::Ack { credits: value },
            0x20 => AethSyndrome::RnrNak { timer: value },
            0x60 => AethSyndrome::Nak { code: value },
            _ => AethSyndrome::Reserved,
        }
    }
}

/// The meaning of an AETH syndrome byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AethSyndrome {
    /// A positive acknowledgement.
    Ack {
        /// End-to-end credit count code; 0x1f means unlimited.
        credits: u8,
    },
    /// The responder had no receive WQE ready: retry after an RNR delay.
    RnrNak {
        /// RNR timer code indexing the IBA RNR delay table.
        timer: u8,
    },
    /// A negative acknowledgement.
    Nak {
        /// NAK code: 0 PSN sequence error, 1 invalid request, 2 remote access, 3 remote operation.
        code: u8,
    },
    /// A reserved syndrome type.
    Reserved,
}
