package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
)

// webhookFlags locate the webhook whose deployment history history and
// rollback read.
type webhookFlags struct {
	url, tokenFile string
}

func addWebhookFlags(fs *flag.FlagSet) *webhookFlags {
	f := &webhookFlags{}
	fs.StringVar(&f.url, "webhook", "", "base URL of the fleetwright webhook, such as https://fleetwright.example.com")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the webhook's API bearer token")
	return f
}

// client returns a client of the webhook's API, or nil when --webhook is
// not set.
func (f *webhookFlags) client() (*webhookClient, error) {
	if f.url == "" {
		if f.tokenFile != "" {
			return nil, cli.Usagef("--token-file needs --webhook")
		}
		return nil, nil
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usagef("--webhook must be an http(s) URL, got %q", f.url)
	}
	c := &webhookClient{base: strings.TrimSuffix(u.String(), "/"), http: &http.Client{Timeout: 30 * time.Second}}
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading the token: %w", err)}
		}
		c.token = strings.TrimSpace(string(b))
	}
	return c, nil
}

// webhookClient reads the webhook's API.
type webhookClient struct {
	base  string
	token string
	http  *http.Client
}

// deployment is one deployment as GET /api/v1/apps/{project}/{name}/deployments
// lists it (the webhook's deployment view); only the fields used here.
type deployment struct {
	ID int64 `json:"id"`
	// Revision is the fleet revision Flux applied.
	Revision string `json:"revision"`
	// SpecRevision is the apps-repository commit that last changed the
	// app's spec at that fleet revision (from the spec-revision annotation).
	SpecRevision string    `json:"spec_revision,omitempty"`
	Phase        string    `json:"phase"`
	Message      string    `json:"message,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	FinishedAt   time.Time `json:"finished_at,omitzero"`
	LiveURL      string    `json:"live_url,omitempty"`
}

type deploymentsPage struct {
	Deployments []deployment `json:"deployments"`
	NextCursor  string       `json:"next_cursor"`
}

// maxDeploymentPages bounds how many pages of history are read.
const maxDeploymentPages = 50

// deployments lists an app's deployments, newest first; max > 0 stops at
// that many.
func (c *webhookClient) deployments(ctx context.Context, project, name string, max int) ([]deployment, error) {
	var out []deployment
	cursor := ""
	for range maxDeploymentPages {
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		u := fmt.Sprintf("%s/api/v1/apps/%s/%s/deployments?%s", c.base, url.PathEscape(project), url.PathEscape(name), q.Encode())
		var page deploymentsPage
		if err := c.get(ctx, u, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Deployments...)
		if max > 0 && len(out) >= max {
			return out[:max], nil
		}
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
	return out, nil
}

func (c *webhookClient) get(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("webhook: reading %s: %w", req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return fmt.Errorf("webhook: GET %s: %s: %s", req.URL.Path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("webhook: GET %s: %w", req.URL.Path, err)
	}
	return nil
}

// errNoDeployment is returned when a deployment id is not in the history.
var errNoDeployment = errors.New("no such deployment")
