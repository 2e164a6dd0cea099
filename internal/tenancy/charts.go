package tenancy

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// loopback reports whether the host of a URL's rest (after the scheme) is
// a loopback address or localhost.
func loopback(rest string) bool {
	hostport, _, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(hostport, "@?#") {
		return false
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.IsLoopback()
}

// ChartRepositoryProblem says why an addon's chart repository URL may not
// be used, or "": only https:// and oci:// repositories (a plain http://
// one lets anyone on the way swap the chart; only one on a loopback
// address, which never crosses a network, is let through), and, when the
// platform lists
// policy.chart_repositories (restricted true), only those under one of its
// prefixes. A prefix matches at a path boundary: https://charts.example.com
// allows https://charts.example.com/stable, not
// https://charts.example.com.evil.io.
func ChartRepositoryProblem(url string, allowed []string, restricted bool) string {
	l := strings.ToLower(url)
	switch {
	case strings.HasPrefix(l, "http://") && !loopback(url[len("http://"):]):
		return fmt.Sprintf("%q is a plain http:// repository: anyone on the network path could swap the chart; use https:// or oci://", url)
	case !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "oci://") && !strings.HasPrefix(l, "http://"):
		return fmt.Sprintf("%q must be an https:// or oci:// URL", url)
	}
	if !restricted {
		return ""
	}
	for _, p := range allowed {
		if UnderPrefix(url, p) {
			return ""
		}
	}
	if len(allowed) == 0 {
		return fmt.Sprintf("%q is not allowed: platform.yaml's policy.chart_repositories is empty, which allows no chart repository", url)
	}
	return fmt.Sprintf("%q is not under any of platform.yaml's policy.chart_repositories (%s)", url, strings.Join(allowed, ", "))
}

// UnderPrefix reports whether a URL is a prefix or lies under it at a path
// boundary; scheme and host compare without case.
func UnderPrefix(url, prefix string) bool {
	p := strings.TrimSuffix(prefix, "/")
	if len(url) < len(p) || !strings.EqualFold(url[:len(p)], p) {
		return false
	}
	if i := strings.Index(p, "://"); i >= 0 {
		if j := strings.IndexByte(p[i+3:], '/'); j >= 0 && url[:len(p)][i+3+j:] != p[i+3+j:] {
			return false // the path part compares with case
		}
	}
	rest := url[len(p):]
	return rest == "" || rest[0] == '/'
}

// PrefixProblem says why an entry of policy.chart_repositories is not a
// usable prefix, or "".
func PrefixProblem(prefix string) string {
	l := strings.ToLower(prefix)
	var host string
	switch {
	case strings.HasPrefix(l, "https://"):
		host = prefix[len("https://"):]
	case strings.HasPrefix(l, "oci://"):
		host = prefix[len("oci://"):]
	default:
		return fmt.Sprintf("%q must start with https:// or oci://", prefix)
	}
	host, _, _ = strings.Cut(host, "/")
	if host == "" || strings.ContainsAny(host, "@?#") {
		return fmt.Sprintf("%q needs a host, such as https://charts.example.com", prefix)
	}
	return ""
}
