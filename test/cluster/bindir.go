package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetwright/fleetwright/internal/testenv"
)

// Versions of what Start runs. hack/cluster/build.sh builds the same ones (a
// test checks that the two agree); kube-apiserver and etcd come from
// hack/testcluster/build.sh, at testenv.KubeVersion.
const (
	KubeVersion                   = testenv.KubeVersion
	KwokVersion                   = "v0.8.0"
	SourceControllerVersion       = "v1.9.1"
	KustomizeControllerVersion    = "v1.9.4"
	NotificationControllerVersion = "v1.9.3"
	HelmControllerVersion         = "v1.4.3"
)

// Environment variables that locate the binaries; see BinDirs.
const (
	// EnvClusterBin names the folder hack/cluster/build.sh prints.
	EnvClusterBin = "FLEETWRIGHT_CLUSTER_BIN"
	// EnvTestclusterBin names the folder hack/testcluster/build.sh prints.
	EnvTestclusterBin = testenv.EnvBinDir
	// EnvCache is the cache root both build scripts use.
	EnvCache = testenv.EnvCache
)

// buildHint tells the reader how to get the binaries.
const buildHint = "run `bash hack/testcluster/build.sh` and `bash hack/cluster/build.sh` " +
	"(each prints its folder; point " + EnvTestclusterBin + " and " + EnvClusterBin +
	" at them if they are not the defaults)"

// part is one folder that hack/cluster/build.sh makes: the binary Name in
// <clusterBin>/<Name>-<Version>/.
type part struct {
	name, version string
}

func (p part) dir(clusterBin string) string {
	return filepath.Join(clusterBin, p.name+"-"+p.version)
}

func (p part) binary(clusterBin string) string {
	return filepath.Join(p.dir(clusterBin), p.name)
}

// The folders of hack/cluster/build.sh, by program.
var (
	kwokPart                   = part{"kwok", KwokVersion}
	sourceControllerPart       = part{"source-controller", SourceControllerVersion}
	kustomizeControllerPart    = part{"kustomize-controller", KustomizeControllerVersion}
	notificationControllerPart = part{"notification-controller", NotificationControllerVersion}
	helmControllerPart         = part{"helm-controller", HelmControllerVersion}
	schedulerPart              = part{"kube-scheduler", KubeVersion}
	controllerManagerPart      = part{"kube-controller-manager", KubeVersion}

	// parts are every folder of hack/cluster/build.sh, in its build order.
	parts = []part{kwokPart, sourceControllerPart, kustomizeControllerPart, notificationControllerPart,
		helmControllerPart, schedulerPart, controllerManagerPart}
	// fluxParts are the Flux controllers' folders, each with a crds/ folder.
	fluxParts = []part{sourceControllerPart, kustomizeControllerPart, notificationControllerPart, helmControllerPart}
)

// BinDirs returns the folder that should hold kube-apiserver and etcd (as
// testenv.BinDir finds it) and the folder that hack/cluster/build.sh fills,
// using the same rules as that script:
//
//  1. $FLEETWRIGHT_CLUSTER_BIN, if set;
//  2. $FLEETWRIGHT_CACHE/cluster, if FLEETWRIGHT_CACHE is set;
//  3. $HOME/.cache/fleetwright/cluster.
//
// It does not check that the binaries are there; Start does.
func BinDirs(getenv func(string) string) (testclusterBin, clusterBin string, err error) {
	testclusterBin, err = testenv.BinDir(getenv)
	if err != nil {
		return "", "", err
	}
	switch cache := testenv.CacheDir(getenv); {
	case getenv(EnvClusterBin) != "":
		clusterBin = getenv(EnvClusterBin)
	case cache != "":
		clusterBin = filepath.Join(cache, "cluster")
	default:
		return "", "", fmt.Errorf("cannot locate the cluster binaries: none of %s, %s or HOME is set; %s",
			EnvClusterBin, EnvCache, buildHint)
	}
	return testclusterBin, clusterBin, nil
}

// checkBinaries reports, in one error, every binary or data file missing.
func checkBinaries(testclusterBin, clusterBin string) error {
	var errs []error
	exe := func(path string) {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			errs = append(errs, err)
		case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
			errs = append(errs, fmt.Errorf("%s: not an executable file", path))
		}
	}
	exe(filepath.Join(testclusterBin, "kube-apiserver"))
	exe(filepath.Join(testclusterBin, "etcd"))
	for _, p := range parts {
		exe(p.binary(clusterBin))
	}
	if _, err := os.Stat(filepath.Join(kwokPart.dir(clusterBin), "stages.yaml")); err != nil {
		errs = append(errs, err)
	}
	for _, p := range fluxParts {
		if _, err := os.Stat(filepath.Join(p.dir(clusterBin), "crds")); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster binaries missing: %w; %s", errors.Join(errs...), buildHint)
	}
	return nil
}
