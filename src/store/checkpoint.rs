//! The WAL checkpointer: copies committed WAL frames back into the database file on its
//! own thread and connection, so that no commit waits behind that copy and its fsync.
//!
//! SQLite's default is an automatic checkpoint by the writer every 1,000 WAL pages. With
//! many games interleaving, a group commit dirties one page per game, so that came every
//! few commits, and each one stalled the writer (and every caller waiting for an ack)
//! for a copy and an fsync of the database file. Now:
//!
//! - After each commit the writer kicks this thread (a bounded channel of one: a kick
//!   while one is pending is dropped, never waited for).
//! - This thread runs a PASSIVE checkpoint on its own connection at most once per
//!   `interval`: it copies what is committed, never blocks the writer or readers, and
//!   fsyncs the database file (`synchronous=FULL`) before SQLite may reuse the WAL.
//! - The writer keeps an automatic checkpoint as a safety valve at a much larger WAL
//!   size ([`super::schema::WRITER_AUTOCHECKPOINT_PAGES`]): under a write load that never
//!   pauses, it is the writer's own checkpoint (almost nothing left to copy by then) that
//!   lets the WAL start over from its beginning, so the file stays bounded.
//!
//! Durability does not depend on this thread: every acknowledged append is in the
//! fsynced WAL, which recovery replays whether or not it was checkpointed.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::{StoreError, schema};

/// The checkpointer thread, as the writer holds it.
#[derive(Debug)]
pub struct Checkpointer {
    kick: SyncSender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Checkpointer {
    /// Opens the checkpointer's connection to the database at `path` and starts its
    /// thread, which checkpoints at most once per `interval`.
    ///
    /// # Errors
    /// The connection or the thread cannot be created.
    pub fn start(path: &Path, interval: Duration) -> Result<Checkpointer, StoreError> {
        let conn = Connection::open(path)?;
        schema::configure(&conn)?;
        // The checkpoint fsyncs the database file before the WAL may be reused.
        conn.pragma_update(None, "synchronous", "FULL")?;
        let (kick, kicks) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || run(&conn, &kicks, interval))?;
        Ok(Checkpointer { kick, thread })
    }

    /// Something was committed. Never blocks: a kick while one is pending is the same.
    pub fn committed(&self) {
        match self.kick.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) => {}
            // The thread is gone (it cannot have panicked on its own, but if it did, the
            // writer's own automatic checkpoint still keeps the WAL bounded).
            Err(TrySendError::Disconnected(())) => {}
        }
    }

    /// Stops the thread and waits for it (at most the checkpoint under way), so that a
    /// closing writer's final checkpoint does not run beside this one.
    pub fn stop(self) {
        drop(self.kick);
        let _ = self.thread.join();
    }
}

fn run(conn: &Connection, kicks: &Receiver<()>, interval: Duration) {
    let mut kicked = kicks.recv().is_ok();
    while kicked {
        let began = Instant::now();
        if let Err(e) = checkpoint(conn) {
            // Nothing is lost: the frames stay in the WAL and the next kick retries.
            tracing::warn!(error = %e, "WAL checkpoint");
        }
        // At most one checkpoint per interval: what is committed meanwhile waits for the
        // next one, which runs as soon as the interval is over if there was a kick.
        kicked = false;
        loop {
            let rest = interval.saturating_sub(began.elapsed());
            match kicks.recv_timeout(rest) {
                Ok(()) => kicked = true,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if !kicked {
            kicked = kicks.recv().is_ok();
        }
    }
}

/// One PASSIVE checkpoint: copies as many committed frames as no reader still needs.
fn checkpoint(conn: &Connection) -> Result<(), StoreError> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }

    /// A fresh database prepared as the writer prepares it: (its directory, its path,
    /// the writer's connection).
    fn writer_db() -> (tempfile::TempDir, std::path::PathBuf, Connection) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("c.db");
        let mut writer = Connection::open(&path).expect("open");
        schema::prepare_writer(&mut writer).expect("schema");
        (dir, path, writer)
    }

    /// A commit made with the writer's settings (its automatic checkpoint far away)
    /// stays in the WAL until the checkpointer is kicked; then it reaches the database
    /// file, which only a checkpoint writes.
    #[test]
    fn a_kick_copies_what_was_committed_into_the_database_file() {
        let (_dir, path, writer) = writer_db();
        let checkpointer = Checkpointer::start(&path, Duration::from_millis(5)).expect("start");
        writer
            .execute_batch(
                "INSERT INTO games VALUES ('a', 0, 'Open', '1', 1, 0, '{}', '');
                 INSERT INTO events (game_id, seq, written_at_ms, payload)
                     VALUES ('a', 1, 0, zeroblob(20000));",
            )
            .expect("write");
        let before = size(&path);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(size(&path), before, "nothing copies the WAL without a kick");
        checkpointer.committed();
        let deadline = Instant::now() + Duration::from_secs(10);
        while size(&path) < before + 20_000 {
            assert!(Instant::now() < deadline, "the checkpointer never ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        checkpointer.stop();
    }

    /// Stopping returns (the thread ends) whether or not it was ever kicked.
    #[test]
    fn stop_ends_the_thread() {
        let (_dir, path, _writer) = writer_db();
        Checkpointer::start(&path, Duration::from_secs(3600))
            .expect("start")
            .stop();
        let kicked = Checkpointer::start(&path, Duration::from_secs(3600)).expect("start");
        kicked.committed();
        kicked.committed();
        kicked.stop();
    }
}
