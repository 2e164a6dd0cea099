package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequireApps(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	err := RequireApps("render", empty, 0)
	if Code(err, &bytes.Buffer{}) != ExitUsage || !strings.Contains(err.Error(), empty+" is not an apps repository: expected an apps/ folder holding apps/<project>/<app>/app.yaml") {
		t.Errorf("an empty folder: %v", err)
	}
	if err := RequireApps("render", empty, 1); err != nil {
		t.Errorf("a folder with a spec: %v", err)
	}
	// The last app deleted: Git keeps no empty apps/ folder, the platform
	// file stays.
	withPlatform := t.TempDir()
	if err := os.WriteFile(filepath.Join(withPlatform, "platform.yaml"), []byte("apps_domain: a.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RequireApps("render", withPlatform, 0); err != nil {
		t.Errorf("a platform file without apps (the last one deleted): %v", err)
	}
	if err := os.Mkdir(filepath.Join(empty, "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RequireApps("render", empty, 0); err != nil {
		t.Errorf("apps/ without apps: %v", err)
	}
}

func TestRequireFleet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := RequireFleet(dir, nil)
	if Code(err, &bytes.Buffer{}) != ExitUsage || !strings.Contains(err.Error(), "is not a fleet folder: expected clusters/<cluster>/") {
		t.Errorf("an empty folder: %v", err)
	}
	if err := RequireFleet(filepath.Join(dir, "nope"), nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing folder: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "k8s", "prod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RequireFleet(dir, []string{"k8s/prod"}); err != nil {
		t.Errorf("a platform's cluster path: %v", err)
	}
}

func TestPlatformWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := PlatformWarning(dir, []string{"platform.yaml"}, "apps.example.com", "default", "fleet")
	if !strings.Contains(w, "has no platform.yaml: the defaults apply (hosts <app>-<project>.apps.example.com") {
		t.Errorf("warning %q", w)
	}
	if err := os.WriteFile(filepath.Join(dir, "platform.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if w := PlatformWarning(dir, []string{"platform.yaml"}, "apps.example.com", "default", "fleet"); w != "" {
		t.Errorf("warning with a platform file: %q", w)
	}
}

// TestProgressLogger: info records are stages (left out of logs), warnings
// stay; no "level=INFO msg=" anywhere.
func TestProgressLogger(t *testing.T) {
	t.Parallel()
	var log, term bytes.Buffer
	for _, tc := range []struct {
		b        *bytes.Buffer
		terminal bool
	}{{&log, false}, {&term, true}} {
		l := ProgressLogger(NewProgress(tc.b, tc.terminal))
		l.Info("building Flux paths", "kustomizations", 12)
		l.Warn("the cluster warns", "warning", "deprecated API")
	}
	if got := log.String(); got != "warning: the cluster warns (warning: deprecated API)\n" {
		t.Errorf("log:\n%q", got)
	}
	if got := term.String(); !strings.Contains(got, "\rbuilding Flux paths (kustomizations: 12)\x1b[K") || !strings.Contains(got, "warning: the cluster warns") {
		t.Errorf("terminal:\n%q", got)
	}
}
