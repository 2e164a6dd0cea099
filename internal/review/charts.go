package review

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet"
)

// Charts renders the chart of a HelmRelease as helm-controller would
// install it. The review asks it for each HelmRelease whose chart, source
// or values differ between base and head; package review/charts is the
// implementation with Helm's SDK, kept out of this package so that the
// programs that only read reviews do not carry Helm.
type Charts interface {
	Render(ctx context.Context, rel Release) (*Rendered, error)
}

// Release is what a HelmRelease asks Helm to install.
type Release struct {
	// Name is the Helm release name (spec.releaseName, else Flux's
	// default) and Namespace the namespace Helm renders into
	// (spec.targetNamespace, else the HelmRelease's).
	Name, Namespace string
	// Chart and Version are spec.chart.spec's chart and version (a
	// version or a semver constraint; empty is the latest). Both are
	// empty for a chart from an OCIRepository (spec.chartRef).
	Chart, Version string
	Source         ChartSource
	// Values are the values Helm renders with: the fleet's valuesFrom
	// ConfigMaps merged in order, then spec.values.
	Values map[string]any
}

// ChartSource is the Flux source a chart comes from.
type ChartSource struct {
	// Kind is HelmRepository or OCIRepository.
	Kind string
	// URL is the source's spec.url.
	URL string
	// OCI says the URL is an OCI registry (oci://): an OCIRepository,
	// or a HelmRepository of type oci.
	OCI bool
	// Tag, SemVer and Digest are an OCIRepository's spec.ref.
	Tag, SemVer, Digest string
}

// Rendered is a chart rendered for one release.
type Rendered struct {
	// Chart and Version name the chart as its Chart.yaml does; Digest is
	// the sha256 of the archive that was rendered.
	Chart, Version, Digest string
	// Objects are the rendered objects, the CRDs of the chart's crds/
	// folders first, then the templates' objects (hooks included, tests
	// left out), each as encoding/json decodes it.
	Objects []map[string]any
}

// chartDir is the folder, next to the HelmRelease's file, below which the
// review shows the objects its chart renders (one file per object).
const chartDir = "chart-"

// chartNotes are the lines of the review's Charts section.
type chartNotes struct {
	rendered []string // one per release whose rendered objects are shown
	skipped  []string // releases not rendered, and why
	danger   []string // CRDs a chart adds, changes or removes
	files    map[string]bool
}

// helmRelease is what one side says about a HelmRelease.
type helmRelease struct {
	obj     object
	rel     Release
	problem string // why it cannot be rendered, before any fetch
	secrets []string
}

// renderCharts renders the HelmReleases of the changed folders on both
// sides, and returns the rendered objects as files to add to each side,
// below each release's folder (chartDir), so that they diff, count and
// are judged like any other object. picked are the files of the changed
// apps (and the changed files), where the releases are looked for; full
// are the whole fleets, where their sources and ConfigMaps are. A release
// whose chart cannot be fetched or rendered gets a line saying why; the
// review goes on.
func renderCharts(ctx context.Context, charts Charts, picked, full [2]map[string][]byte, changes []fleet.Change) ([2]map[string][]byte, *chartNotes) {
	notes := &chartNotes{files: map[string]bool{}}
	dirs := map[string]bool{}
	cmNames := map[string]bool{} // keys of the ConfigMaps that change: releases reading them render again
	for _, ch := range changes {
		dirs[path.Dir(ch.Path)] = true
		for _, b := range [][]byte{ch.Old, ch.New} {
			if bytes.Contains(b, []byte("kind: ConfigMap")) {
				for _, o := range parseFleet(map[string][]byte{ch.Path: b}) {
					if o.Kind == "ConfigMap" {
						cmNames[o.Key()] = true
					}
				}
			}
		}
	}
	var added [2]map[string][]byte
	var sides [2]map[string]helmRelease
	for i := range 2 {
		added[i] = map[string][]byte{}
		sides[i] = releasesIn(picked[i], full[i], dirs, cmNames)
	}
	for _, id := range unionKeys(sides[0], sides[1]) {
		bh, bok := sides[0][id]
		hh, hok := sides[1][id]
		if bok && hok && reflect.DeepEqual(bh.rel, hh.rel) && bh.problem == hh.problem {
			continue // renders the same on both sides
		}
		var objs [2][]map[string]any
		var vers [2]string
		var shown [2]bool
		for i, h := range []*helmRelease{ptrIf(bh, bok), ptrIf(hh, hok)} {
			if h == nil {
				shown[i] = true
				continue
			}
			for _, s := range h.secrets {
				notes.skipped = append(notes.skipped, fmt.Sprintf("HelmRelease %s (%s): values from Secret %s not rendered", name(h.obj), side(i), code(s)))
			}
			what := fmt.Sprintf("chart %s %s", code(orDash(h.rel.Chart)), code(orDash(h.rel.Version)))
			if h.rel.Chart == "" {
				what = fmt.Sprintf("chart of %s %s", md(h.rel.Source.Kind), code(h.rel.Source.URL))
			}
			if h.problem != "" {
				notes.skipped = append(notes.skipped, fmt.Sprintf("HelmRelease %s (%s): %s not rendered: %s", name(h.obj), side(i), what, md(h.problem)))
				continue
			}
			r, err := charts.Render(ctx, h.rel)
			if err != nil {
				notes.skipped = append(notes.skipped, fmt.Sprintf("HelmRelease %s (%s): %s not rendered: %s", name(h.obj), side(i), what, md(err.Error())))
				continue
			}
			objs[i], vers[i], shown[i] = r.Objects, r.Chart+" "+r.Version, true
		}
		o := hh.obj
		if !hok {
			o = bh.obj
		}
		if !shown[0] || !shown[1] {
			// Half a pair would diff as every object added or removed.
			continue
		}
		dir := path.Dir(o.File) + "/" + chartDir + o.Name
		files := [2]map[string][]byte{}
		for i := range 2 {
			files[i] = objectFiles(dir, objs[i], o.Namespace)
		}
		maskSecrets(files)
		for i := range 2 {
			maps.Copy(added[i], files[i])
			for p := range files[i] {
				notes.files[p] = true
			}
		}
		notes.danger = append(notes.danger, crdChanges(o, objs)...)
		line := fmt.Sprintf("HelmRelease %s: %s", name(o), code(strings.TrimSpace(cmpOr(vers[1], "—"))))
		switch {
		case !bok:
			line += " (added)"
		case !hok:
			line = fmt.Sprintf("HelmRelease %s: %s (removed)", name(o), code(vers[0]))
		case vers[0] != vers[1]:
			line = fmt.Sprintf("HelmRelease %s: %s → %s", name(o), code(vers[0]), code(vers[1]))
		}
		notes.rendered = append(notes.rendered, line+fmt.Sprintf(", objects below %s", code(dir+"/")))
	}
	return added, notes
}

func ptrIf(h helmRelease, ok bool) *helmRelease {
	if !ok {
		return nil
	}
	return &h
}

func side(i int) string { return [2]string{"base", "head"}[i] }

// releasesIn reads the HelmReleases of the folders dirs among picked,
// and those of files whose valuesFrom names a ConfigMap of cms, on one
// side.
func releasesIn(picked, files map[string][]byte, dirs, cms map[string]bool) map[string]helmRelease {
	scan := picked
	if len(cms) > 0 {
		scan = files // a ConfigMap's readers may be anywhere
	}
	pick := map[string][]byte{}
	for p, b := range scan {
		if (dirs[path.Dir(p)] || len(cms) > 0 && bytes.Contains(b, []byte("valuesFrom"))) &&
			bytes.Contains(b, []byte("kind: HelmRelease")) && !strings.Contains(path.Dir(p), "/"+chartDir) {
			pick[p] = b
		}
	}
	if len(pick) == 0 {
		return nil
	}
	objs := parseFleet(pick)
	out := map[string]helmRelease{}
	var srcs map[string]object // the side's sources and ConfigMaps, read once when needed
	// lookup finds a source or ConfigMap on the release's cluster.
	lookup := func(cluster string) func(kind, ns, n string) (object, bool) {
		return func(kind, ns, n string) (object, bool) {
			if srcs == nil {
				srcs = sourcesOf(files)
			}
			o, ok := srcs[fleet.ObjectKey(cluster, kind, ns, n)]
			return o, ok
		}
	}
	for id, o := range objs {
		if o.Kind != "HelmRelease" || groupOf(str(o.Obj["apiVersion"])) != "helm.toolkit.fluxcd.io" {
			continue
		}
		if !dirs[path.Dir(o.File)] && !readsAny(o, cms) {
			continue
		}
		out[id] = releaseOf(o, lookup(o.OnCluster()))
	}
	return out
}

// readsAny says whether a HelmRelease's valuesFrom names a ConfigMap of
// cms (by key).
func readsAny(o object, cms map[string]bool) bool {
	l, _ := get(o.Obj, "spec", "valuesFrom").([]any)
	for _, v := range l {
		if str(get(v, "kind")) == "ConfigMap" && cms[fleet.ObjectKey(o.OnCluster(), "ConfigMap", o.Namespace, str(get(v, "name")))] {
			return true
		}
	}
	return false
}

// sourcesOf reads the Flux chart sources and ConfigMaps of one side.
func sourcesOf(files map[string][]byte) map[string]object {
	pick := map[string][]byte{}
	for p, b := range files {
		if bytes.Contains(b, []byte("kind: HelmRepository")) || bytes.Contains(b, []byte("kind: OCIRepository")) ||
			bytes.Contains(b, []byte("kind: ConfigMap")) {
			pick[p] = b
		}
	}
	return parseFleet(pick)
}

// releaseOf reads what a HelmRelease asks Helm to install; problem says
// why it cannot be rendered without fetching anything.
func releaseOf(o object, lookup func(kind, ns, name string) (object, bool)) helmRelease {
	h := helmRelease{obj: o}
	spec, _ := get(o.Obj, "spec").(map[string]any)
	ns := cmpOr(str(spec["targetNamespace"]), o.Namespace)
	relName := str(spec["releaseName"])
	if relName == "" {
		// helm-controller's default: the target namespace and the name
		// when targetNamespace is set, else the name.
		relName = o.Name
		if t := str(spec["targetNamespace"]); t != "" {
			relName = t + "-" + o.Name
		}
	}
	h.rel = Release{Name: relName, Namespace: ns}
	var srcRef any
	if ref := get(spec, "chartRef"); ref != nil {
		srcRef = ref
	} else {
		h.rel.Chart = str(get(spec, "chart", "spec", "chart"))
		h.rel.Version = str(get(spec, "chart", "spec", "version"))
		srcRef = get(spec, "chart", "spec", "sourceRef")
	}
	kind, srcName := str(get(srcRef, "kind")), str(get(srcRef, "name"))
	srcNS := cmpOr(str(get(srcRef, "namespace")), o.Namespace)
	h.rel.Source.Kind = kind
	switch kind {
	case "HelmRepository", "OCIRepository":
	default:
		h.problem = fmt.Sprintf("charts from a %s are not rendered", cmpOr(kind, "source of no kind"))
		return h
	}
	src, ok := lookup(kind, srcNS, srcName)
	if !ok {
		h.problem = fmt.Sprintf("%s %s/%s is not in the fleet", kind, srcNS, srcName)
		return h
	}
	url := str(get(src.Obj, "spec", "url"))
	h.rel.Source.URL = url
	h.rel.Source.OCI = kind == "OCIRepository" || str(get(src.Obj, "spec", "type")) == "oci" || strings.HasPrefix(url, "oci://")
	if kind == "OCIRepository" {
		h.rel.Source.Tag = str(get(src.Obj, "spec", "ref", "tag"))
		h.rel.Source.SemVer = str(get(src.Obj, "spec", "ref", "semver"))
		h.rel.Source.Digest = str(get(src.Obj, "spec", "ref", "digest"))
	}
	values := map[string]any{}
	from, _ := spec["valuesFrom"].([]any)
	for i, v := range from {
		k, n := str(get(v, "kind")), str(get(v, "name"))
		switch k {
		case "Secret":
			h.secrets = append(h.secrets, o.Namespace+"/"+n)
			continue
		case "ConfigMap":
		default:
			h.problem = fmt.Sprintf("spec.valuesFrom[%d]: kind %q is neither ConfigMap nor Secret", i, k)
			return h
		}
		cm, ok := lookup("ConfigMap", o.Namespace, n)
		key := cmpOr(str(get(v, "valuesKey")), "values.yaml")
		data, has := get(cm.Obj, "data", key).(string)
		if !ok || !has {
			if b, _ := get(v, "optional").(bool); b {
				continue
			}
			h.problem = fmt.Sprintf("spec.valuesFrom[%d]: ConfigMap %s/%s (key %s) is not in the fleet", i, o.Namespace, n, key)
			return h
		}
		if tp := str(get(v, "targetPath")); tp != "" {
			if err := setPath(values, tp, data); err != nil {
				h.problem = fmt.Sprintf("spec.valuesFrom[%d].targetPath: %v", i, err)
				return h
			}
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(data), &m); err != nil {
			h.problem = fmt.Sprintf("spec.valuesFrom[%d]: ConfigMap %s/%s key %s: %v", i, o.Namespace, n, key, err)
			return h
		}
		mergeValues(values, m)
	}
	if v, ok := spec["values"].(map[string]any); ok {
		mergeValues(values, v)
	}
	h.rel.Values = values
	return h
}

// mergeValues merges src into dst as helm-controller merges values:
// maps deeply, anything else replaced.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeValues(dm, sm)
				continue
			}
			cp := map[string]any{}
			mergeValues(cp, sm)
			dst[k] = cp
			continue
		}
		dst[k] = v
	}
}

// setPath sets a dotted path (a.b.c) of values to s.
func setPath(values map[string]any, p, s string) error {
	parts := strings.Split(p, ".")
	for _, part := range parts {
		if part == "" || strings.ContainsAny(part, `[]\=,`) {
			return fmt.Errorf("%q: only dotted names are read", p)
		}
	}
	m := values
	for _, part := range parts[:len(parts)-1] {
		next, ok := m[part].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[part] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = s
	return nil
}

// objectFiles writes each rendered object as a fleet file below dir:
// <kind>-<name>.yaml (with its namespace when two share a kind and name),
// the namespace Helm installs into filled in where the object has none
// and its kind is namespaced.
func objectFiles(dir string, objs []map[string]any, ns string) map[string][]byte {
	out := map[string][]byte{}
	for _, m := range objs {
		kind, _ := m["kind"].(string)
		n := str(get(m, "metadata", "name"))
		if md, ok := m["metadata"].(map[string]any); ok && str(md["namespace"]) == "" && !renderedClusterScoped(m) {
			md["namespace"] = ns
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			continue
		}
		p := dir + "/" + fileName(kind) + "-" + fileName(n) + ".yaml"
		if _, dup := out[p]; dup {
			p = dir + "/" + fileName(kind) + "-" + fileName(str(get(m, "metadata", "namespace"))) + "-" + fileName(n) + ".yaml"
		}
		for i := 2; ; i++ {
			if _, dup := out[p]; !dup {
				break
			}
			p = fmt.Sprintf("%s/%s-%s-%d.yaml", dir, fileName(kind), fileName(n), i)
		}
		out[p] = b
	}
	return out
}

// fileName is s lowercased as a file name: anything but letters, digits,
// '.', '-' and '_' (a '/' in a rendered name) becomes '_', so that no
// rendered object's file lands outside its release's folder.
func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r == '.':
			return r
		}
		return '_'
	}, s)
	if s == "" || strings.Trim(s, ".") == "" {
		s = "_" + s
	}
	return s
}

// renderedClusterScoped says whether a rendered object's kind is
// cluster-scoped, by the review's table of kinds.
func renderedClusterScoped(m map[string]any) bool {
	return clusterScoped[gk{groupOf(str(m["apiVersion"])), str(m["kind"])}]
}

// maskSecrets replaces every value of the rendered Secrets' data and
// stringData with a mark that says only whether it differs from the other
// side's: no value of a Secret is ever shown.
func maskSecrets(files [2]map[string][]byte) {
	var parsed [2]map[string]map[string]any
	for i := range 2 {
		parsed[i] = map[string]map[string]any{}
		for p, b := range files[i] {
			var m map[string]any
			if yaml.Unmarshal(b, &m) == nil && str(m["kind"]) == "Secret" && str(m["apiVersion"]) == "v1" {
				parsed[i][p] = m
			}
		}
	}
	for i := range 2 {
		for p, m := range parsed[i] {
			other := parsed[1-i][p]
			for _, field := range []string{"data", "stringData"} {
				d, _ := m[field].(map[string]any)
				for k, v := range d {
					mark := "(hidden)"
					if ov, ok := get(other, field, k).(string); other != nil && (!ok || ov != fmt.Sprint(v)) && i == 1 {
						mark = "(hidden; changed)"
					}
					d[k] = mark
				}
			}
		}
	}
	for i := range 2 {
		for p, m := range parsed[i] {
			if b, err := yaml.Marshal(m); err == nil {
				files[i][p] = b
			}
		}
	}
}

// crdChanges lists the CustomResourceDefinitions a chart adds, changes or
// removes.
func crdChanges(hr object, objs [2][]map[string]any) []string {
	var crds [2]map[string]map[string]any
	for i := range 2 {
		crds[i] = map[string]map[string]any{}
		for _, m := range objs[i] {
			if str(m["kind"]) == "CustomResourceDefinition" && groupOf(str(m["apiVersion"])) == "apiextensions.k8s.io" {
				crds[i][str(get(m, "metadata", "name"))] = m
			}
		}
	}
	var out []string
	for _, n := range unionKeys(crds[0], crds[1]) {
		b, bok := crds[0][n]
		h, hok := crds[1][n]
		switch {
		case !bok:
			out = append(out, fmt.Sprintf("HelmRelease %s: the chart adds CustomResourceDefinition %s: a new API for the whole cluster, outside every project's namespace", name(hr), code(n)))
		case !hok:
			out = append(out, fmt.Sprintf("HelmRelease %s: the chart no longer has CustomResourceDefinition %s: if Helm deletes it, every object of that kind in the cluster goes with it (Helm keeps the CRDs of a chart's crds/ folder)", name(hr), code(n)))
		case !reflect.DeepEqual(b, h):
			out = append(out, fmt.Sprintf("HelmRelease %s: the chart changes CustomResourceDefinition %s (%s) for the whole cluster; helm-controller applies a CRD of the chart's crds/ folder on upgrade only as spec.upgrade.crds says (default Skip)", name(hr), code(n), changedFields(b, h)))
		}
	}
	slices.Sort(out)
	return out
}

// write is the Charts section: the releases whose rendered objects the
// comment shows, and those it could not render.
func (n *chartNotes) write(b *strings.Builder) {
	if len(n.rendered) == 0 && len(n.skipped) == 0 {
		return
	}
	b.WriteString("### Charts\n\n")
	for _, l := range n.rendered {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range n.skipped {
		b.WriteString("- ⚠️ " + l + "\n")
	}
	b.WriteString("\n")
}

// writeCommits names the commits compared, shortened.
func writeCommits(b *strings.Builder, base, head string) {
	if base == "" && head == "" {
		return
	}
	short := func(s string) string {
		if len(s) > 7 && isHex(s) {
			s = s[:7]
		}
		return code(orDash(s))
	}
	fmt.Fprintf(b, "Base %s → head %s.\n\n", short(base), short(head))
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
