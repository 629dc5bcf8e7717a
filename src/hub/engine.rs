//! The Swiss pairing engine the server runs (RULES.md T 1: an established engine, never
//! an algorithm of our own): the tournament written as TRF-16 (or as caissify-pairings'
//! JSON), the configured command run as a child process with a time limit, its answer
//! read back into the round's pairings, which the tournament then checks like any other
//! (no repeat pairing, no player twice, no unknown number, no second bye).
//!
//! Two contracts:
//! - [`EngineProtocol::Trf`]: bbpPairings' `ENGINE --dutch IN.trf -p OUT` (JaVaFo through
//!   a wrapper script taking the same arguments), the answer bbpPairings' pair list;
//! - [`EngineProtocol::Caissify`]: `caissify-pairings` (PyPI), its JSON request on stdin
//!   and its JSON answer on stdout.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::tournament::swiss::{caissify_request, given_from, read_caissify_answer};
use crate::tournament::trf::{read_engine_pairs, write_trf};
use crate::tournament::{GivenPairings, PairingSource, Tournament, TournamentError};

/// How the engine is talked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineProtocol {
    /// bbpPairings' command line: `--dutch IN.trf -p OUT`.
    Trf,
    /// caissify-pairings: JSON on stdin and stdout.
    Caissify,
}

/// The configured engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingEngine {
    /// The program and its first arguments, split on whitespace
    /// (`/usr/local/bin/bbpPairings`, `caissify-pairings`).
    pub command: String,
    /// How it is talked to.
    pub protocol: EngineProtocol,
    /// How long it may take.
    pub timeout: Duration,
}

/// Why the engine gave no pairings.
#[derive(Debug)]
pub enum EngineError {
    /// Missing, failing, too slow, or answering what cannot be read: its own words.
    Unavailable(String),
    /// The tournament cannot be asked (or its answer names players it does not have).
    Refused(TournamentError),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Unavailable(m) => f.write_str(m),
            EngineError::Refused(e) => write!(f, "{e}"),
        }
    }
}

/// Temporary files of one run, removed when dropped.
struct Scratch(Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl PairingEngine {
    /// The engine of `command`, its protocol guessed from the program's name
    /// (caissify-pairings speaks JSON, everything else bbpPairings' TRF contract).
    #[must_use]
    pub fn new(command: &str, protocol: Option<EngineProtocol>) -> PairingEngine {
        let program = command.split_whitespace().next().unwrap_or_default();
        let guessed = if program
            .rsplit('/')
            .next()
            .unwrap_or(program)
            .starts_with("caissify")
        {
            EngineProtocol::Caissify
        } else {
            EngineProtocol::Trf
        };
        PairingEngine {
            command: command.to_string(),
            protocol: protocol.unwrap_or(guessed),
            timeout: Duration::from_secs(60),
        }
    }

    fn program(&self) -> Result<Process, EngineError> {
        let mut words = self.command.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| EngineError::Unavailable("no pairing engine command".into()))?;
        let mut p = Process::new(program);
        p.args(words);
        Ok(p)
    }

    /// Pairs round `round` of `t` (blocking: run it on a blocking thread).
    ///
    /// # Errors
    /// [`EngineError::Unavailable`] with the engine's words; [`EngineError::Refused`].
    pub fn pair_blocking(&self, t: &Tournament, round: u32) -> Result<GivenPairings, EngineError> {
        let name = self.command.split_whitespace().next().unwrap_or_default();
        let source = PairingSource::Engine {
            engine: name.rsplit('/').next().unwrap_or(name).to_string(),
        };
        let answer = match self.protocol {
            EngineProtocol::Caissify => {
                let request = caissify_request(t, round).map_err(EngineError::Refused)?;
                let out = self.run(self.program()?, Some(request.as_bytes()))?;
                read_caissify_answer(&out).map_err(|e| {
                    EngineError::Unavailable(format!("pairing engine '{name}': its answer: {e}"))
                })?
            }
            EngineProtocol::Trf => {
                static RUNS: AtomicU64 = AtomicU64::new(0);
                let n = RUNS.fetch_add(1, Ordering::Relaxed);
                let dir = std::env::temp_dir();
                let stem = format!("arbiter-pairing-{}-{n}", std::process::id());
                let input = dir.join(format!("{stem}.trf"));
                let output = dir.join(format!("{stem}.txt"));
                let _scratch = Scratch(vec![input.clone(), output.clone()]);
                std::fs::write(&input, write_trf(t)).map_err(|e| {
                    EngineError::Unavailable(format!("writing {}: {e}", input.display()))
                })?;
                let mut p = self.program()?;
                p.arg("--dutch").arg(&input).arg("-p").arg(&output);
                self.run(p, None)?;
                let text = std::fs::read_to_string(&output).map_err(|e| {
                    EngineError::Unavailable(format!(
                        "pairing engine '{name}' wrote no pairings to {}: {e}",
                        output.display()
                    ))
                })?;
                read_engine_pairs(&text).map_err(|e| {
                    EngineError::Unavailable(format!("pairing engine '{name}': its answer: {e}"))
                })?
            }
        };
        given_from(t, &answer, source).map_err(EngineError::Refused)
    }

    /// Runs the engine with `stdin`; its stdout. A failure is its stderr's words.
    fn run(&self, mut p: Process, stdin: Option<&[u8]>) -> Result<String, EngineError> {
        let name = self.command.split_whitespace().next().unwrap_or_default();
        let mut child = p
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::Unavailable(format!("pairing engine '{name}': {e}")))?;
        // Both pipes drained on threads of their own while the engine runs, so a long
        // answer never fills a pipe and stalls it.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(bytes).map_err(|e| {
                EngineError::Unavailable(format!("pairing engine '{name}': writing to it: {e}"))
            })?;
        }
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(EngineError::Unavailable(format!(
                        "pairing engine '{name}' gave no answer in {} s",
                        self.timeout.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    return Err(EngineError::Unavailable(format!(
                        "pairing engine '{name}': {e}"
                    )));
                }
            }
        };
        let out = stdout.join().unwrap_or_default();
        let err = stderr.join().unwrap_or_default();
        if !status.success() {
            let words = String::from_utf8_lossy(&err);
            let words = words.trim();
            return Err(EngineError::Unavailable(format!(
                "pairing engine '{name}' failed ({status}): {}",
                if words.is_empty() {
                    "no message"
                } else {
                    words
                }
            )));
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}
