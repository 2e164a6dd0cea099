// Package tenancy holds the rules that keep what a team commits inside its
// project: what a kustomize patch may change in a component's objects, the
// kinds a team's objects may not be, the Pod Security a patch may not
// break, the Ingress hosts an app may serve, where addon charts may come
// from, and how large a patched object may grow.
//
// It is a leaf: it takes decoded objects (the JSON of Kubernetes objects as
// maps), the project and app they belong to, the hosts the app owns and
// the project's Pod Security level, and returns problems with a field path.
// render validate (on the objects a spec renders to, before and after its
// patches) and verify (on the fleet as Flux builds it) both call it, each
// placing the problems at its own file and line.
package tenancy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// Object is a decoded Kubernetes object.
type Object = map[string]any

// Tenant is whom the objects belong to.
type Tenant struct {
	// App is the app, in the project whose namespace the objects live in.
	App layout.AppRef
	// PodSecurity is the Pod Security Standard the project's namespace
	// enforces (privileged, baseline or restricted). "" (no label) is
	// judged as baseline: a patch may not open host access where the
	// platform did not grant it.
	PodSecurity string
	// Hosts says whether the app owns an Ingress host, and otherwise which
	// other app claims one that overlaps it ("" for none). nil owns none.
	Hosts func(host string) (own bool, other string)
}

// A Problem is one broken rule: its Object (Kind/name, after the patch),
// Path (a field path in it, such as spec.rules[0].host; "" for the object
// as a whole) and Message.
type Problem = diag.Diagnostic

// Text is a problem as one line: Kind/name, the field path, the message.
func Text(p Problem) string {
	if p.Path == "" {
		return p.Object + ": " + p.Message
	}
	return p.Object + " " + p.Path + ": " + p.Message
}

// ID is what identifies an object to Kubernetes and to Flux's inventory:
// API group, kind, namespace and name.
type ID struct{ Group, Kind, Namespace, Name string }

func (id ID) String() string {
	s := id.Kind + " " + id.Name
	if id.Namespace != "" {
		s = id.Kind + " " + id.Namespace + "/" + id.Name
	}
	return s
}

// IDOf returns an object's identity.
func IDOf(o Object) ID {
	av, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return ID{Group: group(av), Kind: kind, Namespace: ns, Name: name}
}

func group(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

func label(o Object) string {
	id := IDOf(o)
	return id.Kind + "/" + id.Name
}

// clusterScoped are the built-in kinds that live outside any namespace, by
// group and kind.
var clusterScoped = map[[2]string]bool{
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}: true, {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}: true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}: true, {"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}: true,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}: true, {"storage.k8s.io", "StorageClass"}: true,
	{"", "Namespace"}: true, {"", "Node"}: true, {"", "PersistentVolume"}: true,
	{"", "ComponentStatus"}: true, {"rbac.authorization.k8s.io", "ClusterRole"}: true, {"rbac.authorization.k8s.io", "ClusterRoleBinding"}: true,
	{"apiextensions.k8s.io", "CustomResourceDefinition"}: true, {"apiregistration.k8s.io", "APIService"}: true, {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: true,
	{"storage.k8s.io", "CSIDriver"}: true, {"storage.k8s.io", "CSINode"}: true, {"storage.k8s.io", "VolumeAttachment"}: true,
	{"storage.k8s.io", "VolumeAttributesClass"}: true, {"scheduling.k8s.io", "PriorityClass"}: true, {"node.k8s.io", "RuntimeClass"}: true,
	{"networking.k8s.io", "IngressClass"}: true, {"networking.k8s.io", "IPAddress"}: true, {"networking.k8s.io", "ServiceCIDR"}: true,
	{"certificates.k8s.io", "CertificateSigningRequest"}: true, {"certificates.k8s.io", "ClusterTrustBundle"}: true, {"flowcontrol.apiserver.k8s.io", "FlowSchema"}: true,
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"}: true, {"resource.k8s.io", "DeviceClass"}: true, {"cert-manager.io", "ClusterIssuer"}: true,
	{"policy", "PodSecurityPolicy"}: true,
}

// ClusterScoped reports whether a kind (by API group) is one Kubernetes
// keeps outside namespaces: the built-in ones, and any kind whose name
// starts with Cluster (ClusterIssuer, ClusterPolicy and the like).
func ClusterScoped(group, kind string) bool {
	return clusterScoped[[2]string{group, kind}] || strings.HasPrefix(kind, "Cluster")
}

// ForbiddenKind says why a team's patch may not produce or change an object
// of this kind, or "": a cluster-scoped object reaches every project, RBAC
// grants rights, a Namespace (with its Pod Security labels) is the
// platform's, and Flux and Helm objects apply further objects with the
// controllers' rights.
func ForbiddenKind(group, kind string) string {
	switch {
	case group == "" && kind == "Namespace":
		return "a Namespace is the platform's: it holds the project's Pod Security labels"
	case group == "rbac.authorization.k8s.io":
		return fmt.Sprintf("a %s is an RBAC object: it grants rights, which only the platform may do", kind)
	case ClusterScoped(group, kind):
		return fmt.Sprintf("a %s is cluster-scoped: it would reach beyond the project's namespace", kind)
	case group == "helm.toolkit.fluxcd.io":
		return fmt.Sprintf("a %s is a Helm release, which helm-controller installs with its own rights", kind)
	case strings.HasSuffix(group, ".toolkit.fluxcd.io"):
		return fmt.Sprintf("a %s is a Flux object, which Flux's controllers act on with their own rights", kind)
	}
	return ""
}

// CheckPatched compares the objects of a component's folder before its
// patches with what kustomize built from them (as Flux applies it): the
// same objects (kind, name and namespace unchanged, none added or
// removed), none of a forbidden kind (ForbiddenKind), no pod that breaks
// the project's Pod Security where the unpatched one did not, no Ingress
// host the app does not own, and none larger than MaxObjectBytes.
func CheckPatched(before, after []Object, t Tenant) []Problem {
	var out []Problem
	prev := make(map[ID]Object, len(before))
	for _, o := range before {
		prev[IDOf(o)] = o
	}
	matched := map[ID]bool{}
	var added []Object
	for _, o := range after {
		id := IDOf(o)
		if _, ok := prev[id]; ok {
			matched[id] = true
			continue
		}
		added = append(added, o)
	}
	var removed []ID
	for _, o := range before {
		if id := IDOf(o); !matched[id] {
			removed = append(removed, id)
		}
	}
	// An object whose identity a patch changed is gone under its old
	// identity and new under another: kustomize keeps the objects' order,
	// so the k-th new one is the k-th gone one when as many are of each;
	// else pair those that differ in one of kind, name and namespace.
	paired := make([]bool, len(removed))
	for k, o := range added {
		j := -1
		if len(added) == len(removed) {
			j = k
		} else {
			for i, r := range removed {
				if !paired[i] && sameButOne(IDOf(o), r) {
					j = i
					break
				}
			}
		}
		if j < 0 {
			out = append(out, Problem{Object: label(o), Message: fmt.Sprintf("the patches add %s, which the component does not have; a patch may change an object's fields, not add objects", IDOf(o))})
			continue
		}
		paired[j] = true
		out = append(out, changedIdentity(o, removed[j]))
	}
	for i, id := range removed {
		if !paired[i] {
			out = append(out, Problem{Object: id.Kind + "/" + id.Name, Message: fmt.Sprintf("the patches remove %s ($patch: delete); a patch may change an object's fields, not remove it", id)})
		}
	}
	for _, o := range after {
		id := IDOf(o)
		old, ok := prev[id]
		if !ok {
			continue // reported above
		}
		if m := ForbiddenKind(id.Group, id.Kind); m != "" {
			out = append(out, Problem{Object: label(o), Message: "a patch may not change it: " + m})
			continue
		}
		out = append(out, podSecurity(old, o, t.PodSecurity)...)
		out = append(out, ingressHosts(o, t)...)
		if n := jsonSize(o); n > MaxObjectBytes {
			out = append(out, Problem{Object: label(o), Message: fmt.Sprintf("is %d bytes after the patches; an object may be at most %d", n, MaxObjectBytes)})
		}
	}
	return out
}

// sameButOne reports whether two identities differ in exactly one of kind
// (with its group), name and namespace.
func sameButOne(a, b ID) bool {
	n := 0
	if a.Group != b.Group || a.Kind != b.Kind {
		n++
	}
	if a.Name != b.Name {
		n++
	}
	if a.Namespace != b.Namespace {
		n++
	}
	return n == 1
}

// changedIdentity explains an object whose kind, name or namespace the
// patches changed from r.
func changedIdentity(o Object, r ID) Problem {
	id := IDOf(o)
	p := Problem{Object: label(o)}
	var also []string
	if r.Name != id.Name {
		also = append(also, "named "+id.Name)
	}
	if r.Namespace != id.Namespace {
		also = append(also, fmt.Sprintf("in namespace %q", id.Namespace))
	}
	switch {
	case r.Group != id.Group || r.Kind != id.Kind:
		p.Path = "kind"
		p.Message = fmt.Sprintf("the patches turn %s into a %s", r, kindOf(id))
		if len(also) > 0 {
			p.Message += " " + strings.Join(also, " ")
		}
		p.Message += "; a patch may not change an object's kind"
		if m := ForbiddenKind(id.Group, id.Kind); m != "" {
			p.Message += " (" + m + ")"
		}
	case r.Name != id.Name:
		p.Path = "metadata.name"
		p.Message = fmt.Sprintf("the patches rename %s to %s; a patch may not change an object's name", r, id.Name)
		if r.Namespace != id.Namespace {
			p.Message += " or namespace"
		}
	default:
		p.Path = "metadata.namespace"
		p.Message = fmt.Sprintf("the patches move %s to namespace %q; a patch may not change an object's namespace", r, id.Namespace)
	}
	return p
}

func kindOf(id ID) string {
	if id.Group == "" {
		return id.Kind
	}
	return id.Kind + " (" + id.Group + ")"
}

// jsonSize is the size of an object's JSON.
func jsonSize(o Object) int {
	b, err := json.Marshal(o)
	if err != nil {
		return 0
	}
	return len(b)
}
