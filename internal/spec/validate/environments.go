package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkEnvironments checks platform.yaml's environments: names unique,
// each on a declared cluster of its own, promote_from naming an earlier
// environment.
func checkEnvironments(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	declared := len(p.Clusters) > 0
	seen := map[string]int{}
	byCluster := map[string]int{}
	for i, e := range p.Environments {
		at := load.Path{"environments", i}
		if e.Name != "" {
			if m := load.CheckNamespace(e.Name); m != "" {
				ps.Add(doc, at.Child("name"), "%s", m)
			} else if e.Name == spec.PreviewEnvironment {
				ps.Add(doc, at.Child("name"), "%q is the name an app's environments block gives previews (platform.yaml previews); call the environment something else", e.Name)
			} else if n, ok := layout.PreviewOf(e.Name); ok {
				ps.Add(doc, at.Child("name"), "%q is the name of pull request #%d's preview (platform.yaml previews): a platform environment must not look like one; call it something else", e.Name, n)
			} else if j, dup := seen[e.Name]; dup {
				ps.Add(doc, at.Child("name"), "environment %q is declared twice (also environments[%d])", e.Name, j)
			} else {
				seen[e.Name] = i
			}
		}
		if e.Cluster != "" {
			switch j, dup := byCluster[e.Cluster]; {
			case declared && p.ClusterByName(e.Cluster) == nil:
				msg := fmt.Sprintf("unknown cluster %q; clusters declares %s", e.Cluster, strings.Join(p.ClusterNames(), ", "))
				if sug := hint.Suggest(e.Cluster, p.ClusterNames()); sug != "" {
					msg += fmt.Sprintf("; did you mean %q?", sug)
				}
				ps.Add(doc, at.Child("cluster"), "%s", msg)
			case dup:
				ps.Add(doc, at.Child("cluster"), "environments %s and %s both deploy to cluster %q: the fleet keeps an app's files and its namespace by cluster, project and name, so one cluster holds one environment; give each environment a cluster (or a virtual cluster) of its own",
					p.Environments[j].Name, e.Name, e.Cluster)
			default:
				byCluster[e.Cluster] = i
			}
		}
		if e.PromoteFrom != "" {
			j, ok := seen[e.PromoteFrom]
			switch {
			case e.PromoteFrom == e.Name:
				ps.Add(doc, at.Child("promote_from"), "an environment cannot be promoted from itself")
			case !ok || j >= i:
				msg := fmt.Sprintf("%q is not an earlier environment: promote_from names one listed before %s", e.PromoteFrom, e.Name)
				if earlier := p.EnvironmentNames()[:i]; len(earlier) > 0 {
					msg += " (" + strings.Join(earlier, ", ") + ")"
					if sug := hint.Suggest(e.PromoteFrom, earlier); sug != "" {
						msg += fmt.Sprintf("; did you mean %q?", sug)
					}
				}
				ps.Add(doc, at.Child("promote_from"), "%s", msg)
			}
		}
		if e.AutoPromote && e.PromoteFrom == "" {
			ps.Add(doc, at.Child("auto_promote"), "auto_promote needs promote_from: the environment it promotes from")
		}
	}
	if p.Previews != nil {
		checkPreviews(p, doc, ps)
	}
	if len(p.Environments) > 0 && p.DefaultCluster != "" && p.EnvironmentOfCluster(p.DefaultCluster) == nil && doc.Has(load.Path{"default_cluster"}) {
		ps.Add(doc, load.Path{"default_cluster"}, "with environments, apps deploy to the environments' clusters; default_cluster %q is none of them", p.DefaultCluster)
	}
}

// checkPreviews checks platform.yaml previews: a cluster of the platform,
// a DNS name whose preview hosts are public, a ttl of at least an hour.
// The schema checks max and that cluster and apps_domain are there.
func checkPreviews(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	pv := p.Previews
	at := load.Path{"previews"}
	if c := pv.Cluster; c != "" {
		var known []string
		switch {
		case len(p.Clusters) > 0:
			known = p.ClusterNames()
		case len(p.Environments) > 0:
			for _, e := range p.Environments {
				if e.Cluster != "" && !slices.Contains(known, e.Cluster) {
					known = append(known, e.Cluster)
				}
			}
		default:
			known = []string{cmp.Or(p.DefaultCluster, load.DefaultCluster)}
		}
		if !slices.Contains(known, c) {
			msg := fmt.Sprintf("unknown cluster %q; the platform's clusters are %s", c, strings.Join(known, ", "))
			if sug := hint.Suggest(c, known); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			ps.Add(doc, at.Child("cluster"), "%s", msg)
		}
	}
	if d := pv.AppsDomain; d != "" {
		if !load.IsSubdomain(d) {
			ps.Add(doc, at.Child("apps_domain"), "%q is not a valid DNS name", d)
		} else if m := PublicHostProblem("app-shop-pr1." + d); m != "" {
			ps.Add(doc, at.Child("apps_domain"), "preview hosts <app>-<project>-pr<N>.%s would not be public: %s", d, strings.TrimPrefix(m, "is "))
		}
	}
	if pv.TTL != "" {
		if d, err := time.ParseDuration(pv.TTL); err == nil && d < spec.MinPreviewTTL {
			ps.Add(doc, at.Child("ttl"), "%s is shorter than 1h: a preview must outlive its review", pv.TTL)
		}
	}
}
