package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fileEntry is one file, directory or link of an image filesystem.
type fileEntry struct {
	path     string      // clean and absolute: "/app/main"
	mode     fs.FileMode // permission and special bits, and the type
	uid, gid int
	link     string // target of a symbolic link
	data     []byte // content of a regular file
}

func (e *fileEntry) isDir() bool     { return e.mode.IsDir() }
func (e *fileEntry) isSymlink() bool { return e.mode&fs.ModeSymlink != 0 }

// tarMode converts permission and special bits to tar's encoding.
func tarMode(m fs.FileMode) int64 {
	v := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// fileMode converts a tar header's mode and type to an fs.FileMode.
func fileMode(h *tar.Header) fs.FileMode {
	m := fs.FileMode(h.Mode & 0o777)
	if h.Mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if h.Mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if h.Mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		m |= fs.ModeDir
	case tar.TypeSymlink:
		m |= fs.ModeSymlink
	}
	return m
}

// writeTar writes entries as an uncompressed tar stream, sorted by path,
// every modification time set to epoch and no user or group names, so
// equal entries always give equal bytes.
func writeTar(entries []*fileEntry, epoch time.Time) ([]byte, error) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b *fileEntry) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range sorted {
		name := strings.TrimPrefix(e.path, "/")
		if name == "" {
			continue
		}
		h := &tar.Header{
			Name:    name,
			Mode:    tarMode(e.mode),
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: epoch,
		}
		switch {
		case e.isDir():
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		case e.isSymlink():
			h.Typeflag = tar.TypeSymlink
			h.Linkname = e.link
		default:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// memLayer is a gzip-compressed layer held in memory.
type memLayer struct {
	gz        []byte
	digest    v1.Hash
	diffID    v1.Hash
	mediaType types.MediaType
}

// newMemLayer compresses an uncompressed tar stream.
func newMemLayer(raw []byte, mt types.MediaType) (*memLayer, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &memLayer{
		gz:        gz.Bytes(),
		digest:    sha256Hash(gz.Bytes()),
		diffID:    sha256Hash(raw),
		mediaType: mt,
	}, nil
}

func sha256Hash(b []byte) v1.Hash {
	sum := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)     { return int64(len(l.gz)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) {
	return l.mediaType, nil
}

func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.gz)), nil
}

func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bytes.NewReader(l.gz))
	if err != nil {
		return nil, err
	}
	return zr, nil
}
