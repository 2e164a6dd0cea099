package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// reviewImages names the image of every workload that render builds
// (dockerfile and buildpack modes) as it would be tagged, without building:
// `<registry>/<project>/<app>-<component>:<content tag>`, the tag computed
// by build.ContentTag over the build's inputs as the Git tree at the
// reviewed revision holds them. A change to the inputs shows as a new tag in
// the review; the digest is known only once render builds the image.
//
// files are the repository's files at that revision, modes the modes Git
// keeps of them (executables and symbolic links). They are materialized as
// a checkout makes them, under this process's umask, so the tag is the one
// render computes from a work tree checked out here.
func reviewImages(repo *spec.Repo, files map[string][]byte, modes map[string]fs.FileMode) (map[string]string, error) {
	images := map[string]string{}
	var dir string
	defer func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}()
	plat := &repo.Platform
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil || (w.BuildMode != spec.BuildModeDockerfile && w.BuildMode != spec.BuildModeBuildpack) {
				continue
			}
			if dir == "" {
				d, err := os.MkdirTemp("", "fleetwright-review-")
				if err != nil {
					return nil, err
				}
				dir = d
			}
			req := buildRequest(a, c.Name, plat, dir)
			df := path.Join(req.Context, req.Dockerfile)
			if req.Dockerfile == "" {
				df = path.Join(req.Context, "Dockerfile")
			}
			if err := materialize(dir, files, modes, req.Context, df); err != nil {
				return nil, err
			}
			tag, err := build.ContentTag(req)
			if err != nil {
				return nil, fmt.Errorf("%s: component %s: %w", a.File, c.Name, err)
			}
			name := req.Name
			repoName := name
			if plat.Registry != "" {
				repoName = strings.TrimSuffix(plat.Registry, "/") + "/" + name
			}
			images[spec.NodeID(a, c.Name)] = repoName + ":" + tag
		}
	}
	return images, nil
}

// materialize writes the files under the folder context, and the
// Dockerfile df with its own ignore file, below dir (once each), with the
// modes a checkout gives them.
func materialize(dir string, files map[string][]byte, modes map[string]fs.FileMode, context, df string) error {
	for p, b := range files {
		if !(context == "." || p == context || strings.HasPrefix(p, context+"/") || p == df || p == df+".dockerignore") {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Lstat(full); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		var err error
		switch m := modes[p]; {
		case m&fs.ModeSymlink != 0:
			err = os.Symlink(string(b), full)
		case m&0o111 != 0:
			err = os.WriteFile(full, b, 0o777)
		default:
			err = os.WriteFile(full, b, 0o666)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
