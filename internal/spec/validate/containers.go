package validate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkContainer checks an init container or a sidecar.
func (l *checker) checkContainer(a *load.LoadedApp, c *spec.Component, k *spec.Container, kind string, at load.Path, names map[string]load.Path, volumes map[string]bool, plat *spec.Platform, ps *load.Problems) {
	doc := a.Doc
	if k.Name != "" {
		switch prev, dup := names[k.Name]; {
		case dup && prev == nil:
			ps.Add(doc, at.Child("name"), "%q is the name of the component's own container; name this one apart", k.Name)
		case dup:
			ps.Add(doc, at.Child("name"), "container %q is declared twice in the pod (also %s)", k.Name, shortPath(prev))
		default:
			names[k.Name] = at
		}
		if m := load.CheckNamespace(k.Name); m != "" {
			ps.Add(doc, at.Child("name"), "%s", m)
		}
	}
	if k.Image != "" {
		checkImage(doc, at.Child("image"), k.Image, plat, ps)
	}
	ports := portsOf(0, k.Ports, at)
	checkPorts(doc, ports, ps)
	if kind == "init_containers" {
		for _, p := range ports {
			if p.exposed {
				ps.Add(doc, p.at(), "an init container stops before the pod serves; its port cannot be on the Service: set expose: false, or move it to a sidecar")
			}
		}
	}
	checkProbes(doc, k.Probes, ports, at.Child("probes"), kind == "init_containers", ps)
	checkResources(k.Resources, doc, at.Child("resources"), true, ps)
	checkSecurityContext(doc, k.SecurityContext, at.Child("security_context"), ps)
	checkPodSecurity(doc, k.SecurityContext, at.Child("security_context"), podSecurityProfile(plat, a.Project), ps)
	checkWords(doc, at, k.Command, k.Args, ps)
	l.checkEnvList(a, c, k.Env, at.Child("env"), plat, ps)
	checkEnvRefs(doc, k.Env, at, nil, ps)
	checkEnvFrom(doc, k.EnvFrom, at.Child("env_from"), ps)
	mounts := map[string]load.Path{}
	known := slices.Sorted(mapKeys(volumes))
	for i, m := range k.VolumeMounts {
		ma := at.Child("volume_mounts").Child(i)
		if m.Name != "" && !volumes[m.Name] {
			msg := fmt.Sprintf("no volume %q in the component's volumes", m.Name)
			if sug := hint.Suggest(m.Name, known); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else if len(known) > 0 {
				msg += "; volumes: " + strings.Join(known, ", ")
			}
			ps.Add(doc, ma.Child("name"), "%s", msg)
		}
		checkSubPath(doc, ma.Child("sub_path"), m.SubPath, ps)
		if m.MountPath == "" || !checkMountPath(doc, ma.Child("mount_path"), m.MountPath, ps) {
			continue
		}
		p := path.Clean(m.MountPath)
		if prev, dup := mounts[p]; dup {
			ps.Add(doc, ma.Child("mount_path"), "%s is already mounted in this container (%s); mount each path once", p, shortPath(prev))
		} else {
			mounts[p] = ma.Child("mount_path")
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(mapKeys(m)) }
