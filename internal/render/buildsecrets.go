package render

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// buildLimits turns platform.yaml's build.limits into the builder's.
func buildLimits(l *spec.BuildLimits) (build.Limits, error) {
	var out build.Limits
	if l == nil {
		return out, nil
	}
	out.Pids = l.Pids
	if l.Memory != nil {
		q, err := l.Memory.Parse()
		if err != nil {
			return out, fmt.Errorf("platform.yaml: build.limits.memory: %w", err)
		}
		out.Memory = q.Value()
	}
	if l.CPUs != nil {
		q, err := l.CPUs.Parse()
		if err != nil {
			return out, fmt.Errorf("platform.yaml: build.limits.cpus: %w", err)
		}
		out.CPUs = float64(q.MilliValue()) / 1000
	}
	return out, nil
}

// checkBuildSecrets reports each RUN --mount=type=secret of a component's
// Dockerfile whose secret platform.yaml's build.secrets does not give to
// the component's project, at the RUN's line. The builder refuses such a
// mount too; this says so before anything is built. root is the apps
// repository's folder.
func checkBuildSecrets(root string, repo *load.Repo) load.Problems {
	allowed := map[string][]string{}
	if repo.Platform.Build != nil {
		for _, s := range repo.Platform.Build.Secrets {
			allowed[s.ID] = s.Projects
		}
	}
	if len(allowed) == 0 {
		return nil
	}
	var ps load.Problems
	seen := map[string]bool{}
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil || w.BuildMode != spec.BuildModeDockerfile {
				continue
			}
			req := buildRequest(a, c.Name, &repo.Platform, root)
			df := req.Dockerfile
			if df == "" {
				df = "Dockerfile"
			}
			rel := path.Join(req.Context, df)
			if seen[a.Project+"\x00"+rel] || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			seen[a.Project+"\x00"+rel] = true
			data, err := readInside(root, rel)
			if err != nil {
				continue // the build reports it
			}
			uses, err := build.SecretUses(rel, data)
			if err != nil {
				continue
			}
			for _, u := range uses {
				projects, ok := allowed[u.ID]
				if !ok || slices.Contains(projects, a.Project) {
					continue
				}
				who := "gives it to no project"
				if len(projects) > 0 {
					who = "gives it to " + strings.Join(projects, ", ") + " only"
				}
				ps = append(ps, &diag.Diagnostic{File: rel, Line: u.Line, Column: 1, Severity: diag.Error,
					Message: fmt.Sprintf("RUN mounts secret %q, which project %s may not mount: platform.yaml build.secrets[].projects %s", u.ID, a.Project, who)})
			}
		}
	}
	return ps
}

// readInside reads the slash path rel below root, refusing a path that a
// link leads out of the repository.
func readInside(root, rel string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(filepath.FromSlash(rel))
}
