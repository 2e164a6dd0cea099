package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// PushOptions configure Push.
type PushOptions struct {
	// Remote are go-containerregistry's options (credentials, transport).
	Remote []remote.Option
	// Name are the reference parsing options (name.Insecure for plain HTTP).
	Name []name.Option
	// Concurrency bounds the artifacts pushed at once (default 8).
	Concurrency int
}

// PushResult counts what Push did.
type PushResult struct {
	Pushed  int // artifacts uploaded
	Present int // artifacts the registry already had
}

// Push uploads the artifacts to the repository (host/path, no tag) that
// are not there yet, each under its digest and its Tag. An artifact the
// registry already holds (by digest) costs one HEAD request.
func Push(ctx context.Context, repository string, arts []*Artifact, opts PushOptions) (PushResult, error) {
	repo, err := name.NewRepository(repository, opts.Name...)
	if err != nil {
		return PushResult{}, fmt.Errorf("artifact repository %q: %w", repository, err)
	}
	ropts := append([]remote.Option{remote.WithContext(ctx)}, opts.Remote...)
	// One pusher shares the connections and the token of every upload.
	pusher, err := remote.NewPusher(ropts...)
	if err != nil {
		return PushResult{}, err
	}
	ropts = append(ropts, remote.Reuse(pusher))
	var pushed, present atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	limit := opts.Concurrency
	if limit <= 0 {
		limit = 8
	}
	g.SetLimit(limit)
	seen := map[v1.Hash]bool{}
	for _, a := range arts {
		if seen[a.Digest] {
			continue
		}
		seen[a.Digest] = true
		g.Go(func() error {
			ref := repo.Digest(a.Digest.String())
			if _, err := remote.Head(ref, ropts...); err == nil {
				present.Add(1)
				return nil
			} else if !registry.IsNotFound(err) {
				return fmt.Errorf("artifact of %s: checking %s: %w", a.Title, ref, err)
			}
			for _, blob := range []struct {
				data []byte
				mt   types.MediaType
			}{{a.Config, ConfigMediaType}, {a.Layer, ContentMediaType}} {
				if err := pusher.Upload(gctx, repo, static.NewLayer(blob.data, blob.mt)); err != nil {
					return fmt.Errorf("artifact of %s: uploading a blob to %s: %w", a.Title, repo, err)
				}
			}
			if err := pusher.Put(gctx, repo.Tag(a.Tag()), rawManifest(a.Manifest)); err != nil {
				return fmt.Errorf("artifact of %s: pushing its manifest to %s: %w", a.Title, repo, err)
			}
			pushed.Add(1)
			return nil
		})
	}
	err = g.Wait()
	return PushResult{Pushed: int(pushed.Load()), Present: int(present.Load())}, err
}

// rawManifest is a manifest as go-containerregistry pushes it.
type rawManifest []byte

func (m rawManifest) RawManifest() ([]byte, error) { return m, nil }
func (m rawManifest) MediaType() (types.MediaType, error) {
	return types.OCIManifestSchema1, nil
}

// ErrNotFound is matched by Pull's error when the registry has no such
// artifact.
var ErrNotFound = errors.New("artifact not found")

// Pull fetches the artifact ref (repository@digest) and returns its files,
// sorted by name, after checking that it is in Flux's format.
func Pull(ctx context.Context, ref string, nameOpts []name.Option, opts ...remote.Option) ([]File, error) {
	r, err := name.NewDigest(ref, nameOpts...)
	if err != nil {
		return nil, fmt.Errorf("artifact reference %q: %w", ref, err)
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	desc, err := remote.Get(r, opts...)
	if err != nil {
		if registry.IsNotFound(err) {
			return nil, fmt.Errorf("%s: %w", ref, ErrNotFound)
		}
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return nil, fmt.Errorf("%s: reading the manifest: %w", ref, err)
	}
	if m.Config.MediaType != ConfigMediaType {
		return nil, fmt.Errorf("%s: config media type %q, not Flux's %q", ref, m.Config.MediaType, ConfigMediaType)
	}
	var content *v1.Descriptor
	for i := range m.Layers {
		if m.Layers[i].MediaType == ContentMediaType {
			content = &m.Layers[i]
			break
		}
	}
	if content == nil {
		return nil, fmt.Errorf("%s: no layer of media type %q", ref, ContentMediaType)
	}
	layer, err := remote.Layer(r.Context().Digest(content.Digest.String()), opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	defer rc.Close()
	// The layer reader checks the blob against its digest as it is read.
	files, err := Unpack(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return files, nil
}

// maxUnpacked bounds what Unpack reads: a fleet folder is kilobytes.
const maxUnpacked = 64 << 20

// Unpack reads a tar.gz of regular files and folders.
func Unpack(r io.Reader) ([]File, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(io.LimitReader(gz, maxUnpacked))
	var out []File
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%s: not a regular file (type %q)", h.Name, h.Typeflag)
		}
		n := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if path.IsAbs(n) || n == ".." || strings.HasPrefix(n, "../") {
			return nil, fmt.Errorf("%s: outside the artifact", h.Name)
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, tr); err != nil {
			return nil, err
		}
		out = append(out, File{Name: n, Data: b.Bytes()})
	}
	return out, nil
}
