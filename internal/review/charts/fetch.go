package charts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/review"
)

// The media types of a Helm chart in an OCI registry.
const (
	chartLayerMediaType       = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	legacyChartLayerMediaType = "application/tar+gzip"
)

// indexFile is what the review reads of a chart repository's index.yaml.
type indexFile struct {
	Entries map[string][]indexEntry `yaml:"entries"`
}

type indexEntry struct {
	Version string   `yaml:"version"`
	URLs    []string `yaml:"urls"`
	Digest  string   `yaml:"digest"`
}

// ParseIndex reads a chart repository's index.yaml.
func ParseIndex(b []byte) (*indexFile, error) {
	var f indexFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("index.yaml: %w", err)
	}
	if f.Entries == nil {
		return nil, fmt.Errorf("index.yaml: no entries")
	}
	return &f, nil
}

// entry finds the version of a chart that version asks for.
func (f *indexFile) entry(chart, version string) (indexEntry, error) {
	l := f.Entries[chart]
	if len(l) == 0 {
		return indexEntry{}, fmt.Errorf("the repository has no chart %q", chart)
	}
	vs := make([]string, len(l))
	for i, e := range l {
		vs[i] = e.Version
	}
	v, err := pickVersion(vs, version)
	if err != nil {
		return indexEntry{}, fmt.Errorf("chart %q: %w", chart, err)
	}
	for _, e := range l {
		if e.Version == v {
			if len(e.URLs) == 0 {
				return indexEntry{}, fmt.Errorf("chart %q %s has no URL", chart, v)
			}
			return e, nil
		}
	}
	panic("unreachable")
}

// get fetches a URL, at most max bytes of it.
func (r *Renderer) get(ctx context.Context, u string, max int64, what string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.opts.HTTPClient.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return nil, fmt.Errorf("GET %s: %w", redact(u), ue.Err)
	} else if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redact(u), resp.Status)
	}
	return readLimited(resp.Body, max, what)
}

// redact drops a URL's user information and query, which may hold
// credentials.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL that does not parse)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// fetchHTTP reads the chart from a chart repository: its index.yaml, then
// the archive the index names (from the cache when its digest is there).
func (r *Renderer) fetchHTTP(ctx context.Context, rel review.Release) ([]byte, string, error) {
	base := strings.TrimSuffix(rel.Source.URL, "/") + "/"
	r.mu.Lock()
	idx := r.index[base]
	r.mu.Unlock()
	if idx == nil {
		b, err := r.get(ctx, base+"index.yaml", MaxIndexBytes, "index.yaml")
		if err != nil {
			return nil, "", fmt.Errorf("fetching the repository's index: %w", err)
		}
		if idx, err = ParseIndex(b); err != nil {
			return nil, "", err
		}
		r.mu.Lock()
		r.index[base] = idx
		r.mu.Unlock()
	}
	e, err := idx.entry(rel.Chart, rel.Version)
	if err != nil {
		return nil, "", err
	}
	want := ""
	if e.Digest != "" {
		want = "sha256:" + strings.TrimPrefix(strings.ToLower(e.Digest), "sha256:")
		if b, ok := r.cache.get(want); ok {
			return b, want, nil
		}
	}
	bu, err := url.Parse(base)
	if err != nil {
		return nil, "", fmt.Errorf("source URL: %w", err)
	}
	cu, err := url.Parse(e.URLs[0])
	if err != nil {
		return nil, "", fmt.Errorf("chart URL %q: %w", e.URLs[0], err)
	}
	abs := bu.ResolveReference(cu)
	if abs.Scheme != "https" && abs.Scheme != "http" {
		return nil, "", fmt.Errorf("chart URL %q is not http(s)", redact(abs.String()))
	}
	b, err := r.get(ctx, abs.String(), MaxArchiveBytes, "the chart archive")
	if err != nil {
		return nil, "", fmt.Errorf("fetching the chart: %w", err)
	}
	got := sha256Digest(b)
	if want != "" && got != want {
		return nil, "", fmt.Errorf("the archive's digest is %s, the index says %s", got, want)
	}
	r.cache.put(got, b)
	return b, got, nil
}

// fetchOCI reads the chart from an OCI registry: the manifest of the tag
// or digest asked for, then its chart layer (from the cache when its
// digest is there).
func (r *Renderer) fetchOCI(ctx context.Context, rel review.Release) ([]byte, string, error) {
	src := rel.Source
	repoName := strings.TrimSuffix(strings.TrimPrefix(src.URL, "oci://"), "/")
	if !strings.HasPrefix(src.URL, "oci://") {
		return nil, "", fmt.Errorf("source URL %q is not oci://", src.URL)
	}
	ropts := []remote.Option{remote.WithContext(ctx)}
	if t := r.opts.HTTPClient.Transport; t != nil {
		ropts = append(ropts, remote.WithTransport(t))
	}
	var tag, digest, constraint string
	if src.Kind == "OCIRepository" {
		switch {
		case src.Digest != "":
			digest = src.Digest
		case src.SemVer != "":
			constraint = src.SemVer
		default:
			tag = cmpOr(src.Tag, "latest")
		}
	} else {
		repoName += "/" + rel.Chart
		if _, err := semverExact(rel.Version); err == nil {
			tag = rel.Version
		} else {
			constraint = rel.Version
		}
	}
	repo, err := name.NewRepository(repoName)
	if err != nil {
		return nil, "", fmt.Errorf("repository %q: %w", repoName, err)
	}
	if tag == "" && digest == "" {
		tags, err := remote.List(repo, ropts...)
		if err != nil {
			return nil, "", fmt.Errorf("listing the tags of %s: %w", repo, err)
		}
		vs := make([]string, len(tags))
		for i, t := range tags {
			vs[i] = strings.ReplaceAll(t, "_", "+") // Helm writes + as _ in tags
		}
		v, err := pickVersion(vs, constraint)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", repo, err)
		}
		tag = v
	}
	var ref name.Reference = repo.Tag(strings.ReplaceAll(tag, "+", "_"))
	if digest != "" {
		ref = repo.Digest(digest)
	}
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return nil, "", fmt.Errorf("fetching %s: %w", ref, err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return nil, "", fmt.Errorf("%s: manifest: %w", ref, err)
	}
	var layer *v1.Descriptor
	for i, l := range m.Layers {
		if l.MediaType == chartLayerMediaType || l.MediaType == legacyChartLayerMediaType {
			layer = &m.Layers[i]
			break
		}
	}
	if layer == nil {
		return nil, "", fmt.Errorf("%s holds no Helm chart layer", ref)
	}
	if layer.Size > MaxArchiveBytes {
		return nil, "", fmt.Errorf("%s: the chart layer is larger than %d bytes", ref, MaxArchiveBytes)
	}
	want := layer.Digest.String()
	if b, ok := r.cache.get(want); ok {
		return b, want, nil
	}
	l, err := remote.Layer(repo.Digest(want), ropts...)
	if err != nil {
		return nil, "", fmt.Errorf("fetching the chart layer of %s: %w", ref, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, "", fmt.Errorf("fetching the chart layer of %s: %w", ref, err)
	}
	defer rc.Close()
	b, err := readLimited(rc, MaxArchiveBytes, "the chart layer")
	if err != nil {
		return nil, "", fmt.Errorf("fetching the chart layer of %s: %w", ref, err)
	}
	if got := sha256Digest(b); got != want {
		return nil, "", fmt.Errorf("%s: the chart layer's digest is %s, the manifest says %s", ref, got, want)
	}
	r.cache.put(want, b)
	return b, want, nil
}
