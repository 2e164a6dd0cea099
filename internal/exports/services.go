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
// (paths in github.com/bitnami/charts, in each chart's file). A generic addon's
// Services are unknown: none. The namespace is the one the chart installs
// into (namespaceOverride, else in.Namespace).
func ServiceNames(in AddonInput) (names []string, namespace string, err error) {
	if in.Type == Generic {
		return nil, in.Namespace, nil
	}
	e, ok := find(in.Type)
	if !ok {
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
	override, err := e.services(c, full, add)
	if err != nil {
		return nil, "", err
	}
	if override != "" {
		ns = override
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
