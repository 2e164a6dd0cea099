package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KubeVersion is the Kubernetes release of the API server the tests run.
// hack/testcluster/build.sh builds the same version.
const KubeVersion = "v1.37.2"

// Environment variables that locate the binaries; see BinDir.
const (
	EnvBinDir = "FLEETWRIGHT_TESTCLUSTER_BIN"
	EnvCache  = "FLEETWRIGHT_CACHE"
)

// buildHint tells the reader how to get the binaries.
const buildHint = "run `bash hack/testcluster/build.sh` (it prints the folder; " +
	"point " + EnvBinDir + " at it if it is not the default)"

// BinDir returns the folder that should hold the kube-apiserver and etcd
// binaries, using the same rules as hack/testcluster/build.sh:
//
//  1. $FLEETWRIGHT_TESTCLUSTER_BIN, if set;
//  2. $FLEETWRIGHT_CACHE/testcluster/<KubeVersion>, if FLEETWRIGHT_CACHE is set;
//  3. $HOME/.cache/fleetwright/testcluster/<KubeVersion>.
//
// It does not check that the binaries are there; Start does.
func BinDir(getenv func(string) string) (string, error) {
	if dir := getenv(EnvBinDir); dir != "" {
		return dir, nil
	}
	if cache := CacheDir(getenv); cache != "" {
		return filepath.Join(cache, "testcluster", KubeVersion), nil
	}
	return "", fmt.Errorf("cannot locate the test cluster binaries: none of %s, %s or HOME is set; %s",
		EnvBinDir, EnvCache, buildHint)
}

// CacheDir returns the folder the hack/ build scripts cache binaries in:
// $FLEETWRIGHT_CACHE, else $HOME/.cache/fleetwright; "" when neither is set.
func CacheDir(getenv func(string) string) string {
	if cache := getenv(EnvCache); cache != "" {
		return cache
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", "fleetwright")
	}
	return ""
}

// checkBinaries reports, in one error, every binary missing from dir or not
// executable.
func checkBinaries(dir string) error {
	var errs []error
	for _, name := range []string{"kube-apiserver", "etcd"} {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
			errs = append(errs, fmt.Errorf("%s: not an executable file", path))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("test cluster binaries missing: %w; %s", errors.Join(errs...), buildHint)
	}
	return nil
}
