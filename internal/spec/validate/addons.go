package validate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func (l *checker) addonKeys(typ string, declared []spec.DeclaredExport) ([]string, map[string]bool, bool) {
	if typ == "generic" {
		var keys []string
		secret := map[string]bool{}
		for _, d := range declared {
			keys = append(keys, d.Key)
			if d.SecretRef != nil {
				secret[d.Key] = true
			}
		}
		// a value composed from secret exports is secret too
		for _, d := range declared {
			if d.Value != nil {
				for _, m := range exportVar.FindAllStringSubmatch(*d.Value, -1) {
					if secret[m[1]] {
						secret[d.Key] = true
					}
				}
			}
		}
		slices.Sort(keys)
		return keys, secret, true
	}
	if l.Exports == nil {
		return nil, nil, false
	}
	return l.Exports.AddonExportKeys(typ)
}

var exportVar = regexp.MustCompile(`\$\(([-._a-zA-Z0-9]+)\)`)

func (l *checker) checkAddon(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	s, doc := c.AddonSpec, a.Doc
	if s.Type != "" && s.Type != "generic" {
		if l.Exports == nil {
			ps.Add(doc, at.Child("type"), "unknown addon type %q; use generic and declare its exports", s.Type)
		} else if _, _, ok := l.Exports.AddonExportKeys(s.Type); !ok {
			if known := l.knownTypes(); len(known) > 0 {
				ps.Add(doc, at.Child("type"), "unknown addon type %q; use generic with declared exports, or one of: %s", s.Type, strings.Join(known, ", "))
			} else {
				ps.Add(doc, at.Child("type"), "unknown addon type %q; use generic and declare its exports", s.Type)
			}
		}
		if len(s.Exports) > 0 {
			ps.AddKey(doc, at.Child("exports"), "exports are declared only by generic addons; %s publishes its own", s.Type)
		}
	}
	checkChartRepository(doc, s.Chart.Repo, at.Child("chart").Child("repo"), plat, ps)
	keys := map[string]bool{}
	for i, d := range s.Exports {
		ea := at.Child("exports").Child(i)
		if keys[d.Key] {
			ps.Add(doc, ea.Child("key"), "export %q is declared twice", d.Key)
		}
		keys[d.Key] = true
		if (d.Value == nil) == (d.SecretRef == nil) {
			ps.Add(doc, ea, "export %q needs exactly one of value or secret_ref", d.Key)
		}
		if d.Value != nil {
			if m := load.LiteralProblem(*d.Value, "declare the export with secret_ref instead",
				"declare the password as an export with secret_ref and write %s, with that export's key for THAT_VAR"); m != "" {
				ps.Add(doc, ea.Child("value"), "%s", m)
			}
		}
	}
	for i, d := range s.Exports {
		if d.Value != nil {
			for _, m := range exportVar.FindAllStringSubmatch(*d.Value, -1) {
				if !keys[m[1]] {
					ps.Add(doc, at.Child("exports").Child(i).Child("value"), "$(%s) names no declared export", m[1])
				}
			}
		}
	}
	checkValuesSecrets(doc, at.Child("values"), s.Values, ps)
}

// knownTypes lists the catalog's addon types but generic, which the
// message names on its own.
func (l *checker) knownTypes() []string {
	type lister interface{ AddonTypes() []string }
	t, ok := l.Exports.(lister)
	if !ok {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(t.AddonTypes()), func(s string) bool { return s == "generic" })
}
