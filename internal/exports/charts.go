package exports

import (
	"fmt"
	"strconv"
)

// Each catalog chart has a file of its own, chart_<type>.go: its catalog
// entry, its resolver and its Services. Each computes object names exactly
// as the chart's helpers do, from the release's values, and cites the chart
// file it follows (paths in github.com/bitnami/charts). This file holds
// what they share.

// service returns the host and port exports of a Service and its FQDN.
func (c *chartContext) service(r *result, name, namespace string, port int, what string) (string, error) {
	if !isDNSLabel(name) {
		return "", fmt.Errorf("the chart's Service name %q is not a DNS label (check fullnameOverride)", name)
	}
	if !isDNSLabel(namespace) {
		return "", fmt.Errorf("namespace %q is not a DNS label", namespace)
	}
	domain, err := c.v.firstStr(DefaultClusterDomain, "clusterDomain")
	if err != nil {
		return "", err
	}
	host := serviceHost(name, namespace, domain)
	r.add(Export{Key: KeyHost, Kind: Plain, Value: host, Description: "in-cluster DNS name of the " + what + " Service"})
	r.add(Export{Key: KeyPort, Kind: Plain, Value: strconv.Itoa(port), Description: "port of the " + what + " Service"})
	return host, nil
}

// namespaceOf returns the namespace the chart puts its objects in:
// the first of the chart's own overrides that is set, else
// namespaceOverride ("common.names.namespace" in
// bitnami/common/templates/_names.tpl), else the release namespace.
func (c *chartContext) namespaceOf(overrides ...string) (string, error) {
	return c.v.firstStr(c.namespace, append(overrides, "namespaceOverride")...)
}

// secretName returns the name of the chart's Secret, as the charts'
// "<chart>.secretName" helpers do: the first existing Secret the values
// at paths name, else fullname. existing is that Secret's name, "" for
// the chart's own.
func secretName(v values, full string, paths ...string) (name, existing string, err error) {
	if existing, err = v.firstStr("", paths...); err != nil {
		return "", "", err
	}
	if existing != "" {
		return existing, existing, nil
	}
	return full, "", nil
}

// primaryService returns the name of the primary's Service of a chart
// with architecture standalone or replication, as the "<chart>.primary.fullname"
// helpers of bitnami/postgresql, mysql and mariadb do: fullname, or
// "<fullname>-<primary.name>" when architecture=replication.
func primaryService(v values, full string) (string, error) {
	arch, err := v.str("architecture", "standalone")
	if err != nil || arch != "replication" {
		return full, err
	}
	primary, err := v.str("primary.name", "primary")
	if err != nil {
		return "", err
	}
	return trunc63(full + "-" + primary), nil
}

// secretRef checks a Secret reference computed from values.
func secretRef(name, key, keyValue string) (*SecretKeyRef, error) {
	if !isDNSSubdomain(name) {
		return nil, fmt.Errorf("Secret name %q is not a valid name", name)
	}
	if !isSecretKey(key) {
		return nil, fmt.Errorf("Secret key %q (from %s) is not a valid key", key, keyValue)
	}
	return &SecretKeyRef{Name: name, Key: key}, nil
}

func passwordExport(ref *SecretKeyRef, desc string) Export {
	r := *ref
	return Export{Key: KeyPassword, Kind: Secret, Sensitive: true, Secret: &r, Description: desc}
}
