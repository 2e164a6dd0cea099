package review

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// What a change may do beyond its project: a team commits under its own
// apps folder, and the fleet it renders (or a fleet edited by hand) can
// still hold objects that act on the whole cluster, grant rights, bring a
// kind nobody reviewed before, install a chart from anywhere, or take
// another app's host. tenancy lists each as a danger, naming the object
// and what it does, so that a reviewer sees it where she reads.

// clusterScoped are the kinds, by API group, whose objects live outside
// every namespace.
var clusterScoped = kindSet(
	"/Namespace", "/Node", "/PersistentVolume", "/ComponentStatus",
	"rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding",
	"apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService",
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration", "admissionregistration.k8s.io/MutatingWebhookConfiguration",
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy", "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
	"admissionregistration.k8s.io/MutatingAdmissionPolicy", "admissionregistration.k8s.io/MutatingAdmissionPolicyBinding",
	"storage.k8s.io/StorageClass", "storage.k8s.io/CSIDriver", "storage.k8s.io/CSINode", "storage.k8s.io/VolumeAttachment",
	"storage.k8s.io/VolumeAttributesClass",
	"scheduling.k8s.io/PriorityClass", "node.k8s.io/RuntimeClass", "networking.k8s.io/IngressClass",
	"networking.k8s.io/IPAddress", "networking.k8s.io/ServiceCIDR",
	"certificates.k8s.io/CertificateSigningRequest", "certificates.k8s.io/ClusterTrustBundle",
	"flowcontrol.apiserver.k8s.io/FlowSchema", "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
	"resource.k8s.io/DeviceClass", "resource.k8s.io/ResourceSlice",
	"gateway.networking.k8s.io/GatewayClass", "cert-manager.io/ClusterIssuer",
	"metrics.k8s.io/NodeMetrics",
)

// namespaced are the kinds, by API group, whose objects live in a
// namespace: those of Kubernetes, Flux and the few add-ons a fleet
// commonly holds. A kind in neither set may be either, and is judged as
// if it were cluster-scoped.
var namespaced = kindSet(
	"/Pod", "/Service", "/ConfigMap", "/Secret", "/ServiceAccount", "/PersistentVolumeClaim", "/Endpoints",
	"/LimitRange", "/ResourceQuota", "/Event", "/ReplicationController", "/PodTemplate", "/Binding",
	"apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "apps/ControllerRevision",
	"batch/Job", "batch/CronJob", "networking.k8s.io/Ingress", "networking.k8s.io/NetworkPolicy",
	"policy/PodDisruptionBudget", "autoscaling/HorizontalPodAutoscaler", "autoscaling.k8s.io/VerticalPodAutoscaler",
	"rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/RoleBinding",
	"coordination.k8s.io/Lease", "discovery.k8s.io/EndpointSlice", "events.k8s.io/Event",
	"storage.k8s.io/CSIStorageCapacity", "resource.k8s.io/ResourceClaim", "resource.k8s.io/ResourceClaimTemplate",
	"kustomize.toolkit.fluxcd.io/Kustomization", "helm.toolkit.fluxcd.io/HelmRelease",
	"source.toolkit.fluxcd.io/GitRepository", "source.toolkit.fluxcd.io/OCIRepository", "source.toolkit.fluxcd.io/HelmRepository",
	"source.toolkit.fluxcd.io/HelmChart", "source.toolkit.fluxcd.io/Bucket", "source.toolkit.fluxcd.io/ExternalArtifact",
	"notification.toolkit.fluxcd.io/Alert", "notification.toolkit.fluxcd.io/Provider", "notification.toolkit.fluxcd.io/Receiver",
	"image.toolkit.fluxcd.io/ImageRepository", "image.toolkit.fluxcd.io/ImagePolicy", "image.toolkit.fluxcd.io/ImageUpdateAutomation",
	"gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute",
	"gateway.networking.k8s.io/TLSRoute", "gateway.networking.k8s.io/ReferenceGrant",
	"cert-manager.io/Certificate", "cert-manager.io/Issuer",
	"monitoring.coreos.com/ServiceMonitor", "monitoring.coreos.com/PodMonitor", "monitoring.coreos.com/PrometheusRule",
	"keda.sh/ScaledObject", "keda.sh/ScaledJob",
)

// rbacKinds are the kinds that grant rights.
var rbacKinds = kindSet("rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/RoleBinding",
	"rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding")

// gk is a kind by API group ("" for the core group).
type gk struct{ group, kind string }

// kindSet makes a set of kinds from "group/Kind" strings.
func kindSet(l ...string) map[gk]bool {
	m := make(map[gk]bool, len(l))
	for _, s := range l {
		g, k, _ := strings.Cut(s, "/")
		m[gk{g, k}] = true
	}
	return m
}

// groupOf is the API group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// groupKind is an object's kind by API group, as the sets above key it.
func groupKind(o object) gk { return gk{groupOf(str(o.Obj["apiVersion"])), o.Kind} }

// name names a kind in a sentence: with its group when it has one.
func (k gk) name() string {
	if k.group == "" {
		return code(k.kind)
	}
	return code(k.kind) + " (" + code(k.group) + ")"
}

// tenancy lists the dangers of a change beyond the project it belongs
// to: every cluster-scoped object (or object of a kind not known to be
// namespaced) and every RBAC object added or changed, every kind new to
// the fleet, every chart repository new to it, every chart's major
// version that changes, and every Ingress host added, removed or moved
// between apps. base and head are the objects of the changed files (and
// of the changed apps); baseFiles and headFiles are the whole fleets,
// read as text only where a danger needs what the change does not touch.
// explained are the Flux sources the comment explains under Flux sources
// (the OCIRepositories of components and projects, whose digests it
// checks): not new kinds. The hosts of a removed app go with
// it, as its own danger line says. rendered are the files of objects a
// chart renders: not new kinds either (the chart brings them), and their
// CRDs have the Charts lines (crdChanges) instead.
func tenancy(base, head map[string]object, baseFiles, headFiles map[string][]byte, explained, removedApps, rendered map[string]bool) []string {
	// The objects to judge: every object added, and those changed of the
	// kinds judged when they change. Deciding that first spares comparing
	// the objects of the usual kinds, which are most of a large change.
	var ids []string
	for id, ho := range head {
		k := groupKind(ho)
		if _, ok := base[id]; !ok || rbacKinds[k] || clusterScoped[k] || !namespaced[k] || fluxInComponent(nil, ho) != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []string
	newKinds := map[gk][]object{} // the head's objects of the kinds the base's changed objects lack
	for _, id := range ids {
		bo, bok := base[id]
		ho := head[id]
		if bok && reflect.DeepEqual(bo.Obj, ho.Obj) {
			continue
		}
		var prev *object
		if bok {
			prev = &bo
		}
		k := groupKind(ho)
		fromChart := rendered[ho.File]
		switch {
		case rbacKinds[k]:
			out = append(out, rbac(prev, ho))
		case fromChart && k == (gk{"apiextensions.k8s.io", "CustomResourceDefinition"}):
		case clusterScoped[k]:
			out = append(out, clusterObject(prev, ho))
		case !namespaced[k] && ho.Kind != "":
			verb := "is added"
			if prev != nil {
				verb = "changes"
			}
			out = append(out, fmt.Sprintf("%s %s %s: fleetwright does not know whether kind %s is cluster-scoped, so review it as if it were (it may act beyond the project's namespace)",
				md(ho.Kind), name(ho), verb, k.name()))
		}
		if d := fluxInComponent(prev, ho); d != "" {
			out = append(out, d)
		}
		if !bok && !explained[id] && !fromChart {
			newKinds[k] = append(newKinds[k], ho)
		}
	}
	out = append(out, kindsNew(newKinds, base, baseFiles)...)
	out = append(out, charts(base, head, baseFiles)...)
	out = append(out, hosts(base, head, headFiles, removedApps)...)
	return out
}

// clusterObject is the danger of a cluster-scoped object added or
// changed: it acts outside every project's namespace.
func clusterObject(bo *object, ho object) string {
	what := fmt.Sprintf("cluster-scoped %s %s", md(ho.Kind), code(ho.Name))
	if ho.Namespace != "" {
		what += " (its namespace " + code(ho.Namespace) + " is ignored)"
	}
	var d string
	if bo == nil {
		d = what + " is added: it acts on the whole cluster, outside every project's namespace"
	} else {
		d = what + " changes (" + changedFields(bo.Obj, ho.Obj) + "): it acts on the whole cluster, outside every project's namespace"
	}
	if ho.Kind == "Namespace" {
		labels, _ := get(ho.Obj, "metadata", "labels").(map[string]any)
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if strings.HasPrefix(k, "pod-security.kubernetes.io/") {
				ps = append(ps, code(k+"="+fmt.Sprint(labels[k])))
			}
		}
		if len(ps) > 0 {
			d += "; its pod security: " + strings.Join(ps, ", ")
		}
	}
	return d
}

// changedFields names the fields that differ between two objects, two
// levels deep (metadata.labels, spec.template).
func changedFields(a, b map[string]any) string {
	var out []string
	for _, k := range unionKeys(a, b) {
		if reflect.DeepEqual(a[k], b[k]) {
			continue
		}
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		if !aok || !bok {
			out = append(out, k)
			continue
		}
		for _, k2 := range unionKeys(am, bm) {
			if !reflect.DeepEqual(am[k2], bm[k2]) {
				out = append(out, k+"."+k2)
			}
		}
	}
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("%d more", len(out)-5))
	}
	return md(strings.Join(out, ", "))
}

// rbac is the danger of an RBAC object added or changed: what a binding
// grants to whom, and where; what a role allows.
func rbac(bo *object, ho object) string {
	verb := "is added"
	if bo != nil {
		verb = "changes"
	}
	cluster := strings.HasPrefix(ho.Kind, "Cluster")
	where := "in namespace " + code(ho.Namespace)
	switch {
	case cluster:
		where = "in every namespace of the cluster"
	case ho.Namespace == "":
		where = "in the namespace it is applied to"
	}
	switch ho.Kind {
	case "RoleBinding", "ClusterRoleBinding":
		ref := get(ho.Obj, "roleRef")
		role := md(orDefault(str(get(ref, "kind")), "role")) + " " + code(orDash(str(get(ref, "name"))))
		subjects, _ := get(ho.Obj, "subjects").([]any)
		var who []string
		for _, s := range subjects {
			n := str(get(s, "name"))
			if ns := str(get(s, "namespace")); ns != "" {
				n = ns + "/" + n
			}
			who = append(who, md(str(get(s, "kind")))+" "+code(n))
		}
		if len(who) == 0 {
			who = []string{"no subject"}
		}
		if len(who) > 5 {
			who = append(who[:5], fmt.Sprintf("%d more", len(who)-5))
		}
		d := fmt.Sprintf("%s %s %s: it grants %s to %s %s", ho.Kind, rbacName(ho), verb, role, strings.Join(who, ", "), where)
		if str(get(ref, "name")) == "cluster-admin" {
			d += " (every right on everything)"
		}
		return d
	}
	rules, _ := get(ho.Obj, "rules").([]any)
	var allows []string
	for _, r := range rules {
		list := func(f string) string {
			l, _ := get(r, f).([]any)
			var s []string
			for _, v := range l {
				s = append(s, fmt.Sprint(v))
			}
			return codes(s)
		}
		a := list("verbs") + " on " + list("resources")
		if names := list("resourceNames"); names != "" {
			a += " named " + names
		}
		if urls := list("nonResourceURLs"); urls != "" {
			a = list("verbs") + " on URLs " + urls
		}
		allows = append(allows, a)
	}
	if len(allows) > 5 {
		allows = append(allows[:5], fmt.Sprintf("%d more rules", len(allows)-5))
	}
	d := fmt.Sprintf("%s %s %s: it allows %s %s", ho.Kind, rbacName(ho), verb, orDefault(strings.Join(allows, "; "), "nothing"), where)
	if get(ho.Obj, "aggregationRule") != nil {
		d += ", and every right of the ClusterRoles its aggregationRule selects"
	}
	return d + " to whoever is bound to it"
}

// rbacName names an RBAC object: a cluster-scoped one by its name alone.
func rbacName(o object) string {
	if strings.HasPrefix(o.Kind, "Cluster") {
		return code(o.Name)
	}
	return name(o)
}

// fluxInComponent is the danger of a Flux object added or changed in a
// component's folder that reaches beyond it: render writes only an
// addon's HelmRelease and HelmRepository there, in the component's
// namespace. A Flux Kustomization there applies whatever its source
// holds; a reference to another namespace (a target, a source, a
// dependency, Helm's storage) or a kubeconfig reaches past the project.
func fluxInComponent(bo *object, ho object) string {
	if !strings.HasSuffix(groupOf(str(ho.Obj["apiVersion"])), ".toolkit.fluxcd.io") || ho.ComponentDir() == "" {
		return ""
	}
	var why []string
	if ho.Kind == "Kustomization" {
		why = append(why, "a Flux Kustomization applied by a component applies whatever its source holds")
	}
	other := func(field, ns string) {
		if ns != "" && ns != ho.Namespace {
			why = append(why, field+" is "+code(ns))
		}
	}
	spec := get(ho.Obj, "spec")
	other("spec.targetNamespace", str(get(spec, "targetNamespace")))
	other("spec.storageNamespace", str(get(spec, "storageNamespace")))
	other("spec.sourceRef.namespace", str(get(spec, "sourceRef", "namespace")))
	other("spec.chart.spec.sourceRef.namespace", str(get(spec, "chart", "spec", "sourceRef", "namespace")))
	other("spec.chartRef.namespace", str(get(spec, "chartRef", "namespace")))
	deps, _ := get(spec, "dependsOn").([]any)
	for i, d := range deps {
		other(fmt.Sprintf("spec.dependsOn[%d].namespace", i), str(get(d, "namespace")))
	}
	if get(spec, "kubeConfig") != nil {
		why = append(why, "spec.kubeConfig sends it to another cluster")
	}
	if len(why) == 0 {
		return ""
	}
	verb := "is added"
	if bo != nil {
		verb = "changes"
	}
	return fmt.Sprintf("Flux %s %s in component folder %s %s and reaches beyond its project: %s",
		md(ho.Kind), name(ho), code(ho.ComponentDir()), verb, strings.Join(why, "; "))
}

// kindsNew lists the kinds of the head that no object of the base fleet
// has. A kind the base's changed objects lack is looked for in the text
// of the base's other files (a "kind:" line and the group's "apiVersion:"
// line in one file); a base fleet with no object at all (the first
// render) has no new kind.
func kindsNew(kinds map[gk][]object, base map[string]object, baseFiles map[string][]byte) []string {
	if len(kinds) == 0 {
		return nil
	}
	for _, o := range base {
		delete(kinds, groupKind(o))
	}
	if len(kinds) == 0 || !anyObject(baseFiles) {
		return nil
	}
	var out []string
	for _, k := range slices.SortedFunc(maps.Keys(kinds), func(a, b gk) int { return strings.Compare(a.group+"/"+a.kind, b.group+"/"+b.kind) }) {
		if k.kind == "" || inText(baseFiles, k.group, k.kind) {
			continue
		}
		objs := kinds[k]
		slices.SortFunc(objs, func(a, b object) int { return strings.Compare(a.Key(), b.Key()) })
		names := name(objs[0])
		if len(objs) > 1 {
			names += fmt.Sprintf(" and %d more", len(objs)-1)
		}
		out = append(out, fmt.Sprintf("kind %s is new to the fleet (no object of the base has it): %s", k.name(), names))
	}
	return out
}

// hasLine says whether a file holds a line that starts with prefix.
func hasLine(b []byte, prefix string) bool {
	return bytes.HasPrefix(b, []byte(prefix)) || bytes.Contains(b, []byte("\n"+prefix))
}

// anyObject says whether any file of a fleet holds an object.
func anyObject(files map[string][]byte) bool {
	for _, b := range files {
		if hasLine(b, "kind: ") {
			return true
		}
	}
	return false
}

// inText says whether a file of a fleet holds an object of a kind, as
// render writes it: a "kind: K" line and an "apiVersion:" line of the
// group in one file.
func inText(files map[string][]byte, group, kind string) bool {
	api := "apiVersion: " + group + "/"
	if group == "" {
		api = "apiVersion: v1\n"
	}
	for _, b := range files {
		if hasLine(b, "kind: "+kind+"\n") && hasLine(b, api) {
			return true
		}
	}
	return false
}

// chartSource is where a HelmRelease takes its chart from: the URL of its
// source when the objects hold it, else the source's kind and name.
func chartSource(hr object, objs map[string]object) (url, source string) {
	ref := get(hr.Obj, "spec", "chartRef")
	if ref == nil {
		ref = get(hr.Obj, "spec", "chart", "spec", "sourceRef")
	}
	kind := str(get(ref, "kind"))
	ns, n := cmpOr(str(get(ref, "namespace")), hr.Namespace), str(get(ref, "name"))
	id := kind + "/" + ns + "/" + n
	if src, ok := objs[fleet.ObjectKey(hr.OnCluster(), kind, ns, n)]; ok {
		return str(get(src.Obj, "spec", "url")), id
	}
	return "", id
}

// chartVersion is the chart version a HelmRelease asks for.
func chartVersion(hr object) string { return str(get(hr.Obj, "spec", "chart", "spec", "version")) }

// charts lists the HelmReleases that install a chart from a repository
// the base fleet does not use, and those whose chart's major version
// changes.
func charts(base, head map[string]object, baseFiles map[string][]byte) []string {
	known := map[string]bool{}
	for _, o := range base {
		if o.Kind == "HelmRelease" {
			url, src := chartSource(o, base)
			known[cmpOr(url, src)] = true
		}
	}
	var releases []string
	for id, o := range head {
		if o.Kind == "HelmRelease" && groupOf(str(o.Obj["apiVersion"])) == "helm.toolkit.fluxcd.io" {
			releases = append(releases, id)
		}
	}
	slices.Sort(releases)
	var out []string
	for _, id := range releases {
		ho := head[id]
		url, src := chartSource(ho, head)
		chart := code(orDash(str(get(ho.Obj, "spec", "chart", "spec", "chart"))))
		switch {
		case url != "" && !known[url] && !urlInText(baseFiles, url):
			d := fmt.Sprintf("HelmRelease %s installs chart %s from %s, a chart repository new to the fleet (no HelmRelease of the base uses it): what it serves is installed with the rights helm-controller gives the release",
				name(ho), chart, code(url))
			if strings.HasPrefix(strings.ToLower(url), "http://") {
				d += "; it is plain http, so anyone on the way can change the chart"
			}
			out = append(out, d)
			known[url] = true
		case url == "" && !known[src]:
			k, rest, _ := strings.Cut(src, "/")
			out = append(out, fmt.Sprintf("HelmRelease %s installs chart %s from %s %s, which the change does not show: check where that source takes its charts from",
				name(ho), chart, md(k), code(rest)))
			known[src] = true
		}
		if bo, ok := base[id]; ok {
			if d := majorChange(ho, chartVersion(bo), chartVersion(ho)); d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// urlInText says whether a file of the base fleet gives a source this URL.
func urlInText(files map[string][]byte, url string) bool {
	for _, b := range files {
		for _, l := range []string{"url: " + url + "\n", `url: "` + url + `"`, "url: '" + url + "'"} {
			if bytes.Contains(b, []byte(l)) {
				return true
			}
		}
	}
	return false
}

// majorChange is the danger of a chart whose major version changes, or
// whose version is not an exact one and changes.
func majorChange(hr object, old, new string) string {
	if old == new {
		return ""
	}
	om, ook := major(old)
	nm, nok := major(new)
	switch {
	case ook && nok && om == nm:
		return ""
	case ook && nok:
		return fmt.Sprintf("HelmRelease %s: chart %s moves to another major version, %s → %s: a major version may change the chart's values, objects and stored data; read its upgrade notes",
			name(hr), code(orDash(str(get(hr.Obj, "spec", "chart", "spec", "chart")))), code(old), code(new))
	}
	return fmt.Sprintf("HelmRelease %s: chart version %s → %s is not an exact version on both sides, so the major version Helm installs may change: read the chart's upgrade notes",
		name(hr), code(orDash(old)), code(orDash(new)))
}

// major is the major version of an exact semantic version (1.2.3,
// v1.2.3, 1.2.3-rc.1+build).
func major(v string) (int, bool) {
	v = strings.TrimPrefix(v, "v")
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return 0, false
	}
	n := make([]int, 3)
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || p != strconv.Itoa(x) {
			return 0, false
		}
		n[i] = x
	}
	return n[0], true
}

// hostsOf returns the hosts an object routes: an Ingress's rules and TLS
// hosts, a Gateway API route's hostnames; lower case, without a final dot.
func hostsOf(o object) []string {
	var raw []any
	switch o.Kind {
	case "Ingress":
		rules, _ := get(o.Obj, "spec", "rules").([]any)
		for _, r := range rules {
			if h := get(r, "host"); h != nil {
				raw = append(raw, h)
			}
		}
		tls, _ := get(o.Obj, "spec", "tls").([]any)
		for _, t := range tls {
			l, _ := get(t, "hosts").([]any)
			raw = append(raw, l...)
		}
	case "HTTPRoute", "GRPCRoute", "TLSRoute":
		raw, _ = get(o.Obj, "spec", "hostnames").([]any)
	}
	var out []string
	for _, h := range raw {
		s := strings.TrimSuffix(strings.ToLower(fmt.Sprint(h)), ".")
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// overlaps says whether two hosts can name the same request: equal, or
// one a wildcard that claims everything under its domain.
func overlaps(a, b string) bool {
	if a == b {
		return true
	}
	under := func(w, h string) bool {
		d, ok := strings.CutPrefix(w, "*.")
		return ok && strings.HasSuffix(h, "."+d)
	}
	return under(a, b) || under(b, a)
}

// owner names the app an object belongs to: its folder's app, else its
// namespace and app label.
func owner(o object) string {
	if a := o.AppKey(); a != "" {
		return a
	}
	return o.Namespace + "/" + labelOf(o, layout.LabelApp)
}

// hosts lists the hosts the change adds to, removes from or moves between
// the routes (Ingresses, Gateway API routes) of apps. A host added to one
// app that another app's route serves, in the change or anywhere else in
// the head fleet (a wildcard claims everything under it), is the danger
// of a host taken over.
func hosts(base, head map[string]object, headFiles map[string][]byte, removedApps map[string]bool) []string {
	routes := func(objs map[string]object) map[string]hostRoute {
		out := map[string]hostRoute{}
		for id, o := range objs {
			if h := hostsOf(o); len(h) > 0 {
				out[id] = hostRoute{o, h}
			}
		}
		return out
	}
	br, hr := routes(base), routes(head)
	if len(br) == 0 && len(hr) == 0 {
		return nil
	}
	var added, removed []hostChange
	for _, id := range unionKeys(br, hr) {
		b, h := br[id], hr[id]
		for _, x := range h.hosts {
			if !slices.Contains(b.hosts, x) {
				added = append(added, hostChange{h.o, x})
			}
		}
		for _, x := range b.hosts {
			if !slices.Contains(h.hosts, x) {
				removed = append(removed, hostChange{b.o, x})
			}
		}
	}
	var others []hostRoute
	if len(added) > 0 {
		others = otherRoutes(added, head, headFiles, hr)
	}
	route := func(o object) string { return md(o.Kind) + " " + name(o) + " of app " + code(owner(o)) }
	var out []string
	moved := map[int]bool{} // removed hosts that moved to another app
	for _, a := range added {
		from := slices.IndexFunc(removed, func(r hostChange) bool { return r.host == a.host && owner(r.o) != owner(a.o) })
		if from >= 0 {
			moved[from] = true
			out = append(out, fmt.Sprintf("host %s moves from %s to %s: its requests go to another app",
				code(a.host), route(removed[from].o), route(a.o)))
			continue
		}
		var taken []string
		for _, s := range others {
			if owner(s.o) == owner(a.o) {
				continue
			}
			for _, x := range s.hosts {
				if overlaps(a.host, x) {
					taken = append(taken, route(s.o)+" serves "+code(x))
					break
				}
			}
		}
		if len(taken) > 0 {
			out = append(out, fmt.Sprintf("%s now serves host %s, which another app's route claims (%s): the ingress controller may send that app's requests to this one, a host taken over",
				route(a.o), code(a.host), strings.Join(taken, "; ")))
			continue
		}
		out = append(out, fmt.Sprintf("%s serves a new host %s", route(a.o), code(a.host)))
	}
	for i, r := range removed {
		if !moved[i] && !removedApps[r.o.AppKey()] {
			out = append(out, fmt.Sprintf("%s no longer serves host %s: its clients lose it", route(r.o), code(r.host)))
		}
	}
	return out
}

// hostRoute is an Ingress or a route and the hosts it serves.
type hostRoute struct {
	o     object
	hosts []string
}

// hostChange is a host a route starts or stops serving.
type hostChange struct {
	o    object
	host string
}

// otherRoutes returns the head's routes that the change does not show,
// read from the files that may hold a host an added one overlaps, then
// the head's routes the change does show.
func otherRoutes(added []hostChange, head map[string]object, headFiles map[string][]byte, hr map[string]hostRoute) []hostRoute {
	var others []hostRoute
	shown := map[string]bool{}
	for _, o := range head {
		shown[o.File] = true
	}
	var needles [][]byte
	for _, a := range added {
		needles = append(needles, hostNeedles(a.host)...)
	}
	// Only the files that may hold such a host are sorted: a fleet of
	// 10,000 apps has over 100,000.
	var files []string
	for p, b := range headFiles {
		if !shown[p] && (bytes.Contains(b, []byte("kind: Ingress")) || bytes.Contains(b, []byte("Route\n"))) &&
			slices.ContainsFunc(needles, func(n []byte) bool { return bytes.Contains(b, n) }) {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	for _, p := range files {
		for _, o := range parseFleet(map[string][]byte{p: headFiles[p]}) {
			if h := hostsOf(o); len(h) > 0 {
				others = append(others, hostRoute{o, h})
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(hr)) {
		others = append(others, hr[id])
	}
	return others
}

// hostNeedles are the texts a file holds when one of its hosts may
// overlap a host: the host itself, the wildcards above it, and for a
// wildcard, its domain.
func hostNeedles(h string) [][]byte {
	var out [][]byte
	if d, ok := strings.CutPrefix(h, "*."); ok {
		out = append(out, []byte("."+d))
		h = d
	} else {
		out = append(out, []byte(h))
	}
	for d := h; ; {
		i := strings.IndexByte(d, '.')
		if i < 0 {
			break
		}
		d = d[i+1:]
		out = append(out, []byte("*."+d))
	}
	return out
}
