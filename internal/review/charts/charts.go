// Package charts renders the charts of HelmReleases for review with Helm's
// SDK (helm.sh/helm/v4): it fetches a chart from the HelmRepository (an
// index.yaml over HTTP(S)) or the OCI registry (a HelmRepository of type
// oci, or an OCIRepository) that the fleet names, keeps the archives in a
// bounded cache on disk by digest, and renders the chart's templates and
// CRDs with the release's values as `helm template` would, talking to no
// cluster. It implements review.Charts; only the programs that review
// link it, so that Helm stays out of the others.
package charts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/review"
)

// Defaults of Options.
const (
	DefaultCacheMaxBytes = 256 << 20
	// MaxArchiveBytes bounds a chart archive that is downloaded.
	MaxArchiveBytes = 20 << 20
	// MaxIndexBytes bounds a chart repository's index.yaml.
	MaxIndexBytes = 64 << 20
)

// Options configure a Renderer.
type Options struct {
	// CacheDir holds the chart archives fetched, one file per digest
	// (sha256-<hex>.tgz); "" keeps none. See DefaultCacheDir.
	CacheDir string
	// CacheMaxBytes bounds the cache: past it, the archives used least
	// recently go (default DefaultCacheMaxBytes).
	CacheMaxBytes int64
	// HTTPClient fetches indexes, archives and OCI artifacts (default: a
	// client with no timeout of its own; the context bounds each fetch).
	HTTPClient *http.Client
	// Logger gets what is fetched and what the cache holds (default:
	// discarded).
	Logger *slog.Logger
}

// DefaultCacheDir is the cache below the user's cache folder, as
// os.UserCacheDir returns it.
func DefaultCacheDir(userCacheDir func() (string, error)) (string, error) {
	d, err := userCacheDir()
	if err != nil {
		return "", err
	}
	return path.Join(d, "fleetwright", "charts"), nil
}

// Renderer fetches and renders charts; it is safe for concurrent use.
type Renderer struct {
	opts  Options
	cache *cache
	mu    sync.Mutex
	index map[string]*indexFile // repository URL → its index, for one review
}

// New returns a Renderer.
func New(opts Options) *Renderer {
	if opts.CacheMaxBytes <= 0 {
		opts.CacheMaxBytes = DefaultCacheMaxBytes
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Renderer{opts: opts, index: map[string]*indexFile{}}
	if opts.CacheDir != "" {
		r.cache = &cache{dir: opts.CacheDir, max: opts.CacheMaxBytes, log: opts.Logger}
	}
	return r
}

var _ review.Charts = (*Renderer)(nil)

// Render fetches the release's chart and renders it.
func (r *Renderer) Render(ctx context.Context, rel review.Release) (*review.Rendered, error) {
	data, digest, err := r.fetch(ctx, rel)
	if err != nil {
		return nil, err
	}
	out, err := Render(ctx, data, rel)
	if err != nil {
		return nil, err
	}
	out.Digest = digest
	if rel.Chart != "" && out.Chart != rel.Chart {
		return nil, fmt.Errorf("the archive holds chart %q, not %q", out.Chart, rel.Chart)
	}
	return out, nil
}

// fetch returns the chart archive of a release and its digest.
func (r *Renderer) fetch(ctx context.Context, rel review.Release) ([]byte, string, error) {
	src := rel.Source
	switch {
	case src.OCI:
		return r.fetchOCI(ctx, rel)
	case strings.HasPrefix(src.URL, "https://") || strings.HasPrefix(src.URL, "http://"):
		return r.fetchHTTP(ctx, rel)
	}
	return nil, "", fmt.Errorf("source URL %q is neither http(s):// nor oci://", src.URL)
}

// Render renders a chart archive (a .tgz) with the release's name,
// namespace and values, as `helm template` does with no cluster: the
// CRDs of its crds/ folders first, then the objects of its templates in
// the order of their file names, hooks included and tests left out.
func Render(ctx context.Context, archive []byte, rel review.Release) (*review.Rendered, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	vals := common.Values{}
	if rel.Values != nil {
		// Helm coalesces into what it is given: give it a copy.
		b, err := yaml.Marshal(rel.Values)
		if err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		if err := yaml.Unmarshal(b, &vals); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, fmt.Errorf("the chart's dependencies: %w", err)
	}
	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}
	top, err := util.ToRenderValues(ch, vals, opts, common.DefaultCapabilities.Copy())
	if err != nil {
		return nil, fmt.Errorf("the chart's values: %w", err)
	}
	files, err := engine.Engine{}.RenderWithContext(ctx, ch, top)
	if err != nil {
		return nil, fmt.Errorf("rendering: %w", err)
	}
	out := &review.Rendered{Chart: ch.Name(), Version: ch.Metadata.Version}
	for _, crd := range ch.CRDObjects() {
		objs, err := splitObjects(crd.Filename, string(crd.File.Data))
		if err != nil {
			return nil, err
		}
		out.Objects = append(out.Objects, objs...)
	}
	for _, name := range sortedKeys(files) {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		objs, err := splitObjects(name, files[name])
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !isTest(o) {
				out.Objects = append(out.Objects, o)
			}
		}
	}
	return out, nil
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// splitObjects reads the YAML documents of a rendered file.
func splitObjects(file, text string) ([]map[string]any, error) {
	var out []map[string]any
	for i, doc := range docSep.Split(text, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		if _, ok := m["kind"].(string); !ok {
			return nil, fmt.Errorf("%s: document %d has no kind", file, i+1)
		}
		out = append(out, m)
	}
	return out, nil
}

// isTest says whether an object is a test hook (helm test), which
// helm-controller does not install.
func isTest(o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	an, _ := md["annotations"].(map[string]any)
	h, _ := an["helm.sh/hook"].(string)
	for _, e := range strings.Split(h, ",") {
		if e = strings.TrimSpace(e); e == "test" || e == "test-success" || e == "test-failure" {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pickVersion returns the version of versions that want names: itself
// when it is one of them, else the highest that the constraint allows
// ("" allows every release that is not a pre-release).
func pickVersion(versions []string, want string) (string, error) {
	if slices.Contains(versions, want) && want != "" {
		return want, nil
	}
	c, err := semver.NewConstraint(cmpOr(want, "*"))
	if err != nil {
		return "", fmt.Errorf("version %q is neither a version nor a constraint: %w", want, err)
	}
	var best *semver.Version
	bestS := ""
	for _, s := range versions {
		v, err := semver.NewVersion(s)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestS = v, s
		}
	}
	if best == nil {
		if want == "" {
			return "", errors.New("no version")
		}
		return "", fmt.Errorf("no version matches %q", want)
	}
	return bestS, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readLimited reads at most max bytes of r, and fails past them.
func readLimited(r io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", what, max)
	}
	return b, nil
}

func sha256Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// semverExact parses an exact version (1.2.3, with a pre-release or build
// part), not a constraint.
func semverExact(s string) (*semver.Version, error) { return semver.StrictNewVersion(s) }
