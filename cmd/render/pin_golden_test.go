package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// TestExamplesPinnedGolden pushes the examples' images to a registry on
// loopback, renders the examples with pinning on, and compares the
// Deployments with golden files: every image is name:tag@sha256:digest.
func TestExamplesPinnedGolden(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	apps := t.TempDir()
	image := regexp.MustCompile(`(image: )(\S+)()`)
	jsonImage := regexp.MustCompile(`("image": ")([^"]+)(")`)
	err := filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../../examples", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(apps, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case rel == "platform.yaml":
			b = []byte(strings.Replace(string(b), "pin: false", "pin: true", 1))
		case strings.HasSuffix(rel, "app.yaml") || strings.HasSuffix(rel, "app.json"):
			// Point every image at the test registry and push a
			// deterministic image there (its digest depends on its name).
			for _, re := range []*regexp.Regexp{image, jsonImage} {
				b = re.ReplaceAllFunc(b, func(m []byte) []byte {
					sub := re.FindSubmatch(m)
					ref := reg.Host() + "/" + string(sub[2])
					img, err := mutate.Config(empty.Image, mutateConfig(ref))
					if err == nil {
						err = crane.Push(img, ref)
					}
					if err != nil {
						t.Fatal(err)
					}
					return []byte(string(sub[1]) + ref + string(sub[3]))
				})
			}
		}
		return os.WriteFile(filepath.Join(apps, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fleet")
	if r := runCmd(t, nil, "--out", out, apps); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got strings.Builder
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, "/deployment-") {
			return err
		}
		b, err := os.ReadFile(p)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "image: ") {
				rel, _ := filepath.Rel(out, p)
				got.WriteString(rel + ":" + strings.ReplaceAll(line, reg.Host(), "REGISTRY") + "\n")
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, filepath.Join("testdata", "pinned-examples.txt"), got.String())
	if n := strings.Count(got.String(), "@sha256:"); n != 7 {
		t.Errorf("%d pinned images, want 7:\n%s", n, got.String())
	}
}

// mutateConfig labels an image with its own name, so each example image has
// a distinct, stable digest.
func mutateConfig(ref string) v1.Config {
	return v1.Config{Labels: map[string]string{"org.opencontainers.image.ref.name": ref[strings.Index(ref, "/")+1:]}}
}
