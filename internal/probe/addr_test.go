package probe

import (
	"net/netip"
	"strings"
	"testing"
)

// registryRow is one row of an IANA Special-Purpose Address Registry as
// IANA publishes it: the block and its "Globally Reachable" column.
type registryRow struct {
	block string
	name  string
	// global is the column: "True", "False" or "N/A".
	global string
	// embeds: an address of the block stands for an IPv4 address and is
	// judged as that one (see AddressRefusal).
	embeds bool
}

// ipv4Registry is IANA's IPv4 Special-Purpose Address Registry
// (iana-ipv4-special-registry, as last updated 2025).
var ipv4Registry = []registryRow{
	{"0.0.0.0/8", "This network", "False", false},
	{"0.0.0.0/32", "This host on this network", "False", false},
	{"10.0.0.0/8", "Private-Use", "False", false},
	{"100.64.0.0/10", "Shared Address Space", "False", false},
	{"127.0.0.0/8", "Loopback", "False", false},
	{"169.254.0.0/16", "Link Local", "False", false},
	{"172.16.0.0/12", "Private-Use", "False", false},
	{"192.0.0.0/24", "IETF Protocol Assignments", "False", false},
	{"192.0.0.0/29", "IPv4 Service Continuity Prefix", "False", false},
	{"192.0.0.8/32", "IPv4 dummy address", "False", false},
	{"192.0.0.9/32", "Port Control Protocol Anycast", "True", false},
	{"192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "True", false},
	{"192.0.0.170/32", "NAT64/DNS64 Discovery", "False", false},
	{"192.0.0.171/32", "NAT64/DNS64 Discovery", "False", false},
	{"192.0.2.0/24", "Documentation (TEST-NET-1)", "False", false},
	{"192.31.196.0/24", "AS112-v4", "True", false},
	{"192.52.193.0/24", "AMT", "True", false},
	{"192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "N/A", false},
	{"192.168.0.0/16", "Private-Use", "False", false},
	{"192.175.48.0/24", "Direct Delegation AS112 Service", "True", false},
	{"198.18.0.0/15", "Benchmarking", "False", false},
	{"198.51.100.0/24", "Documentation (TEST-NET-2)", "False", false},
	{"203.0.113.0/24", "Documentation (TEST-NET-3)", "False", false},
	{"240.0.0.0/4", "Reserved", "False", false},
	{"255.255.255.255/32", "Limited Broadcast", "False", false},
}

// ipv6Registry is IANA's IPv6 Special-Purpose Address Registry
// (iana-ipv6-special-registry, as last updated 2025).
var ipv6Registry = []registryRow{
	{"::1/128", "Loopback Address", "False", false},
	{"::/128", "Unspecified Address", "False", false},
	{"::ffff:0:0/96", "IPv4-mapped Address", "False", true},
	{"64:ff9b::/96", "IPv4-IPv6 Translat.", "True", true},
	{"64:ff9b:1::/48", "IPv4-IPv6 Translat.", "False", false},
	{"100::/64", "Discard-Only Address Block", "False", false},
	{"100:0:0:1::/64", "Dummy IPv6 Prefix", "False", false},
	{"2001::/23", "IETF Protocol Assignments", "False", false},
	{"2001::/32", "TEREDO", "N/A", false},
	{"2001:1::1/128", "Port Control Protocol Anycast", "True", false},
	{"2001:1::2/128", "Traversal Using Relays around NAT Anycast", "True", false},
	{"2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "True", false},
	{"2001:2::/48", "Benchmarking", "False", false},
	{"2001:3::/32", "AMT", "True", false},
	{"2001:4:112::/48", "AS112-v6", "True", false},
	{"2001:10::/28", "Deprecated (previously ORCHID)", "N/A", false},
	{"2001:20::/28", "ORCHIDv2", "True", false},
	{"2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "True", false},
	{"2001:db8::/32", "Documentation", "False", false},
	{"2002::/16", "6to4", "N/A", true},
	{"2620:4f:8000::/48", "Direct Delegation AS112 Service", "True", false},
	{"3fff::/20", "Documentation", "False", false},
	{"5f00::/16", "Segment Routing (SRv6) SIDs", "False", false},
	{"fc00::/7", "Unique-Local", "False", false},
	{"fe80::/10", "Link-Local Unicast", "False", false},
}

// lastOf is the last address of a prefix.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestAddressRefusalRegistries walks both registries row by row: the
// first and last address of a block are refused exactly when the block is
// not globally reachable ("N/A" counts as not), unless a more specific
// row says otherwise; an address that embeds an IPv4 address is judged as
// that one.
func TestAddressRefusalRegistries(t *testing.T) {
	t.Parallel()
	rows := append(append([]registryRow(nil), ipv4Registry...), ipv6Registry...)
	// The verdict of the most specific row holding a (the one the
	// registry's flags give for it).
	want := func(a netip.Addr) (registryRow, bool) {
		best, bits := registryRow{}, -1
		for _, r := range rows {
			p := netip.MustParsePrefix(r.block)
			if p.Contains(a) && p.Bits() > bits {
				best, bits = r, p.Bits()
			}
		}
		return best, bits >= 0
	}
	for _, r := range rows {
		t.Run(r.block, func(t *testing.T) {
			t.Parallel()
			p := netip.MustParsePrefix(r.block)
			for _, a := range []netip.Addr{p.Masked().Addr(), lastOf(p)} {
				row, _ := want(a)
				refuse := row.global != "True"
				if row.embeds {
					// First and last embed 0.0.0.0 and 255.255.255.255.
					refuse = true
				}
				if got := AddressRefusal(a) != ""; got != refuse {
					t.Errorf("AddressRefusal(%s) refused=%v (%q), want %v (row %s %q, globally reachable %s)",
						a, got, AddressRefusal(a), refuse, row.block, row.name, row.global)
				}
			}
		})
	}
	t.Run("every IPv4 row through every IPv6 form", func(t *testing.T) {
		t.Parallel()
		for _, r := range ipv4Registry {
			p := netip.MustParsePrefix(r.block)
			for _, v4 := range []netip.Addr{p.Masked().Addr(), lastOf(p)} {
				row, _ := want(v4)
				refuse := row.global != "True"
				b := v4.As4()
				forms := []struct {
					form   string
					addr   netip.Addr
					refuse bool
				}{
					{"mapped", netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}), refuse},
					{"NAT64", netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}), refuse},
					{"6to4", netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3], 15: 1}), refuse},
					// IPv4-compatible addresses are deprecated: all refused.
					{"compatible", netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]}), true},
					// Local-use NAT64 is not globally reachable: all refused.
					{"local-use NAT64", netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 5: 0x01, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}), true},
				}
				for _, f := range forms {
					if got := AddressRefusal(f.addr) != ""; got != f.refuse {
						t.Errorf("%s %s (of %s, row %s) refused=%v, want %v", f.form, f.addr, v4, r.block, got, f.refuse)
					}
				}
			}
		}
	})
}

// TestAddressRefusalAttacks are the addresses an Ingress host of a hostile
// app resolves to, to make the probe request the cloud's metadata service
// or another internal address, and public addresses that must still pass.
func TestAddressRefusalAttacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		refused string // part of the reason; "" for allowed
	}{
		// Each a way around a filter of loopback, link-local and private
		// addresses alone.
		{"64:ff9b::a9fe:a9fe", "NAT64 well-known prefix (RFC 6052) of 169.254.169.254, link-local"},
		{"2002:a9fe:a9fe::1", "6to4 (RFC 3056) of 169.254.169.254, link-local"},
		{"::a9fe:a9fe", "IPv4-compatible"},
		{"100.100.100.200", "shared address space"},
		{"198.18.0.1", "benchmarking"},
		// More of the same kind.
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:a9fe:a9fe", "link-local"},
		{"64:ff9b::7f00:1", "loopback"},
		{"64:ff9b::10.0.0.1", "private-use"},
		{"64:ff9b::100.100.100.200", "shared address space"},
		{"64:ff9b:1::a9fe:a9fe", "local-use NAT64"},
		{"2002:7f00:1::", "loopback"},
		{"2002:0a00:0001::1", "private-use"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fe80::1%eth0", "link-local"},
		{"fd00:ec2::254", "unique-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"224.0.0.1", "multicast"},
		{"100::1", "discard-only"},
		{"4000::1", "outside global unicast"},
		{"0.1.2.3", "this network"},
		{"255.255.255.255", "limited broadcast"},
		{"192.0.0.8", "dummy"},
		// Public addresses, and public ones behind NAT64 and 6to4.
		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"2606:4700::6810:84e5", ""},
		{"64:ff9b::8.8.8.8", ""},
		{"::ffff:8.8.8.8", ""},
		{"2002:0808:0808::1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"198.20.0.0", ""},
		{"2001:4860:4860::8888", ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			got := AddressRefusal(netip.MustParseAddr(tc.addr))
			switch {
			case tc.refused == "" && got != "":
				t.Errorf("AddressRefusal(%s) = %q, want allowed", tc.addr, got)
			case tc.refused != "" && !strings.Contains(got, tc.refused):
				t.Errorf("AddressRefusal(%s) = %q, want refused with %q", tc.addr, got, tc.refused)
			}
			// At connect time, through the dialer's check.
			err := checkPublic(netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String())
			if (err != nil) != (tc.refused != "") {
				t.Errorf("checkPublic(%s) = %v", tc.addr, err)
			}
		})
	}
}

// BenchmarkAddressRefusal measures the filter, which runs once per
// connection a probe opens.
func BenchmarkAddressRefusal(b *testing.B) {
	for _, a := range []string{"93.184.215.14", "2606:4700::6810:84e5", "64:ff9b::a9fe:a9fe"} {
		ip := netip.MustParseAddr(a)
		b.Run(a, func(b *testing.B) {
			for b.Loop() {
				_ = AddressRefusal(ip)
			}
		})
	}
}

// FuzzAddressRefusal checks, for any address, that the IPv4-mapped and
// NAT64 forms of an IPv4 address get its verdict, and that its IPv4-
// compatible form is refused.
func FuzzAddressRefusal(f *testing.F) {
	for _, s := range []string{"169.254.169.254", "8.8.8.8", "100.100.100.200", "192.0.0.9", "0.0.0.0", "255.255.255.255"} {
		a := netip.MustParseAddr(s).As4()
		f.Add(a[:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b))
		refused := AddressRefusal(v4) != ""
		forms := map[string]netip.Addr{
			"mapped": netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			"NAT64":  netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			"6to4":   netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3], 15: 1}),
		}
		for name, a := range forms {
			if got := AddressRefusal(a) != ""; got != refused {
				t.Errorf("%s %s refused=%v, %s refused=%v", name, a, got, v4, refused)
			}
		}
		if compat := netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]}); AddressRefusal(compat) == "" {
			t.Errorf("IPv4-compatible %s allowed", compat)
		}
	})
}
