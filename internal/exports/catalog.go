package exports

import "sync"

// Catalog answers which exports an addon type has, in the shape the spec
// validator asks for.
type Catalog struct{}

// AddonTypes lists the addon types the catalog knows.
func (Catalog) AddonTypes() []string { return Types() }

// AddonExportKeys returns the export keys of an addon type and which of
// them come from a Secret with the chart's default values.
func (Catalog) AddonExportKeys(addonType string) ([]string, map[string]bool, bool) {
	keys, ok := Keys(addonType)
	if !ok {
		return nil, nil, false
	}
	return keys, secretKeys()[addonType], true
}

// secretKeys is computed once: the catalog is fixed, and validation asks
// for every addon of every app.
var secretKeys = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, t := range Types() {
		secret := map[string]bool{}
		if all, err := ForAddon(AddonInput{Type: t, Release: "release", Namespace: "namespace"}); err == nil {
			for k, e := range all {
				if e.Kind != Plain {
					secret[k] = true
				}
			}
		}
		out[t] = secret
	}
	return out
})
