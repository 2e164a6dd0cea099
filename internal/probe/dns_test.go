package probe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// dnsServer is an authoritative DNS server on loopback UDP answering A and
// AAAA questions from a fixed table: what an attacker's own zone answers.
type dnsServer struct {
	conn    net.PacketConn
	answers map[string][]netip.Addr // by lower-case name with the final dot
}

func newDNSServer(t *testing.T, answers map[string][]netip.Addr) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn, answers: answers}
	t.Cleanup(func() { _ = conn.Close() })
	go s.serve()
	return s
}

// resolver returns a Go resolver that asks only this server.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp, err := s.answer(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(resp, from)
		}
	}
}

// answer builds the response to one query (RFC 1035 section 4).
func (s *dnsServer) answer(q []byte) ([]byte, error) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil, errors.New("not a query of one question")
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil, errors.New("truncated name")
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil, errors.New("bad label")
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil, errors.New("truncated question")
	}
	qtype := binary.BigEndian.Uint16(q[i:])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, ".")) + "."
	var rrs [][]byte
	for _, a := range s.answers[name] {
		typ, data := uint16(1), a.AsSlice() // A
		if a.Is6() && !a.Is4In6() {
			typ = 28 // AAAA
		}
		if typ != qtype {
			continue
		}
		rr := []byte{0xc0, 12} // the question's name
		rr = binary.BigEndian.AppendUint16(rr, typ)
		rr = binary.BigEndian.AppendUint16(rr, 1) // IN
		rr = binary.BigEndian.AppendUint32(rr, 60)
		rr = binary.BigEndian.AppendUint16(rr, uint16(len(data)))
		rrs = append(rrs, append(rr, data...))
	}
	resp := append([]byte(nil), q[:2]...)                        // id
	resp = append(resp, 0x84|q[2]&0x01, 0x80)                    // response, authoritative, RD echoed, RA
	resp = binary.BigEndian.AppendUint16(resp, 1)                // questions
	resp = binary.BigEndian.AppendUint16(resp, uint16(len(rrs))) // answers
	resp = append(resp, 0, 0, 0, 0)                              // authority, additional
	resp = append(resp, question...)
	for _, rr := range rrs {
		resp = append(resp, rr...)
	}
	return resp, nil
}

// TestRequestRefusesResolvedAddresses is the attacker's Ingress host: a
// public-looking name in the attacker's zone that resolves to the cloud's
// metadata address, or to a NAT64, 6to4 or IPv4-mapped form of it. The
// probe resolves it itself, and the dialer's check refuses the address it
// would connect to, before connecting. A name the same zone resolves to
// the loopback test server shows the resolver is the one asked.
func TestRequestRefusesResolvedAddresses(t *testing.T) {
	t.Parallel()
	var served atomicCount
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.add()
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	ips := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	dns := newDNSServer(t, map[string][]netip.Addr{
		"metadata.attacker.test.":  ips("169.254.169.254"),
		"nat64.attacker.test.":     ips("64:ff9b::a9fe:a9fe"),
		"sixtofour.attacker.test.": ips("2002:a9fe:a9fe::1"),
		"alibaba.attacker.test.":   ips("100.100.100.200"),
		"both.attacker.test.":      ips("198.18.0.1", "64:ff9b::7f00:1"),
		"loopback.attacker.test.":  ips("127.0.0.1"),
	})
	for _, host := range []string{"metadata", "nat64", "sixtofour", "alibaba", "both", "loopback"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			p := &Prober{Resolver: dns.resolver(), RequestTimeout: 5 * time.Second}
			ep := p.Request(t.Context(), IngressTarget{Host: host + ".attacker.test:" + port, Path: "/latest/meta-data/"})
			if ep.State != StateFailed || ep.Error != ErrPrivateAddress.Error() {
				t.Errorf("endpoint = %+v, want refused with %q", ep, ErrPrivateAddress)
			}
		})
	}
	t.Run("allowed to loopback", func(t *testing.T) {
		t.Parallel()
		p := &Prober{Resolver: dns.resolver(), AllowPrivate: true}
		ep := p.Request(t.Context(), IngressTarget{Host: "loopback.attacker.test:" + port, Path: "/"})
		if ep.State != StatePassed {
			t.Errorf("with AllowPrivate: %+v", ep)
		}
	})
	t.Cleanup(func() {
		if n := served.get(); n != 1 {
			t.Errorf("the loopback server answered %d requests, want 1 (the allowed one)", n)
		}
	})
}
