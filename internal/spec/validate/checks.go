package validate

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/graph"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func checkPlatform(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	seen := map[string]bool{}
	for i, c := range p.Clusters {
		at := load.Path{"clusters", i, "name"}
		if c.Name == "" {
			continue
		}
		if m := load.CheckNamespace(c.Name); m != "" {
			ps.Add(doc, at, "%s", m)
		}
		if seen[c.Name] {
			ps.Add(doc, at, "cluster %q is declared twice", c.Name)
		}
		seen[c.Name] = true
		if c.Path != "" && (path.IsAbs(c.Path) || escapes(c.Path)) {
			ps.Add(doc, load.Path{"clusters", i, "path"}, "must be a relative path inside the fleet")
		}
	}
	checkClusterPaths(p, doc, ps)
	checkChartPolicy(p, doc, ps)
	if p.DefaultCluster != "" && len(p.Clusters) > 0 && !seen[p.DefaultCluster] {
		ps.Add(doc, load.Path{"default_cluster"}, "names no cluster declared under clusters")
	}
	if p.AppsDomain != "" && !load.IsSubdomain(p.AppsDomain) {
		ps.Add(doc, load.Path{"apps_domain"}, "%q is not a valid DNS name", p.AppsDomain)
	} else if m := PublicHostProblem("app." + p.AppsDomain); p.AppsDomain != "" && m != "" {
		ps.Add(doc, load.Path{"apps_domain"}, "default app hosts <app>-<project>.%s would not be public: %s", p.AppsDomain, strings.TrimPrefix(m, "is "))
	}
	if p.Defaults != nil {
		if p.Defaults.Timeout != "" {
			if d, err := time.ParseDuration(p.Defaults.Timeout); err == nil && d <= 0 {
				ps.Add(doc, load.Path{"defaults", "timeout"}, "must be longer than 0")
			}
		}
		checkResources(p.Defaults.Resources, doc, load.Path{"defaults", "resources"}, false, ps)
		checkSecurityContext(doc, p.Defaults.SecurityContext, load.Path{"defaults", "security_context"}, ps)
		checkPodSecurity(doc, p.Defaults.SecurityContext, load.Path{"defaults", "security_context"}, podSecurityProfile(p, ""), ps)
	}
	checkProjectSettings(p, doc, ps)
	if p.Fleet != nil && p.Fleet.Path != "" && (path.IsAbs(p.Fleet.Path) || escapes(p.Fleet.Path)) {
		ps.Add(doc, load.Path{"fleet", "path"}, "must be a relative path")
	}
	if p.Fleet != nil && p.Fleet.Artifacts != nil {
		checkFleetArtifacts(p.Fleet.Artifacts, doc, ps)
	}
	if p.Build != nil {
		if p.Build.Timeout != "" {
			if d, err := time.ParseDuration(p.Build.Timeout); err == nil && d <= 0 {
				ps.Add(doc, load.Path{"build", "timeout"}, "must be longer than 0")
			}
		}
		checkBuildLimits(p.Build.Limits, doc, ps)
		secrets := map[string]bool{}
		for i, s := range p.Build.Secrets {
			if (s.Env == "") == (s.File == "") {
				ps.Add(doc, load.Path{"build", "secrets", i}, "set exactly one of env and file")
			}
			if s.ID != "" && secrets[s.ID] {
				ps.Add(doc, load.Path{"build", "secrets", i, "id"}, "secret %q is declared twice", s.ID)
			}
			secrets[s.ID] = true
		}
	}
	ids := map[string]bool{}
	for i, inst := range p.AddonInstances {
		if ids[inst.ID] {
			ps.Add(doc, load.Path{"addon_instances", i, "id"}, "addon instance %q is declared twice", inst.ID)
		}
		ids[inst.ID] = true
		if inst.Namespace != "" {
			if m := load.CheckNamespace(inst.Namespace); m != "" {
				ps.Add(doc, load.Path{"addon_instances", i, "namespace"}, "%s", m)
			}
		}
	}
}

// checkClusterPaths refuses cluster folders that would mix clusters' apps:
// Flux applies a cluster's folder with everything below it, so no cluster's
// folder may be, or be inside, another's; nor may it hold the apps/ tree.
func checkClusterPaths(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	type claim struct{ name, path string }
	var claims []claim
	for i, c := range p.Clusters {
		if c.Name == "" || (c.Path != "" && (path.IsAbs(c.Path) || escapes(c.Path))) {
			continue
		}
		at := load.Path{"clusters", i, "path"}
		if !doc.Has(at) {
			at = load.Path{"clusters", i, "name"}
		}
		cp := layout.DefaultClusterDir(c.Name)
		if c.Path != "" {
			cp = path.Clean(c.Path)
		}
		switch {
		case cp == ".":
			ps.Add(doc, at, "the fleet's root holds the apps/ tree; give cluster %s a folder of its own, such as clusters/%s", c.Name, c.Name)
			continue
		case cp == "apps" || strings.HasPrefix(cp, "apps/"):
			ps.Add(doc, at, "the folder %q is in the fleet's apps/ tree, which holds the apps' objects; put cluster %s beside it, such as clusters/%s", cp, c.Name, c.Name)
			continue
		}
		for _, o := range claims {
			switch {
			case o.path == cp:
				ps.Add(doc, at, "cluster %s has the same folder %q as cluster %s; each cluster needs its own", c.Name, cp, o.name)
			case strings.HasPrefix(cp, o.path+"/"), strings.HasPrefix(o.path, cp+"/"):
				ps.Add(doc, at, "the folder %q of cluster %s and the folder %q of cluster %s are one inside the other; Flux would apply the inner cluster's apps on the outer one too", cp, c.Name, o.path, o.name)
			default:
				continue
			}
			break
		}
		claims = append(claims, claim{c.Name, cp})
	}
}

// OverlapsSpecs says why a folder of the apps repository (a slash path
// relative to its root) cannot hold the fleet, or "": the fleet's apps/
// tree would mix with the specs.
func OverlapsSpecs(p string) string {
	c := path.Clean(p)
	first, _, _ := strings.Cut(c, "/")
	switch {
	case c == ".":
		return "its root holds the specs in apps/"
	case first == "apps" || first == "templates":
		return fmt.Sprintf("%q is inside %s/, which holds specs", c, first)
	}
	return ""
}

func escapes(p string) bool {
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

func (l *checker) checkApp(a *load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	s, doc := &a.Spec, a.Doc
	if s.Name != "" {
		if m := load.CheckLabel(s.Name, 63); m != "" {
			ps.Add(doc, load.Path{"name"}, "app name %q %s", s.Name, m)
		}
	}
	l.checkAppEnv(a, plat, ps)
	checkAppVolumes(a, ps)
	checkRoutes(a, plat, ps)
	if len(s.Components) == 0 && s.Template == nil && doc.Has(load.Path{"name"}) {
		ps.Add(doc, nil, "an app needs at least one component (or a template)")
	}
	names := map[string]int{}
	for i := range s.Components {
		c := &s.Components[i]
		at := load.Path{"components", i}
		if c.Name == "" {
			continue
		}
		if j, dup := names[c.Name]; dup {
			ps.Add(doc, at.Child("name"), "duplicate component name %q (also components[%d])", c.Name, j)
			continue
		}
		names[c.Name] = i
		if m := load.CheckLabel(c.Name, 63); m != "" {
			ps.Add(doc, at.Child("name"), "component name %q %s", c.Name, m)
		} else if obj := layout.ObjectName(s.Name, c.Name); len(obj) > 63 {
			ps.Add(doc, at.Child("name"), "object name %q (app-component) is %d characters; Kubernetes allows 63", obj, len(obj))
		} else if c.Type == spec.TypeAddon && len(obj) > load.MaxReleaseName {
			ps.Add(doc, at.Child("name"), "Helm release name %q (app-component) is %d characters; Helm allows %d", obj, len(obj), load.MaxReleaseName)
		}
	}
	for i := range s.Components {
		c := &s.Components[i]
		at := load.Path{"components", i}
		for j, dep := range c.DependsOn {
			switch _, ok := names[dep]; {
			case dep == c.Name:
				ps.Add(doc, at.Child("depends_on").Child(j), "a component cannot depend on itself")
			case !ok:
				ps.Add(doc, at.Child("depends_on").Child(j), "%s", unknownComponent(dep, s.Name, names))
			case slices.Index(c.DependsOn, dep) < j:
				ps.Add(doc, at.Child("depends_on").Child(j), "%q is listed twice", dep)
			case s.Components[names[dep]].Type == spec.TypeCronJob:
				ps.Add(doc, at.Child("depends_on").Child(j), "%q is a cronjob, which runs on its schedule and is never done: nothing can wait for it; depend on a job instead", dep)
			}
		}
		switch c.Type {
		case spec.TypeWorkload, spec.TypeJob, spec.TypeCronJob:
			if c.WorkloadSpec == nil {
				if !doc.Has(at.Child("workload_spec")) {
					ps.Add(doc, at, "a %s component needs workload_spec", c.Type)
				}
			} else {
				l.checkWorkload(a, c, at.Child("workload_spec"), plat, ps)
			}
			if c.AddonSpec != nil {
				ps.AddKey(doc, at.Child("addon_spec"), "a %s component takes workload_spec, not addon_spec", c.Type)
			}
		case spec.TypeAddon:
			if c.AddonSpec == nil {
				if !doc.Has(at.Child("addon_spec")) {
					ps.Add(doc, at, "an addon component needs addon_spec")
				}
			} else {
				l.checkAddon(a, c, at.Child("addon_spec"), plat, ps)
			}
			if c.WorkloadSpec != nil {
				ps.AddKey(doc, at.Child("workload_spec"), "an addon component takes addon_spec, not workload_spec")
			}
		}
	}
}

func unknownComponent(dep, app string, names map[string]int) string {
	known := make([]string, 0, len(names))
	for n := range names {
		known = append(known, n)
	}
	slices.Sort(known)
	msg := fmt.Sprintf("no component %q in app %q", dep, app)
	if sug := load.Suggest(dep, known); sug != "" {
		return msg + fmt.Sprintf("; did you mean %q?", sug)
	}
	if len(known) > 0 {
		msg += "; components: " + strings.Join(known, ", ")
	}
	return msg
}

func (l *checker) checkWorkload(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w, doc := c.WorkloadSpec, a.Doc
	mode := w.BuildMode
	if mode == "" {
		mode = spec.BuildModeImage
	}
	switch mode {
	case spec.BuildModeImage:
		if w.Image == "" {
			if !doc.Has(at.Child("image")) {
				ps.Add(doc, at, "build_mode image needs image (such as myorg/my-api:v1.2.0)")
			}
		} else {
			checkImage(doc, at.Child("image"), w.Image, plat, ps)
		}
		if w.Build != nil {
			ps.AddKey(doc, at.Child("build"), "build is used only with build_mode dockerfile or buildpack; remove it or set build_mode")
		}
	case spec.BuildModeDockerfile, spec.BuildModeBuildpack:
		if w.Image != "" {
			ps.AddKey(doc, at.Child("image"), "build_mode %s builds the image (it is named after the app); remove image, or use build_mode image", mode)
		}
		if w.Build != nil {
			ctx := w.Build.Context
			if ctx == "" {
				ctx = "."
			}
			if path.IsAbs(ctx) || escapes(path.Join(path.Dir(a.File), ctx)) {
				ps.Add(doc, at.Child("build").Child("context"), "build context %q is outside the apps repository", ctx)
			}
			if df := w.Build.Dockerfile; df != "" && (path.IsAbs(df) || escapes(path.Join(path.Dir(a.File), ctx, df))) {
				ps.Add(doc, at.Child("build").Child("dockerfile"), "Dockerfile %q is outside the apps repository", df)
			}
		}
	}
	ing := w.Ingress
	if ing != nil && ing.Enabled && c.Type == spec.TypeWorkload {
		if !hasExposedTCP(w) && !doc.Has(at.Child("port")) && !doc.Has(at.Child("ports")) {
			ps.Add(doc, at.Child("ingress"), "an ingress needs the workload's port (or an exposed TCP port in ports)")
		} else if !hasExposedTCP(w) && len(w.Ports) > 0 {
			ps.Add(doc, at.Child("ingress"), "an ingress needs an exposed TCP port; every port in ports is UDP, SCTP or expose: false")
		}
		if m := ingressHostProblem(ing.Host); ing.Host != "" && m != "" {
			ps.Add(doc, at.Child("ingress").Child("host"), "%q %s", ing.Host, m)
		}
		if ing.Path != "" && !strings.HasPrefix(ing.Path, "/") {
			ps.Add(doc, at.Child("ingress").Child("path"), "must start with /")
		}
	}
	if as := w.Autoscaling; as != nil && as.MinReplicas > 0 && as.MaxReplicas > 0 && as.MinReplicas > as.MaxReplicas {
		ps.Add(doc, at.Child("autoscaling").Child("min_replicas"), "min_replicas (%d) is greater than max_replicas (%d)", as.MinReplicas, as.MaxReplicas)
	}
	checkResources(w.Resources, doc, at.Child("resources"), true, ps)
	for i, s := range w.ImagePullSecrets {
		if !load.IsSubdomain(s) {
			ps.Add(doc, at.Child("image_pull_secrets").Child(i), "%q is not a valid Secret name", s)
		}
	}
	if hc := w.HealthCheck; hc != nil && c.Type == spec.TypeWorkload {
		if hc.Path != "" && !strings.HasPrefix(hc.Path, "/") {
			ps.Add(doc, at.Child("health_check").Child("path"), "must start with /")
		}
		if hc.Port == 0 && !hasTCP(w) && !doc.Has(at.Child("port")) {
			// The check probes the first exposed TCP port, else the first
			// TCP port (generate's defaultProbePort).
			ps.AddKey(doc, at.Child("health_check"), "a health check needs a TCP port: set health_check.port, or the workload's port, or a TCP port in ports")
		}
	}
	checkWords(doc, at, w.Command, w.Args, ps)
	if len(w.Env) > 0 {
		l.checkEnvList(a, c, w.Env, at.Child("env"), plat, ps)
	}
	l.checkWorkloadFields(a, c, at, plat, ps)
}

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
		n := 0
		for _, set := range []bool{e.Value != nil, e.SecretRef != nil, e.ExportRef != nil} {
			if set {
				n++
			}
		}
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
			names := map[string]int{}
			for i, cc := range a.Spec.Components {
				names[cc.Name] = i
			}
			ps.Add(doc, at.Child("component"), "%s", unknownComponent(r.Component, a.Spec.Name, names))
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
	if sug := load.Suggest(key, keys); sug != "" {
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

// checkResources checks a resources block; none (removing a default) is
// allowed where a default can apply to it, not in the platform's defaults.
func checkResources(r *spec.Resources, doc *load.Document, at load.Path, noneOK bool, ps *load.Problems) {
	if r == nil {
		return
	}
	lists := map[string]*spec.ResourceList{"requests": r.Requests, "limits": r.Limits}
	for _, which := range []string{"requests", "limits"} {
		l := lists[which]
		if l == nil {
			continue
		}
		for res, q := range map[string]*spec.Quantity{"cpu": l.CPU, "memory": l.Memory} {
			if q == nil {
				continue
			}
			if q.IsNone() {
				if !noneOK {
					ps.Add(doc, at.Child(which).Child(res), "none removes a default, and this is the platform's default: leave it out")
				}
				continue
			}
			if v, err := q.Parse(); err != nil {
				ps.Add(doc, at.Child(which).Child(res), "%q is not a quantity (such as 100m, 0.5 or 128Mi)", q.String())
			} else if v.Sign() < 0 {
				ps.Add(doc, at.Child(which).Child(res), "must not be negative")
			}
		}
	}
	if r.Requests != nil && r.Limits != nil {
		for res, pair := range map[string][2]*spec.Quantity{"cpu": {r.Requests.CPU, r.Limits.CPU}, "memory": {r.Requests.Memory, r.Limits.Memory}} {
			if pair[0] == nil || pair[1] == nil || pair[0].IsNone() || pair[1].IsNone() {
				continue
			}
			req, err1 := pair[0].Parse()
			lim, err2 := pair[1].Parse()
			if err1 == nil && err2 == nil && req.Cmp(lim) > 0 {
				ps.Add(doc, at.Child("requests").Child(res), "request %s is more than the limit %s", pair[0], pair[1])
			}
		}
	}
}

// checkRepo runs the checks that need every app: duplicate apps, ingress
// hosts, references between apps, and the dependency graph.
// checkNameClashes reports apps whose generated names collide, which
// joining names with '-' allows: objects named app-component within a
// project's namespace ("x" with component "y-z" and "x-y" with "z"), Flux
// Kustomizations named project-app-component (and project-<project> for the
// namespace) in the cluster's flux namespace, and the file of an app's
// Kustomizations, <project>-<app>.yaml in the cluster's folder. Without this
// one app would silently overwrite the other's files and objects.
func checkNameClashes(apps []*load.LoadedApp, ps *load.Problems) {
	type owner struct {
		a         *load.LoadedApp
		component string // "" for the app itself or its project
	}
	describe := func(o owner) string {
		if o.component == "" {
			return fmt.Sprintf("app %s of project %s (%s)", o.a.Spec.Name, o.a.Project, o.a.Doc.File)
		}
		return fmt.Sprintf("component %s of app %s (%s)", o.component, o.a.Spec.Name, o.a.Doc.File)
	}
	objects := map[string]owner{}        // cluster/project/object name
	kustomizations := map[string]owner{} // cluster/Kustomization name
	appFiles := map[string]owner{}       // cluster/file name
	projects := map[string]bool{}
	for _, a := range apps {
		if !projects[a.Cluster+"/"+a.Project] {
			projects[a.Cluster+"/"+a.Project] = true
			kustomizations[a.Cluster+"/"+layout.ProjectFluxName(a.Project)] = owner{a: a}
		}
	}
	for _, a := range apps {
		file := layout.AppFileName(a.Project, a.Spec.Name)
		if prev, dup := appFiles[a.Cluster+"/"+file]; dup {
			ps.Add(a.Doc, load.Path{"name"}, "the Flux Kustomizations of this app go to %s, as those of %s do; rename one of the apps or projects", file, describe(prev))
		} else {
			appFiles[a.Cluster+"/"+file] = owner{a: a}
		}
		for i, c := range a.Spec.Components {
			at := load.Path{"components", i, "name"}
			obj := layout.ObjectName(a.Spec.Name, c.Name)
			if prev, dup := objects[a.Cluster+"/"+a.Project+"/"+obj]; dup && prev.a != a {
				// Their Kustomizations clash too; one problem says it.
				ps.Add(a.Doc, at, "objects of this component are named %s in namespace %s, as those of %s are; rename one", obj, a.Project, describe(prev))
				continue
			} else if !dup {
				objects[a.Cluster+"/"+a.Project+"/"+obj] = owner{a, c.Name}
			}
			k := layout.ComponentFluxName(a.Project, a.Spec.Name, c.Name)
			if prev, dup := kustomizations[a.Cluster+"/"+k]; dup && prev.a != a {
				what := describe(prev)
				if prev.component == "" {
					what = "the namespace of project " + prev.a.Project
				}
				ps.Add(a.Doc, at, "the Flux Kustomization of this component is named %s, as that of %s is; rename one", k, what)
			} else if !dup {
				kustomizations[a.Cluster+"/"+k] = owner{a, c.Name}
			}
		}
	}
}

func (l *checker) checkRepo(repo *load.Repo, ps *load.Problems) {
	byKey := map[string]*load.LoadedApp{}
	var apps []*load.LoadedApp
	for _, a := range repo.Apps {
		if a.Spec.Name == "" || a.Project == "" {
			continue
		}
		if prev, dup := byKey[a.Key()]; dup {
			ps.Add(a.Doc, load.Path{"name"}, "app %q of project %q on cluster %q is also defined in %s", a.Spec.Name, a.Project, a.Cluster, prev.Doc.File)
			continue
		}
		byKey[a.Key()] = a
		apps = append(apps, a)
	}
	repo.Apps = apps

	checkNameClashes(apps, ps)
	l.checkServiceNames(apps, ps)
	checkServiceAccounts(apps, ps)

	checkHosts(apps, &repo.Platform, ps)

	type edgeAt struct {
		doc  *load.Document
		path load.Path
	}
	where := map[[2]string]edgeAt{}
	g := repo.Graph
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			from := load.NodeID(a, c.Name)
			g.AddNode(from)
			for j, d := range c.DependsOn {
				if a.Component(d) != nil && d != c.Name {
					g.AddEdge(from, load.NodeID(a, d))
					where[[2]string{from, load.NodeID(a, d)}] = edgeAt{a.Doc, load.Path{"components", i, "depends_on", j}}
				}
			}
			if c.WorkloadSpec == nil {
				continue
			}
			for _, ref := range load.ExportRefs(&a.Spec, c.WorkloadSpec, i) {
				r, at := ref.R, ref.At
				if r.Component == "" || r.AddonInstanceID != "" {
					continue
				}
				target := a
				if r.App != "" && r.App != a.Spec.Name {
					target = byKey[a.App().Sibling(r.App).Key()]
					if target == nil {
						ps.Add(a.Doc, at.Child("app"), "%s", l.unknownApp(r.App, a, apps))
						continue
					}
					tc := target.Component(r.Component)
					if tc == nil {
						names := map[string]int{}
						for k, cc := range target.Spec.Components {
							names[cc.Name] = k
						}
						ps.Add(a.Doc, at.Child("component"), "%s", unknownComponent(r.Component, target.Spec.Name, names))
						continue
					}
					l.checkExportKey(a, tc, r.ExportKey, at.Child("export_key"), ps)
				}
				if target.Component(r.Component) == nil || (target == a && r.Component == c.Name) {
					continue
				}
				to := load.NodeID(target, r.Component)
				if _, ok := where[[2]string{from, to}]; !ok {
					where[[2]string{from, to}] = edgeAt{a.Doc, at}
				}
				g.AddEdge(from, to)
			}
		}
	}
	order, err := g.Order()
	if ce, ok := err.(*graph.CycleError); ok {
		at := where[[2]string{ce.Cycle[0], ce.Cycle[1]}]
		ps.Add(at.doc, at.path, "dependency cycle: %s", strings.Join(shortCycle(ce.Cycle), " -> "))
		return
	}
	repo.Order = order
}

func hostField(ing *spec.Ingress) string {
	if ing.Host != "" {
		return "host"
	}
	return "enabled"
}

func (l *checker) unknownApp(name string, a *load.LoadedApp, apps []*load.LoadedApp) string {
	var same []string
	for _, o := range apps {
		if o.Project == a.Project && o.Cluster == a.Cluster {
			same = append(same, o.Spec.Name)
		}
	}
	msg := fmt.Sprintf("no app %q in project %q on cluster %q", name, a.Project, a.Cluster)
	if sug := load.Suggest(name, same); sug != "" {
		msg += fmt.Sprintf("; did you mean %q?", sug)
	}
	return msg
}

// shortCycle prints node ids as component names when the cycle stays in one
// app, else as app/component.
func shortCycle(ids []string) []string {
	out := make([]string, len(ids))
	oneApp := true
	appOf := func(id string) string { return id[:strings.LastIndexByte(id, '/')] }
	for _, id := range ids {
		if appOf(id) != appOf(ids[0]) {
			oneApp = false
		}
	}
	for i, id := range ids {
		parts := strings.Split(id, "/")
		if oneApp {
			out[i] = parts[len(parts)-1]
		} else {
			out[i] = parts[len(parts)-2] + "/" + parts[len(parts)-1]
		}
	}
	return out
}

// checkFleetArtifacts checks where the components' artifacts go.
func checkFleetArtifacts(a *spec.FleetArtifacts, doc *load.Document, ps *load.Problems) {
	at := load.Path{"fleet", "artifacts"}
	if r := a.Repository; r != "" {
		switch {
		case strings.Contains(r, "://"):
			ps.Add(doc, append(at, "repository"), "%q: give the repository as host/path, without a scheme (the OCIRepositories get oci://)", r)
		case strings.ContainsAny(r, "@") || strings.LastIndexByte(r, ':') > strings.IndexByte(r, '/'):
			ps.Add(doc, append(at, "repository"), "%q: give the repository without a tag or digest; each artifact is pinned by its digest", r)
		default:
			if _, err := name.NewRepository(r, name.StrictValidation); err != nil || !strings.Contains(r, "/") {
				ps.Add(doc, append(at, "repository"), "%q is not an OCI repository such as ghcr.io/myorg/fleet", r)
			}
		}
	}
	if a.Interval != "" {
		if d, err := time.ParseDuration(a.Interval); err == nil && d <= 0 {
			ps.Add(doc, append(at, "interval"), "must be longer than 0")
		}
	}
	for _, f := range []struct{ field, v string }{{"secret_ref", a.SecretRef}, {"cert_secret_ref", a.CertSecretRef}, {"service_account", a.ServiceAccount}} {
		if f.v != "" && !load.IsSubdomain(f.v) {
			ps.Add(doc, append(at, f.field), "%q is not a valid Kubernetes object name", f.v)
		}
	}
}
