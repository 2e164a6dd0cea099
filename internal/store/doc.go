// Package store keeps the webhook's history: every Flux event received, one
// deployment per app and fleet revision with its phase, per-component state and
// probe results, the current phase of each app, and an ordered log of phase
// changes that the event stream replays; and the status pages' session
// list.
//
// Two implementations share one schema and one set of queries: SQLite
// (modernc.org/sqlite, a single file in WAL mode, the default) and PostgreSQL
// (jackc/pgx, for several webhook replicas). Both migrate their schema on open
// from a list of versioned steps recorded in the schema_migrations table.
//
// On PostgreSQL several replicas share one database: writes lock the apps
// they touch in one order and retry deadlocks; phase changes commit in
// sequence order (a reader of the log never skips one); Owners divides the
// apps among the replicas by advisory locks and carries their NOTIFY
// wake-ups; the GitHub outbox is sent with FOR UPDATE SKIP LOCKED; and one
// replica prunes at a time.
package store
