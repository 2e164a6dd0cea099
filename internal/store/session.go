package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Session kinds.
const (
	// SessionToken is a sign-in with a token typed into the form.
	SessionToken = "token"
	// SessionOIDC is a sign-in through the OpenID Connect provider.
	SessionOIDC = "oidc"
)

// Session is one signed-in visitor of the status pages. The store keeps
// only a hash of the session's secret (what the cookie holds), so a copy
// of the database signs nobody in.
type Session struct {
	// IDHash is the SHA-256 of the session's secret, hex.
	IDHash string
	Kind   string
	// Subject is the provider's sub claim of an OIDC session.
	Subject string
	// Email is the verified email claim of an OIDC session, if any.
	Email string
	// Groups are the groups claim of an OIDC session.
	Groups []string
	// TokenHash is the SHA-256 (hex) of the token a token session signed in
	// with: the session ends when that token is no longer configured.
	TokenHash string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// CreateSession stores a new session.
func (s *sqlStore) CreateSession(ctx context.Context, se Session) error {
	groups, err := json.Marshal(nonNil(se.Groups))
	if err != nil {
		return fmt.Errorf("encoding session groups: %w", err)
	}
	if _, err := s.execWrite(ctx, `INSERT INTO sessions (id_hash, kind, subject, email, grps, token_hash, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, se.IDHash, se.Kind, cleanText(se.Subject), cleanText(se.Email), cleanText(string(groups)),
		se.TokenHash, ts(se.CreatedAt), ts(se.ExpiresAt)); err != nil {
		return fmt.Errorf("storing a session: %w", err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Session returns the session of idHash unless it has expired at now;
// ErrNotFound when there is none (never was, signed out, or expired).
func (s *sqlStore) Session(ctx context.Context, idHash string, now time.Time) (Session, error) {
	var (
		se             Session
		groups         string
		created, until int64
	)
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id_hash, kind, subject, email, grps, token_hash, created_at, expires_at
		FROM sessions WHERE id_hash = ? AND expires_at > ?`), idHash, ts(now)).
		Scan(&se.IDHash, &se.Kind, &se.Subject, &se.Email, &groups, &se.TokenHash, &created, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return se, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return se, fmt.Errorf("reading a session: %w", err)
	}
	if err := json.Unmarshal([]byte(groups), &se.Groups); err != nil {
		return se, fmt.Errorf("reading a session's groups: %w", err)
	}
	se.CreatedAt, se.ExpiresAt = fromTS(created), fromTS(until)
	return se, nil
}

// DeleteSession ends a session; ending one that is gone is no error.
func (s *sqlStore) DeleteSession(ctx context.Context, idHash string) error {
	if _, err := s.execWrite(ctx, `DELETE FROM sessions WHERE id_hash = ?`, idHash); err != nil {
		return fmt.Errorf("deleting a session: %w", err)
	}
	return nil
}

// DeleteSessionsOf ends every session of an OIDC subject and returns how
// many there were.
func (s *sqlStore) DeleteSessionsOf(ctx context.Context, subject string) (int64, error) {
	n, err := s.execWrite(ctx, `DELETE FROM sessions WHERE kind = ? AND subject = ?`, SessionOIDC, subject)
	if err != nil {
		return 0, fmt.Errorf("deleting sessions: %w", err)
	}
	return n, nil
}

// pruneSessions drops the sessions expired at now.
func (s *sqlStore) pruneSessions(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.execWrite(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, ts(now))
	if err != nil {
		return 0, fmt.Errorf("pruning sessions: %w", err)
	}
	return n, nil
}
