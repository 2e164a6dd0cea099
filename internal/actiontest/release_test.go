package actiontest

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/release"
	"github.com/fleetwright/fleetwright/internal/tlstest"
)

const (
	relVersion = "v0.9.0"
	relCommit  = "0123456789abcdef0123456789abcdef01234567"
	// badVersion is served with an archive that does not match its
	// SHA256SUMS.
	badVersion = "v0.9.1"
)

var hostPlatform = release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}

// The release the tests serve, made once by the release code for this
// machine's platform with the programs the action runs.
var dist struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dist.dir != "" {
		os.RemoveAll(filepath.Dir(dist.dir))
	}
	os.Exit(code)
}

func releaseDist(t testing.TB) string {
	t.Helper()
	dist.once.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			dist.err = err
			return
		}
		tmp, err := os.MkdirTemp("", "actiontest-release-")
		if err != nil {
			dist.err = err
			return
		}
		dist.dir = filepath.Join(tmp, "dist")
		_, dist.err = release.Build(t.Context(), release.Options{
			Version: relVersion, Commit: relCommit, Epoch: 1764547200, Root: root, Out: dist.dir,
			Platforms: []release.Platform{hostPlatform}, Commands: []string{"render", "verify"}, Env: os.Environ(),
		})
	})
	if dist.err != nil {
		t.Fatal(dist.err)
	}
	return dist.dir
}

// releaseServer serves releases over HTTPS on loopback, as
// BASE/VERSION/FILE, and records the paths asked for.
type releaseServer struct {
	base   string // the release-url input
	caFile string // for CURL_CA_BUNDLE
	mu     sync.Mutex
	paths  []string
}

func newReleaseServer(t testing.TB) *releaseServer {
	t.Helper()
	dir := releaseDist(t)
	files := map[string][]byte{}
	good := filepath.Join(dir, release.ArchiveName(relVersion, hostPlatform))
	archive, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	files["/download/"+relVersion+"/"+release.ArchiveName(relVersion, hostPlatform)] = archive
	files["/download/"+relVersion+"/"+release.SumsFile] = sums
	// The bad release: SHA256SUMS of the good one, an archive with one
	// byte changed.
	bad := bytes.Clone(archive)
	bad[len(bad)/2] ^= 0xff
	files["/download/"+badVersion+"/"+release.ArchiveName(badVersion, hostPlatform)] = bad
	files["/download/"+badVersion+"/"+release.SumsFile] = bytes.ReplaceAll(sums, []byte(strings.TrimPrefix(relVersion, "v")), []byte(strings.TrimPrefix(badVersion, "v")))

	s := &releaseServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		b, ok := files[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	ca := tlstest.NewCA(t, "release test CA")
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "localhost")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.base = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/download"
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(s.caFile, ca.PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *releaseServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

func (s *releaseServer) use(r *runner) {
	r.extraEnv["CURL_CA_BUNDLE"] = s.caFile
}

// noGoPath returns a PATH of the programs a runner has that the install
// and run steps use, without go; it fails the test if go is found in it.
func noGoPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "sh", "env", "curl", "tar", "gzip", "sha256sum", "awk", "sed", "mkdir", "mktemp", "rm", "mv", "touch", "dirname", "cat", "uname", "git"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-c", "command -v go")
	cmd.Env = []string{"PATH=" + dir}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("go is on the test PATH: %s", out)
	}
	return dir
}

// TestActionRelease runs the action at a release tag on a runner without
// Go: it downloads the release from a loopback server, checks it against
// SHA256SUMS, caches it and runs render; a second job on the same runner
// takes it from the tool cache without a request.
func TestActionRelease(t *testing.T) {
	t.Parallel()
	srv := newReleaseServer(t)
	r := newRunner(t)
	srv.use(r)
	r.path = noGoPath(t)
	r.actionRef, r.actionRepo = relVersion, "fleetwright/fleetwright"
	apps := t.TempDir()
	copyDir(t, "../../examples", apps)
	want := "prod-eu/my-project/my-api,prod-eu/shop/analytics,prod-eu/shop/my-api,prod-eu/shop/orders,prod-eu/shop/reports,prod-eu/shop/storefront"
	cache := filepath.Join(r.tools, "fleetwright", strings.TrimPrefix(relVersion, "v"), map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH])

	for i, tc := range []struct {
		name     string
		requests []string
		log      string
	}{
		{"download", []string{"/download/" + relVersion + "/SHA256SUMS", "/download/" + relVersion + "/" + release.ArchiveName(relVersion, hostPlatform)}, "matches SHA256SUMS; cached in " + cache},
		{"cached", nil, "fleetwright " + relVersion + " from the tool cache (" + cache + ")"},
	} {
		before := len(srv.requests())
		out := filepath.Join(t.TempDir(), "fleet")
		res := r.run(map[string]string{"command": "render", "path": apps, "out": out, "offline": "true", "release-url": srv.base})
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.name, res.code, res.stdout)
		}
		if diff := cmp.Diff([]string{"install", "run"}, res.ran); diff != "" {
			t.Errorf("%s: steps that ran (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.requests, srv.requests()[before:], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tc.name, diff)
		}
		if !strings.Contains(res.stdout, tc.log) || !strings.Contains(res.stdout, "render "+relVersion+"\ncommit: "+relCommit+"\n") {
			t.Errorf("%s: stdout lacks %q and the release's version:\n%s", tc.name, tc.log, res.stdout)
		}
		if got := res.outputs["changed-apps"]; got != want {
			t.Errorf("%s: changed-apps = %q, want %q", tc.name, got, want)
		}
		if _, err := os.Stat(filepath.Join(out, "clusters/prod-eu/apps/shop-my-api.yaml")); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		t.Logf("run %d (%s): install step %v, render %v", i+1, tc.name, res.took["install"], res.took["run"])
	}
	for _, f := range []string{cache + ".complete", cache + "/render", cache + "/verify"} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// TestActionChecksumMismatch checks that an archive that does not match
// SHA256SUMS stops the job before anything is installed or run.
func TestActionChecksumMismatch(t *testing.T) {
	t.Parallel()
	srv := newReleaseServer(t)
	r := newRunner(t)
	srv.use(r)
	r.path = noGoPath(t)
	r.actionRef = relVersion
	res := r.run(map[string]string{"command": "validate", "version": badVersion, "release-url": srv.base})
	if res.code != 1 {
		t.Errorf("exit %d, want 1", res.code)
	}
	archive := release.ArchiveName(badVersion, hostPlatform)
	want := "::error title=fleetwright install::checksum mismatch: " + archive + " from " + srv.base + "/" + badVersion + "/ has SHA-256 "
	if !strings.Contains(res.stdout, want) || !strings.Contains(res.stdout, ", but SHA256SUMS says ") {
		t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
	}
	if diff := cmp.Diff([]string{"install"}, res.ran); diff != "" {
		t.Errorf("steps that ran (-want +got):\n%s", diff)
	}
	if ents, _ := os.ReadDir(filepath.Join(r.tools, "fleetwright")); len(ents) != 0 {
		t.Errorf("the tool cache holds %v", ents)
	}
}

// TestActionSourceBuild runs the action pinned to a commit without a
// version input: it builds render and verify from its source with Go.
func TestActionSourceBuild(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	r.actionRef = "d99ceaf6e3b1d99ceaf6e3b1d99ceaf6e3b1d99c"
	res := r.run(map[string]string{"command": "validate", "path": filepath.Join(r.root, "examples")})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	t.Logf("install step %v, build step %v, render %v", res.took["install"], res.took["Build fleetwright from source"], res.took["run"])
	want := []string{"install", r.act.Runs.Steps[1].Uses, "Build fleetwright from source", "run"}
	if diff := cmp.Diff(want, res.ran); diff != "" {
		t.Errorf("steps that ran (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(want[1], "actions/setup-go@") {
		t.Errorf("the second step is %q, not setup-go", want[1])
	}
	if !strings.Contains(res.stdout, "::notice title=fleetwright::the action's ref '"+r.actionRef+"' is not a release and no version input is set; building render and verify from the action's source") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	if _, err := os.Stat(filepath.Join(r.temp, "fleetwright-bin", "render")); err != nil {
		t.Error(err)
	}
}

// TestActionInstall covers the install step's choices on its own: which
// refs are releases, bad inputs, and the warning for a commit pin whose
// version input was built from another commit.
func TestActionInstall(t *testing.T) {
	t.Parallel()
	srv := newReleaseServer(t)
	tests := []struct {
		name     string
		ref      string
		path     string // GITHUB_ACTION_PATH, when the ref is not passed
		inputs   map[string]string
		code     int
		source   string // the source output
		stdout   string
		noStdout string
	}{
		{name: "branch", ref: "main", source: "true", stdout: "the action's ref 'main' is not a release"},
		{name: "major tag", ref: "v1", source: "true", stdout: "the action's ref 'v1' is not a release"},
		{name: "no ref", source: "true", stdout: "the action's ref 'unknown' is not a release"},
		{name: "ref from the action path", path: "work/_actions/fleetwright/fleetwright/" + relVersion, inputs: map[string]string{"release-url": srv.base}, source: "false", stdout: "render " + relVersion},
		{name: "version input at a branch", ref: "main", inputs: map[string]string{"version": relVersion, "release-url": srv.base}, source: "false", stdout: "render " + relVersion, noStdout: "::warning"},
		{name: "commit pin of the release", ref: relCommit, inputs: map[string]string{"version": relVersion, "release-url": srv.base}, source: "false", noStdout: "::warning"},
		{name: "commit pin of another commit", ref: strings.Repeat("f", 40), inputs: map[string]string{"version": relVersion, "release-url": srv.base}, source: "false",
			stdout: "::warning title=fleetwright::the action is pinned to commit " + strings.Repeat("f", 40) + " but release " + relVersion + " was built from " + relCommit},
		{name: "bad version", ref: "main", inputs: map[string]string{"version": "1.2"}, code: 2, stdout: "::error title=fleetwright install::the version input '1.2' is not a release: give vMAJOR.MINOR.PATCH, e.g. v1.2.3"},
		{name: "plain http", ref: relVersion, inputs: map[string]string{"release-url": "http://localhost:1/download"}, code: 2, stdout: "is not https://"},
		{name: "no such release", ref: "v0.0.7", inputs: map[string]string{"release-url": srv.base}, code: 1, stdout: "downloading " + srv.base + "/v0.0.7/SHA256SUMS failed (is v0.0.7 released?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			srv.use(r)
			r.actionRef = tt.ref
			if tt.path != "" {
				// The runner's layout: the checkout at _actions/OWNER/NAME/REF.
				link := filepath.Join(t.TempDir(), tt.path)
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(r.root, link); err != nil {
					t.Fatal(err)
				}
				r.root = link
			}
			res := r.runStep("install", tt.inputs)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\n%s", res.code, tt.code, res.stdout)
			}
			if got := res.steps["install"]["source"]; tt.code == 0 && got != tt.source {
				t.Errorf("source = %q, want %q\n%s", got, tt.source, res.stdout)
			}
			if !strings.Contains(res.stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, res.stdout)
			}
			if tt.noStdout != "" && strings.Contains(res.stdout, tt.noStdout) {
				t.Errorf("stdout has %q:\n%s", tt.noStdout, res.stdout)
			}
		})
	}
}

// BenchmarkActionStart measures the time from the action's start to the
// end of its first command (render validate of the examples): with the
// release in the runner's tool cache, and built from source as before
// releases (a warm Go build cache; setup-go's own time is not counted).
func BenchmarkActionStart(b *testing.B) {
	srv := newReleaseServer(b)
	for _, bc := range []struct{ name, ref string }{{"release-cached", relVersion}, {"source", "main"}} {
		b.Run(bc.name, func(b *testing.B) {
			r := newRunner(b)
			srv.use(r)
			r.actionRef = bc.ref
			inputs := map[string]string{"command": "validate", "path": filepath.Join(r.root, "examples"), "release-url": srv.base}
			if res := r.run(inputs); res.code != 0 { // fills the tool cache
				b.Fatalf("exit %d\n%s", res.code, res.stdout)
			}
			b.ResetTimer()
			for b.Loop() {
				if res := r.run(inputs); res.code != 0 {
					b.Fatalf("exit %d\n%s", res.code, res.stdout)
				}
			}
		})
	}
}
