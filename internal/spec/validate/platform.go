package validate

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func checkPlatform(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	seen := map[string]bool{}
	for i, c := range p.Clusters {
		at := load.Path{"clusters", i, "name"}
		if c.Name == "" {
			continue
		}
		if m := load.CheckNamespace(c.Name); m != "" {
			ps.Add(doc, at, "%s", m)
		}
		if seen[c.Name] {
			ps.Add(doc, at, "cluster %q is declared twice", c.Name)
		}
		seen[c.Name] = true
		if c.Path != "" && (path.IsAbs(c.Path) || escapes(c.Path)) {
			ps.Add(doc, load.Path{"clusters", i, "path"}, "must be a relative path inside the fleet")
		}
	}
	checkClusterPaths(p, doc, ps)
	checkChartPolicy(p, doc, ps)
	if p.DefaultCluster != "" && len(p.Clusters) > 0 && !seen[p.DefaultCluster] {
		ps.Add(doc, load.Path{"default_cluster"}, "names no cluster declared under clusters")
	}
	if p.AppsDomain != "" && !load.IsSubdomain(p.AppsDomain) {
		ps.Add(doc, load.Path{"apps_domain"}, "%q is not a valid DNS name", p.AppsDomain)
	} else if m := PublicHostProblem("app." + p.AppsDomain); p.AppsDomain != "" && m != "" {
		ps.Add(doc, load.Path{"apps_domain"}, "default app hosts <app>-<project>.%s would not be public: %s", p.AppsDomain, strings.TrimPrefix(m, "is "))
	}
	if p.Defaults != nil {
		if p.Defaults.Timeout != "" {
			if d, err := time.ParseDuration(p.Defaults.Timeout); err == nil && d <= 0 {
				ps.Add(doc, load.Path{"defaults", "timeout"}, "must be longer than 0")
			}
		}
		checkResources(p.Defaults.Resources, doc, load.Path{"defaults", "resources"}, false, ps)
		checkSecurityContext(doc, p.Defaults.SecurityContext, load.Path{"defaults", "security_context"}, ps)
		checkPodSecurity(doc, p.Defaults.SecurityContext, load.Path{"defaults", "security_context"}, podSecurityProfile(p, ""), ps)
	}
	checkProjectSettings(p, doc, ps)
	if p.Fleet != nil && p.Fleet.Path != "" && (path.IsAbs(p.Fleet.Path) || escapes(p.Fleet.Path)) {
		ps.Add(doc, load.Path{"fleet", "path"}, "must be a relative path")
	}
	if p.Fleet != nil && p.Fleet.Artifacts != nil {
		checkFleetArtifacts(p.Fleet.Artifacts, doc, ps)
	}
	if p.Build != nil {
		if p.Build.Timeout != "" {
			if d, err := time.ParseDuration(p.Build.Timeout); err == nil && d <= 0 {
				ps.Add(doc, load.Path{"build", "timeout"}, "must be longer than 0")
			}
		}
		checkBuildLimits(p.Build.Limits, doc, ps)
		secrets := map[string]bool{}
		for i, s := range p.Build.Secrets {
			if (s.Env == "") == (s.File == "") {
				ps.Add(doc, load.Path{"build", "secrets", i}, "set exactly one of env and file")
			}
			if s.ID != "" && secrets[s.ID] {
				ps.Add(doc, load.Path{"build", "secrets", i, "id"}, "secret %q is declared twice", s.ID)
			}
			secrets[s.ID] = true
		}
	}
	ids := map[string]bool{}
	for i, inst := range p.AddonInstances {
		if ids[inst.ID] {
			ps.Add(doc, load.Path{"addon_instances", i, "id"}, "addon instance %q is declared twice", inst.ID)
		}
		ids[inst.ID] = true
		if inst.Namespace != "" {
			if m := load.CheckNamespace(inst.Namespace); m != "" {
				ps.Add(doc, load.Path{"addon_instances", i, "namespace"}, "%s", m)
			}
		}
	}
}

// checkClusterPaths refuses cluster folders that would mix clusters' apps:
// Flux applies a cluster's folder with everything below it, so no cluster's
// folder may be, or be inside, another's; nor may it hold the apps/ tree.
func checkClusterPaths(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	type claim struct{ name, path string }
	var claims []claim
	for i, c := range p.Clusters {
		if c.Name == "" || (c.Path != "" && (path.IsAbs(c.Path) || escapes(c.Path))) {
			continue
		}
		at := load.Path{"clusters", i, "path"}
		if !doc.Has(at) {
			at = load.Path{"clusters", i, "name"}
		}
		cp := layout.DefaultClusterDir(c.Name)
		if c.Path != "" {
			cp = path.Clean(c.Path)
		}
		switch {
		case cp == ".":
			ps.Add(doc, at, "the fleet's root holds the apps/ tree; give cluster %s a folder of its own, such as clusters/%s", c.Name, c.Name)
			continue
		case cp == "apps" || strings.HasPrefix(cp, "apps/"):
			ps.Add(doc, at, "the folder %q is in the fleet's apps/ tree, which holds the apps' objects; put cluster %s beside it, such as clusters/%s", cp, c.Name, c.Name)
			continue
		}
		for _, o := range claims {
			switch {
			case o.path == cp:
				ps.Add(doc, at, "cluster %s has the same folder %q as cluster %s; each cluster needs its own", c.Name, cp, o.name)
			case strings.HasPrefix(cp, o.path+"/"), strings.HasPrefix(o.path, cp+"/"):
				ps.Add(doc, at, "the folder %q of cluster %s and the folder %q of cluster %s are one inside the other; Flux would apply the inner cluster's apps on the outer one too", cp, c.Name, o.path, o.name)
			default:
				continue
			}
			break
		}
		claims = append(claims, claim{c.Name, cp})
	}
}

// OverlapsSpecs says why a folder of the apps repository (a slash path
// relative to its root) cannot hold the fleet, or "": the fleet's apps/
// tree would mix with the specs.
func OverlapsSpecs(p string) string {
	c := path.Clean(p)
	first, _, _ := strings.Cut(c, "/")
	switch {
	case c == ".":
		return "its root holds the specs in apps/"
	case first == "apps" || first == "templates":
		return fmt.Sprintf("%q is inside %s/, which holds specs", c, first)
	}
	return ""
}

func escapes(p string) bool {
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

// checkFleetArtifacts checks where the components' artifacts go.
func checkFleetArtifacts(a *spec.FleetArtifacts, doc *load.Document, ps *load.Problems) {
	at := load.Path{"fleet", "artifacts"}
	if r := a.Repository; r != "" {
		switch {
		case strings.Contains(r, "://"):
			ps.Add(doc, append(at, "repository"), "%q: give the repository as host/path, without a scheme (the OCIRepositories get oci://)", r)
		case strings.ContainsAny(r, "@") || strings.LastIndexByte(r, ':') > strings.IndexByte(r, '/'):
			ps.Add(doc, append(at, "repository"), "%q: give the repository without a tag or digest; each artifact is pinned by its digest", r)
		default:
			if _, err := name.NewRepository(r, name.StrictValidation); err != nil || !strings.Contains(r, "/") {
				ps.Add(doc, append(at, "repository"), "%q is not an OCI repository such as ghcr.io/myorg/fleet", r)
			}
		}
	}
	if a.Interval != "" {
		if d, err := time.ParseDuration(a.Interval); err == nil && d <= 0 {
			ps.Add(doc, append(at, "interval"), "must be longer than 0")
		}
	}
	for _, f := range []struct{ field, v string }{{"secret_ref", a.SecretRef}, {"cert_secret_ref", a.CertSecretRef}, {"service_account", a.ServiceAccount}} {
		if f.v != "" && !load.IsSubdomain(f.v) {
			ps.Add(doc, append(at, f.field), "%q is not a valid Kubernetes object name", f.v)
		}
	}
}
