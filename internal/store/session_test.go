package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		alice := Session{IDHash: "a1", Kind: SessionOIDC, Subject: "alice-sub", Email: "alice@example.test",
			Groups: []string{"team-a", "x\x00y"}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		again := alice
		again.IDHash, again.Groups = "a2", nil
		tok := Session{IDHash: "t1", Kind: SessionToken, TokenHash: "feed", CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour)}
		for _, se := range []Session{alice, again, tok} {
			if err := s.CreateSession(ctx, se); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateSession(ctx, alice); err == nil {
			t.Error("a second session with the same id was stored")
		}
		got, err := s.Session(ctx, "a1", t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		// Groups keep every character (JSON escapes them for both databases).
		if diff := cmp.Diff(alice, got); diff != "" {
			t.Errorf("Session (-want +got):\n%s", diff)
		}
		if got, err := s.Session(ctx, "a2", t0); err != nil || got.Groups == nil || len(got.Groups) != 0 {
			t.Errorf("Session(no groups) = %+v, %v", got, err)
		}
		// Expired: gone, though still stored until the prune.
		if _, err := s.Session(ctx, "a1", t0.Add(time.Hour)); !errors.Is(err, ErrNotFound) {
			t.Errorf("Session(expired) err = %v, want ErrNotFound", err)
		}
		// Signed out: gone at once.
		if err := s.DeleteSession(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "t1", t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("Session(deleted) err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteSession(ctx, "t1"); err != nil {
			t.Errorf("deleting a deleted session: %v", err)
		}
		if n, err := s.DeleteSessionsOf(ctx, "alice-sub"); err != nil || n != 2 {
			t.Errorf("DeleteSessionsOf = %d, %v; want 2", n, err)
		}
		// The prune drops expired sessions only.
		for _, se := range []Session{{IDHash: "old", Kind: SessionToken, ExpiresAt: t0}, {IDHash: "new", Kind: SessionToken, ExpiresAt: t0.Add(time.Hour)}} {
			if err := s.CreateSession(ctx, se); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Prune(ctx, Retention{}, t0)
		if err != nil || p != (Pruned{Sessions: 1}) {
			t.Errorf("Prune = %+v, %v; want one session", p, err)
		}
		if _, err := s.Session(ctx, "new", t0); err != nil {
			t.Errorf("the prune dropped a live session: %v", err)
		}
	})
}
