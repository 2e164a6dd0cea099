package version

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	plat := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name   string
		linked Linked
		bi     *debug.BuildInfo
		want   Info
	}{
		{
			name:   "release: link-time values win",
			linked: Linked{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-12-01T00:00:00Z"},
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
				Settings: settings("GOOS", "darwin", "GOARCH", "arm64", "vcs.revision", "ffff", "vcs.time", "2020-01-01T00:00:00Z")},
			want: Info{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8", Platform: "darwin/arm64"},
		},
		{
			name: "go install at a tag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: settings("GOOS", "linux", "GOARCH", "amd64")},
			want: Info{Version: "v1.4.0", GoVersion: "go1.26.8", Platform: "linux/amd64"},
		},
		{
			name: "go install at a pseudo-version",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201104516-d99ceaf6e3b1"}, Settings: settings("GOOS", "linux", "GOARCH", "amd64")},
			want: Info{Version: "v0.0.0-20261201104516-d99ceaf6e3b1", Commit: "d99ceaf6e3b1", GoVersion: "go1.26.8", Platform: "linux/amd64"},
		},
		{
			name: "checkout with changes",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.1-0.20261201104516-d99ceaf6e3b1+dirty"},
				Settings: settings("GOOS", "linux", "GOARCH", "arm64", "vcs.revision", "d99ceaf6e3b1aaaa", "vcs.time", "2026-12-01T10:45:16Z", "vcs.modified", "true")},
			want: Info{Version: "v1.4.1-0.20261201104516-d99ceaf6e3b1+dirty", Commit: "d99ceaf6e3b1aaaa", Modified: true, Date: "2026-12-01T10:45:16Z", GoVersion: "go1.26.8", Platform: "linux/arm64"},
		},
		{
			name: "devel without VCS",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: Devel, GoVersion: "go1.26.8", Platform: plat},
		},
		{
			name: "no build information",
			want: Info{Version: Devel, GoVersion: runtime.Version(), Platform: plat},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, FromBuildInfo(tt.linked, tt.bi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPseudoCommit(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"v0.0.0-20261201104516-d99ceaf6e3b1":         "d99ceaf6e3b1",
		"v1.2.4-0.20261201104516-d99ceaf6e3b1+dirty": "d99ceaf6e3b1",
		"v1.2.3-pre.0.20261201104516-d99ceaf6e3b1":   "d99ceaf6e3b1",
		"v1.2.3":                             "",
		"v1.2.3-rc1":                         "",
		"v1.2.3-abcdefabcdef":                "",
		"v0.0.0-20261201104516-D99CEAF6E3B1": "",
	} {
		if got := pseudoCommit(v); got != want {
			t.Errorf("pseudoCommit(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	info := Info{Version: "v1.2.3", Commit: "0123456789abcdef", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8", Platform: "linux/amd64"}
	var text bytes.Buffer
	if err := info.Write(&text, "render", false); err != nil {
		t.Fatal(err)
	}
	want := "render v1.2.3\ncommit: 0123456789abcdef\nbuilt:  2026-12-01T00:00:00Z\ngo:     go1.26.8 linux/amd64\n"
	if diff := cmp.Diff(want, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	var js bytes.Buffer
	if err := (Info{Version: Devel, GoVersion: "go1.26.8", Platform: "linux/amd64"}).Write(&js, "render", true); err != nil {
		t.Fatal(err)
	}
	want = "{\n  \"version\": \"devel\",\n  \"goVersion\": \"go1.26.8\",\n  \"platform\": \"linux/amd64\"\n}\n"
	if diff := cmp.Diff(want, js.String()); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}
	if got, want := info.String(), "v1.2.3 (commit 0123456789ab, 2026-12-01T00:00:00Z, go1.26.8 linux/amd64)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestLinkTime builds a program the way hack/release.sh does and checks
// that the -X flags reach the variables.
func TestLinkTime(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	const pkg = "github.com/fleetwright/fleetwright/internal/version"
	ldflags := "-s -w -buildid= -X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=abc123 -X " + pkg + ".date=2026-12-01T00:00:00Z"
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./testdata/printversion")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := Info{Version: "v9.8.7", Commit: "abc123", Date: "2026-12-01T00:00:00Z", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
