// SPDX-License-Identifier: GPL-2.0

//! The verdicts, counted per QP, and the report printed from them.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::trace::QpKind;

/// What the model says about one completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A spec-conformant QP may produce it given the packets.
    Pass,
    /// No conformant QP produces it: the rule and the evidence.
    Lie(&'static str, String),
    /// The model has no rule for it (counted, not a failure), and why.
    Unjudged(&'static str),
}

/// How many violations of each QP are printed in full.
const MAX_SHOWN: usize = 40;

/// The verdicts about one QP.
#[derive(Debug, Default)]
pub(crate) struct QReport {
    /// Judged completions by kind and status.
    pub(crate) judged: BTreeMap<String, u64>,
    /// Unjudged completions by kind, status and reason.
    pub(crate) unjudged: BTreeMap<String, u64>,
    /// Violations: rule and evidence.
    pub(crate) findings: Vec<(&'static str, String)>,
    /// The fuzzer's `tx ok` responses to this QP by kind and place in the window.
    pub(crate) reach: BTreeMap<String, u64>,
    /// The fuzzer's `tx ok` requests to this QP by kind.
    pub(crate) requests: BTreeMap<String, u64>,
}

/// The report of a run: per QP, what was judged, what lied and what the fuzzer reached.
#[derive(Debug, Default)]
pub struct Report {
    pub(crate) qs: [QReport; 2],
    pub(crate) notes: Vec<String>,
}

/// The name of an `ibv_wc_status` number.
pub(crate) fn status_name(s: u32) -> &'static str {
    const NAMES: [&str; 22] = [
        "SUCCESS",
        "LOC_LEN_ERR",
        "LOC_QP_OP_ERR",
        "LOC_EEC_OP_ERR",
        "LOC_PROT_ERR",
        "WR_FLUSH_ERR",
        "MW_BIND_ERR",
        "BAD_RESP_ERR",
        "LOC_ACCESS_ERR",
        "REM_INV_REQ_ERR",
        "REM_ACCESS_ERR",
        "REM_OP_ERR",
        "RETRY_EXC_ERR",
        "RNR_RETRY_EXC_ERR",
        "LOC_RDD_VIOL_ERR",
        "REM_INV_RD_REQ_ERR",
        "REM_ABORT_ERR",
        "INV_EECN_ERR",
        "INV_EEC_STATE_ERR",
        "FATAL_ERR",
        "RESP_TIMEOUT_ERR",
        "GENERAL_ERR",
    ];
    usize::try_from(s)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("UNKNOWN_STATUS")
}

impl Report {
    /// Records the verdict about a completion of `q` of kind `kind` (e.g. "send read").
    pub(crate) fn record(&mut self, q: QpKind, kind: &str, status: u32, v: Verdict) {
        let r = &mut self.qs[q.idx()];
        let key = format!("{kind} {}", status_name(status));
        match v {
            Verdict::Pass => *r.judged.entry(key).or_default() += 1,
            Verdict::Lie(rule, ev) => {
                *r.judged.entry(key).or_default() += 1;
                r.findings.push((rule, ev));
            }
            Verdict::Unjudged(why) => *r.unjudged.entry(format!("{key} ({why})")).or_default() += 1,
        }
    }

    /// Completions judged (passed or not).
    pub fn judged(&self) -> u64 {
        self.qs.iter().flat_map(|r| r.judged.values()).sum()
    }

    /// Completions no conformant QP produces.
    pub fn violations(&self) -> usize {
        self.qs.iter().map(|r| r.findings.len()).sum()
    }

    /// Completions the model has no rule for.
    pub fn unjudged(&self) -> u64 {
        self.qs.iter().flat_map(|r| r.unjudged.values()).sum()
    }

    /// The rules the violations broke, one entry per violation (for tests).
    pub fn rules(&self) -> Vec<&'static str> {
        self.qs
            .iter()
            .flat_map(|r| r.findings.iter().map(|f| f.0))
            .collect()
    }

    /// The process exit status: 1 if any completion lied, 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.violations() > 0)
    }

    /// The report as text; its last line is `oracle: judged=N violations=N unjudged=N`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for n in &self.notes {
            let _ = writeln!(s, "oracle: note: {n}");
        }
        for q in QpKind::ALL {
            let r = &self.qs[q.idx()];
            let name = q.name();
            let _ = writeln!(
                s,
                "oracle: {name}: judged {}, violations {}, unjudged {}",
                r.judged.values().sum::<u64>(),
                r.findings.len(),
                r.unjudged.values().sum::<u64>()
            );
            for (k, n) in &r.judged {
                let _ = writeln!(s, "oracle: {name}:   judged {k}: {n}");
            }
            for (k, n) in &r.unjudged {
                let _ = writeln!(s, "oracle: {name}:   unjudged {k}: {n}");
            }
            let _ = writeln!(
                s,
                "oracle: {name}: forged responses reaching the QP: {}",
                join(&r.reach)
            );
            let _ = writeln!(
                s,
                "oracle: {name}: requests reaching the QP: {}",
                join(&r.requests)
            );
            for (rule, ev) in r.findings.iter().take(MAX_SHOWN) {
                let _ = writeln!(s, "oracle: {name}: VIOLATION {rule}: {ev}");
            }
            if r.findings.len() > MAX_SHOWN {
                let _ = writeln!(
                    s,
                    "oracle: {name}: ... and {} more violations",
                    r.findings.len() - MAX_SHOWN
                );
            }
        }
        let _ = writeln!(
            s,
            "oracle: judged={} violations={} unjudged={}",
            self.judged(),
            self.violations(),
            self.unjudged()
        );
        s
    }
}

/// `key n, key n, ...` or `none`.
fn join(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
