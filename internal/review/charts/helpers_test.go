package charts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	helmregistry "helm.sh/helm/v4/pkg/registry"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// chartArchive packs the chart folder testdata/charts/<dir>.
func chartArchive(t testing.TB, dir string) []byte {
	return golden.PackChart(t, filepath.Join("testdata", "charts", dir), "webcache")
}

// chartRepo is a chart repository on loopback: index.yaml and one archive
// per version of the webcache chart, with their digests.
type chartRepo struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int // path → requests
}

func newChartRepo(t testing.TB, versions ...string) *chartRepo {
	t.Helper()
	archives := map[string][]byte{}
	var index strings.Builder
	index.WriteString("apiVersion: v1\nentries:\n  webcache:\n")
	for _, v := range versions {
		b := chartArchive(t, "webcache-"+v)
		archives["/webcache-"+v+".tgz"] = b
		sum := sha256.Sum256(b)
		fmt.Fprintf(&index, "  - name: webcache\n    version: %s\n    digest: %s\n    urls: [webcache-%s.tgz]\n", v, hex.EncodeToString(sum[:]), v)
	}
	r := &chartRepo{hits: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits[req.URL.Path]++
		r.mu.Unlock()
		if req.URL.Path == "/index.yaml" {
			io.WriteString(w, index.String())
			return
		}
		b, ok := archives[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *chartRepo) requests(p string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[p]
}

// ociRegistry is go-containerregistry's registry on loopback holding the
// versions of the webcache chart below charts/, pushed with Helm's OCI
// client; it returns the registry's host.
func ociRegistry(t testing.TB, versions ...string) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(io.Discard),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if _, err := c.Push(chartArchive(t, "webcache-"+v), host+"/charts/webcache:"+v, helmregistry.PushOptCreationTime("2026-01-01T00:00:00Z")); err != nil {
			t.Fatalf("pushing webcache %s: %v", v, err)
		}
	}
	return host
}
