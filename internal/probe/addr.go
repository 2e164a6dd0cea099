package probe

import (
	"fmt"
	"net/netip"
)

// addrBlock is one block of the address filter: a row of IANA's IPv4 or
// IPv6 Special-Purpose Address Registry, or a block outside the
// registries the filter refuses as well (multicast, the IPv6 space outside
// global unicast).
type addrBlock struct {
	prefix netip.Prefix
	name   string
	// global is the registry's "Globally Reachable": a probe may connect
	// to an address whose most specific block is global.
	global bool
	// embedded, when set, returns the IPv4 address an address of the block
	// stands for (a translator or tunnel reaches that one): the address is
	// judged as that IPv4 address, whatever global says.
	embedded func(netip.Addr) netip.Addr
}

// lastIPv4 is the IPv4 address in the low 32 bits of an IPv6 address: how
// RFC 6052's /96 NAT64 prefix embeds it.
func lastIPv4(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[12:]))
}

// sixToFourIPv4 is the IPv4 address of a 6to4 router, bits 16 to 47 of its
// 2002::/16 address (RFC 3056).
func sixToFourIPv4(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[2:6]))
}

// addrBlocks is the filter's table. An address is judged by the longest
// prefix that holds it; an IPv6 address that none holds is refused unless
// it is in 2000::/3, the only space IANA allocates global unicast from.
var addrBlocks = func() []addrBlock {
	rows := []struct {
		prefix   string
		name     string
		global   bool
		embedded func(netip.Addr) netip.Addr
	}{
		// IANA IPv4 Special-Purpose Address Registry.
		{"0.0.0.0/8", "\"this network\" (RFC 791)", false, nil},
		{"0.0.0.0/32", "\"this host on this network\" (RFC 1122)", false, nil},
		{"10.0.0.0/8", "private-use (RFC 1918)", false, nil},
		{"100.64.0.0/10", "shared address space, carrier-grade NAT (RFC 6598)", false, nil},
		{"127.0.0.0/8", "loopback (RFC 1122)", false, nil},
		{"169.254.0.0/16", "link-local (RFC 3927)", false, nil},
		{"172.16.0.0/12", "private-use (RFC 1918)", false, nil},
		{"192.0.0.0/24", "IETF protocol assignments (RFC 6890)", false, nil},
		{"192.0.0.0/29", "IPv4 service continuity prefix (RFC 7335)", false, nil},
		{"192.0.0.8/32", "IPv4 dummy address (RFC 7600)", false, nil},
		{"192.0.0.9/32", "Port Control Protocol anycast (RFC 7723)", true, nil},
		{"192.0.0.10/32", "TURN anycast (RFC 8155)", true, nil},
		{"192.0.0.170/32", "NAT64/DNS64 discovery (RFC 8880)", false, nil},
		{"192.0.0.171/32", "NAT64/DNS64 discovery (RFC 8880)", false, nil},
		{"192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)", false, nil},
		{"192.31.196.0/24", "AS112-v4 (RFC 7535)", true, nil},
		{"192.52.193.0/24", "AMT (RFC 7450)", true, nil},
		{"192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)", false, nil},
		{"192.168.0.0/16", "private-use (RFC 1918)", false, nil},
		{"192.175.48.0/24", "direct delegation AS112 service (RFC 7534)", true, nil},
		{"198.18.0.0/15", "benchmarking (RFC 2544)", false, nil},
		{"198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)", false, nil},
		{"203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)", false, nil},
		{"240.0.0.0/4", "reserved (RFC 1112)", false, nil},
		{"255.255.255.255/32", "limited broadcast (RFC 8190)", false, nil},
		// Not in the registry: multicast is no place to open a connection to.
		{"224.0.0.0/4", "multicast (RFC 5771)", false, nil},

		// IANA IPv6 Special-Purpose Address Registry.
		{"::1/128", "loopback (RFC 4291)", false, nil},
		{"::/128", "unspecified (RFC 4291)", false, nil},
		{"::ffff:0:0/96", "IPv4-mapped (RFC 4291)", false, lastIPv4},
		{"64:ff9b::/96", "NAT64 well-known prefix (RFC 6052)", true, lastIPv4},
		{"64:ff9b:1::/48", "local-use NAT64 (RFC 8215)", false, nil},
		{"100::/64", "discard-only (RFC 6666)", false, nil},
		{"100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)", false, nil},
		{"2001::/23", "IETF protocol assignments (RFC 2928)", false, nil},
		{"2001::/32", "Teredo (RFC 4380)", false, nil},
		{"2001:1::1/128", "Port Control Protocol anycast (RFC 7723)", true, nil},
		{"2001:1::2/128", "TURN anycast (RFC 8155)", true, nil},
		{"2001:1::3/128", "DNS-SD service registration protocol anycast (RFC 9665)", true, nil},
		{"2001:2::/48", "benchmarking (RFC 5180)", false, nil},
		{"2001:3::/32", "AMT (RFC 7450)", true, nil},
		{"2001:4:112::/48", "AS112-v6 (RFC 7535)", true, nil},
		{"2001:10::/28", "deprecated ORCHID (RFC 4843)", false, nil},
		{"2001:20::/28", "ORCHIDv2 (RFC 7343)", true, nil},
		{"2001:30::/28", "drone remote ID entity tags (RFC 9374)", true, nil},
		{"2001:db8::/32", "documentation (RFC 3849)", false, nil},
		{"2002::/16", "6to4 (RFC 3056)", false, sixToFourIPv4},
		{"2620:4f:8000::/48", "direct delegation AS112 service (RFC 7534)", true, nil},
		{"3fff::/20", "documentation (RFC 9637)", false, nil},
		{"5f00::/16", "segment routing SIDs (RFC 9602)", false, nil},
		{"fc00::/7", "unique-local (RFC 4193)", false, nil},
		{"fe80::/10", "link-local (RFC 4291)", false, nil},
		// Not in the registry: deprecated forms and scopes that never
		// name a host on the internet.
		{"::/96", "IPv4-compatible, deprecated (RFC 4291)", false, nil},
		{"fec0::/10", "site-local, deprecated (RFC 3879)", false, nil},
		{"ff00::/8", "multicast (RFC 4291)", false, nil},
	}
	out := make([]addrBlock, len(rows))
	for i, r := range rows {
		out[i] = addrBlock{prefix: netip.MustParsePrefix(r.prefix), name: r.name, global: r.global, embedded: r.embedded}
	}
	return out
}()

// globalUnicast is where IANA allocates IPv6 global unicast addresses from.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// AddressRefusal says why a probe must not connect to ip, or "" when it
// may: ip is in a block of IANA's IPv4 or IPv6 Special-Purpose Address
// Registry that is not globally reachable, or multicast, or IPv6 outside
// global unicast. An address that stands for an IPv4 address (IPv4-mapped,
// NAT64's 64:ff9b::/96, 6to4's 2002::/16) is judged as that IPv4 address;
// IPv4-compatible (::a.b.c.d), Teredo and local-use NAT64 addresses are
// refused whatever they embed.
func AddressRefusal(ip netip.Addr) string {
	ip = ip.WithZone("")
	b, ok := blockOf(ip)
	switch {
	case ok && b.embedded != nil:
		v4 := b.embedded(ip)
		if why := AddressRefusal(v4); why != "" {
			return fmt.Sprintf("%s of %s, %s", b.name, v4, why)
		}
		return ""
	case ok && !b.global:
		return b.name
	case ok:
		return ""
	case ip.Is6() && !globalUnicast.Contains(ip):
		return "reserved by the IETF, outside global unicast 2000::/3 (RFC 4291)"
	}
	return ""
}

// blockOf returns the most specific block that holds ip.
func blockOf(ip netip.Addr) (addrBlock, bool) {
	var (
		best  addrBlock
		found bool
	)
	for _, b := range addrBlocks {
		if b.prefix.Contains(ip) && (!found || b.prefix.Bits() > best.prefix.Bits()) {
			best, found = b, true
		}
	}
	return best, found
}
