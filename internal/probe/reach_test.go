package probe

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"
)

// fixedClock is a Clock stopped at one instant.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCA(t *testing.T) testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleetwright test CA"},
		NotBefore: now.Add(-365 * 24 * time.Hour), NotAfter: now.Add(3650 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCA{cert: cert, key: key, pool: pool}
}

// leaf issues a server certificate; a nil CA makes it self-signed.
func leaf(t *testing.T, ca *testCA, host string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serveTLS starts a real TLS listener on loopback with cert.
func serveTLS(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	// Handshakes the client refuses are expected here.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

// dialTo sends every connection to addr, whatever host was asked for.
func dialTo(addr string) DialFunc {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func TestRequestTLS(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	const host = "api.shop.example.test"
	day := 24 * time.Hour
	tests := []struct {
		name     string
		cert     tls.Certificate
		path     string
		state    State
		errPart  string
		days     int
		verified bool
		warning  string
	}{
		{"valid", leaf(t, &ca, host, now.Add(-day), now.Add(90*day)), "/", StatePassed, "", 90, true, ""},
		{"soon to expire", leaf(t, &ca, host, now.Add(-80*day), now.Add(5*day+time.Hour)), "/", StatePassed, "", 5, true, "certificate expires in 5 days"},
		{"expired", leaf(t, &ca, host, now.Add(-90*day), now.Add(-2*day)), "/", StateFailed, "certificate expired or not yet valid", -2, false, ""},
		{"wrong host", leaf(t, &ca, "other.example.test", now.Add(-day), now.Add(90*day)), "/", StateFailed, "certificate is not valid for the host", 90, false, ""},
		{"self-signed", leaf(t, nil, host, now.Add(-day), now.Add(90*day)), "/", StateFailed, "unknown authority", 90, false, ""},
		{"server error", leaf(t, &ca, host, now.Add(-day), now.Add(90*day)), "/down", StateFailed, "HTTP 503", 90, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := serveTLS(t, tc.cert)
			p := &Prober{AllowPrivate: true, Dial: dialTo(ts.Listener.Addr().String()), RootCAs: ca.pool, Clock: fixedClock{now}}
			ep := p.Request(t.Context(), IngressTarget{Host: host, Path: tc.path, TLS: true})
			if ep.State != tc.state || !strings.Contains(ep.Error, tc.errPart) {
				t.Fatalf("endpoint = %+v, want state %s with error containing %q", ep, tc.state, tc.errPart)
			}
			if ep.URL != "https://"+host+tc.path {
				t.Errorf("URL = %q", ep.URL)
			}
			if ep.TLS == nil {
				t.Fatal("no TLS info recorded")
			}
			if ep.TLS.DaysToExpiry != tc.days || ep.TLS.Verified != tc.verified || !strings.HasPrefix(ep.TLS.Warning, tc.warning) ||
				(tc.warning == "" && ep.TLS.Warning != "") {
				t.Errorf("TLS = %+v, want days %d verified %v warning %q", ep.TLS, tc.days, tc.verified, tc.warning)
			}
			if tc.state == StatePassed && (ep.StatusCode != 200 || ep.Latency <= 0) {
				t.Errorf("status %d latency %v", ep.StatusCode, ep.Latency)
			}
		})
	}
}

func TestRequestPlainHTTP(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "plain.example.test" {
			t.Errorf("Host = %q", r.Host)
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer ts.Close()
	p := &Prober{AllowPrivate: true, Dial: dialTo(ts.Listener.Addr().String())}
	ep := p.Request(t.Context(), IngressTarget{Host: "plain.example.test", Path: "/", TLS: false})
	if ep.State != StatePassed || ep.StatusCode != 404 || ep.TLS != nil || ep.URL != "http://plain.example.test/" {
		t.Errorf("endpoint = %+v", ep)
	}
}

func TestRequestUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &Prober{AllowPrivate: true, Dial: dialTo(addr), RequestTimeout: 2 * time.Second}
	ep := p.Request(t.Context(), IngressTarget{Host: "gone.example.test", Path: "/", TLS: true})
	if ep.State != StateFailed || !strings.Contains(ep.Error, "connection refused") {
		t.Errorf("endpoint = %+v", ep)
	}
}

func TestIngressTargets(t *testing.T) {
	t.Parallel()
	rule := func(host, path string) networkingv1.IngressRule {
		r := networkingv1.IngressRule{Host: host}
		if path != "" {
			r.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: path}}}
		}
		return r
	}
	ings := []networkingv1.Ingress{
		{ObjectMeta: metav1.ObjectMeta{Name: "api-web"}, Spec: networkingv1.IngressSpec{
			TLS:   []networkingv1.IngressTLS{{Hosts: []string{"b.example.test"}, SecretName: "tls"}},
			Rules: []networkingv1.IngressRule{rule("b.example.test", "/app"), rule("a.example.test", ""), rule("", "/"), rule("*.wild.test", "/")},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api-admin"}, Spec: networkingv1.IngressSpec{
			TLS:   []networkingv1.IngressTLS{{SecretName: "all"}},
			Rules: []networkingv1.IngressRule{rule("a.example.test", "/")},
		}},
	}
	want := []IngressTarget{
		{Host: "a.example.test", Path: "/", TLS: true},
		{Host: "b.example.test", Path: "/app", TLS: true},
	}
	if diff := cmp.Diff(want, IngressTargets(ings)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

// TestRequestRefusesPrivateAddresses checks that, unless AllowPrivate, a
// probe never connects to a loopback, link-local, private or unspecified
// address: not by IP, not by a name resolving to one (checked at dial time,
// after resolution), not through a custom Dial.
func TestRequestRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var served atomicCount
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.add()
		fmt.Fprint(w, "internal admin page")
	}))
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	tests := []struct {
		name string
		p    *Prober
		host string
	}{
		{"loopback IP", &Prober{}, "127.0.0.1:" + port},
		{"name resolving to loopback", &Prober{}, "localhost:" + port},
		{"unspecified", &Prober{}, "0.0.0.0:" + port},
		{"IPv6 loopback", &Prober{}, "[::1]:" + port},
		{"link-local", &Prober{RequestTimeout: time.Second}, "169.254.169.254"},
		{"private", &Prober{RequestTimeout: time.Second}, "10.0.0.1"},
		{"custom dial to loopback", &Prober{Dial: dialTo(ts.Listener.Addr().String())}, "app.example.test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ep := tc.p.Request(t.Context(), IngressTarget{Host: tc.host, Path: "/internal-admin"})
			if ep.State != StateFailed || ep.Error != ErrPrivateAddress.Error() {
				t.Errorf("endpoint = %+v, want refused with %q", ep, ErrPrivateAddress)
			}
		})
	}
	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		p := &Prober{AllowPrivate: true}
		ep := p.Request(t.Context(), IngressTarget{Host: "127.0.0.1:" + port, Path: "/"})
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

// TestRequestHidesWhatTheServerSent checks that an endpoint's error never
// carries what a non-HTTP server sent (net/http quotes it in its errors).
func TestRequestHidesWhatTheServerSent(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("SECRET-TOKEN-1234 redis says hello\r\n\r\n"))
			_ = c.Close()
		}
	}()
	p := &Prober{AllowPrivate: true, Dial: dialTo(ln.Addr().String())}
	ep := p.Request(t.Context(), IngressTarget{Host: "app.example.test", Path: "/"})
	if ep.State != StateFailed || strings.Contains(ep.Error, "SECRET") || ep.Error == "" {
		t.Errorf("endpoint = %+v, want a failure that does not quote the server", ep)
	}
}

type atomicCount struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCount) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *atomicCount) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
