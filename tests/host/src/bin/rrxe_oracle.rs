// SPDX-License-Identifier: GPL-2.0

//! `rrxe-oracle`: judges a packet-fuzz run's completions against the IBA reference model.
//!
//! ```text
//! rrxe-oracle [--recv-buf BYTES] [--slack-us MICROSECONDS] VICTIM_LOG FUZZER_TRACE
//! ```
//!
//! Prints the report (`rrxe_proto_host::model`); its last line is
//! `oracle: judged=N violations=N unjudged=N`. Exits 1 if a completion broke a rule, 0 if none
//! did, 2 if the input cannot be used (unreadable files, no connection, bad arguments).

use std::process::ExitCode;

use rrxe_proto_host::model;

const USAGE: &str =
    "usage: rrxe-oracle [--recv-buf BYTES] [--slack-us MICROSECONDS] VICTIM_LOG FUZZER_TRACE";

fn main() -> ExitCode {
    let mut cfg = model::Config::default();
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let num = |v: Option<String>| v.and_then(|v| v.parse::<u64>().ok());
        match a.as_str() {
            "--recv-buf" => match num(args.next()) {
                Some(n) => cfg.recv_buf = n,
                None => return usage(),
            },
            "--slack-us" => match num(args.next()) {
                Some(n) => cfg.slack_ns = n.saturating_mul(1000),
                None => return usage(),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => files.push(a),
        }
    }
    let [victim, fuzzer] = files.as_slice() else {
        return usage();
    };
    let read = |p: &str| {
        std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| eprintln!("rrxe-oracle: {p}: {e}"))
    };
    let (Ok(v), Ok(f)) = (read(victim), read(fuzzer)) else {
        return ExitCode::from(2);
    };
    match model::judge(&v, &f, &cfg) {
        Ok(rep) => {
            print!("{}", rep.render());
            ExitCode::from(u8::from(rep.violations() > 0))
        }
        Err(e) => {
            eprintln!("rrxe-oracle: {e}");
            println!("oracle: unusable input: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}
