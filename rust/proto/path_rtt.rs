// SPDX-License-Identifier: GPL-2.0

//! The shortest round trip a device's RC QPs measured to each destination, shared between
//! them (`Documentation/congestion.rst`, "What is limited").
//!
//! A QP that DCQCN limits keeps what its path carries in a round trip in flight, and a floor
//! more ([`super::dcqcn::in_flight_cap`]). The path's estimate scales its delivery rate by its
//! shortest round trip over the sample's. Each QP's own shortest is the least queueing it
//! happened to see: one that started when the bottleneck's queue stood already never sees the
//! path's own round trip, and kept up to twice the share in flight (four flows at a RED
//! queue: shortest round trips of 4-21 ms per QP, caps of 36-82 PSNs, shares of 16-35 %).
//! QPs to the same destination therefore take the shortest that any of them saw.
//!
//! The device holds [`SLOTS`] words, each a destination's tag and its shortest round trip in
//! nanoseconds ([`pack`]); the destination's GID picks the slot ([`slot_and_tag`]). Words are
//! replaced whole (an atomic compare-and-exchange in the device), so a reader sees one
//! destination's value or another's tag, never a mix. Two destinations in one slot take it in
//! turns: each then knows less, never a wrong value, since a word whose tag is not the
//! reader's says nothing. Entries do not age: a path whose round trip grows for good keeps
//! the shorter one, which makes its QPs' caps smaller, never below the floor. An off-path
//! sender that forges an ACK for an outstanding PSN can end a sample early and so shorten the
//! path's round trip for every QP to that destination: their caps go to the floor (32 PSNs),
//! never below it.

/// Destinations the device remembers at once.
pub(crate) const SLOTS: usize = 64;

/// The slot of the destination `dgid` and the tag that names it there (never 0: an empty
/// slot's word is 0). FNV-1a over the GID's bytes.
pub(crate) fn slot_and_tag(dgid: &[u8; 16]) -> (usize, u32) {
    let h = dgid.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    ((h as usize) % SLOTS, h | 1)
}

/// The word for destination `tag` with shortest round trip `min_ns` (at most `u32::MAX`
/// nanoseconds, about 4.3 s: longer ones are kept as that).
pub(crate) fn pack(tag: u32, min_ns: u64) -> u64 {
    (u64::from(tag) << 32) | min_ns.min(u64::from(u32::MAX))
}

/// The shortest round trip the word `word` holds for destination `tag`, if it is that one's.
pub(crate) fn unpack(word: u64, tag: u32) -> Option<u64> {
    ((word >> 32) as u32 == tag).then_some(word & u64::from(u32::MAX))
}

/// The word after destination `tag` measured `min_ns` where the slot held `word`: the shorter
/// of the two for the same destination, the new one for another; `None` when it does not
/// change.
pub(crate) fn merged(word: u64, tag: u32, min_ns: u64) -> Option<u64> {
    let next = match unpack(word, tag) {
        Some(old) if old <= min_ns => return None,
        _ => pack(tag, min_ns),
    };
    (next != word).then_some(next)
}
