package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBinDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{
			name: "explicit folder wins",
			env:  map[string]string{EnvBinDir: "/opt/bin", EnvCache: "/c", "HOME": "/home/u"},
			want: "/opt/bin",
		},
		{
			name: "cache root",
			env:  map[string]string{EnvCache: "/c", "HOME": "/home/u"},
			want: "/c/testcluster/" + KubeVersion,
		},
		{
			name: "home",
			env:  map[string]string{"HOME": "/home/u"},
			want: "/home/u/.cache/fleetwright/testcluster/" + KubeVersion,
		},
		{
			name:    "nothing set",
			env:     map[string]string{},
			wantErr: "hack/testcluster/build.sh",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := BinDir(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("BinDir() = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("BinDir() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCheckBinaries(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, dir, name string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr []string
	}{
		{
			name: "both present",
			setup: func(t *testing.T, dir string) {
				write(t, dir, "kube-apiserver", 0o755)
				write(t, dir, "etcd", 0o755)
			},
		},
		{
			name:    "empty folder",
			setup:   func(*testing.T, string) {},
			wantErr: []string{"kube-apiserver", "etcd", "bash hack/testcluster/build.sh"},
		},
		{
			name: "etcd not executable",
			setup: func(t *testing.T, dir string) {
				write(t, dir, "kube-apiserver", 0o755)
				write(t, dir, "etcd", 0o644)
			},
			wantErr: []string{"etcd: not an executable file"},
		},
		{
			name: "apiserver is a folder",
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "kube-apiserver"), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, dir, "etcd", 0o755)
			},
			wantErr: []string{"kube-apiserver: not an executable file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			err := checkBinaries(dir)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("checkBinaries() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("checkBinaries() = nil, want error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("checkBinaries() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestStartMissingBinaries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		opts []Option
	}{
		{name: "bin dir option", opts: []Option{WithBinDir(dir)}},
		{name: "environment", opts: []Option{WithGetenv(func(k string) string {
			if k == EnvBinDir {
				return dir
			}
			return ""
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, err := Start(t.Context(), tt.opts...)
			if err == nil {
				_ = env.Stop()
				t.Fatal("Start() succeeded with no binaries")
			}
			for _, want := range []string{dir, "bash hack/testcluster/build.sh"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Start() error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestNamespacePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"TestFoo", "testfoo-"},
		{"TestFoo/sub_case#01", "testfoo-sub-case-01-"},
		{"TestApply/Kustomization_with_an_unknown_field_is_rejected_by_the_server", "testapply-kustomization-with-an-unknown-field-i-"},
		{"123", "t-123-"},
		{"///", "t-"},
		{"", "t-"},
		{"Test" + strings.Repeat("-", 60) + "x", "test-x-"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := namespacePrefix(tt.in)
			if got != tt.want {
				t.Errorf("namespacePrefix(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(got) > 48 {
				t.Errorf("namespacePrefix(%q) is %d long, want at most 48", tt.in, len(got))
			}
		})
	}
}
