package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQLiteOptions configures OpenSQLite.
type SQLiteOptions struct {
	// BusyTimeout is how long a writer waits for the lock; default 5s.
	BusyTimeout time.Duration
	// Now is the clock used for migration records; default time.Now.
	Now func() time.Time
}

// OpenSQLite opens (creating if needed) the SQLite database at path in WAL
// mode with full fsync on commit, and migrates its schema.
func OpenSQLite(ctx context.Context, path string, opts SQLiteOptions) (*SQL, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Opaque: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening sqlite %s: %w", path, err)
	}
	// One writer at a time is all SQLite allows; a few readers run beside it in WAL mode.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(0)
	s := &SQL{sqlStore{db: db, d: dialect{name: "sqlite", pk: "INTEGER PRIMARY KEY"}, wmu: &sync.Mutex{}}}
	if err := s.open(ctx, opts.Now); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite %s: %w", path, err), db.Close())
	}
	return s, nil
}

// SQL is a Store on a SQL database.
type SQL struct{ sqlStore }

// Dialect names the database: "sqlite" or "postgres".
func (s *SQL) Dialect() string { return s.d.name }

func (s *SQL) open(ctx context.Context, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	return s.migrate(ctx, now())
}
