package cluster

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBinDirs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		env        map[string]string
		wantTC     string
		wantBin    string
		wantErrSub string
	}{
		{
			name:    "explicit folders win",
			env:     map[string]string{EnvClusterBin: "/opt/cl", EnvTestclusterBin: "/opt/tc", EnvCache: "/c", "HOME": "/home/u"},
			wantTC:  "/opt/tc",
			wantBin: "/opt/cl",
		},
		{
			name:    "cache root",
			env:     map[string]string{EnvCache: "/c", "HOME": "/home/u"},
			wantTC:  "/c/testcluster/" + KubeVersion,
			wantBin: "/c/cluster",
		},
		{
			name:    "home",
			env:     map[string]string{"HOME": "/home/u"},
			wantTC:  "/home/u/.cache/fleetwright/testcluster/" + KubeVersion,
			wantBin: "/home/u/.cache/fleetwright/cluster",
		},
		{
			name:    "only the testcluster folder given",
			env:     map[string]string{EnvTestclusterBin: "/opt/tc", "HOME": "/home/u"},
			wantTC:  "/opt/tc",
			wantBin: "/home/u/.cache/fleetwright/cluster",
		},
		{
			name:       "only the cluster folder given, nothing else",
			env:        map[string]string{EnvClusterBin: "/opt/cl"},
			wantErrSub: "hack/testcluster/build.sh",
		},
		{
			name:       "nothing set",
			env:        map[string]string{},
			wantErrSub: "build.sh",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc, bin, err := BinDirs(func(k string) string { return tt.env[k] })
			if tt.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSub) {
					t.Fatalf("BinDirs() = %q, %q, %v; want error containing %q", tc, bin, err, tt.wantErrSub)
				}
				return
			}
			if err != nil || tc != tt.wantTC || bin != tt.wantBin {
				t.Fatalf("BinDirs() = %q, %q, %v; want %q, %q", tc, bin, err, tt.wantTC, tt.wantBin)
			}
		})
	}
}

// TestBuildScriptAgrees checks that hack/cluster/build.sh makes exactly the
// folders Start looks for.
func TestBuildScriptAgrees(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("bash", filepath.Join("..", "..", "hack", "cluster", "build.sh"), "-list").Output()
	if err != nil {
		t.Fatalf("build.sh -list: %v", err)
	}
	got := strings.Fields(string(out))
	var want []string
	for _, p := range parts {
		want = append(want, filepath.Base(p.dir("/")))
	}
	if !slices.Equal(got, want) {
		t.Errorf("build.sh -list = %v, want %v", got, want)
	}
}

func TestStartWithoutBinaries(t *testing.T) {
	t.Parallel()
	tc, bin := t.TempDir(), t.TempDir()
	c, err := Start(context.Background(), WithBinDirs(tc, bin))
	if err == nil {
		_ = c.Stop()
		t.Fatal("Start succeeded without binaries")
	}
	for _, want := range []string{
		"bash hack/testcluster/build.sh",
		"bash hack/cluster/build.sh",
		filepath.Join(tc, "kube-apiserver"),
		filepath.Join(bin, "kube-controller-manager-"+KubeVersion, "kube-controller-manager"),
		filepath.Join(bin, "kwok-"+KwokVersion, "stages.yaml"),
		filepath.Join(bin, "helm-controller-"+HelmControllerVersion, "crds"),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
