package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client reads the status API of a webhook Server over HTTP.
type Client struct {
	// PageSize is how many deployments Deployments asks for per page
	// (MaxPageSize from NewClient).
	PageSize int

	base  string // without a trailing slash
	token string
	http  *http.Client
}

// ErrNotHTTP is returned by NewClient for a base URL that is not http(s).
var ErrNotHTTP = errors.New("not an http(s) URL")

// NewClient returns a client of the webhook at baseURL (such as
// https://fleetwright.example.com) that sends token as its API bearer
// token (none when empty) through hc (nil: a client with a 30s timeout).
func NewClient(baseURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: %q: %w", baseURL, ErrNotHTTP)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), token: token, http: hc, PageSize: MaxPageSize}, nil
}

// maxDeploymentPages bounds how many pages of history Deployments reads.
const maxDeploymentPages = 50

// Deployments lists an app's deployments, newest first, following the
// API's pages; max > 0 stops at that many.
func (c *Client) Deployments(ctx context.Context, project, name string, max int) ([]Deployment, error) {
	return c.DeploymentsIn(ctx, project, name, "", max)
}

// DeploymentsIn lists an app's deployments in one environment (all of
// them when environment is empty), newest first, as Deployments does.
func (c *Client) DeploymentsIn(ctx context.Context, project, name, environment string, max int) ([]Deployment, error) {
	var out []Deployment
	cursor := ""
	for range maxDeploymentPages {
		q := url.Values{"limit": {strconv.Itoa(c.PageSize)}}
		if environment != "" {
			q.Set("environment", environment)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		u := fmt.Sprintf("%s/api/v1/apps/%s/%s/deployments?%s", c.base, url.PathEscape(project), url.PathEscape(name), q.Encode())
		var page DeploymentPage
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

// get GETs u and decodes its JSON answer into v; an answer other than 200
// is an error that holds the API's error message.
func (c *Client) get(ctx context.Context, u string, v any) error {
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
		var e Error
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
