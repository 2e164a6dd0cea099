package exports

import (
	"fmt"
	"slices"
	"strings"
)

// ServiceNames returns the names of the Services an addon's chart creates
// with these values, sorted: the Service its exports point at and the
// others (headless, replicas, metrics), which take names in the namespace
// that no other component may take. Names follow the chart's templates
// (paths in github.com/bitnami/charts, as in charts.go). A generic addon's
// Services are unknown: none. The namespace is the one the chart installs
// into (namespaceOverride, else in.Namespace).
func ServiceNames(in AddonInput) (names []string, namespace string, err error) {
	switch in.Type {
	case Generic:
		return nil, in.Namespace, nil
	case "mariadb", "mongodb", "mysql", "postgresql", "rabbitmq", "redis":
	default:
		return nil, "", fmt.Errorf("%w %q (known: %s)", ErrUnknownType, in.Type, joinKeys(Types()))
	}
	if in.Release == "" {
		return nil, "", fmt.Errorf("addon release name is empty")
	}
	chart := in.Chart
	if chart == "" {
		chart = in.Type // a catalog type is its chart's name
	}
	c := &chartContext{v: values{in.Values}, release: in.Release, namespace: in.Namespace, chart: chart}
	full, err := fullname(c.v, c.release, c.chart)
	if err != nil {
		return nil, "", err
	}
	ns, err := c.namespaceOf()
	if err != nil {
		return nil, "", err
	}
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			out = append(out, strings.TrimSuffix(trunc63(s), "-"))
		}
	}
	arch := func(def string) (string, error) { return c.v.str("architecture", def) }
	metrics := c.v.truthy("metrics.enabled", false)
	switch in.Type {
	case "postgresql":
		// templates/_helpers.tpl "postgresql.v1.primary.fullname",
		// "postgresql.v1.primary.svc.headless" (<primary>-hl),
		// "postgresql.v1.readReplica.fullname"; primary/svc.yaml,
		// primary/svc-headless.yaml, read/svc.yaml, read/svc-headless.yaml,
		// primary/metrics-svc.yaml (<primary>-metrics).
		a, err := arch("standalone")
		if err != nil {
			return nil, "", err
		}
		primary := full
		if a == "replication" {
			name, err := c.v.str("primary.name", "primary")
			if err != nil {
				return nil, "", err
			}
			primary = trunc63(full + "-" + name)
			read, err := c.v.str("readReplicas.name", "read")
			if err != nil {
				return nil, "", err
			}
			readFull := trunc63(full + "-" + read)
			add(readFull, trunc63(readFull)+"-hl")
		}
		add(primary, primary+"-hl")
		if metrics {
			add(primary + "-metrics")
		}
	case "mysql", "mariadb":
		// templates/_helpers.tpl "<chart>.primary.fullname",
		// "<chart>.secondary.fullname"; primary/svc.yaml,
		// primary/svc-headless.yaml (<primary>-headless), the same for
		// secondary/, metrics-svc.yaml (<fullname>-metrics).
		a, err := arch("standalone")
		if err != nil {
			return nil, "", err
		}
		primary := full
		if a == "replication" {
			name, err := c.v.str("primary.name", "primary")
			if err != nil {
				return nil, "", err
			}
			primary = trunc63(full + "-" + name)
			sec, err := c.v.str("secondary.name", "secondary")
			if err != nil {
				return nil, "", err
			}
			secondary := trunc63(full + "-" + sec)
			add(secondary, secondary+"-headless")
		}
		add(primary, primary+"-headless")
		if metrics {
			add(full + "-metrics")
		}
	case "redis":
		// master/service.yaml (<fullname>-master), replicas/service.yaml
		// (<fullname>-replicas, architecture replication, the default),
		// headless-svc.yaml (<fullname>-headless), sentinel/service.yaml
		// (<fullname>, in place of master and replicas), metrics/svc.yaml.
		a, err := arch("replication")
		if err != nil {
			return nil, "", err
		}
		switch {
		case c.v.truthy("sentinel.enabled", false):
			add(full)
		case a == "replication":
			add(full+"-master", full+"-replicas")
		default:
			add(full + "-master")
		}
		add(full + "-headless")
		if metrics {
			add(full + "-metrics")
		}
	case "mongodb":
		// "mongodb.service.nameOverride" (standalone/svc.yaml,
		// replicaset/headless-svc.yaml), arbiter/headless-svc.yaml
		// (<fullname>-arbiter-headless, arbiter.enabled by default),
		// metrics-svc.yaml (<fullname>-metrics).
		a, err := arch("standalone")
		if err != nil {
			return nil, "", err
		}
		svc := full
		if a == "replicaset" {
			svc = full + "-headless"
		}
		if svc, err = c.v.firstStr(svc, "service.nameOverride"); err != nil {
			return nil, "", err
		}
		add(svc)
		if a == "replicaset" && c.v.truthy("arbiter.enabled", true) {
			add(full + "-arbiter-headless")
		}
		if metrics {
			add(full + "-metrics")
		}
		if gns, err := c.v.firstStr("", "global.namespaceOverride"); err != nil {
			return nil, "", err
		} else if gns != "" {
			ns = gns
		}
	case "rabbitmq":
		// svc.yaml (<fullname>), svc-headless.yaml (<fullname>-headless).
		add(full, full+"-headless")
	}
	slices.Sort(out)
	return slices.Compact(out), ns, nil
}

// AddonServices returns the Services an addon of the catalog creates, and
// the namespace they are in, for the spec validator's check of Service
// names; ok is false when the values do not tell.
func (Catalog) AddonServices(addonType, release, namespace string, values map[string]any) (names []string, ns string, ok bool) {
	names, ns, err := ServiceNames(AddonInput{Type: addonType, Release: release, Namespace: namespace, Values: WithFullnameOverride(values, release)})
	return names, ns, err == nil
}
