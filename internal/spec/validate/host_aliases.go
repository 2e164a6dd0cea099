package validate

import (
	"net/netip"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func init() { fieldChecks = append(fieldChecks, checkHostAliases) }

// checkHostAliases checks the lines host_aliases adds to /etc/hosts: each a
// plain IP address (as Kubernetes takes it: no zone, no prefix) with host
// names, and no address or name listed twice (the second line would never
// be read for that name).
func checkHostAliases(doc *load.Document, _ *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	ips := map[netip.Addr]load.Path{}
	names := map[string]load.Path{}
	for i, h := range w.HostAliases {
		ha := at.Child("host_aliases").Child(i)
		ip, err := netip.ParseAddr(h.IP)
		switch {
		case h.IP == "":
			ps.AddKey(doc, ha, "a host alias needs ip, such as 10.1.2.3")
		case err != nil || ip.Zone() != "":
			ps.Add(doc, ha.Child("ip"), "%q is not an IP address, such as 10.1.2.3 or fd00::1 (a host name belongs in hostnames)", h.IP)
		default:
			if prev, ok := ips[ip]; ok {
				ps.Add(doc, ha.Child("ip"), "%s is %s's too: list its host names in one entry", ip, prev)
			}
			ips[ip] = ha.Child("ip")
		}
		for j, n := range h.Hostnames {
			hp := ha.Child("hostnames").Child(j)
			if m := load.CheckHostLength(n); m != "" {
				ps.Add(doc, hp, "%q %s", n, m)
				continue
			}
			if !load.IsSubdomain(n) {
				ps.Add(doc, hp, "%q is not a host name: lowercase letters, digits, '-' and '.' (a DNS-1123 subdomain), such as legacy-db.internal", n)
				continue
			}
			if prev, ok := names[n]; ok {
				ps.Add(doc, hp, "%s is %s's too: /etc/hosts answers with the first line only", n, prev)
			}
			names[n] = hp
		}
	}
}
