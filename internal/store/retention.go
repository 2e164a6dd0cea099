package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults of the history's retention (docs/webhook.md).
const (
	DefaultKeepDeployments = 100
	DefaultKeepAge         = 90 * 24 * time.Hour
)

// Retention says which history Prune drops. An app's current deployment, and
// its events, are always kept.
type Retention struct {
	// KeepPerApp is how many deployments of each app are kept in each of
	// its environments, newest first;
	// 0 keeps all.
	KeepPerApp int
	// MaxAge drops deployments that finished longer ago, and events and
	// phase changes received longer ago; 0 keeps all.
	MaxAge time.Duration
}

// Pruned counts what Prune dropped.
type Pruned struct {
	Deployments, Events, PhaseChanges, Sessions int64
	// Skipped: another replica was pruning the shared database; this one
	// deleted nothing.
	Skipped bool
}

// pruneBatch bounds the rows one prune transaction deletes, so that the
// writers it holds up (SQLite has one) wait briefly.
const pruneBatch = 1000

// Prune drops the history r does not keep, in batches.
func (s *sqlStore) Prune(ctx context.Context, r Retention, now time.Time) (Pruned, error) {
	if !s.d.advisory {
		return s.prune(ctx, r, now)
	}
	// One replica prunes at a time; the others skip their turn.
	c, err := s.db.Conn(ctx)
	if err != nil {
		return Pruned{}, fmt.Errorf("pruning: %w", err)
	}
	defer c.Close()
	key := int64(s.class)<<32 | pruneLockKey
	var got bool
	if err := c.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		return Pruned{}, fmt.Errorf("pruning: taking the lock: %w", err)
	}
	if !got {
		return Pruned{Skipped: true}, nil
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := c.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			// Never back in the pool with the lock held.
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return s.prune(ctx, r, now)
}

// pruneLockKey, with the schema's class above it, is the advisory lock of
// the prune.
const pruneLockKey = 0x7072756e // "prun"

func (s *sqlStore) prune(ctx context.Context, r Retention, now time.Time) (Pruned, error) {
	var p Pruned
	cutoff := int64(0)
	if r.MaxAge > 0 {
		cutoff = ts(now.Add(-r.MaxAge))
	}
	var conds []string
	var args []any
	if r.KeepPerApp > 0 {
		conds = append(conds, `id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY project, app, environment ORDER BY id DESC) AS n
			FROM deployments) ranked WHERE n > ?)`)
		args = append(args, r.KeepPerApp)
	}
	if cutoff > 0 {
		conds = append(conds, `(finished_at <> 0 AND finished_at < ?)`)
		args = append(args, cutoff)
	}
	if len(conds) > 0 {
		query := s.q(`SELECT id FROM deployments WHERE (` + strings.Join(conds, " OR ") + `)
			AND id NOT IN (SELECT deployment_id FROM apps) ORDER BY id LIMIT ` + fmt.Sprint(pruneBatch))
		for {
			ids, err := queryAll(ctx, s.db, "deployments to prune", query, scanID, args...)
			if err != nil {
				return p, err
			}
			if len(ids) == 0 {
				break
			}
			ev, deps, err := s.deleteDeployments(ctx, ids)
			if err != nil {
				return p, err
			}
			p.Deployments += deps
			p.Events += ev
			if len(ids) < pruneBatch {
				break
			}
		}
	}
	if cutoff > 0 {
		for _, step := range []struct {
			n     *int64
			query string
		}{
			{&p.Events, `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE received_at < ?
				AND deployment_id NOT IN (SELECT deployment_id FROM apps) ORDER BY id LIMIT ` + fmt.Sprint(pruneBatch) + `)`},
			{&p.PhaseChanges, `DELETE FROM phase_changes WHERE seq IN (SELECT seq FROM phase_changes WHERE at < ?
				ORDER BY seq LIMIT ` + fmt.Sprint(pruneBatch) + `)`},
		} {
			for {
				n, err := s.execWrite(ctx, step.query, cutoff)
				if err != nil {
					return p, fmt.Errorf("pruning: %w", err)
				}
				*step.n += n
				if n < pruneBatch {
					break
				}
			}
		}
	}
	n, err := s.pruneSessions(ctx, now)
	if err != nil {
		return p, err
	}
	p.Sessions = n
	return p, nil
}

func scanID(row interface{ Scan(...any) error }) (int64, error) {
	var id int64
	err := row.Scan(&id)
	return id, err
}

// deleteDeployments deletes deployments (none current) with their events.
func (s *sqlStore) deleteDeployments(ctx context.Context, ids []int64) (events, deployments int64, err error) {
	defer s.lockWrites()()
	err = s.retry(ctx, "pruning deployments", func() (err error) {
		events, deployments, err = s.deleteDeploymentsOnce(ctx, ids)
		return err
	})
	return events, deployments, err
}

func (s *sqlStore) deleteDeploymentsOnce(ctx context.Context, ids []int64) (events, deployments int64, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = rollback(tx) }()
	in := strings.Repeat("?, ", len(ids))
	in = in[:len(in)-2]
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM events WHERE deployment_id IN (`+in+`)`), args...)
	if err != nil {
		return 0, 0, fmt.Errorf("pruning events: %w", err)
	}
	events, _ = res.RowsAffected()
	// A deployment that became current meanwhile is kept.
	res, err = tx.ExecContext(ctx, s.q(`DELETE FROM deployments WHERE id IN (`+in+`)
		AND id NOT IN (SELECT deployment_id FROM apps)`), args...)
	if err != nil {
		return 0, 0, fmt.Errorf("pruning deployments: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("commit: %w", err)
	}
	// The rows really deleted: another writer may have deleted some first.
	deployments, _ = res.RowsAffected()
	return events, deployments, nil
}

func (s *sqlStore) execWrite(ctx context.Context, query string, args ...any) (int64, error) {
	defer s.lockWrites()()
	res, err := s.db.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// cleanText makes s storable as text by both databases: PostgreSQL refuses
// NUL and invalid UTF-8 in TEXT, which SQLite would keep. Both become
// U+FFFD, so both stores hold the same.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// clean returns e with every text field storable (see cleanText).
func (e Event) clean() Event {
	for _, f := range []*string{&e.DedupeKey, &e.Kind, &e.Namespace, &e.Name, &e.Severity, &e.Reason, &e.Message,
		&e.Revision, &e.Controller, &e.App.Project, &e.App.Name, &e.Component, &e.SpecRevision, &e.Environment, &e.Health, &e.IgnoredReason} {
		*f = cleanText(*f)
	}
	if !utf8.Valid(e.Body) || strings.ContainsRune(string(e.Body), 0) {
		e.Body = []byte(cleanText(string(e.Body)))
	}
	return e
}
