//! A PostgreSQL schema of its own for each test, on the server named by
//! `ARBITER_TEST_DATABASE_URL` (`.ci/run` sets it). Without it the PostgreSQL tests skip,
//! saying so on stderr, so a machine without PostgreSQL still passes the test command.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use draughts_arbiter::store::{PostgresOptions, PostgresStore};

/// The variable naming the test database.
pub const URL_VAR: &str = "ARBITER_TEST_DATABASE_URL";

/// A fresh, empty schema; [`TestDb::drop_schema`] removes it.
#[derive(Debug)]
pub struct TestDb {
    base: String,
    /// The schema's name.
    pub schema: String,
}

impl TestDb {
    /// A new schema named after `what`, or `None` (with a message) if no test database
    /// is configured.
    pub async fn create(what: &str) -> Option<TestDb> {
        let Ok(base) = std::env::var(URL_VAR) else {
            eprintln!("SKIPPED ({what}): {URL_VAR} is not set, no PostgreSQL to test against");
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let schema = format!(
            "t_{}_{}_{}_{nanos}",
            what.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let db = TestDb { base, schema };
        db.execute(&format!("CREATE SCHEMA {}", db.schema)).await;
        Some(db)
    }

    /// The URL of the database with this schema as its search path.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{}", self.base, self.schema)
    }

    /// A store on this schema for node `node`, with a lease of `lease`.
    pub async fn store(&self, node: &str, lease: Duration) -> PostgresStore {
        let mut options = PostgresOptions::node(node, format!("{node}.test:50051"));
        options.lease = lease;
        PostgresStore::connect(&self.url(), options)
            .await
            .expect("connect to the test database")
    }

    /// Runs SQL on the schema, outside any store.
    pub async fn execute(&self, sql: &str) {
        let (client, connection) = tokio_postgres::connect(&self.url(), tokio_postgres::NoTls)
            .await
            .expect("connect to the test database");
        let task = tokio::spawn(connection);
        client.batch_execute(sql).await.expect(sql);
        drop(client);
        let _ = task.await;
    }

    /// Runs SQL on the schema, outside any store, and returns the first column of the
    /// rows of its last statement (an `EXPLAIN`'s plan, one line a row).
    pub async fn lines(&self, sql: &str) -> Vec<String> {
        let (client, connection) = tokio_postgres::connect(&self.url(), tokio_postgres::NoTls)
            .await
            .expect("connect to the test database");
        let task = tokio::spawn(connection);
        let messages = client.simple_query(sql).await.expect(sql);
        drop(client);
        let _ = task.await;
        messages
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
                _ => None,
            })
            .collect()
    }

    /// Drops the schema and everything in it.
    pub async fn drop_schema(self) {
        self.execute(&format!("DROP SCHEMA {} CASCADE", self.schema))
            .await;
    }
}
