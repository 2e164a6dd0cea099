package probe

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DialFunc opens a network connection; tests point host names at loopback
// listeners with it.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Prober runs the checks against a cluster and the app's Ingress hosts. The
// zero value skips every check; set Client to reach a cluster.
type Prober struct {
	// Client reads Kustomizations, Deployments and Ingresses; nil means no cluster.
	Client client.Reader
	// Dial opens connections for the HTTPS requests; default a net.Dialer.
	// Unless AllowPrivate, a connection it opens to an address the filter
	// refuses (AddressRefusal) is closed unused.
	Dial DialFunc
	// Resolver looks up the Ingress hosts for the default dialer; default
	// the system's. The filter judges the addresses it returns, at connect
	// time.
	Resolver *net.Resolver
	// ConnectTo, when set, is the host:port every request connects to (the
	// ingress controller's), whatever the host resolves to; the host still
	// names the TLS server and the request. The operator chose it, so it is
	// exempt from the private-address rule.
	ConnectTo string
	// AllowPrivate lets the requests connect to any address: loopback
	// test servers use it. Without it an Ingress host that resolves to an
	// address the filter refuses (AddressRefusal: loopback, private,
	// link-local, the rest of IANA's special-purpose blocks, and NAT64,
	// 6to4, mapped and compatible forms of them), judged at connect time on
	// the address connected to so that DNS rebinding cannot slip one in, is
	// not requested.
	AllowPrivate bool
	// RootCAs verifies served chains; nil means the system pool.
	RootCAs *x509.CertPool
	// ExpiryWarning is the days-to-expiry threshold below which a certificate
	// is reported with a warning; default 14 days.
	ExpiryWarning time.Duration
	// RequestTimeout bounds one request; default 10s.
	RequestTimeout time.Duration
	// Clock judges certificate validity; default the wall clock.
	Clock Clock
	// Logger receives debug messages; default discard.
	Logger *slog.Logger
}

func (p *Prober) clock() Clock {
	if p.Clock == nil {
		return RealClock{}
	}
	return p.Clock
}

// IngressTarget is one host to request.
type IngressTarget struct {
	Host string
	Path string
	TLS  bool
}

// URL returns the address requested for the target.
func (it IngressTarget) URL() string {
	scheme := "http"
	if it.TLS {
		scheme = "https"
	}
	return scheme + "://" + it.Host + it.Path
}

// IngressTargets returns the hosts of the Ingress objects, sorted, each once.
// A host listed under spec.tls (or any rule when spec.tls names no hosts) is
// requested over HTTPS.
func IngressTargets(ings []networkingv1.Ingress) []IngressTarget {
	seen := map[string]IngressTarget{}
	for _, ing := range ings {
		tlsHosts := map[string]bool{}
		tlsAll := false
		for _, t := range ing.Spec.TLS {
			if len(t.Hosts) == 0 {
				tlsAll = true
			}
			for _, h := range t.Hosts {
				tlsHosts[h] = true
			}
		}
		for _, r := range ing.Spec.Rules {
			if r.Host == "" || strings.Contains(r.Host, "*") {
				continue
			}
			path := "/"
			if r.HTTP != nil && len(r.HTTP.Paths) > 0 && strings.HasPrefix(r.HTTP.Paths[0].Path, "/") {
				path = r.HTTP.Paths[0].Path
			}
			it := IngressTarget{Host: r.Host, Path: path, TLS: tlsAll || tlsHosts[r.Host]}
			if prev, ok := seen[r.Host]; !ok || (it.TLS && !prev.TLS) {
				seen[r.Host] = it
			}
		}
	}
	out := make([]IngressTarget, 0, len(seen))
	for _, it := range seen {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b IngressTarget) int { return cmp.Compare(a.Host, b.Host) })
	return out
}

// Reachability requests every host of the app's Ingress objects. The hosts
// come only from those objects. It passes when every request answers below
// 500 over a chain that verifies for the host.
func (p *Prober) Reachability(ctx context.Context, t Target) (Check, string) {
	c := Check{Name: CheckReachability}
	if p.Client == nil {
		c.State, c.Message = StateSkipped, "no cluster configured"
		return c, ""
	}
	var list networkingv1.IngressList
	// Only the Ingresses render wrote: anyone who can create an Ingress in
	// the namespace must not aim the probes elsewhere.
	sel := AppSelector(t.App)
	sel[layout.LabelManagedBy] = layout.ManagedBy
	if err := p.Client.List(ctx, &list, client.InNamespace(t.namespace()), sel); err != nil {
		c.State, c.Message = StateProgressing, fmt.Sprintf("listing Ingresses: %v", err)
		return c, ""
	}
	targets := IngressTargets(list.Items)
	if len(targets) == 0 {
		c.State, c.Message = StateSkipped, "the app has no Ingress host"
		return c, ""
	}
	live := ""
	var bad, warn []string
	for _, it := range targets {
		ep := p.Request(ctx, it)
		c.Endpoints = append(c.Endpoints, ep)
		switch {
		case ep.State != StatePassed:
			bad = append(bad, ep.Host+": "+ep.Error)
		case live == "":
			live = ep.URL
		}
		if ep.TLS != nil && ep.TLS.Warning != "" {
			warn = append(warn, ep.Host+": "+ep.TLS.Warning)
		}
	}
	if len(bad) > 0 {
		c.State, c.Message = StateProgressing, strings.Join(bad, "; ")
		return c, live
	}
	c.State = StatePassed
	c.Message = fmt.Sprintf("%d hosts reachable", len(targets))
	if len(targets) == 1 {
		c.Message = "1 host reachable"
	}
	if len(warn) > 0 {
		c.Message += "; warning: " + strings.Join(warn, "; ")
	}
	return c, live
}

// Request makes one GET to the target and reports status, latency and the
// served certificate.
func (p *Prober) Request(ctx context.Context, it IngressTarget) Endpoint {
	ep := Endpoint{Host: it.Host, URL: it.URL(), State: StateFailed}
	timeout := p.RequestTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := p.dialer(timeout)
	now := p.clock().Now
	// The handshake runs on a goroutine of the transport's, which may still
	// be running when Do returns (a timeout, a canceled context): what it
	// found is handed over under the lock, and read once Do returned.
	var served struct {
		sync.Mutex
		info *TLSInfo
	}
	tr := &http.Transport{
		DialContext:         dial,
		DisableKeepAlives:   true,
		TLSHandshakeTimeout: timeout,
		Proxy:               nil,
		TLSClientConfig: &tls.Config{
			ServerName: it.Host,
			MinVersion: tls.VersionTLS12,
			// The chain is verified in VerifyConnection below, against the
			// same roots and for the same host, with the injected clock, so
			// that the certificate is recorded even when it does not verify.
			InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
			VerifyConnection: func(cs tls.ConnectionState) error {
				info, err := verifyChain(cs, it.Host, p.RootCAs, now(), p.expiryWarning())
				served.Lock()
				served.info = info
				served.Unlock()
				return err
			},
		},
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{
		Transport: tr,
		// Judge the host itself, not where it redirects to.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.URL, nil)
	if err != nil {
		ep.Error = err.Error()
		return ep
	}
	req.Header.Set("User-Agent", "fleetwright-webhook-probe")
	start := time.Now()
	resp, err := hc.Do(req)
	ep.Latency = time.Since(start)
	served.Lock()
	ep.TLS = served.info
	served.Unlock()
	if err != nil {
		ep.Error = describeRequestError(err)
		return ep
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	ep.StatusCode = resp.StatusCode
	if resp.StatusCode >= 500 {
		ep.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
		return ep
	}
	ep.State = StatePassed
	return ep
}

// dialer returns how the requests connect (see Dial, ConnectTo, AllowPrivate).
func (p *Prober) dialer(timeout time.Duration) DialFunc {
	if p.ConnectTo != "" {
		d := &net.Dialer{Timeout: timeout}
		return func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, p.ConnectTo)
		}
	}
	if p.Dial != nil {
		if p.AllowPrivate {
			return p.Dial
		}
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := p.Dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if err := checkPublic(c.RemoteAddr().String()); err != nil {
				_ = c.Close()
				return nil, &net.OpError{Op: "dial", Net: network, Addr: c.RemoteAddr(), Err: err}
			}
			return c, nil
		}
	}
	d := &net.Dialer{Timeout: timeout, Resolver: p.Resolver}
	if !p.AllowPrivate {
		// Control sees the address actually connected to, after resolution.
		d.Control = func(_, address string, _ syscall.RawConn) error { return checkPublic(address) }
	}
	return d.DialContext
}

// ErrPrivateAddress is the error of a probe refused by the address filter
// (AddressRefusal).
var ErrPrivateAddress = errors.New("not probed: the address is not globally reachable (loopback, private, link-local, shared, " +
	"NAT64 or 6to4 of one, or another special-purpose block; see -probe-allow-private)")

// checkPublic refuses a host:port whose IP AddressRefusal refuses.
func checkPublic(hostport string) error {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return fmt.Errorf("%s: %w", hostport, ErrPrivateAddress)
	}
	if why := AddressRefusal(ap.Addr()); why != "" {
		return fmt.Errorf("%s is %s: %w", ap.Addr(), why, ErrPrivateAddress)
	}
	return nil
}

func (p *Prober) expiryWarning() time.Duration {
	if p.ExpiryWarning <= 0 {
		return 14 * 24 * time.Hour
	}
	return p.ExpiryWarning
}

// verifyChain verifies the served chain for host at now and describes the leaf.
func verifyChain(cs tls.ConnectionState, host string, roots *x509.CertPool, now time.Time, warnBelow time.Duration) (*TLSInfo, error) {
	if len(cs.PeerCertificates) == 0 {
		return nil, errors.New("no certificate served")
	}
	leaf := cs.PeerCertificates[0]
	left := leaf.NotAfter.Sub(now)
	info := &TLSInfo{
		Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(), DNSNames: leaf.DNSNames,
		NotAfter: leaf.NotAfter.UTC(), DaysToExpiry: int(left.Hours() / 24),
	}
	if left < 0 && left > -24*time.Hour {
		info.DaysToExpiry = -1
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter, CurrentTime: now}); err != nil {
		return info, err
	}
	info.Verified = true
	if left < warnBelow {
		info.Warning = fmt.Sprintf("certificate expires in %d days (%s)", info.DaysToExpiry, info.NotAfter.Format(time.RFC3339))
	}
	return info, nil
}

// describeRequestError names the cause of a failed request plainly.
func describeRequestError(err error) string {
	var (
		hostErr    x509.HostnameError
		invalid    x509.CertificateInvalidError
		unknown    x509.UnknownAuthorityError
		verifyErr  *tls.CertificateVerificationError
		netTimeout net.Error
	)
	switch {
	case errors.As(err, &hostErr):
		return "TLS: certificate is not valid for the host: " + hostErr.Error()
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "TLS: certificate expired or not yet valid: " + invalid.Error()
	case errors.As(err, &unknown):
		return "TLS: certificate signed by an unknown authority (self-signed or untrusted chain)"
	case errors.As(err, &verifyErr):
		return "TLS: " + verifyErr.Error()
	case errors.As(err, &netTimeout) && netTimeout.Timeout():
		return "timeout: " + err.Error()
	case errors.Is(err, ErrPrivateAddress):
		return ErrPrivateAddress.Error()
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS: the server answered plain HTTP"
	}
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		recErr tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr):
		// Connection errors name the address, never what the server sent.
		return err.Error()
	case errors.As(err, &recErr):
		return "TLS: " + recErr.Msg
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection without an answer"
	}
	// net/http quotes what a server sent when it is not HTTP (a banner, a
	// page): the status API must not show it.
	return "the server's answer is not HTTP"
}
