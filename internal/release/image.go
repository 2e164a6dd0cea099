package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/registry"
)

// ImageOptions configure Image.
type ImageOptions struct {
	// Dist is the folder Build wrote: the linux archives and SHA256SUMS.
	Dist string
	// Version and Commit label the image; Tag defaults to Version.
	Version, Commit, Tag string
	// Epoch is SOURCE_DATE_EPOCH: the image's creation time and every
	// layer entry's time.
	Epoch int64
	// Dockerfile is the image's Dockerfile (hack/image/Dockerfile).
	Dockerfile string
	// Repo is the repository pushed to, e.g. ghcr.io/fleetwright/fleetwright.
	Repo string
	// Registry pushes the image. Required.
	Registry *registry.Client
	// Platforms default to linux/amd64 and linux/arm64.
	Platforms []Platform
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// Image builds the container image from the release's linux archives,
// after checking them against SHA256SUMS, and pushes it: an index of the
// platforms' images.
func Image(ctx context.Context, o ImageOptions) (build.Result, error) {
	if !IsVersion(o.Version) {
		return build.Result{}, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH[-PRERELEASE]", o.Version)
	}
	if o.Registry == nil || o.Repo == "" || o.Dockerfile == "" || o.Dist == "" {
		return build.Result{}, errors.New("image: the dist folder, Dockerfile, repository and registry client are required")
	}
	if o.Tag == "" {
		o.Tag = o.Version
	}
	if len(o.Platforms) == 0 {
		o.Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}
	}
	f, err := os.Open(filepath.Join(o.Dist, SumsFile))
	if err != nil {
		return build.Result{}, err
	}
	sums, err := ReadSums(f)
	f.Close()
	if err != nil {
		return build.Result{}, err
	}
	dir, err := os.MkdirTemp("", "fleetwright-image-")
	if err != nil {
		return build.Result{}, err
	}
	defer os.RemoveAll(dir)
	df, err := os.ReadFile(o.Dockerfile)
	if err != nil {
		return build.Result{}, err
	}
	if err := writeExact(filepath.Join(dir, "Dockerfile"), df, 0o644); err != nil {
		return build.Result{}, err
	}
	var plats []string
	for _, p := range o.Platforms {
		name := ArchiveName(o.Version, p)
		b, err := os.ReadFile(filepath.Join(o.Dist, name))
		if err != nil {
			return build.Result{}, err
		}
		want, ok := sums[name]
		if !ok {
			return build.Result{}, fmt.Errorf("%s lists no %s", SumsFile, name)
		}
		if got := sum(b); got != want {
			return build.Result{}, fmt.Errorf("%s: SHA-256 %s, but %s says %s", name, got, SumsFile, want)
		}
		if err := extract(b, filepath.Join(dir, p.OS+"_"+p.Arch)); err != nil {
			return build.Result{}, fmt.Errorf("%s: %w", name, err)
		}
		plats = append(plats, p.String())
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b, err := build.NewLocal(build.LocalOptions{Registry: o.Registry, Logger: log})
	if err != nil {
		return build.Result{}, err
	}
	return b.Build(ctx, build.Request{
		Name: "fleetwright", Root: dir, Repo: o.Repo, Tag: o.Tag, Platforms: plats,
		SourceDateEpoch: o.Epoch,
		BuildArgs: map[string]string{
			"VERSION": o.Version, "REVISION": o.Commit,
			"CREATED": time.Unix(o.Epoch, 0).UTC().Format(time.RFC3339),
		},
	})
}

// extract unpacks a release archive's regular files into dir, with the
// modes the archive gives (not the umask's).
func extract(archive []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || h.Name != path.Base(h.Name) || strings.HasPrefix(h.Name, ".") {
			return fmt.Errorf("unexpected entry %q: a release archive holds only files at its top", h.Name)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := writeExact(filepath.Join(dir, h.Name), body, os.FileMode(h.Mode).Perm()); err != nil {
			return err
		}
	}
}

func writeExact(p string, b []byte, mode os.FileMode) error {
	if err := os.WriteFile(p, b, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
