//! The integration tests, one binary: each file of this folder is a module (a test
//! binary per file linked the whole crate 34 times; one links it once). Run them all with
//! `cargo test --all-targets`; one file with `cargo test --test it <module>::` (e.g.
//! `cargo test --test it session::`); the deep perft and reference rows that CI runs in
//! release with `cargo test --release --test it -- --ignored perft:: reference_`.
//!
//! `common` holds what the reference generators share.

mod common;

mod api_contract;
mod board_client;
mod board_protocol;
mod board_sim;
mod browser;
mod citations;
mod cli_client;
mod clock;
mod clock_faults;
mod cluster;
mod console;
mod corners;
mod corruption;
mod crash;
mod delay;
mod deploy_config;
mod draws;
mod edge;
mod event_fields;
mod hostile;
mod http_relay;
mod hub;
mod hub_props;
mod layout;
mod lease_model;
mod limits;
mod metrics;
mod notation_props;
mod pdn;
mod pdn_export;
mod pdn_relay;
mod perft;
mod pg_lease;
mod quarantine;
mod reference_corners;
mod reference_generator;
mod reference_orthogonal;
mod reference_towers;
mod reflection;
mod relay_feeds;
mod replay_cli;
mod replay_games;
mod round_report;
mod round_stream;
mod rules_international_english;
mod rules_russian;
mod service;
mod session;
mod session_props;
mod standings;
mod standings_stream;
mod store;
mod swiss_engine;
mod tls;
mod token_reload;
mod tournament;
mod tournament_log;
mod tournament_service;
mod towers;
mod variants;
mod variants_orthogonal;
