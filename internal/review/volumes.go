package review

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// splitClaims says where two StatefulSets of one app have volume claims
// of the same name: each gets claims of its own, so what one writes the
// other never sees, which a spec that names the same volume on two
// components rarely means. Only what the head adds to the base is said.
func splitClaims(base, head map[string]object) []string {
	was, now := claimOwners(base), claimOwners(head)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		owners := now[k]
		if len(owners) < 2 || slices.Equal(owners, was[k]) {
			continue
		}
		app, claim, _ := strings.Cut(k, "\x00")
		out = append(out, fmt.Sprintf("app %s: StatefulSets %s each have their own claims named %s, so none sees the files the others write; one volume that components share is declared in the app's volumes and mounted with shared: %s",
			code(app), codes(owners), code(claim), md(claim)))
	}
	return out
}

// claimOwners maps app and claim template name to the StatefulSets of the
// app that have it, sorted.
func claimOwners(objs map[string]object) map[string][]string {
	out := map[string][]string{}
	for _, o := range objs {
		if o.Kind != "StatefulSet" {
			continue
		}
		app := o.AppKey()
		for name := range claimTemplates(o) {
			k := app + "\x00" + name
			out[k] = append(out[k], o.Name)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}
