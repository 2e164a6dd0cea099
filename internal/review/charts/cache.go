package charts

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// cache keeps chart archives on disk, one file per sha256 digest, within
// a bound: past it the files used least recently go. A file whose content
// does not match its name is dropped, not used. A nil cache keeps nothing.
type cache struct {
	dir string
	max int64
	log *slog.Logger
	now func() time.Time
}

// file is the cache's file for a digest, or "" when the digest is not a
// sha256 one.
func (c *cache) file(digest string) string {
	hexPart, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexPart) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return ""
	}
	return filepath.Join(c.dir, "sha256-"+hexPart+".tgz")
}

func (c *cache) get(digest string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	f := c.file(digest)
	if f == "" {
		return nil, false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, false
	}
	if s := sha256.Sum256(b); "sha256:"+hex.EncodeToString(s[:]) != digest {
		c.log.Warn("chart cache: dropping a file whose content does not match its digest", "file", f)
		os.Remove(f)
		return nil, false
	}
	now := c.clock()
	os.Chtimes(f, now, now) // recently used: kept longer
	c.log.Debug("chart cache: hit", "digest", digest)
	return b, true
}

func (c *cache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// put writes an archive (temp file and rename), then trims the cache to
// its bound. Failures only cost a later fetch.
func (c *cache) put(digest string, b []byte) {
	if c == nil || int64(len(b)) > c.max {
		return
	}
	f := c.file(digest)
	if f == "" {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		c.log.Warn("chart cache", "err", err)
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		c.log.Warn("chart cache", "err", err)
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o644) != nil || os.Rename(tmp.Name(), f) != nil {
		os.Remove(tmp.Name())
		return
	}
	now := c.clock()
	os.Chtimes(f, now, now)
	c.trim(f)
}

// trim removes the least recently used archives until the cache holds at
// most max bytes; keep is never removed.
func (c *cache) trim(keep string) {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var all []entry
	var total int64
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "sha256-") || !strings.HasSuffix(e.Name(), ".tgz") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		all = append(all, entry{filepath.Join(c.dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(all, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, e := range all {
		if total <= c.max {
			break
		}
		if e.path == keep {
			continue
		}
		if os.Remove(e.path) == nil {
			total -= e.size
			c.log.Debug("chart cache: removed", "file", e.path)
		}
	}
}
