// Package kbuild runs kustomize builds in this process, the way Flux's
// kustomize-controller builds a folder. kustomize keeps its OpenAPI schema
// in package state, so every build of the process goes through the one
// lock here; a build that panics (a malformed patch can make kustomize
// panic) is an error, not a crash.
package kbuild

import (
	"fmt"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// mu serializes kustomize builds (see the package comment).
var mu sync.Mutex

// Run builds the kustomization in dir of fsys with plugins disabled.
// rootOnly confines the build's files to dir, as Flux confines a build to
// its artifact; without it, the build may read files above dir.
func Run(fsys filesys.FileSystem, dir string, rootOnly bool) (rm resmap.ResMap, err error) {
	restrictions := types.LoadRestrictionsNone
	if rootOnly {
		restrictions = types.LoadRestrictionsRootOnly
	}
	mu.Lock()
	defer mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			rm, err = nil, fmt.Errorf("kustomize failed: %v", p)
		}
	}()
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: restrictions, PluginConfig: types.DisabledPluginConfig()})
	return k.Run(fsys, dir)
}
