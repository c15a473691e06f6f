// SPDX-License-Identifier: GPL-2.0

//! Run-or-defer: each QP's packet work runs in one context at a time, inline in whichever
//! context asks for it first (a doorbell, a received packet, a timer). A context that finds it
//! running only records that there is more to do; the running one loops once more. No context
//! ever waits, and a QP's work is never re-entered (the loopback path would otherwise recurse).

use kernel::sync::atomic::{
    Acquire,
    Atomic,
    Full, //
};

const IDLE: u32 = 0;
const RUNNING: u32 = 1;
const PENDING: u32 = 2;

/// The run state of one QP's work.
pub(crate) struct RunGate(Atomic<u32>);

impl RunGate {
    /// Idle.
    pub(crate) const fn new() -> Self {
        Self(Atomic::new(IDLE))
    }

    /// Tries to become the runner. `false` when another context runs: it will run again.
    pub(crate) fn enter(&self) -> bool {
        let mut cur = self.0.load(Acquire);
        loop {
            let next = if cur == IDLE { RUNNING } else { PENDING };
            match self.0.cmpxchg(cur, next, Full) {
                Ok(_) => return cur == IDLE,
                Err(now) => cur = now,
            }
        }
    }

    /// The runner finished a pass: `true` when it may stop (now idle), `false` when another
    /// context asked meanwhile and it must run again.
    pub(crate) fn leave(&self) -> bool {
        if self.0.cmpxchg(RUNNING, IDLE, Full).is_ok() {
            return true;
        }
        // PENDING: take the request and run again.
        self.0.store(RUNNING, kernel::sync::atomic::Release);
        false
    }

    /// The state's name, for reports: `idle`, `running` or `pending` (running, asked again).
    pub(crate) fn name(&self) -> &'static kernel::str::CStr {
        match self.0.load(Acquire) {
            IDLE => c"idle",
            RUNNING => c"running",
            _ => c"pending",
        }
    }

    /// The runner stops with work left, which a deferred run will do: idle again whether or not
    /// another context asked meanwhile (the deferred run serves that request too). The caller
    /// queues the deferred run after this, never before: a run that started in between would
    /// find the gate taken, leave a request, and have it erased here.
    pub(crate) fn hand_over(&self) {
        self.0.store(IDLE, kernel::sync::atomic::Release);
    }
}
