package cluster_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/test/cluster"
)

// untar returns the files of a chart archive by name.
func untar(t *testing.T, archive []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode != 0o644 || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: mode %o type %c, want a regular file 0644", h.Name, h.Mode, h.Typeflag)
		}
		files[h.Name] = string(data)
	}
}

func TestPostgreSQLChart(t *testing.T) {
	t.Parallel()
	a, err := cluster.PostgreSQLChart()
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.PostgreSQLChart()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the chart differ")
	}
	files := untar(t, a)
	names := slices.Sorted(maps.Keys(files))
	want := []string{
		"postgresql/Chart.yaml",
		"postgresql/templates/_helpers.tpl",
		"postgresql/templates/primary/statefulset.yaml",
		"postgresql/templates/primary/svc-headless.yaml",
		"postgresql/templates/primary/svc.yaml",
		"postgresql/templates/secrets.yaml",
		"postgresql/values.yaml",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("archive files (-want +got):\n%s", diff)
	}
	var meta map[string]any
	if err := yaml.Unmarshal([]byte(files["postgresql/Chart.yaml"]), &meta); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"apiVersion": "v2", "name": "postgresql", "version": cluster.PostgreSQLChartVersion} {
		if meta[k] != v {
			t.Errorf("Chart.yaml %s = %v, want %v", k, meta[k], v)
		}
	}
	var values map[string]any
	if err := yaml.Unmarshal([]byte(files["postgresql/values.yaml"]), &values); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	if img := values["image"].(map[string]any); img["repository"] != "bitnami/postgresql" || img["registry"] != "docker.io" {
		t.Errorf("values image = %v, want the real chart's docker.io/bitnami/postgresql", img)
	}
}

func TestStartChartRepo(t *testing.T) {
	t.Parallel()
	url, stop, err := cluster.StartChartRepo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("url = %q, want one on 127.0.0.1", url)
	}
	get := func(u string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	code, body := get(url + "/index.yaml")
	if code != http.StatusOK {
		t.Fatalf("GET index.yaml: %d", code)
	}
	var index struct {
		APIVersion string `json:"apiVersion"`
		Entries    map[string][]struct {
			APIVersion string   `json:"apiVersion"`
			Name       string   `json:"name"`
			Version    string   `json:"version"`
			Digest     string   `json:"digest"`
			URLs       []string `json:"urls"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(body, &index); err != nil {
		t.Fatalf("index.yaml: %v", err)
	}
	entries := index.Entries["postgresql"]
	if index.APIVersion != "v1" || len(entries) != 1 {
		t.Fatalf("index = %+v, want apiVersion v1 and one postgresql entry", index)
	}
	e := entries[0]
	if e.APIVersion != "v2" || e.Name != "postgresql" || e.Version != cluster.PostgreSQLChartVersion || len(e.URLs) != 1 {
		t.Fatalf("index entry = %+v", e)
	}
	code, archive := get(e.URLs[0])
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", e.URLs[0], code)
	}
	want, err := cluster.PostgreSQLChart()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(archive, want) {
		t.Error("served archive differs from PostgreSQLChart()")
	}
	sum := sha256.Sum256(archive)
	if e.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("index digest = %s, want the archive's sha256 %x", e.Digest, sum)
	}
	if code, _ := get(url + "/other-1.0.0.tgz"); code != http.StatusNotFound {
		t.Errorf("GET an unknown chart: %d, want 404", code)
	}
	stop()
	if resp, err := http.Get(url + "/index.yaml"); err == nil {
		resp.Body.Close()
		t.Error("the repository still answers after stop")
	}
}
