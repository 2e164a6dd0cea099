package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// fakeDist writes linux archives whose "binaries" name their platform, and
// their SHA256SUMS, as Build lays them out.
func fakeDist(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	var sums bytes.Buffer
	for _, p := range []Platform{{"linux", "amd64"}, {"linux", "arm64"}} {
		var files []archiveFile
		for _, c := range DefaultCommands() {
			files = append(files, archiveFile{c, 0o755, []byte("#!" + c + " " + p.String() + "\n")})
		}
		var arc bytes.Buffer
		if err := writeArchive(&arc, files, time.Unix(testEpoch, 0)); err != nil {
			t.Fatal(err)
		}
		name := ArchiveName(version, p)
		if err := os.WriteFile(filepath.Join(dir, name), arc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum(arc.Bytes()), name)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), sums.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func imageOptions(t *testing.T, reg *registrytest.Server, dist string) ImageOptions {
	return ImageOptions{
		Dist: dist, Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Epoch: testEpoch,
		Dockerfile: "../../hack/image/Dockerfile", Repo: reg.Host() + "/fleetwright/fleetwright",
		Registry: registry.New(registry.Options{}),
	}
}

// TestImageReproducible builds the image twice, under two tags, and checks
// that both pushes have one digest; then it reads back what was pushed.
func TestImageReproducible(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	dist := fakeDist(t, "v1.2.3")
	o := imageOptions(t, reg, dist)
	first, err := Image(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Tag = "again"
	second, err := Image(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest || first.Digest == "" {
		t.Errorf("digests %s and %s, want one", first.Digest, second.Digest)
	}

	ref, err := name.ParseReference(first.Ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range m.Manifests {
		plats = append(plats, d.Platform.OS+"/"+d.Platform.Architecture)
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		checkConfig(t, d.Platform, cf)
		files := layerFiles(t, img)
		for _, c := range DefaultCommands() {
			got, ok := files["usr/local/bin/"+c]
			want := "#!" + c + " " + d.Platform.OS + "/" + d.Platform.Architecture + "\n"
			if !ok || got.body != want || got.mode != 0o755 || got.uid != 0 {
				t.Errorf("%s: usr/local/bin/%s = %+v, want %q, mode 755, owner root", d.Platform.Architecture, c, got, want)
			}
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, plats); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

func checkConfig(t *testing.T, p *v1.Platform, cf *v1.ConfigFile) {
	t.Helper()
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("%s: user %q, want 65532:65532 (non-root)", p.Architecture, c.User)
	}
	if diff := cmp.Diff([]string{"/usr/local/bin/webhook"}, c.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.title":    "fleetwright",
		"org.opencontainers.image.source":   "https://github.com/fleetwright/fleetwright",
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
		"org.opencontainers.image.created":  "2025-12-01T00:00:00Z",
	}
	if diff := cmp.Diff(wantLabels, c.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !cf.Created.Equal(time.Unix(testEpoch, 0)) {
		t.Errorf("created %v", cf.Created.Time)
	}
}

type layerFile struct {
	body     string
	mode     int64
	uid, gid int
}

func layerFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]layerFile{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		readTar(t, rc, func(name string, mode int64, uid, gid int, body []byte) {
			files[strings.TrimPrefix(name, "/")] = layerFile{string(body), mode, uid, gid}
		})
		rc.Close()
	}
	return files
}

// TestImageRefusesBadArchive checks that an archive that does not match
// SHA256SUMS is not built into an image, and nothing is pushed.
func TestImageRefusesBadArchive(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	dist := fakeDist(t, "v1.2.3")
	p := filepath.Join(dist, ArchiveName("v1.2.3", Platform{"linux", "arm64"}))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Image(t.Context(), imageOptions(t, reg, dist))
	if err == nil || !strings.Contains(err.Error(), "fleetwright_1.2.3_linux_arm64.tar.gz: SHA-256 ") || !strings.Contains(err.Error(), "but SHA256SUMS says") {
		t.Errorf("Image = %v, want a checksum error", err)
	}
	if w := reg.Writes(); len(w) != 0 {
		t.Errorf("pushed %v", w)
	}
}
