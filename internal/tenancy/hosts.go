package tenancy

import (
	"fmt"
	"slices"
	"strings"
)

// Hosts is a registry of Ingress hosts and the apps that claim them. A
// wildcard host (*.example.com) claims every name under example.com, at
// any depth: two apps overlap when one's claim equals or covers the
// other's. The zero value is empty and ready to use.
type Hosts struct {
	exact map[string]string // host → owner
	wild  map[string]string // the domain of *.domain → owner
}

// normal lower-cases a host and drops a final dot.
func normal(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// Claim records that owner claims host; an earlier claim of the same host
// is kept.
func (h *Hosts) Claim(host, owner string) {
	host = normal(host)
	if h.exact == nil {
		h.exact, h.wild = map[string]string{}, map[string]string{}
	}
	if d, ok := strings.CutPrefix(host, "*."); ok {
		if _, dup := h.wild[d]; !dup {
			h.wild[d] = owner
		}
		return
	}
	if _, dup := h.exact[host]; !dup {
		h.exact[host] = owner
	}
}

// Overlap returns another owner's claim that overlaps host (a claim equal
// to it, a wildcard above it, or, for a wildcard, a claim under it), as
// the claim and its owner; "" when none does. Of several, it returns the
// first by host.
func (h *Hosts) Overlap(host, owner string) (claim, other string) {
	host = normal(host)
	d, wild := strings.CutPrefix(host, "*.")
	if !wild {
		if o, ok := h.exact[host]; ok && o != owner {
			return host, o
		}
		d = host
	} else if o, ok := h.wild[d]; ok && o != owner {
		return host, o
	}
	// Wildcards above.
	for rest := d; ; {
		_, parent, ok := strings.Cut(rest, ".")
		if !ok {
			break
		}
		if o, ok := h.wild[parent]; ok && o != owner {
			return "*." + parent, o
		}
		rest = parent
	}
	if !wild {
		return "", ""
	}
	// Claims under a wildcard: rare, so a scan.
	var found []string
	for x, o := range h.exact {
		if o != owner && strings.HasSuffix(x, "."+d) {
			found = append(found, x+"\x00"+o)
		}
	}
	for x, o := range h.wild {
		if o != owner && strings.HasSuffix(x, "."+d) {
			found = append(found, "*."+x+"\x00"+o)
		}
	}
	if len(found) == 0 {
		return "", ""
	}
	claim, other, _ = strings.Cut(slices.Min(found), "\x00")
	return claim, other
}

// Owns reports whether owner claims host (or a wildcard above it) and no
// other owner's claim overlaps it; otherwise other is an owner whose claim
// overlaps it ("" for none).
func (h *Hosts) Owns(host, owner string) (own bool, other string) {
	if _, o := h.Overlap(host, owner); o != "" {
		return false, o
	}
	n := normal(host)
	if h.exact[n] == owner {
		return true, ""
	}
	d, wild := strings.CutPrefix(n, "*.")
	if wild && h.wild[d] == owner {
		return true, ""
	}
	for rest := d; ; {
		_, parent, ok := strings.Cut(rest, ".")
		if !ok {
			return false, ""
		}
		if h.wild[parent] == owner {
			return true, ""
		}
		rest = parent
	}
}

// ingressHosts reports the hosts of an Ingress (rules and TLS) that the
// app does not own.
func ingressHosts(o Object, t Tenant) []Problem {
	id := IDOf(o)
	if id.Group != "networking.k8s.io" || id.Kind != "Ingress" {
		return nil
	}
	sp, _ := o["spec"].(map[string]any)
	var out []Problem
	check := func(host, field string) {
		if host == "" {
			return
		}
		own, other := false, ""
		if t.Hosts != nil {
			own, other = t.Hosts(host)
		}
		if own {
			return
		}
		msg := fmt.Sprintf("host %q is not one app %s claims", host, t.App.Name)
		if other != "" {
			msg = fmt.Sprintf("host %q belongs to %s", host, other)
		}
		out = append(out, Problem{Object: label(o), Path: field,
			Message: msg + "; a patch may not change an Ingress's host: set ingress.host in the spec, where every app's hosts are checked against each other"})
	}
	rules, _ := sp["rules"].([]any)
	for i, r := range rules {
		m, _ := r.(map[string]any)
		h, _ := m["host"].(string)
		check(h, fmt.Sprintf("spec.rules[%d].host", i))
	}
	tls, _ := sp["tls"].([]any)
	for i, t := range tls {
		m, _ := t.(map[string]any)
		hosts, _ := m["hosts"].([]any)
		for j, h := range hosts {
			s, _ := h.(string)
			check(s, fmt.Sprintf("spec.tls[%d].hosts[%d]", i, j))
		}
	}
	return out
}
