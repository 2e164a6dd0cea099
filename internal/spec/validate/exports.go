package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkEnvList checks the env entries of one container.
func (l *checker) checkEnvList(a *load.LoadedApp, c *spec.Component, env []spec.EnvVar, at load.Path, plat *spec.Platform, ps *load.Problems) {
	doc := a.Doc
	envs := map[string]int{}
	for i, e := range env {
		ea := at.Child(i)
		if e.Name == "" {
			continue
		}
		if !load.EnvName.MatchString(e.Name) {
			ps.Add(doc, ea.Child("name"), "%q is not a valid environment variable name", e.Name)
		}
		if strings.HasPrefix(e.Name, "FW_") {
			ps.Add(doc, ea.Child("name"), "names starting with FW_ are reserved for the variables that export wiring adds")
		}
		if j, dup := envs[e.Name]; dup {
			ps.Add(doc, ea.Child("name"), "%q is set twice (also env[%d])", e.Name, j)
		}
		envs[e.Name] = i
		n := countSet(e.Value != nil, e.SecretRef != nil, e.ExportRef != nil)
		if n != 1 {
			ps.Add(doc, ea, "%q needs exactly one of value, secret_ref or export_ref", e.Name)
		}
		checkEnvSecret(doc, ea, &env[i], ps)
		if r := e.SecretRef; r != nil {
			if r.Name != "" && !load.IsSubdomain(r.Name) {
				ps.Add(doc, ea.Child("secret_ref").Child("name"), "%q is not a valid Secret name", r.Name)
			}
			if r.Key != "" && !load.SecretKey.MatchString(r.Key) {
				ps.Add(doc, ea.Child("secret_ref").Child("key"), "%q is not a valid Secret key", r.Key)
			}
		}
		if r := e.ExportRef; r != nil {
			l.checkExportRefShape(a, c, r, ea.Child("export_ref"), plat, ps)
		}
	}
}

// checkExportRefShape checks what one app alone can tell about an
// export_ref; references to other apps are checked in checkRepo.
func (l *checker) checkExportRefShape(a *load.LoadedApp, c *spec.Component, r *spec.ExportRef, at load.Path, plat *spec.Platform, ps *load.Problems) {
	doc := a.Doc
	switch {
	case r.AddonInstanceID != "" && (r.Component != "" || r.App != ""):
		ps.Add(doc, at, "set either component (with app for another app) or addon_instance_id, not both")
	case r.AddonInstanceID != "":
		var inst *spec.AddonInstance
		for i := range plat.AddonInstances {
			if plat.AddonInstances[i].ID == r.AddonInstanceID {
				inst = &plat.AddonInstances[i]
			}
		}
		if inst == nil {
			ps.Add(doc, at.Child("addon_instance_id"), "no addon instance %q in platform.yaml's addon_instances", r.AddonInstanceID)
			return
		}
		keys, secret, ok := l.addonKeys(inst.Type, inst.Exports)
		if !ok {
			ps.Add(doc, at.Child("addon_instance_id"), "addon instance %q has unknown type %q", inst.ID, inst.Type)
			return
		}
		if r.ExportKey != "" && !slices.Contains(keys, r.ExportKey) {
			ps.Add(doc, at.Child("export_key"), "%s", unknownKey(r.ExportKey, "addon instance "+inst.ID, keys))
		} else if secret[r.ExportKey] && inst.Namespace != a.Project {
			ps.Add(doc, at.Child("export_key"), "%q of addon instance %q comes from a Secret in namespace %q; a pod can read Secrets of its own namespace (%q) only", r.ExportKey, inst.ID, inst.Namespace, a.Project)
		}
	case r.Component == "":
		ps.Add(doc, at, "export_ref needs component (or addon_instance_id)")
	case r.App == "" || r.App == a.Spec.Name:
		target := a.Component(r.Component)
		if target == nil {
			ps.Add(doc, at.Child("component"), "%s", unknownComponent(r.Component, &a.Spec))
			return
		}
		if target.Name == c.Name {
			ps.Add(doc, at.Child("component"), "a component cannot use its own exports")
			return
		}
		l.checkExportKey(a, target, r.ExportKey, at.Child("export_key"), ps)
	}
}

func (l *checker) checkExportKey(consumer *load.LoadedApp, target *spec.Component, key string, at load.Path, ps *load.Problems) {
	if key == "" {
		return
	}
	keys, _, ok := l.componentKeys(target)
	if !ok {
		return // an unknown addon type is reported on the addon itself
	}
	switch {
	case slices.Contains(keys, key):
	case len(keys) == 0 && target.Type == spec.TypeWorkload:
		ps.Add(consumer.Doc, at, "component %s has no export %q: a workload exports its Service's address, and it exposes no port; give it port, or ports with an exposed entry", target.Name, key)
	case len(keys) == 0 && (target.Type == spec.TypeJob || target.Type == spec.TypeCronJob):
		ps.Add(consumer.Doc, at, "component %s is a %s, which has no Service and exports nothing", target.Name, target.Type)
	default:
		ps.Add(consumer.Doc, at, "%s", unknownKey(key, "component "+target.Name, keys))
	}
}

func unknownKey(key, of string, keys []string) string {
	msg := fmt.Sprintf("%s has no export %q", of, key)
	if sug := hint.Suggest(key, keys); sug != "" {
		msg += fmt.Sprintf("; did you mean %q?", sug)
	}
	if len(keys) == 0 {
		return msg + "; it exports nothing"
	}
	return msg + "; valid keys: " + strings.Join(keys, ", ")
}

// componentKeys returns the exports of a component and which are secret.
func (l *checker) componentKeys(c *spec.Component) ([]string, map[string]bool, bool) {
	switch {
	case c.Type == spec.TypeWorkload && c.WorkloadSpec != nil:
		if !c.WorkloadSpec.ExposedPorts() {
			return nil, nil, true
		}
		return load.WorkloadExportKeys, nil, true
	case (c.Type == spec.TypeJob || c.Type == spec.TypeCronJob) && c.WorkloadSpec != nil:
		return nil, nil, true
	case c.Type == spec.TypeAddon && c.AddonSpec != nil:
		return l.addonKeys(c.AddonSpec.Type, c.AddonSpec.Exports)
	}
	return nil, nil, false
}
