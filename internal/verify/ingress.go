package verify

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// CheckIngressHost is an Ingress host that is not a public DNS name.
const CheckIngressHost Check = "ingress-host"

// checkIngressHosts refuses Ingress hosts that are IP addresses, single
// labels or cluster-internal names (the rule render validate applies to
// the specs), in an Ingress or the items of a List.
func (r *run) checkIngressHosts(o *object) []Finding {
	gvk := gvkOf(o.root)
	if strings.HasSuffix(gvk.Kind, "List") && o.root.Get("items") != nil && o.root.Get("items").Kind == yamlx.SeqNode {
		var out []Finding
		for _, item := range o.root.Get("items").Kids {
			if item.Kind == yamlx.MapNode {
				out = append(out, r.checkIngressHosts(newObject(item, item, o.file, o.ks, o.cluster))...)
			}
		}
		return out
	}
	if gvk.Group != "networking.k8s.io" || gvk.Kind != "Ingress" {
		return nil
	}
	rules := o.root.Get("spec").Get("rules")
	if rules == nil || rules.Kind != yamlx.SeqNode {
		return nil
	}
	var out []Finding
	for i, rule := range rules.Kids {
		host := rule.Get("host").Text()
		if host == "" {
			continue
		}
		if m := validate.PublicHostProblem(host); m != "" {
			out = append(out, r.finding(o, CheckIngressHost, SeverityError, fmt.Sprintf("spec.rules[%d].host", i), fmt.Sprintf("host %q %s", host, m)))
		}
	}
	return out
}
