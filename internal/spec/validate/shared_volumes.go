package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkAppVolumes checks the app-wide volumes and what the components
// mount of them: each shared names one, a claim mounted on one node at a
// time (ReadWriteOnce) by pods that can run on several is a warning, and so
// is a volume of one name with size on two components, which is two
// spreads reports whether a component's pods can run on more than one node
// at a time: a workload with more than one replica, or an autoscaler that
// may add them.
func spreads(c *spec.Component) bool {
	w := c.WorkloadSpec
	if c.Type != spec.TypeWorkload || w == nil {
		return false
	}
	if w.Autoscaling != nil && w.Autoscaling.MaxReplicas > 1 {
		return true
	}
	return w.Replicas != nil && *w.Replicas > 1
}

// claims, not one.
func checkAppVolumes(a *load.LoadedApp, ps *load.Problems) {
	s, doc := &a.Spec, a.Doc
	if len(s.Volumes) == 0 && !anyVolume(s) {
		return
	}
	declared := checkVolumeDeclarations(doc, s, ps)
	mounts := sharedMounts(doc, s, declared, ps)
	checkSharedAcrossNodes(doc, s, declared, mounts, ps)
}

// sharedMount is a component that mounts an app-wide volume, and whether
// its pods can run on several nodes.
type sharedMount struct {
	component string
	spreads   bool
}

// checkVolumeDeclarations checks the app's volumes themselves, and returns
// the index of each name declared.
func checkVolumeDeclarations(doc *load.Document, s *spec.App, ps *load.Problems) map[string]int {
	declared := map[string]int{}
	for i, v := range s.Volumes {
		at := load.Path{"volumes", i}
		if v.Name != "" {
			if j, dup := declared[v.Name]; dup {
				ps.Add(doc, at.Child("name"), "volume %q is declared twice (also volumes[%d])", v.Name, j)
			} else {
				declared[v.Name] = i
			}
			if m := load.CheckNamespace(v.Name); m != "" {
				ps.Add(doc, at.Child("name"), "%s", m)
			} else if s.Name != "" && len(spec.SharedClaimName(s.Name, v.Name)) > 253 {
				ps.Add(doc, at.Child("name"), "the claim's name %s is longer than 253 characters", spec.SharedClaimName(s.Name, v.Name))
			}
		}
		if v.Size != nil {
			// the schema reports a size that is not a quantity
			if q, err := v.Size.Parse(); err == nil && q.Sign() <= 0 {
				ps.Add(doc, at.Child("size"), "must be more than 0")
			}
		}
		if v.StorageClass != "" && !load.IsSubdomain(v.StorageClass) {
			ps.Add(doc, at.Child("storage_class"), "%q is not a valid StorageClass name", v.StorageClass)
		}
		for k, m := range v.AccessModes {
			if slices.Index(v.AccessModes, m) < k {
				ps.Add(doc, at.Child("access_modes").Child(k), "%s is listed twice", m)
			}
		}
	}

	return declared
}

// sharedMounts returns the components that mount each app-wide volume,
// refusing a shared volume the app does not declare, and warns about two
// components' sized volumes of one name (two claims, not one shared).
func sharedMounts(doc *load.Document, s *spec.App, declared map[string]int, ps *load.Problems) map[string][]sharedMount {
	mounts := map[string][]sharedMount{}
	sized := map[string]string{} // volume name with size -> first component
	for i := range s.Components {
		c := &s.Components[i]
		w := c.WorkloadSpec
		if w == nil || c.Type == spec.TypeAddon {
			continue
		}
		for j, v := range w.Volumes {
			at := load.Path{"components", i, "workload_spec", "volumes", j}
			if v.Shared != "" {
				if _, ok := declared[v.Shared]; !ok {
					msg := fmt.Sprintf("no volume %q in the app's volumes", v.Shared)
					names := slices.Sorted(mapKeys(declared))
					if sug := hint.Suggest(v.Shared, names); sug != "" {
						msg += fmt.Sprintf("; did you mean %q?", sug)
					} else if len(names) > 0 {
						msg += "; the app declares " + strings.Join(names, ", ")
					} else {
						msg += "; declare it there: volumes: [{name: " + v.Shared + ", size: 10Gi}]"
					}
					ps.Add(doc, at.Child("shared"), "%s", msg)
					continue
				}
				ms := mounts[v.Shared]
				if !slices.ContainsFunc(ms, func(m sharedMount) bool { return m.component == c.Name }) {
					mounts[v.Shared] = append(ms, sharedMount{c.Name, spreads(c)})
				}
			}
			if v.Size != nil && v.Name != "" {
				if first, ok := sized[v.Name]; ok && first != c.Name {
					ps.Warn(doc, at.Child("name"), "component %s has a volume %q with size too: those are separate claims per replica, and neither component sees the other's files; to share one, declare it in the app's volumes and mount it with shared: %s", first, v.Name, v.Name)
				} else if !ok {
					sized[v.Name] = c.Name
				}
			}
		}
	}
	return mounts
}

// checkSharedAcrossNodes warns about an app volume no component mounts,
// and one attached to one node (or pod) at a time that pods on several
// nodes mount.
func checkSharedAcrossNodes(doc *load.Document, s *spec.App, declared map[string]int, mounts map[string][]sharedMount, ps *load.Problems) {
	for i, v := range s.Volumes {
		ms := mounts[v.Name]
		at := load.Path{"volumes", i, "name"}
		if v.Name == "" || declared[v.Name] != i || load.CheckNamespace(v.Name) != "" {
			continue
		}
		if len(ms) == 0 {
			ps.Warn(doc, at, "no component mounts volume %q (a workload volume with shared: %s does), so render makes no claim for it", v.Name, v.Name)
			continue
		}
		if !oneNode(v.AccessModes) {
			continue
		}
		mode := "ReadWriteOnce"
		if len(v.AccessModes) > 0 {
			mode = v.AccessModes[0]
			at = load.Path{"volumes", i, "access_modes"}
		}
		var who string
		switch {
		case len(ms) > 1:
			names := make([]string, len(ms))
			for k, m := range ms {
				names[k] = m.component
			}
			who = "components " + strings.Join(names, ", ") + " mount it, and their pods can run on different nodes"
		case ms[0].spreads:
			who = "component " + ms[0].component + " mounts it with more than one replica, which can run on different nodes"
		default:
			continue
		}
		what := "is attached to one node at a time, so pods on the others do not start"
		if mode == "ReadWriteOncePod" {
			what = "is used by one pod at a time, so the others do not start"
		}
		ps.Warn(doc, at, "%s: a %s claim %s; use ReadWriteMany (with a storage class that offers it)", who, mode, what)
	}
}

// oneNode reports whether access modes attach a claim to one node at a
// time (no ReadWriteMany or ReadOnlyMany); none means ReadWriteOnce.
func oneNode(modes []string) bool {
	return !slices.Contains(modes, "ReadWriteMany") && !slices.Contains(modes, "ReadOnlyMany")
}

// anyVolume reports whether some component mounts an app-wide volume or
// has a volume with size (which checkAppVolumes compares across
// components).
func anyVolume(s *spec.App) bool {
	n := 0
	for i := range s.Components {
		if w := s.Components[i].WorkloadSpec; w != nil {
			for _, v := range w.Volumes {
				if v.Shared != "" {
					return true
				}
				if v.Size != nil {
					n++
				}
			}
		}
	}
	return n > 1
}
