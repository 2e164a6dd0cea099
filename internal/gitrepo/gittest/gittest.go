package gittest

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Server is a git smart-HTTP server on loopback, backed by the git CLI's
// http-backend. Repositories live as bare repositories under Root.
type Server struct {
	// URL is the base URL of the server, without a trailing slash.
	URL string
	// Root is the directory that holds the bare repositories.
	Root string

	user, password string

	mu       sync.Mutex
	requests []Request
}

// Request is one HTTP request the server received.
type Request struct {
	Method string
	Path   string
	Query  string
	// User is the basic-auth user name sent with the request, if any.
	User string
	// Authorized reports whether the request carried the credentials the
	// server was configured with (always true without WithBasicAuth).
	Authorized bool
}

// Option configures a Server.
type Option func(*Server)

// WithBasicAuth makes the server demand HTTP basic authentication with this
// user name and password on every request; requests without them get 401.
func WithBasicAuth(user, password string) Option {
	return func(s *Server) { s.user, s.password = user, password }
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*\.git$`)

// NewServer starts a git smart-HTTP server for the duration of the test.
// Pushes are allowed (http.receivepack is on for every repository).
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	gitBin := lookGit(t)
	execPath := strings.TrimSpace(Git(t, "", "--exec-path"))
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("gittest: git http-backend not found: %v", err)
	}
	s := &Server{Root: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	env := append(hermeticEnv(filepath.Dir(gitBin), t.TempDir()),
		"GIT_PROJECT_ROOT="+s.Root,
		"GIT_HTTP_EXPORT_ALL=1",
		// Allow pushes for every repository, whether or not a user
		// authenticated.
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.receivepack",
		"GIT_CONFIG_VALUE_0=true",
	)
	h := &cgi.Handler{
		Path:   backend,
		Root:   "/",
		Dir:    s.Root,
		Env:    env,
		Stderr: &testWriter{t: t},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, hasAuth := r.BasicAuth()
		authorized := s.user == "" || (hasAuth && user == s.user && pass == s.password)
		s.mu.Lock()
		s.requests = append(s.requests, Request{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			User: user, Authorized: authorized,
		})
		s.mu.Unlock()
		if !authorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="gittest"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// RepoURL is the clone URL of the repository name (for example "fleet.git").
func (s *Server) RepoURL(name string) string {
	return s.URL + "/" + name
}

// Path is the directory of the bare repository name on disk.
func (s *Server) Path(name string) string {
	return filepath.Join(s.Root, filepath.FromSlash(name))
}

// CreateRepo creates the bare repository name (ending in ".git") with one
// commit on branch holding files, and returns its clone URL. With no files
// the repository is left empty (no commits, no branches).
func (s *Server) CreateRepo(t testing.TB, name, branch string, files map[string]string) string {
	t.Helper()
	if !repoName.MatchString(name) {
		t.Fatalf("gittest: bad repository name %q", name)
	}
	bare := s.Path(name)
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, "", "init", "--quiet", "--bare", "--initial-branch="+branch, bare)
	if len(files) > 0 {
		CommitFiles(t, bare, branch, "initial commit", files)
	}
	return s.RepoURL(name)
}

// CommitFiles adds a commit on branch of the bare repository at bare that
// writes files (path → content; an empty content deletes the path) on top of
// the branch's current head, as another writer would. It returns the new
// commit's hash.
func CommitFiles(t testing.TB, bare, branch, message string, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	Git(t, "", "init", "--quiet", "--initial-branch="+branch, work)
	Git(t, work, "remote", "add", "origin", bare)
	if strings.TrimSpace(Git(t, bare, "for-each-ref", "refs/heads/"+branch)) != "" {
		Git(t, work, "fetch", "--quiet", "origin", branch)
		Git(t, work, "reset", "--quiet", "--hard", "FETCH_HEAD")
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		full := filepath.Join(work, filepath.FromSlash(p))
		if files[p] == "" {
			Git(t, work, "rm", "--quiet", "--", p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		Git(t, work, "add", "--", p)
	}
	Git(t, work, "commit", "--quiet", "--allow-empty", "-m", message)
	Git(t, work, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	return strings.TrimSpace(Git(t, work, "rev-parse", "HEAD"))
}

// Git runs the git CLI in dir (the current directory when empty) with a
// hermetic environment (no user or system configuration, fixed identity and
// dates) and returns its standard output. A failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return GitEnv(t, dir, nil, args...)
}

// GitEnv is Git with extra environment variables (for example
// GIT_COMMITTER_DATE=...), which override the defaults.
func GitEnv(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := RunGit(dir, env, args...)
	if err != nil {
		t.Fatalf("gittest: %v", err)
	}
	return out
}

// RunGit is GitEnv without a test: it returns an error that holds the
// command and its standard error instead of failing.
func RunGit(dir string, env []string, args ...string) (string, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("git CLI not found: %w", err)
	}
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(filepath.Dir(gitBin), os.TempDir()),
		"GIT_AUTHOR_NAME=Test Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer", "GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s (in %q): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// hermeticEnv is an environment for the git CLI that ignores the user's and
// the system's configuration.
func hermeticEnv(pathDir, home string) []string {
	return []string{
		"PATH=" + pathDir + string(os.PathListSeparator) + "/usr/bin:/bin",
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + path.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"LANG=C", "LC_ALL=C",
	}
}

func lookGit(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("gittest: git CLI not found: %v", err)
	}
	return p
}

// testWriter sends the backend's standard error to the test log.
type testWriter struct{ t testing.TB }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("git http-backend: %s", bytes.TrimSpace(p))
	return len(p), nil
}
