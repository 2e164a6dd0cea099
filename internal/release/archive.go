package release

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"slices"
	"strings"
	"time"
)

type archiveFile struct {
	name string
	mode int64
	body []byte
}

// writeArchive writes a reproducible tar.gz: entries sorted by name, each
// with the given time, owner 0:0 and no user or group names, in the USTAR
// format (no PAX records with access times), compressed with a gzip header
// that has neither a file name nor a time.
func writeArchive(w io.Writer, files []archiveFile, mtime time.Time) error {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b archiveFile) int { return strings.Compare(a.name, b.name) })
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.name,
			Mode:     f.mode,
			Size:     int64(len(f.body)),
			ModTime:  mtime.UTC(),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
