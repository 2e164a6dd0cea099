package lifecycle_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// TestWebhookDeployments: the URL is checked before the token is read, and
// the token, trimmed, is sent as the bearer token.
func TestWebhookDeployments(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auth []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"deployments":[]}`))
	}))
	t.Cleanup(ts.Close)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")

	if _, err := lifecycle.WebhookDeployments("ftp://x", missing); !errors.Is(err, api.ErrNotHTTP) {
		t.Errorf("ftp URL: %v, want ErrNotHTTP", err)
	}
	if _, err := lifecycle.WebhookDeployments(ts.URL, missing); err == nil || errors.Is(err, api.ErrNotHTTP) {
		t.Errorf("missing token file: %v", err)
	}
	for _, file := range []string{token, ""} {
		d, err := lifecycle.WebhookDeployments(ts.URL, file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DeploymentsIn(context.Background(), "shop", "api", "", 1); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 2 || auth[0] != "Bearer s3cret" || auth[1] != "" {
		t.Errorf("Authorization headers %q, want the token then none", auth)
	}
}
