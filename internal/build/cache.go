package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// CacheTag is the tag of an image repository's layer cache manifest: the
// layers RUN instructions made, each under the key of what made it, so a
// build on another machine reuses them.
const CacheTag = "buildcache"

// Media types of the cache manifest and its record list.
const (
	cacheArtifactType   = "application/vnd.fleetwright.buildcache.v1"
	cacheConfigType     = "application/vnd.fleetwright.buildcache.config.v1+json"
	maxCacheRecords     = 256
	cacheRecordsVersion = 1
)

// cacheRecord is one cached RUN layer.
type cacheRecord struct {
	Key       string          `json:"key"`
	Digest    string          `json:"digest"`
	DiffID    string          `json:"diffID"`
	Size      int64           `json:"size"`
	MediaType types.MediaType `json:"mediaType"`
}

type cacheConfig struct {
	Version int           `json:"version"`
	Records []cacheRecord `json:"records"`
}

// runCache is the layer cache of one build: the records read from the
// repository's cache manifest, and those this build used or made, which
// the manifest holds after the build (newest first).
type runCache struct {
	mu     sync.Mutex
	repo   name.Repository
	opts   []remote.Option
	known  map[string]cacheRecord
	order  []string // keys of known, newest first
	used   []string
	made   map[string]v1.Layer
	loaded bool
}

// loadCache reads repo's cache manifest. A missing one is an empty cache;
// so is one that cannot be read, since the cache only saves time.
func (l *Local) loadCache(ctx context.Context, repo string) *runCache {
	r, err := name.NewRepository(repo, l.reg.NameOptions()...)
	if err != nil {
		return nil
	}
	c := &runCache{repo: r, opts: l.reg.RemoteOptions(ctx), known: map[string]cacheRecord{}, made: map[string]v1.Layer{}}
	desc, err := l.reg.Get(ctx, repo+":"+CacheTag)
	if err != nil {
		if !errors.Is(err, registry.ErrNotFound) {
			l.log.Debug("layer cache unreadable", "repo", repo, "err", err)
		}
		return c
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil || m.Config.MediaType != cacheConfigType {
		return c
	}
	blob, err := remote.Layer(r.Digest(m.Config.Digest.String()), c.opts...)
	if err != nil {
		return c
	}
	rc, err := blob.Compressed()
	if err != nil {
		return c
	}
	defer rc.Close()
	var cfg cacheConfig
	if err := json.NewDecoder(io.LimitReader(rc, 16<<20)).Decode(&cfg); err != nil || cfg.Version != cacheRecordsVersion {
		return c
	}
	for _, rec := range cfg.Records {
		if _, dup := c.known[rec.Key]; !dup {
			c.known[rec.Key] = rec
			c.order = append(c.order, rec.Key)
		}
	}
	c.loaded = true
	return c
}

// lookup returns the cached layer for key. The layer's blob is read from
// the registry only if the build needs its content.
func (c *runCache) lookup(key string) (v1.Layer, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.made[key]; ok {
		return l, true
	}
	rec, ok := c.known[key]
	if !ok {
		return nil, false
	}
	d, err1 := v1.NewHash(rec.Digest)
	diffID, err2 := v1.NewHash(rec.DiffID)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	return &cachedLayer{c: c, digest: d, diffID: diffID, size: rec.Size, mediaType: rec.MediaType}, true
}

func (c *runCache) use(key string, _ v1.Layer) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used = append(c.used, key)
}

func (c *runCache) add(key string, l v1.Layer) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made[key] = l
	c.used = append(c.used, key)
}

// save writes the cache manifest when the build made layers: theirs and
// the records it used first, then earlier ones, up to maxCacheRecords.
// Only new blobs are uploaded.
func (c *runCache) save() error {
	if c == nil || len(c.made) == 0 {
		return nil
	}
	var recs []cacheRecord
	seen := map[string]bool{}
	var layers []v1.Layer
	for _, k := range slices.Concat(c.used, c.order) {
		if seen[k] || len(recs) == maxCacheRecords {
			continue
		}
		seen[k] = true
		if l, ok := c.made[k]; ok {
			rec, err := recordOf(k, l)
			if err != nil {
				return err
			}
			recs = append(recs, rec)
			layers = append(layers, l)
			continue
		}
		if rec, ok := c.known[k]; ok {
			recs = append(recs, rec)
		}
	}
	for _, l := range layers {
		if err := remote.WriteLayer(c.repo, l, c.opts...); err != nil {
			return fmt.Errorf("uploading a cache layer: %w", err)
		}
	}
	cfgBytes, err := json.Marshal(cacheConfig{Version: cacheRecordsVersion, Records: recs})
	if err != nil {
		return err
	}
	cfgLayer := static.NewLayer(cfgBytes, cacheConfigType)
	if err := remote.WriteLayer(c.repo, cfgLayer, c.opts...); err != nil {
		return fmt.Errorf("uploading the cache records: %w", err)
	}
	cfgDigest, _ := cfgLayer.Digest()
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: cacheConfigType, Digest: cfgDigest, Size: int64(len(cfgBytes))},
	}
	for _, r := range recs {
		d, _ := v1.NewHash(r.Digest)
		m.Layers = append(m.Layers, v1.Descriptor{MediaType: r.MediaType, Digest: d, Size: r.Size})
	}
	raw, err := json.Marshal(struct {
		v1.Manifest
		ArtifactType string `json:"artifactType"`
	}{m, cacheArtifactType})
	if err != nil {
		return err
	}
	if err := remote.Put(c.repo.Tag(CacheTag), rawManifest{raw: raw, mt: types.OCIManifestSchema1}, c.opts...); err != nil {
		return fmt.Errorf("writing the cache manifest: %w", err)
	}
	return nil
}

func recordOf(key string, l v1.Layer) (cacheRecord, error) {
	d, err := l.Digest()
	if err != nil {
		return cacheRecord{}, err
	}
	diffID, err := l.DiffID()
	if err != nil {
		return cacheRecord{}, err
	}
	size, err := l.Size()
	if err != nil {
		return cacheRecord{}, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return cacheRecord{}, err
	}
	return cacheRecord{Key: key, Digest: d.String(), DiffID: diffID.String(), Size: size, MediaType: mt}, nil
}

type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

// cachedLayer is a layer of the registry's cache: what a manifest needs
// (digest, diff id, size, type) is known from the record; the blob is
// fetched on first read.
type cachedLayer struct {
	c         *runCache
	digest    v1.Hash
	diffID    v1.Hash
	size      int64
	mediaType types.MediaType

	once sync.Once
	blob v1.Layer
	err  error
}

func (l *cachedLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *cachedLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *cachedLayer) Size() (int64, error)                { return l.size, nil }
func (l *cachedLayer) MediaType() (types.MediaType, error) { return l.mediaType, nil }

func (l *cachedLayer) remote() (v1.Layer, error) {
	l.once.Do(func() { l.blob, l.err = remote.Layer(l.c.repo.Digest(l.digest.String()), l.c.opts...) })
	return l.blob, l.err
}

func (l *cachedLayer) Compressed() (io.ReadCloser, error) {
	b, err := l.remote()
	if err != nil {
		return nil, err
	}
	return b.Compressed()
}

func (l *cachedLayer) Uncompressed() (io.ReadCloser, error) {
	b, err := l.remote()
	if err != nil {
		return nil, err
	}
	return b.Uncompressed()
}

// cacheDir returns the directory of a cache mount, made on first use with
// the mount's mode and owner, and for sharing=locked or private a function
// that releases it.
func (l *Local) cacheDir(id string, m *instructions.Mount) (string, func(), error) {
	sum := sha256.Sum256([]byte(id))
	dir := filepath.Join(l.cacheRoot, hex.EncodeToString(sum[:12]))
	var unlock func()
	if m.CacheSharing == instructions.MountSharingLocked || m.CacheSharing == instructions.MountSharingPrivate {
		l.cacheMu.Lock()
		mu, ok := l.cacheLocks[dir]
		if !ok {
			mu = &sync.Mutex{}
			l.cacheLocks[dir] = mu
		}
		l.cacheMu.Unlock()
		mu.Lock()
		unlock = mu.Unlock
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		mode := os.FileMode(0o755)
		if m.Mode != nil {
			mode = os.FileMode(*m.Mode & 0o7777)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", unlock, fmt.Errorf("cache mount %s: %w", id, err)
		}
		uid, gid := 0, 0
		if m.UID != nil {
			uid = int(*m.UID)
		}
		if m.GID != nil {
			gid = int(*m.GID)
		}
		if !l.ids.rootless {
			if err := os.Lchown(dir, l.ids.toHost(uid, false), l.ids.toHost(gid, true)); err != nil {
				return "", unlock, fmt.Errorf("cache mount %s: %w", id, err)
			}
		}
		if err := os.Chmod(dir, mode); err != nil {
			return "", unlock, fmt.Errorf("cache mount %s: %w", id, err)
		}
		return dir, unlock, nil
	}
	if err != nil {
		return "", unlock, fmt.Errorf("cache mount %s: %w", id, err)
	}
	// The runtime mounts the folder by its path: it must be one, not a
	// link to somewhere else.
	if !fi.IsDir() {
		return "", unlock, fmt.Errorf("cache mount %s: %s is not a folder", id, dir)
	}
	if err := l.shiftOwners(dir, fi); err != nil {
		return "", unlock, fmt.Errorf("cache mount %s: %w", id, err)
	}
	return dir, unlock, nil
}

// shiftOwners gives a cache folder that a builder without a user namespace
// made (owned by host ids below the namespace's) to the namespace's ids,
// so that its files keep their owners as a RUN sees them.
func (l *Local) shiftOwners(dir string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if l.ids.rootless || !ok || st.Uid >= l.ids.base {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if s, ok := info.Sys().(*syscall.Stat_t); ok && s.Uid < l.ids.base {
			return os.Lchown(p, l.ids.toHost(int(s.Uid), false), l.ids.toHost(int(s.Gid), true))
		}
		return nil
	})
}

// secret reads a configured secret's value.
func (l *Local) secret(id string) ([]byte, bool, error) {
	src, ok := l.secrets[id]
	if !ok {
		return nil, false, nil
	}
	switch {
	case src.Env != "":
		v, ok := l.lookupEnv(src.Env)
		if !ok {
			return nil, false, nil
		}
		return []byte(v), true, nil
	case src.File != "":
		b, err := os.ReadFile(src.File)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("secret %q: %w", id, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}
