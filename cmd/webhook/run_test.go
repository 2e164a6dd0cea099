package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		part string
	}{
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"extra"}, `unknown command "extra"`},
		{[]string{"-github-ref", "main"}, "-github-ref must be revision or spec-revision"},
		{[]string{"-github-repo", "a/b"}, "-github-token-file and -github-repo go together"},
		{[]string{"-github-apps-repo", "a/apps"}, "-github-apps-repo needs -github-repo and -github-token-file"},
		{[]string{"-postgres-dsn", "x", "-postgres-dsn-file", "y"}, "not both"},
		{[]string{"-kubeconfig", "k", "-in-cluster"}, "not both"},
		{[]string{"-kubeconfig", "k", "-ingress-address", "ingress.local"}, `-ingress-address must be host:port, not "ingress.local"`},
		{[]string{"-kubeconfig", "k", "-ingress-address", ":443"}, "-ingress-address must be host:port"},
		{[]string{"-ingress-address", "127.0.0.1:443"}, "-ingress-address needs a cluster to probe"},
		{[]string{"-max-pending-body-bytes", "0"}, "-max-pending-body-bytes must be positive"},
		{[]string{"-keep-deployments", "-1"}, "must not be negative"},
		{[]string{"-session-ttl", "0s"}, "-session-ttl must be positive"},
		{[]string{"-fleet-repo-url", "git@example.com:acme/fleet"}, `-fleet-repo-url must be an http(s) URL`},
		{[]string{"-max-streams", "10000"}, "-max-streams (10000) must be below -max-connections (10000)"},
		{[]string{"-max-streams", "0"}, "-max-streams (0) must be below -max-connections"},
		{[]string{"-max-streams-per-token", "-1"}, "must not be negative"},
		{[]string{"-oidc-issuer", "https://id.example.com"}, "-oidc-issuer needs -oidc-client-id, -oidc-redirect-url and -access-file"},
		{[]string{"-oidc-issuer", "http://id.example.com", "-oidc-client-id", "c", "-oidc-redirect-url", "https://s/auth/callback", "-access-file", "a"}, "-oidc-issuer must be an https URL"},
		{[]string{"-access-file", "a.yaml"}, "need -oidc-issuer"},
		{[]string{"-cluster-kubeconfig", "prod-eu"}, `want NAME=a kubeconfig file`},
		{[]string{"-cluster-kubeconfig", "Prod=k"}, `NAME a cluster of platform.yaml (a DNS label); got "Prod=k"`},
		{[]string{"-cluster-kubeconfig", "prod-eu=a", "-cluster-kubeconfig", "prod-eu=b"}, "cluster prod-eu given twice"},
		{[]string{"-cluster-kubeconfig", "prod-eu=k"}, "-cluster-kubeconfig needs -cluster-name (this webhook's own cluster) and -platform-file"},
		{[]string{"-cluster-kubeconfig", "stage-eu=k", "-cluster-name", "stage-eu", "-platform-file", "p"}, "stage-eu is this webhook's own cluster (-cluster-name): give its kubeconfig with -kubeconfig"},
		{[]string{"-cluster-ingress-address", "prod-eu=10.0.0.1:443"}, "-cluster-ingress-address needs the cluster's -cluster-kubeconfig"},
		{[]string{"-cluster-kubeconfig", "prod-eu=k", "-cluster-name", "stage-eu", "-platform-file", "p", "-cluster-ingress-address", "stage-eu=10.0.0.1:443"}, "no -cluster-kubeconfig stage-eu (this webhook's own cluster takes -ingress-address)"},
		{[]string{"-cluster-kubeconfig", "prod-eu=k", "-cluster-name", "stage-eu", "-platform-file", "p", "-cluster-ingress-address", "prod-eu=ingress"}, `-cluster-ingress-address prod-eu: must be host:port, not "ingress"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			err := run(t.Context(), tc.args, io.Discard, &stderr)
			ee, ok := errors.AsType[*cli.ExitError](err)
			if !ok || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), tc.part) {
				t.Errorf("run = %v, want a usage error containing %q", err, tc.part)
			}
		})
	}
}

func TestMissingSecretFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := run(t.Context(), []string{"-listen", "127.0.0.1:0", "-sqlite", filepath.Join(dir, "h.db"), "-hmac-key-file", filepath.Join(dir, "nope")}, io.Discard, io.Discard)
	var stderr strings.Builder
	if code := cli.CodeAs("webhook", err, &stderr); code != cli.ExitFailed || !strings.HasPrefix(stderr.String(), "webhook: reading HMAC key") {
		t.Errorf("run = %v: exit %d, printed %q; want exit 1 and the error", err, code, stderr.String())
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func event(app string, i int) []byte {
	return fmt.Appendf(nil, `{"involvedObject":{"kind":"Kustomization","namespace":"flux-system","name":"shop-%[1]s-web","apiVersion":"kustomize.toolkit.fluxcd.io/v1"},"severity":"info","timestamp":"2026-03-01T12:00:00Z","message":"Deployment/shop/%[1]s-web configured (%[2]d)","reason":"Progressing","metadata":{"revision":"main@sha1:2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293","event.toolkit.fluxcd.io/app":"%[1]s","event.toolkit.fluxcd.io/project":"shop"},"reportingController":"kustomize-controller"}`, app, i)
}

// TestServeAndShutdown runs the command, posts events while it shuts down,
// and checks that every acknowledged event is in the store afterwards.
func TestServeAndShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	args := []string{
		"-listen", "127.0.0.1:0", "-sqlite", db,
		"-hmac-key-file", writeFile(t, dir, "hmac", "s3cret"),
		"-api-token-file", writeFile(t, dir, "token", "tok"),
		"-recheck-interval", "0", "-log-level", "warn",
		"-viewer-token-file", writeFile(t, dir, "viewer", "look shop\npeek billing"), "-cluster-name", "prod", "-environments", "staging, production",
	}
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	o.ready = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, io.Discard, &stderr) }()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("serve ended early: %v", err)
	}

	post := func(body []byte) (int, int64, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/hooks/flux", bytes.NewReader(body))
		req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte("s3cret"), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		var r struct {
			EventID int64 `json:"event_id"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r.EventID, nil
	}
	if code, _, err := post(event("api", 0)); err != nil || code != 200 {
		t.Fatalf("first event = %d, %v", code, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/apps", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var apps struct{ Apps []store.App }
	_ = json.NewDecoder(resp.Body).Decode(&apps)
	resp.Body.Close()
	if len(apps.Apps) != 1 || apps.Apps[0].Name != "api" {
		t.Fatalf("apps = %+v", apps)
	}
	// A viewer token opens the status pages and the API's reads of its
	// projects; another project's app is one that does not exist.
	for _, c := range []struct {
		path, tok string
		code      int
	}{{"/", "look", 200}, {"/apps/shop/api", "look", 200}, {"/api/v1/apps/shop/api", "look", 200},
		{"/apps/shop/api", "peek", 404}, {"/api/v1/apps/shop/api", "peek", 404}, {"/", "nope", 401}} {
		req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+c.tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || (c.code == 200 && !strings.HasPrefix(c.path, "/api/") && !strings.Contains(string(page), "cluster <b>prod</b>")) {
			t.Errorf("GET %s with token %q = %d, want %d (and the cluster's name on a page)", c.path, c.tok, resp.StatusCode, c.code)
		}
	}

	// Shut down while events are in flight.
	var (
		mu       sync.Mutex
		acked    []int64
		wg       sync.WaitGroup
		firstAck = make(chan struct{})
		once     sync.Once
	)
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				code, id, err := post(event(fmt.Sprintf("app%d", w), i+1))
				if err != nil {
					return
				}
				if code == 200 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
					once.Do(func() { close(firstAck) })
				}
			}
		})
	}
	// Shut down once events flow, however loaded the machine.
	select {
	case <-firstAck:
	case <-time.After(30 * time.Second):
	}
	cancel()
	wg.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve = %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after cancel")
	}

	st, err := store.OpenSQLite(t.Context(), db, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[int64]bool{}
	for w := range 8 {
		evs, err := st.Events(t.Context(), layout.AppRef{Project: "shop", Name: fmt.Sprintf("app%d", w)}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			stored[e.ID] = true
		}
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged event %d is not in the store", id)
		}
	}
	if len(acked) == 0 {
		t.Error("no event was acknowledged before the shutdown")
	}
}

// TestIngressAddress checks that -ingress-address sends probe connections to
// the ingress controller's address while the app's host still names the TLS
// server and the HTTP request, so the certificate is verified for that host.
func TestIngressAddress(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		hosts []string
	)
	// httptest's certificate covers example.com (and loopback addresses).
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host+r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})))

	tests := []struct {
		host      string
		wantState probe.State
		wantErr   string
	}{
		{host: "example.com", wantState: probe.StatePassed},
		{host: "shop.apps.example.org", wantState: probe.StateFailed, wantErr: "shop.apps.example.org"},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			t.Parallel()
			o, err := parseFlags([]string{"-kubeconfig", "unused", "-ingress-address", ts.Listener.Addr().String(), "-tls-ca-bundle", ca}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newProber(o, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := p.Request(t.Context(), probe.IngressTarget{Host: tc.host, Path: "/healthz", TLS: true})
			if ep.State != tc.wantState || !strings.Contains(ep.Error, tc.wantErr) {
				t.Fatalf("Request = %s %q, want %s with an error naming %q", ep.State, ep.Error, tc.wantState, tc.wantErr)
			}
			if tc.wantState == probe.StatePassed && (ep.StatusCode != http.StatusOK || ep.TLS == nil || !ep.TLS.Verified) {
				t.Errorf("endpoint = %+v, want 200 over a verified chain", ep)
			}
		})
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(hosts, []string{"example.com/healthz"}) {
			t.Errorf("the TLS listener served %q, want one request for example.com/healthz", hosts)
		}
	})
}

// TestAccessFlagsErrors: a bad access file or viewer token file stops the
// command with the file's position, and never shows a token.
func TestAccessFlagsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	access := writeFile(t, dir, "access.yaml", "rules:\n  - group: team-shop\n    projects: [shop]\n    role: admin")
	viewers := writeFile(t, dir, "viewers", "viewer-token-0123456789 shop\nviewer-token-0123456789 billing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-oidc-issuer", "https://id.example.test", "-oidc-client-id", "fleetwright", "-oidc-redirect-url", "https://status.example.test/auth/callback", "-access-file", access},
			access + `:4:11: rules[0].role: must be viewer or operator, not "admin"`},
		{[]string{"-viewer-token-file", viewers}, viewers + ":2: the token of line 1 again"},
	} {
		args := append([]string{"-listen", "127.0.0.1:0", "-sqlite", filepath.Join(dir, "h.db")}, tc.args...)
		err := run(t.Context(), args, io.Discard, io.Discard)
		ee, ok := errors.AsType[*cli.ExitError](err)
		if !ok || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "0123456789") {
			t.Errorf("run %v = %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestServeOnPostgresOwnsAndReleases runs the command on PostgreSQL: it
// takes the app slots while it serves and gives them all up when it shuts
// down, so another replica takes the apps at once.
func TestServeOnPostgresOwnsAndReleases(t *testing.T) {
	t.Parallel()
	base := os.Getenv("FLEETWRIGHT_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETWRIGHT_TEST_POSTGRES_DSN is not set: run hack/postgres/start.sh and export its DSN")
		}
		t.Skip("SKIPPING PostgreSQL: FLEETWRIGHT_TEST_POSTGRES_DSN is not set (run hack/postgres/start.sh)")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("cmd%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	dir := t.TempDir()
	o, err := parseFlags([]string{"-listen", "127.0.0.1:0", "-postgres-dsn-file", writeFile(t, dir, "dsn", u.String()),
		"-recheck-interval", "0", "-prune-interval", "0", "-log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	o.ready = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, io.Discard, io.Discard) }()
	select {
	case <-addr:
	case err := <-done:
		t.Fatalf("serve ended early: %v", err)
	}
	locks := func() int {
		var n int
		if err := admin.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The 64 slots and the member lock.
	if n := locks(); n != store.OwnerSlots+1 {
		t.Errorf("serving alone, the replica holds %d advisory locks; want %d", n, store.OwnerSlots+1)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := locks(); n != 0 {
		t.Errorf("after shutdown %d advisory locks are held; want 0", n)
	}
}

// TestPlatformFilePrices reads the prices of a platform file, its
// environments' clusters and its previews' cluster, and refuses
// to start on a bad one with the problem at its line and column.
func TestPlatformFilePrices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeFile(t, dir, "platform.yaml", "registry: registry.example.com/fleet\nprices:\n  cpu_hour: 0.031\n  memory_gib_hour: 0.0042\n  currency: EUR")
	var pc webhook.PagesConfig
	if err := readPlatform(good, &pc); err != nil || pc.Prices != (webhook.Prices{CPUHour: 0.031, MemoryGiBHour: 0.0042, Currency: "EUR"}) {
		t.Errorf("readPlatform = %+v, %v", pc.Prices, err)
	}
	envs := writeFile(t, t.TempDir(), "platform.yaml", "registry: r.example.com/x\nclusters: [{name: stage-eu}, {name: prod-eu}]\n"+
		"environments:\n  - {name: staging, cluster: stage-eu}\n  - {name: production, cluster: prod-eu, promote_from: staging}\n"+
		"previews: {cluster: stage-eu, apps_domain: preview.example.com, ttl: 72h, max: 20}\n")
	pc = webhook.PagesConfig{}
	if err := readPlatform(envs, &pc); err != nil || !maps.Equal(pc.EnvironmentClusters, map[string]string{"staging": "stage-eu", "production": "prod-eu"}) ||
		pc.PreviewCluster != "stage-eu" {
		t.Errorf("the environments' clusters = %v, previews' %q, %v", pc.EnvironmentClusters, pc.PreviewCluster, err)
	}
	pc = webhook.PagesConfig{}
	if err := readPlatform(writeFile(t, t.TempDir(), "platform.yaml", "registry: r.example.com/x"), &pc); err != nil || pc.Prices.Set() || pc.PreviewCluster != "" {
		t.Errorf("readPlatform of a file without prices = %+v, %v", pc, err)
	}
	bad := writeFile(t, t.TempDir(), "platform.yaml", "prices:\n  cpu_hour: -0.031\n  memory_gib_hour: lots")
	err := run(t.Context(), []string{"-listen", "127.0.0.1:0", "-sqlite", filepath.Join(dir, "h.db"), "-platform-file", bad}, io.Discard, io.Discard)
	ee, ok := errors.AsType[*cli.ExitError](err)
	if !ok || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), bad+":2:13: prices.cpu_hour: must be ≥ 0; got -0.031") ||
		!strings.Contains(err.Error(), bad+":3:20: prices.memory_gib_hour: must be a number, not a string") {
		t.Errorf("run with a bad platform file = %v, want a usage error at its lines", err)
	}
}

// kubeconfigOf is a kubeconfig of the named contexts, each reaching the
// server of its value, current the first.
func kubeconfigOf(current string, servers map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\ncurrent-context: %s\nclusters:\n", current)
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q}\n", name, servers[name])
	}
	b.WriteString("users:\n- name: admin\n  user: {token: t0k3n}\ncontexts:\n")
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: admin}\n", name, name)
	}
	return b.String()
}

// TestClusterKubeconfigs: -cluster-kubeconfig NAME=PATH takes the context
// named NAME of a kubeconfig that holds several (as kubectl and argocd
// cluster add name them), else its current context; a cluster no
// environment of the platform runs on is refused, and each cluster's
// prober sends its requests to its own -cluster-ingress-address, never to
// the webhook's own -ingress-address.
func TestClusterKubeconfigs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	all := writeFile(t, dir, "all", kubeconfigOf("stage-eu", map[string]string{"stage-eu": "https://stage.example.test:6443", "prod-eu": "https://prod.example.test:6443",
		"prod-us": "https://us.example.test:6443", "previews-eu": "https://previews.example.test:6443"}))
	one := writeFile(t, dir, "one", kubeconfigOf("admin@prod", map[string]string{"admin@prod": "https://prod-only.example.test:6443"}))
	platform := writeFile(t, dir, "platform.yaml", "registry: r.example.com/x\nclusters: [{name: stage-eu}, {name: prod-eu}, {name: prod-us}, {name: previews-eu}]\n"+
		"environments:\n  - {name: staging, cluster: stage-eu}\n  - {name: production, cluster: prod-eu, promote_from: staging}\n  - {name: production-us, cluster: prod-us, promote_from: staging}\n"+
		"previews: {cluster: previews-eu, apps_domain: preview.example.com}\n")
	for _, tc := range []struct {
		path, name, host string
	}{
		{all, "prod-eu", "https://prod.example.test:6443"},
		{all, "prod-us", "https://us.example.test:6443"},
		{one, "prod-eu", "https://prod-only.example.test:6443"},
	} {
		c, err := namedKubeconfig(tc.path, tc.name)
		if err != nil || c.Host != tc.host || c.BearerToken != "t0k3n" {
			t.Errorf("namedKubeconfig(%s, %s) = %v, %v; want the server %s", filepath.Base(tc.path), tc.name, c, err, tc.host)
		}
	}
	if _, err := namedKubeconfig(filepath.Join(dir, "nope"), "prod-eu"); err == nil || !strings.Contains(err.Error(), "-cluster-kubeconfig prod-eu: loading") {
		t.Errorf("a missing kubeconfig = %v", err)
	}

	args := []string{"-cluster-name", "stage-eu", "-platform-file", platform, "-kubeconfig", all, "-ingress-address", "10.0.0.1:443",
		"-cluster-kubeconfig", "prod-eu=" + all, "-cluster-kubeconfig", "prod-us=" + one, "-cluster-ingress-address", "prod-us=10.0.0.3:443",
		"-cluster-kubeconfig", "previews-eu=" + all}
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var cfg webhook.Config
	if err := readPlatform(platform, &cfg.Pages); err != nil {
		t.Fatal(err)
	}
	if err := connectClusters(o, &cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(cfg.Clusters)); !slices.Equal(got, []string{"previews-eu", "prod-eu", "prod-us"}) {
		t.Fatalf("clusters = %v", got)
	}
	for name, want := range map[string]string{"prod-eu": "", "prod-us": "10.0.0.3:443", "previews-eu": ""} {
		c := cfg.Clusters[name]
		p, ok := c.Prober.(*probe.Prober)
		if !ok || c.Reader == nil || c.Kube == nil || c.Metrics == nil || p.ConnectTo != want || p.Client != c.Reader {
			t.Errorf("cluster %s = %+v, prober %+v; want its probes sent to %q", name, c, p, want)
		}
	}

	o, err = parseFlags([]string{"-cluster-name", "stage-eu", "-platform-file", platform, "-cluster-kubeconfig", "prod-ap=" + all}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = connectClusters(o, &webhook.Config{Pages: cfg.Pages}, slog.New(slog.DiscardHandler))
	if ee, ok := errors.AsType[*cli.ExitError](err); !ok || ee.Code != cli.ExitUsage ||
		!strings.Contains(err.Error(), "-cluster-kubeconfig prod-ap: neither an environment nor the previews of -platform-file "+platform+" run on cluster prod-ap (they run on previews-eu, prod-eu, prod-us, stage-eu)") {
		t.Errorf("a cluster no environment runs on = %v", err)
	}
}
