// Package artifact makes a fleet folder a Flux OCI artifact: the format
// source-controller's OCIRepository pulls (a manifest whose config has
// Flux's config media type and whose one layer is the folder as a tar.gz
// of Flux's content media type).
//
// The archive is deterministic: the same files give the same bytes, so the
// manifest digest that the fleet pins is a function of the folder's files
// alone, and anyone holding the Git files can rebuild the artifact and
// check that the digest Flux pulls is theirs. Entries are sorted, owned by
// 0:0 with mode 0644 and the Unix epoch as time; the gzip stream uses
// stored (uncompressed) deflate blocks, whose bytes no compressor tuning
// can change. Fleet folders are a few kilobytes: the size costs nothing.
package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Flux's media types (fluxcd/pkg/oci): what an OCIRepository's default
// layer selector picks.
const (
	ConfigMediaType  types.MediaType = "application/vnd.cncf.flux.config.v1+json"
	ContentMediaType types.MediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

// Annotations of the manifest.
const (
	// AnnotationTitle holds the folder's path in the fleet: the artifact
	// of one folder is never mistaken for another's, even with equal files.
	AnnotationTitle = "org.opencontainers.image.title"
	// AnnotationFormat is Format: an archive written differently gets
	// another value, so that a digest mismatch can say why.
	AnnotationFormat = "io.fleetwright.artifact.format"
)

// Format is the version of the archive layout Build writes.
const Format = "1"

// File is one file of a folder, by its slash path inside the folder.
type File struct {
	Name string
	Data []byte
}

// Artifact is a folder packed as a Flux OCI artifact.
type Artifact struct {
	// Title is the folder's path in the fleet.
	Title string
	// Digest of the manifest ("sha256:<hex>"): what an OCIRepository pins.
	Digest v1.Hash
	// Manifest, Config and Layer are the bytes pushed.
	Manifest, Config, Layer []byte
}

// Tag is the tag the artifact is pushed under besides its digest: derived
// from the digest, so it never moves, and a registry that removes untagged
// manifests keeps every artifact a fleet commit may name.
func (a *Artifact) Tag() string { return a.Digest.Algorithm + "-" + a.Digest.Hex }

// epoch is every entry's modification time.
var epoch = time.Unix(0, 0).UTC()

// Build packs files as the artifact of the folder title. Names must be
// clean, relative slash paths, without duplicates.
func Build(title string, files []File) (*Artifact, error) {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	dirs := map[string]bool{}
	for i, f := range sorted {
		if f.Name == "" || path.IsAbs(f.Name) || path.Clean(f.Name) != f.Name || f.Name == "." || strings.HasPrefix(f.Name, "../") || f.Name == ".." {
			return nil, fmt.Errorf("artifact %s: %q is not a clean relative path", title, f.Name)
		}
		if i > 0 && sorted[i-1].Name == f.Name {
			return nil, fmt.Errorf("artifact %s: %s twice", title, f.Name)
		}
		// Parent folders first, as tar readers expect them.
		for d := path.Dir(f.Name); d != "."; d = path.Dir(d) {
			if dirs[d] {
				break
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("artifact %s: %s: %w", title, f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	diffID := sha(tarBuf.Bytes())

	var gzBuf bytes.Buffer
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(&gzBuf)
	// The header carries no name, no time and "unknown" as the OS: the
	// defaults, set here so that they are a decision.
	gz.Name, gz.ModTime, gz.OS = "", time.Time{}, 255
	if _, err := gz.Write(tarBuf.Bytes()); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	layer := gzBuf.Bytes()

	cfg := v1.ConfigFile{RootFS: v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{diffID}}}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: ConfigMediaType, Size: int64(len(config)), Digest: sha(config)},
		Layers:        []v1.Descriptor{{MediaType: ContentMediaType, Size: int64(len(layer)), Digest: sha(layer)}},
		Annotations:   map[string]string{AnnotationTitle: title, AnnotationFormat: Format},
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &Artifact{Title: title, Digest: sha(manifest), Manifest: manifest, Config: config, Layer: layer}, nil
}

// gzipWriters keeps gzip writers for Build: a new one allocates its
// compressor's tables (over half a megabyte) even to store, and a fleet
// packs a folder per component.
var gzipWriters = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.NoCompression)
	return gz
}}

func sha(b []byte) v1.Hash {
	s := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}
