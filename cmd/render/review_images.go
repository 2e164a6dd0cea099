package main

import (
	"fmt"
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
// files are the repository's files at that revision. Git keeps only the
// executable bit of a file's mode; the files are materialized with mode
// 0644, so a context holding executable files gets a tag that differs from
// the one render computes from the work tree.
func reviewImages(repo *spec.Repo, files map[string][]byte) (map[string]string, error) {
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
			if err := materialize(dir, files, req.Context, df); err != nil {
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
// Dockerfile df with its own ignore file, below dir (once each).
func materialize(dir string, files map[string][]byte, context, df string) error {
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
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
