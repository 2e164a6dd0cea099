package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/version"
)

const testEpoch = 1764547200 // 2025-12-01T00:00:00Z

// testBuild runs Build for the host platform (all four with
// FLEETWRIGHT_RELEASE_FULL=1, and all three commands) into a new folder.
func testBuild(t *testing.T, commands []string) (string, Result) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plats := []Platform{{runtime.GOOS, runtime.GOARCH}}
	if os.Getenv("FLEETWRIGHT_RELEASE_FULL") != "" {
		plats, commands = nil, nil
	}
	out := filepath.Join(t.TempDir(), "dist")
	res, err := Build(t.Context(), Options{
		Version: "v1.2.3-rc.1", Commit: "0123456789abcdef0123456789abcdef01234567", Epoch: testEpoch,
		Root: root, Out: out, Platforms: plats, Commands: commands, Env: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// TestBuildReproducible runs the release twice into two folders and
// compares every byte, then checks what the assets hold. By default it
// builds verify for this machine's platform (a few seconds when the Go
// cache is warm); FLEETWRIGHT_RELEASE_FULL=1 builds the whole release.
func TestBuildReproducible(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the release twice")
	}
	a, res := testBuild(t, []string{"verify"})
	b, _ := testBuild(t, []string{"verify"})
	first, second := golden.ReadBytes(t, a), golden.ReadBytes(t, b)
	if len(first) < 3 {
		t.Fatalf("assets: %v", slices.Sorted(maps.Keys(first)))
	}
	for name, body := range first {
		if !bytes.Equal(body, second[name]) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", name, len(body), len(second[name]))
		}
	}

	sums, err := ReadSums(bytes.NewReader(first[SumsFile]))
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(first)-1 || len(res.Assets) != len(sums) {
		t.Errorf("SHA256SUMS lists %d files, the folder has %d besides it", len(sums), len(first)-1)
	}
	for name, want := range sums {
		if got := sum(first[name]); got != want {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, want)
		}
	}

	p := Platform{runtime.GOOS, runtime.GOARCH}
	archive := first[ArchiveName("v1.2.3-rc.1", p)]
	entries := checkArchive(t, archive)
	bin := filepath.Join(t.TempDir(), "verify")
	if err := os.WriteFile(bin, entries["verify"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info version.Info
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	want := version.Info{Version: "v1.2.3-rc.1", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2025-12-01T00:00:00Z", GoVersion: runtime.Version(), Platform: p.String()}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("verify version (-want +got):\n%s", diff)
	}
	checkSBOM(t, first[SBOMName("v1.2.3-rc.1", p)], sum(archive), sum(entries["verify"]))
}

// checkArchive checks the entries' order and metadata and returns their
// contents.
func checkArchive(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() || zr.Comment != "" {
		t.Errorf("gzip header: name %q, time %v, comment %q", zr.Name, zr.ModTime, zr.Comment)
	}
	tr := tar.NewReader(zr)
	entries := map[string][]byte{}
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(testEpoch, 0)) || h.Format != tar.FormatUSTAR || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: mode %o, owner %d:%d (%q:%q), time %v, format %v", h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, h.Format)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = b
	}
	if !slices.IsSorted(names) || len(names) == 0 {
		t.Errorf("entries %v are not sorted", names)
	}
	return entries
}

// checkSBOM checks that the SBOM names the archive and binary by their
// checksums and lists the modules of go.mod at their versions.
func checkSBOM(t *testing.T, b []byte, archiveSum, binSum string) {
	t.Helper()
	var doc spdxDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.CreationInfo.Created != "2025-12-01T00:00:00Z" {
		t.Errorf("document: %s, created %s", doc.SPDXVersion, doc.CreationInfo.Created)
	}
	ids := map[string]spdxPackage{}
	idRE := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	for _, p := range doc.Packages {
		if !idRE.MatchString(p.SPDXID) {
			t.Errorf("bad SPDX id %q", p.SPDXID)
		}
		if _, dup := ids[p.SPDXID]; dup {
			t.Errorf("SPDX id %s twice", p.SPDXID)
		}
		ids[p.SPDXID] = p
	}
	for _, r := range doc.Relationships {
		if _, ok := ids[r.Related]; !ok {
			t.Errorf("relationship %s %s to an unknown element %s", r.Element, r.Type, r.Related)
		}
	}
	if got := ids[doc.Relationships[0].Related]; doc.Relationships[0].Type != "DESCRIBES" || got.Checksums[0].ChecksumValue != archiveSum {
		t.Errorf("the document describes %+v, want the archive with sha256 %s", got, archiveSum)
	}
	if got := ids["SPDXRef-Binary-verify"]; len(got.Checksums) != 1 || got.Checksums[0].ChecksumValue != binSum {
		t.Errorf("verify binary: %+v, want sha256 %s", got, binSum)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// Modules verify links in, at go.mod's versions.
	for _, mod := range []string{"sigs.k8s.io/kustomize/api", "k8s.io/client-go", "github.com/go-git/go-git/v5"} {
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(mod) + ` (v\S+)`).FindSubmatch(gomod)
		if m == nil {
			t.Fatalf("go.mod has no %s", mod)
		}
		p, ok := ids[spdxID("Module", mod+"-"+string(m[1]))]
		if !ok || p.ExternalRefs[0].ReferenceLocator != "pkg:golang/"+mod+"@"+string(m[1]) || !strings.HasPrefix(p.Comment, "go.sum h1:") {
			t.Errorf("%s@%s: %+v", mod, m[1], p)
		}
	}
	if _, ok := ids[spdxID("Go", "stdlib-"+strings.TrimPrefix(runtime.Version(), "go"))]; !ok {
		t.Errorf("no Go standard library package for %s", runtime.Version())
	}
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "old.tar.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no v", Options{Version: "1.2.3", Commit: "c", Root: ".", Out: t.TempDir()}, `version "1.2.3": want vMAJOR.MINOR.PATCH`},
		{"major tag", Options{Version: "v1", Commit: "c", Root: ".", Out: t.TempDir()}, `version "v1"`},
		{"no commit", Options{Version: "v1.0.0", Root: ".", Out: t.TempDir()}, "no commit"},
		{"negative epoch", Options{Version: "v1.0.0", Commit: "c", Epoch: -1, Root: ".", Out: t.TempDir()}, "SOURCE_DATE_EPOCH -1 is negative"},
		{"stale assets", Options{Version: "v1.0.0", Commit: "c", Root: ".", Out: full}, "is not empty (it holds old.tar.gz): remove it first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Build(t.Context(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestIsVersion(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"v1.2.3": true, "v0.1.0": true, "v1.3.0-rc.1": true, "v10.20.30-beta-2": true,
		"v1": false, "v1.2": false, "1.2.3": false, "v01.2.3": false, "v1.2.3+build": false,
		"main": false, "d99ceaf6e3b1aaaaaaaaaaaaaaaaaaaaaaaaaaaa": false, "v1.2.3-": false, "": false,
	} {
		if got := IsVersion(v); got != want {
			t.Errorf("IsVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestReadSums(t *testing.T) {
	t.Parallel()
	a, b := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	got, err := ReadSums(strings.NewReader(a + "  a.tar.gz\n" + b + " *b.json\n" + a + "  *c\n"))
	if want := map[string]string{"a.tar.gz": a, "b.json": b, "*c": a}; err != nil || !maps.Equal(got, want) {
		t.Errorf("ReadSums = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"XYZ  a\n", a + " a\n", a + "  \n", a + "\ta\n", strings.ToUpper(a) + "  a\n", "ok\n" + a + "  a\n", a + "  a\r\n"} {
		if _, err := ReadSums(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "SHA256SUMS:1:") {
			t.Errorf("ReadSums(%q) = %v, want an error on line 1", bad, err)
		}
	}
}

// TestWriteArchive checks that the input's order does not change the bytes.
func TestWriteArchive(t *testing.T) {
	t.Parallel()
	files := []archiveFile{{"verify", 0o755, []byte("v")}, {"render", 0o755, []byte("r")}, {"webhook", 0o755, []byte("w")}}
	var a, b bytes.Buffer
	if err := writeArchive(&a, files, time.Unix(testEpoch, 0)); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(files)
	if err := writeArchive(&b, files, time.Unix(testEpoch, 0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the order of the files changed the archive")
	}
	entries := checkArchive(t, a.Bytes())
	if string(entries["render"]) != "r" || len(entries) != 3 {
		t.Errorf("entries: %v", entries)
	}
}

func readTar(t *testing.T, r io.Reader, each func(name string, mode int64, uid, gid int, body []byte)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		each(h.Name, h.Mode, h.Uid, h.Gid, b)
	}
}

// TestScriptUsage checks hack/release.sh's usage errors, which stop it
// before anything is built.
func TestScriptUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"image"}, {"image", "v1.2.3"}} {
		cmd := exec.Command("bash", append([]string{"../../hack/release.sh"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "usage: hack/release.sh VERSION [OUT] | hack/release.sh image VERSION REPO [DIST]") {
			t.Errorf("hack/release.sh %v: %v\n%s", args, err, out)
		}
	}
}
