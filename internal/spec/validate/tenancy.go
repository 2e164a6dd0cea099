package validate

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/tenancy"
)

// The tenancy checks of specs (see docs/tenancy.md): the Ingress hosts of
// a cluster's apps may not overlap, a wildcard host claiming every name
// under it; addon charts come from https:// or oci:// repositories, and
// only from platform.yaml's policy.chart_repositories when it lists them.

// hostClaim is one Ingress host an app's component claims.
type hostClaim struct {
	a    *load.LoadedApp
	i    int // the component
	host string
}

// claims returns the Ingress hosts of the apps' enabled ingresses, in the
// apps' order.
func claims(apps []*load.LoadedApp, plat *spec.Platform) []hostClaim {
	var out []hostClaim
	for _, a := range apps {
		for i := range a.Spec.Components {
			c := &a.Spec.Components[i]
			if c.WorkloadSpec == nil || c.WorkloadSpec.Ingress == nil || !c.WorkloadSpec.Ingress.Enabled {
				continue
			}
			out = append(out, hostClaim{a, i, load.IngressHost(a, c, plat)})
		}
	}
	return out
}

// HostRegistry returns, for each cluster of r, the Ingress hosts its apps claim,
// each owned by its app's spec file (LoadedApp.Doc.File).
func HostRegistry(r *load.Repo) map[string]*tenancy.Hosts {
	out := map[string]*tenancy.Hosts{}
	for _, c := range claims(r.Apps, &r.Platform) {
		h := out[c.a.Cluster]
		if h == nil {
			h = &tenancy.Hosts{}
			out[c.a.Cluster] = h
		}
		h.Claim(c.host, c.a.Doc.File)
	}
	return out
}

// checkHosts refuses an Ingress host that is too long, one that another
// component claims (of any app), and one that overlaps another app's
// claim through a wildcard, which claims every name under it. The later
// claim is refused, naming the earlier one's file and component; of a
// wildcard and a host under it, the wildcard. Without wildcards it costs
// what one map of the hosts costs.
func checkHosts(apps []*load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	all := claims(apps, plat)
	at := func(c hostClaim) load.Path {
		return load.Path{"components", c.i, "workload_spec", "ingress"}.Child(hostField(c.a.Spec.Components[c.i].WorkloadSpec.Ingress))
	}
	who := func(c hostClaim) string { return fmt.Sprintf("%s (%s)", c.a.Doc.File, c.a.Spec.Components[c.i].Name) }
	seen := make(map[string]int, len(all)) // cluster/host → the claim
	var wild []int
	for k, c := range all {
		if m := load.CheckHostLength(c.host); m != "" {
			p := load.Path{"components", c.i, "workload_spec", "ingress"}
			if c.a.Spec.Components[c.i].WorkloadSpec.Ingress.Host == "" {
				ps.Add(c.a.Doc, p, "the default host %q %s; set ingress.host, or shorten the app or project name", c.host, m)
			} else {
				ps.Add(c.a.Doc, p.Child("host"), "host %q %s", c.host, m)
			}
			continue
		}
		key := c.a.Cluster + "/" + c.host
		if prev, dup := seen[key]; dup {
			if p := all[prev]; p.a != c.a {
				ps.Add(c.a.Doc, at(c), "host %q of app %s is already claimed by app %s (%s, component %s); a host belongs to one app: serve its paths from that app's ingress, whose routes send each path to one of its components", c.host, c.a.Spec.Name, p.a.Spec.Name, p.a.Doc.File, p.a.Spec.Components[p.i].Name)
			}
			// Within one app, checkRoutes compares the paths.
			continue
		}
		seen[key] = k
		if strings.HasPrefix(c.host, "*.") {
			wild = append(wild, k)
		}
	}
	if len(wild) == 0 {
		return
	}
	// Wildcards last, against every other claim of their cluster.
	reg := map[string]*tenancy.Hosts{}
	isWild := map[int]bool{}
	for _, k := range wild {
		isWild[k] = true
	}
	for key, k := range seen {
		if isWild[k] {
			continue
		}
		cluster, _, _ := strings.Cut(key, "/")
		if reg[cluster] == nil {
			reg[cluster] = &tenancy.Hosts{}
		}
		reg[cluster].Claim(all[k].host, all[k].a.Doc.File)
	}
	for _, k := range wild {
		c := all[k]
		h := reg[c.a.Cluster]
		if h == nil {
			h = &tenancy.Hosts{}
			reg[c.a.Cluster] = h
		}
		if cl, other := h.Overlap(c.host, c.a.Doc.File); other != "" {
			by := other
			if j, ok := seen[c.a.Cluster+"/"+cl]; ok {
				by = who(all[j])
			}
			ps.Add(c.a.Doc, at(c), "the wildcard host %q claims every name under it, and host %q is claimed by %s; two apps may not share a host", c.host, cl, by)
			continue
		}
		h.Claim(c.host, c.a.Doc.File)
	}
}

// checkChartRepository refuses an addon chart from a plain http://
// repository, or from outside policy.chart_repositories when it is set.
func checkChartRepository(doc *load.Document, repo string, at load.Path, plat *spec.Platform, ps *load.Problems) {
	if repo == "" {
		return
	}
	var allowed []string
	if plat != nil && plat.Policy != nil {
		allowed = plat.Policy.ChartRepositories
	}
	if m := tenancy.ChartRepositoryProblem(repo, allowed, len(allowed) > 0); m != "" {
		ps.Add(doc, at, "%s", m)
	}
}

// checkChartPolicy checks platform.yaml's policy.chart_repositories.
func checkChartPolicy(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	if p.Policy == nil {
		return
	}
	for i, r := range p.Policy.ChartRepositories {
		if m := tenancy.PrefixProblem(r); m != "" {
			ps.Add(doc, load.Path{"policy", "chart_repositories", i}, "%s", m)
		}
	}
}
