package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"
	"time"

	"sigs.k8s.io/yaml"
)

// The stand-in postgresql chart.
//
// It stands in for bitnami/postgresql 13.4.4, the chart and version the
// project's examples install, and creates, under the same names and keys,
// what fleetwright's exports rely on (internal/exports, resolvePostgreSQL):
//
//   - a Secret named fullname (fullnameOverride, else the release name or
//     "<release>-postgresql") in the release namespace (or namespaceOverride),
//     unless auth.existingSecret is set, with key postgres-password (when
//     auth.enablePostgresUser, the default) and key password (when
//     auth.username names a user other than postgres). Values come from
//     auth.postgresPassword and auth.password (global.postgresql.auth.* win),
//     else from the Secret already there (an upgrade keeps them), else 10
//     random characters from sprig's randAlphaNum, as the real chart does;
//   - a ClusterIP Service named fullname on primary.service.ports.postgresql
//     (default 5432; global.postgresql.service.ports.postgresql wins), port
//     name tcp-postgresql, and the headless Service "<fullname>-hl";
//   - a StatefulSet named fullname (serviceName "<fullname>-hl") with one
//     replica of the real chart's image, docker.io/bitnami/postgresql, whose
//     env takes the user and database from the values and the passwords
//     from the Secret's keys (auth.secretKeys.* with auth.existingSecret).
//
// What the real chart does that the stand-in does not, and why: the real
// chart's container runs a PostgreSQL server, which on first start creates
// auth.database and auth.username; it keeps its data on a
// PersistentVolumeClaim per replica (volumeClaimTemplates, persistence on by
// default); its pods have readiness and liveness probes that run pg_isready
// and a security context; it can add a ServiceAccount, a NetworkPolicy, a
// metrics exporter, TLS, init scripts and, with architecture=replication,
// read replicas and the "<fullname>-primary" and "<fullname>-read" Services
// (the stand-in fails the install instead); and its image tag pins a Debian
// build revision, not the bare appVersion. None of that can run here: the
// test cluster has no container runtime and no storage provisioner (kwok
// marks pods Running and Ready without starting any container, and a claim
// would stay Pending), so a database could neither start nor be reached. The
// stand-in keeps exactly the names, keys and ports that consumers see, and
// the workload that Flux's health checks wait for.
//
//go:embed all:charts/postgresql
var chartFiles embed.FS

// PostgreSQL chart facts, as in charts/postgresql/Chart.yaml.
const (
	PostgreSQLChartName    = "postgresql"
	PostgreSQLChartVersion = "13.4.4"
)

// chartEpoch is the fixed time written into the archive and the index, so
// their bytes do not depend on when they are built.
func chartEpoch() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

// PostgreSQLChart returns the stand-in chart as a Helm chart archive
// (postgresql-13.4.4.tgz). The same bytes come back on every call.
func PostgreSQLChart() ([]byte, error) {
	const root = "charts/postgresql"
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	err = fs.WalkDir(chartFiles, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := chartFiles.ReadFile(p)
		if err != nil {
			return err
		}
		rel := PostgreSQLChartName + "/" + p[len(root)+1:]
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg,
			Name:     rel,
			Mode:     0o644,
			Size:     int64(len(data)),
			ModTime:  chartEpoch(),
			Format:   tar.FormatPAX,
		}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("packing chart: %w", err)
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return nil, fmt.Errorf("packing chart: %w", err)
	}
	return buf.Bytes(), nil
}

// chartMeta is the part of Chart.yaml the index repeats.
type chartMeta struct {
	APIVersion  string `json:"apiVersion"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion,omitempty"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// indexEntry is one chart version in a repository index.
type indexEntry struct {
	chartMeta
	Created time.Time `json:"created"`
	Digest  string    `json:"digest"`
	URLs    []string  `json:"urls"`
}

// chartIndex returns the index.yaml of a repository holding only the
// stand-in chart, whose archive is served at chartURL.
func chartIndex(archive []byte, chartURL string) ([]byte, error) {
	raw, err := chartFiles.ReadFile("charts/postgresql/Chart.yaml")
	if err != nil {
		return nil, err
	}
	var meta chartMeta
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("reading Chart.yaml: %w", err)
	}
	if meta.Name != PostgreSQLChartName || meta.Version != PostgreSQLChartVersion {
		return nil, fmt.Errorf("Chart.yaml says %s %s, want %s %s", meta.Name, meta.Version, PostgreSQLChartName, PostgreSQLChartVersion)
	}
	sum := sha256.Sum256(archive)
	index := struct {
		APIVersion string                  `json:"apiVersion"`
		Entries    map[string][]indexEntry `json:"entries"`
		Generated  time.Time               `json:"generated"`
	}{
		APIVersion: "v1",
		Entries: map[string][]indexEntry{meta.Name: {{
			chartMeta: meta,
			Created:   chartEpoch(),
			Digest:    hex.EncodeToString(sum[:]),
			URLs:      []string{chartURL},
		}}},
		Generated: chartEpoch(),
	}
	return yaml.Marshal(index)
}

// StartChartRepo serves a Helm chart repository over HTTP on 127.0.0.1
// holding the stand-in postgresql chart (see PostgreSQLChart): index.yaml
// and postgresql-13.4.4.tgz. It returns the repository's URL (for a
// HelmRepository's spec.url) and a function that stops the server; the
// server also stops when ctx is done.
func StartChartRepo(ctx context.Context) (url string, stop func(), err error) {
	archive, err := PostgreSQLChart()
	if err != nil {
		return "", nil, err
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("chart repository: %w", err)
	}
	url = "http://" + l.Addr().String()
	file := PostgreSQLChartName + "-" + PostgreSQLChartVersion + ".tgz"
	index, err := chartIndex(archive, url+"/"+file)
	if err != nil {
		return "", nil, errors.Join(err, l.Close())
	}
	mux := http.NewServeMux()
	serve := func(body []byte, contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			http.ServeContent(w, r, path.Base(r.URL.Path), chartEpoch(), bytes.NewReader(body))
		}
	}
	mux.Handle("GET /index.yaml", serve(index, "application/x-yaml"))
	mux.Handle("GET /"+file, serve(archive, "application/gzip"))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	stopAfter := context.AfterFunc(ctx, func() { _ = srv.Close() })
	return url, func() {
		stopAfter()
		_ = srv.Close()
	}, nil
}
