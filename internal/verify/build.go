package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/kbuild"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// object is one Kubernetes object as Flux applies it.
type object struct {
	root *node // the object after the build
	src  *node // the document it came from, for positions; nil if unknown
	file string
	ks   *fluxKS // the Kustomization that applies it; nil for files no path covers
	// cluster is the cluster the object goes to ("" when unknown).
	cluster string
	// patches are the patches of the folder's kustomization that apply to
	// the object (kustomize builds only).
	patches    []patchRef
	apiVersion string
	kind       string
	name       string
	namespace  string
}

func (o *object) label() string {
	if o.kind == "" {
		return ""
	}
	return o.kind + "/" + o.name
}

func newObject(root, src *node, file string, ks *fluxKS, cluster string) *object {
	md := root.Get("metadata")
	return &object{
		root: root, src: src, file: file, ks: ks, cluster: cluster,
		apiVersion: root.Get("apiVersion").Text(), kind: root.Get("kind").Text(),
		name: md.Get("name").Text(), namespace: md.Get("namespace").Text(),
	}
}

// build builds one Flux Kustomization's path and checks its objects.
func (r *run) build(ks *fluxKS) {
	fail := func(sev Severity, format string, args ...any) {
		f := Finding{
			Check: CheckBuild, Diagnostic: diag.Diagnostic{Severity: sev, File: r.display(ks.file), Line: ks.line,
				Object: ks.object(), Path: "spec.path", Message: fmt.Sprintf(format, args...)},
		}
		if ks.pathLine > 0 {
			f.Line, f.Column = ks.pathLine, ks.pathCol
		}
		r.findings.add(f)
	}
	var rel, shown, root string
	var only map[string]bool // the files a project's artifact holds
	switch {
	case ks.oci != nil && ks.oci.annotated:
		// The artifact is the folder's files: build the folder, confined
		// to it as Flux confines a build to the artifact.
		if !ks.oci.dirOK {
			return // the OCIRepository's finding says why
		}
		rel, root = ks.ociDir(), filepath.Join(r.t.root, filepath.FromSlash(ks.oci.dir))
		shown = r.display(rel) + " (the artifact of OCIRepository " + ks.oci.name + ")"
		if ks.oci.project {
			// The artifact holds the folder's *.yaml files and no
			// sub-folder: the build reads nothing else.
			if rel != ks.oci.dir {
				return // reported: the path must be ./
			}
			only = map[string]bool{}
			for _, f := range r.artifactFiles(ks.oci) {
				only[path.Join(rel, f.Name)] = true
			}
		}
	case ks.unresolved:
		return // reported: no fleet file defines its OCIRepository
	case ks.oci != nil:
		fail(SeverityInfo, "not built: its source is OCIRepository %s/%s, which names no fleet folder to build from (annotation %s)",
			ks.sourceNamespace, ks.sourceName, layout.AnnotationArtifactPath)
		return
	case ks.sourceKind != "GitRepository" || ks.sourceName != r.plat.Fleet.SourceName || ks.sourceNamespace != r.plat.Fleet.SourceNamespace:
		fail(SeverityInfo, "not built: its source is %s %s/%s, not the fleet's GitRepository %s/%s",
			ks.sourceKind, ks.sourceNamespace, ks.sourceName, r.plat.Fleet.SourceNamespace, r.plat.Fleet.SourceName)
		return
	default:
		var ok bool
		if rel, ok = r.fleetRel(ks.path); !ok {
			fail(SeverityError, "path %q is outside the fleet folder %s/ that Flux reads", ks.path, r.prefix)
			return
		}
		shown, root = "./"+path.Join(r.prefix, rel), r.gitRoot
	}
	if !r.t.dirs[rel] {
		fail(SeverityError, "kustomize build %s: no such folder in the fleet", shown)
		return
	}
	var objs []*object
	kustomized := false
	ok := false
	if !r.opts.FullBuild {
		objs, ok = r.assemble(ks, rel, only)
	}
	if r.opts.FullBuild || !ok {
		var remote string
		var err error
		objs, remote, err = r.kustomize(ks, rel, root, only)
		kustomized = true
		switch {
		case remote != "":
			fail(SeverityWarning, "not built: it refers to the remote base %s, and verify does not fetch remote bases", remote)
			return
		case errors.Is(err, errRefused):
			return
		case err != nil:
			fail(SeverityError, "kustomize build %s: %s", shown, r.relativize(strings.TrimSpace(err.Error())))
			return
		}
	}
	r.mu.Lock()
	r.stats.Built++
	if kustomized {
		r.stats.Kustomized++
	}
	r.mu.Unlock()
	for _, o := range objs {
		r.checkObject(o)
	}
}

// relativize shows the absolute paths in a kustomize error under the
// fleet folder as the user gave it.
func (r *run) relativize(msg string) string {
	msg = strings.ReplaceAll(msg, r.t.root+string(filepath.Separator), r.opts.Display+"/")
	if r.gitRoot != r.t.root {
		msg = strings.ReplaceAll(msg, r.gitRoot+string(filepath.Separator), "")
	}
	return msg
}

// overlayFields are the Flux Kustomization fields that change the build.
var overlayFields = []string{"patches", "images", "namePrefix", "nameSuffix", "components", "commonMetadata", "postBuild"}

func changesBuild(sp *node) bool {
	for _, f := range overlayFields {
		if v := sp.Get(f); v != nil && !v.IsNull() {
			return true
		}
	}
	return false
}

// fastKinds are the kinds the direct assembly handles, with whether kustomize
// treats them as namespaced. For these, kustomize's namespace transformer
// sets metadata.namespace and nothing else.
var fastKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true,
	"batch/Job": true, "batch/CronJob": true, "/Pod": true, "/Service": true, "/ServiceAccount": true,
	"/ConfigMap": true, "/Secret": true, "/PersistentVolumeClaim": true, "networking.k8s.io/Ingress": true,
	"networking.k8s.io/NetworkPolicy": true, "autoscaling/HorizontalPodAutoscaler": true,
	"policy/PodDisruptionBudget": true, "rbac.authorization.k8s.io/Role": true,
	"helm.toolkit.fluxcd.io/HelmRelease": true, "source.toolkit.fluxcd.io/HelmRepository": true,
	"source.toolkit.fluxcd.io/GitRepository": true, "source.toolkit.fluxcd.io/OCIRepository": true,
	"kustomize.toolkit.fluxcd.io/Kustomization": true,
	"/Namespace": false, "rbac.authorization.k8s.io/ClusterRole": false,
}

// assemble builds a path whose kustomization.yaml only lists plain files of
// its own folder, which is what render writes: kustomize's result is then
// those files' objects in order, with the target namespace set on
// namespaced ones. So it builds a project's artifact (only: its files)
// without a kustomization.yaml: kustomize-controller generates one that
// lists its manifests, the plain files render writes there. It reports
// false for anything else, and for anything kustomize might reject, so
// that kustomize itself builds (and judges) it.
func (r *run) assemble(ks *fluxKS, dir string, only map[string]bool) ([]*object, bool) {
	if ks.spec != nil {
		return nil, false
	}
	kfile := ""
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if _, ok := r.t.files[path.Join(dir, n)]; ok {
			if kfile != "" {
				return nil, false
			}
			kfile = path.Join(dir, n)
		}
	}
	if kfile == "" {
		if only == nil {
			return nil, false
		}
		var files []string
		for _, p := range r.t.under(dir) {
			if only[p] {
				files = append(files, p)
			}
		}
		return r.assembleFiles(ks, files, nil)
	}
	docs, err := yamlx.Parse(r.t.files[kfile])
	if err != nil || len(docs) != 1 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return nil, false
	}
	k := docs[0].Root
	var resources *node
	for i := 0; i < len(k.Kids); i += 2 {
		switch key, v := k.Kids[i].Str, k.Kids[i+1]; key {
		case "apiVersion":
			if v.Text() != "kustomize.config.k8s.io/v1beta1" {
				return nil, false
			}
		case "kind":
			if v.Text() != "Kustomization" {
				return nil, false
			}
		case "resources":
			resources = v
		default:
			return nil, false
		}
	}
	if resources == nil || resources.Kind != yamlx.SeqNode {
		return nil, false
	}
	var files []string
	seenFile := map[string]bool{}
	for _, res := range resources.Kids {
		name := res.Text()
		if res.Kind != yamlx.ScalarNode || res.Tag != yamlx.StrTag || name == "" || strings.ContainsAny(name, `/\`) ||
			strings.HasPrefix(name, ".") || !isYAML(name) || seenFile[name] {
			return nil, false
		}
		seenFile[name] = true
		file := path.Join(dir, name)
		if _, ok := r.t.files[file]; !ok || only != nil && !only[file] {
			return nil, false
		}
		files = append(files, file)
	}
	return r.assembleFiles(ks, files, []string{kfile})
}

// assembleFiles returns the objects of plain resource files in order (see
// assemble), and records that the build read them and also read.
func (r *run) assembleFiles(ks *fluxKS, files, also []string) ([]*object, bool) {
	seenObj := map[objectKey]bool{}
	var objs []*object
	for _, file := range files {
		docs, ok := r.parse(file)
		if !ok {
			return nil, false
		}
		for _, d := range docs {
			o, ok := r.assembleDoc(ks, file, d.Root)
			if !ok {
				return nil, false
			}
			if o == nil {
				continue
			}
			gvk := gvkOf(o.root)
			key := objectKey{o.cluster, gvk.Group, gvk.Kind, o.namespace, o.name}
			if seenObj[key] {
				return nil, false
			}
			seenObj[key] = true
			objs = append(objs, o)
		}
	}
	r.cover(also...)
	r.cover(files...)
	return objs, true
}

// assembleDoc returns the object of one resource document, nil for an empty
// document, or false when kustomize should judge it.
func (r *run) assembleDoc(ks *fluxKS, file string, n *node) (*object, bool) {
	if n == nil {
		return nil, true
	}
	if n.Kind != yamlx.MapNode || len(n.Kids) == 0 {
		return nil, false
	}
	md := n.Get("metadata")
	if md == nil || md.Kind != yamlx.MapNode || md.Get("name").Text() == "" || md.Get("name").Tag != yamlx.StrTag {
		return nil, false
	}
	av, kind := n.Get("apiVersion"), n.Get("kind")
	if av == nil || kind == nil || av.Tag != yamlx.StrTag || kind.Tag != yamlx.StrTag || av.Text() == "" || kind.Text() == "" {
		return nil, false
	}
	gvk := gvkOf(n)
	namespaced, ok := fastKinds[gvk.Group+"/"+gvk.Kind]
	if !ok || gvk.Group == "" && gvk.Kind == "Namespace" && ks.targetNamespace != "" {
		// kustomize renames Namespace objects to the target namespace.
		return nil, false
	}
	if ann := md.Get("annotations"); ann != nil && (ann.Kind != yamlx.MapNode || ann.Get(konfig.IgnoredByKustomizeAnnotation) != nil) {
		return nil, false
	}
	if ns := md.Get("namespace"); ns != nil && (ns.Kind != yamlx.ScalarNode || ns.Tag != yamlx.StrTag) {
		return nil, false
	}
	root := n
	if namespaced && ks.targetNamespace != "" {
		root = withNamespace(n, ks.targetNamespace)
	}
	return newObject(root, n, file, ks, ks.cluster), true
}

// withNamespace returns a copy of an object node with metadata.namespace
// set; the original is not changed.
func withNamespace(n *node, ns string) *node {
	out := *n
	out.Kids = slices.Clone(n.Kids)
	for i := 0; i < len(out.Kids); i += 2 {
		if out.Kids[i].Str != "metadata" {
			continue
		}
		md := *out.Kids[i+1]
		md.Kids = slices.Clone(md.Kids)
		val := &node{Kind: yamlx.ScalarNode, Str: ns, Line: md.Line, Col: md.Col}
		set := false
		for j := 0; j < len(md.Kids); j += 2 {
			if md.Kids[j].Str == "namespace" {
				val.Line, val.Col = md.Kids[j+1].Line, md.Kids[j+1].Col
				md.Kids[j+1] = val
				set = true
			}
		}
		if !set {
			md.Kids = append(md.Kids, &node{Kind: yamlx.ScalarNode, Str: "namespace", Line: md.Line, Col: md.Col}, val)
		}
		out.Kids[i+1] = &md
	}
	return &out
}

// cover records that builds read these fleet files.
func (r *run) cover(files ...string) {
	r.mu.Lock()
	for _, f := range files {
		r.covered[f] = true
	}
	r.mu.Unlock()
}

// kustomize builds a path with kustomize's krusty, as kustomize-controller
// does: no load restrictions inside the source, no plugins, and the Flux
// Kustomization's own settings (targetNamespace, patches, images, ...)
// merged into the root kustomization.
func (r *run) kustomize(ks *fluxKS, dir, root string, only map[string]bool) (objs []*object, remote string, err error) {
	r.componentKustomization(dir)
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if r.refused[path.Join(dir, n)] {
			return nil, "", errRefused // budgetKustomizations reported it
		}
	}
	refs := r.kustomizationPatches(dir)
	patched := len(refs) > 0 || ks.spec.Get("patches") != nil
	if patched && !r.patchBudget(ks, dir, refs) {
		return nil, "", errRefused
	}
	objs, remote, err = r.kustomizeWith(ks, dir, root, only, false)
	if err != nil || remote != "" {
		return objs, remote, err
	}
	used := make([]bool, len(refs)) // applied to an object
	for _, o := range objs {
		for i, p := range refs {
			if p.applies(o) {
				o.patches = append(o.patches, p)
				used[i] = true
			}
		}
	}
	for i, p := range refs {
		if !used[i] {
			r.findings.add(r.patchSecrets(p)...)
		}
	}
	if patched {
		r.checkPatched(ks, dir, root, only, objs, refs)
	}
	return objs, "", nil
}

// errRefused is a build verify does not run: a finding says why.
var errRefused = errors.New("refused")

// kustomizeWith builds a path (see kustomize); without patches (strip),
// those of the folder's kustomization and of the Flux Kustomization are
// left out.
func (r *run) kustomizeWith(ks *fluxKS, dir, root string, only map[string]bool, strip bool) (objs []*object, remote string, err error) {
	fsys := &buildFS{FileSystem: filesys.MakeFsOnDisk(), r: r, root: root, only: only, overlay: map[string][]byte{}}
	abs := filepath.Join(r.t.root, filepath.FromSlash(dir))
	if err := r.overlayKustomization(fsys, ks, dir, abs, strip); err != nil {
		return nil, "", err
	}
	resMap, err := kbuild.Run(fsys, abs, false)
	r.cover(fsys.read...)
	if fsys.remote != "" {
		return nil, fsys.remote, nil
	}
	if err != nil {
		return nil, "", err
	}
	var c yamlx.Converter
	var idx sources
	for _, res := range resMap.Resources() {
		root, err := c.Convert(res.YNode())
		if err != nil {
			return nil, "", err
		}
		org := res.OrgId()
		if idx == nil {
			idx = r.sources(fsys.read)
		}
		file, src := idx.sourceOf(org.Kind, org.Name, org.Namespace)
		objs = append(objs, newObject(root, src, file, ks, ks.cluster))
	}
	return objs, "", nil
}

// sources indexes the documents of the files a build read by kind and
// name, each file parsed once: a build of many files and objects (a
// project's Flux files) looks each object up in it.
type sources map[[2]string][]sourceDoc

type sourceDoc struct {
	file string
	n    *node
}

func (r *run) sources(files []string) sources {
	idx := sources{}
	seen := map[string]bool{}
	for _, f := range files {
		if !isYAML(f) || seen[f] {
			continue
		}
		seen[f] = true
		docs, err := yamlx.Parse(r.t.files[f])
		if err != nil {
			continue
		}
		for _, d := range docs {
			if d.Root == nil {
				continue
			}
			k := [2]string{d.Root.Get("kind").Text(), d.Root.Get("metadata").Get("name").Text()}
			idx[k] = append(idx[k], sourceDoc{f, d.Root})
		}
	}
	return idx
}

// sourceOf finds the document an object came from among the files a build
// read, by its kind, name and original namespace: the first in the order
// the build read them of that namespace, else the first of another.
func (idx sources) sourceOf(kind, name, namespace string) (string, *node) {
	var fallback sourceDoc
	for _, d := range idx[[2]string{kind, name}] {
		ns := d.n.Get("metadata").Get("namespace").Text()
		if ns == namespace || namespace == "" || namespace == "default" && ns == "" {
			return d.file, d.n
		}
		if fallback.n == nil {
			fallback = d
		}
	}
	return fallback.file, fallback.n
}

// overlayKustomization prepares the root kustomization the way
// kustomize-controller does: it generates one when the folder has none, and
// merges the Flux Kustomization's build settings into it.
func (r *run) overlayKustomization(fsys *buildFS, ks *fluxKS, dir, abs string, strip bool) error {
	var kfile string
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if _, ok := r.t.files[path.Join(dir, n)]; ok {
			kfile = n
			break
		}
	}
	var k map[string]any
	if kfile == "" {
		kfile = konfig.DefaultKustomizationFileName()
		k = map[string]any{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": r.manifestsIn(dir, fsys.only)}
	} else if ks.spec != nil || ks.targetNamespace != "" || strip {
		docs, err := yamlx.Parse(r.t.files[path.Join(dir, kfile)])
		if err == nil && len(docs) > 0 && docs[0].Root != nil {
			err = json.Unmarshal(yamlx.AppendJSON(nil, docs[0].Root), &k)
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", kfile, err)
		}
		if k == nil {
			k = map[string]any{}
		}
	} else {
		return nil
	}
	sp := ks.spec // nil when it holds no build settings: get returns nil
	if ks.targetNamespace != "" {
		k["namespace"] = ks.targetNamespace
	}
	if strip {
		for _, f := range []string{"patches", "patchesJson6902", "patchesStrategicMerge"} {
			delete(k, f)
		}
	}
	for _, f := range []string{"namePrefix", "nameSuffix"} {
		if v := sp.Get(f).Text(); v != "" {
			k[f] = v
		}
	}
	for _, f := range []string{"patches", "images", "components"} {
		if v := sp.Get(f); v != nil && v.Kind == yamlx.SeqNode && !(strip && f == "patches") {
			var items []any
			if err := json.Unmarshal(yamlx.AppendJSON(nil, v), &items); err != nil {
				return err
			}
			prev, _ := k[f].([]any)
			k[f] = append(prev, items...)
		}
	}
	if cm := sp.Get("commonMetadata"); cm != nil && cm.Kind == yamlx.MapNode {
		labels, err := stringMap(cm.Get("labels"))
		if err != nil {
			return fmt.Errorf("commonMetadata.labels: %w", err)
		}
		annotations, err := stringMap(cm.Get("annotations"))
		if err != nil {
			return fmt.Errorf("commonMetadata.annotations: %w", err)
		}
		if len(labels) > 0 {
			prev, _ := k["labels"].([]any)
			k["labels"] = append(prev, map[string]any{"pairs": labels, "includeSelectors": false})
		}
		if len(annotations) > 0 {
			ann, _ := k["commonAnnotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			for key, v := range annotations {
				ann[key] = v
			}
			k["commonAnnotations"] = ann
		}
	}
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	fsys.overlay[filepath.Join(abs, kfile)] = out
	return nil
}

// stringMap reads a map of strings such as commonMetadata's labels, with
// numbers and booleans as their text, as sigs.k8s.io/yaml reads them into
// the Flux API's map[string]string.
func stringMap(n *node) (map[string]string, error) {
	if n.IsNull() {
		return nil, nil
	}
	if n.Kind != yamlx.MapNode {
		return nil, fmt.Errorf("line %d: a map of strings is expected", n.Line)
	}
	out := make(map[string]string, len(n.Kids)/2)
	for i := 0; i < len(n.Kids); i += 2 {
		v := n.Kids[i+1]
		if v.Kind != yamlx.ScalarNode {
			return nil, fmt.Errorf("line %d: %s is not a string", v.Line, n.Kids[i].Str)
		}
		s := v.Text()
		if v.Tag == yamlx.FloatTag {
			f, _ := strconv.ParseFloat(s, 64)
			s = strconv.FormatFloat(f, 'g', -1, 32)
		}
		out[n.Kids[i].Str] = s
	}
	return out, nil
}

// manifestsIn lists what kustomize-controller's generated kustomization
// holds for a folder without one: every YAML file of Kubernetes objects,
// and every sub-folder that has its own kustomization, as a whole; of an
// artifact holding only some of the folder's files, those (only).
func (r *run) manifestsIn(dir string, only map[string]bool) []any {
	var out []any
	added := map[string]bool{}
	for _, p := range r.t.under(dir) {
		if only != nil && !only[p] {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		// The shallowest sub-folder with a kustomization stands for all below it.
		parts := strings.Split(rel, "/")
		nested := ""
		for i := 1; i < len(parts); i++ {
			if sub := strings.Join(parts[:i], "/"); r.hasKustomization(path.Join(dir, sub)) {
				nested = sub
				break
			}
		}
		if nested != "" {
			if !added[nested] {
				added[nested] = true
				out = append(out, nested)
			}
			continue
		}
		if !isYAML(p) || slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(p)) {
			continue
		}
		docs, err := yamlx.Parse(r.t.files[p])
		if err != nil {
			out = append(out, rel) // kustomize reports it
			continue
		}
		for _, d := range docs {
			if d.Root != nil && d.Root.Get("apiVersion").Text() != "" && d.Root.Get("kind").Text() != "" {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}

func (r *run) hasKustomization(dir string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if _, ok := r.t.files[path.Join(dir, n)]; ok {
			return true
		}
	}
	return false
}

// buildFS is the file system kustomize builds over: the disk, with the
// fleet's files served from memory, reads outside the source's root (the
// Git root, or an artifact's folder) refused as Flux confines builds to
// the source, remote bases refused, and the prepared root kustomization in
// place of the file.
type buildFS struct {
	filesys.FileSystem
	r       *run
	root    string          // absolute: the source's root
	only    map[string]bool // when set, the fleet files the source holds
	overlay map[string][]byte
	read    []string // fleet files read
	remote  string   // the first remote base met
}

func (f *buildFS) ReadFile(p string) ([]byte, error) {
	p = filepath.Clean(p)
	data, err := f.read1(p)
	if err != nil {
		return nil, err
	}
	if slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(p)) {
		if ref := remoteRef(data); ref != "" {
			if f.remote == "" {
				f.remote = ref
			}
			return nil, errors.New("remote bases are not fetched")
		}
	}
	return data, nil
}

func (f *buildFS) read1(p string) ([]byte, error) {
	if rel := relSlash(f.r.t.root, p); rel != "" && f.r.refused[rel] {
		return nil, fmt.Errorf("%s: its patches could exhaust memory (a tenancy finding says where); not read", rel)
	}
	if b, ok := f.overlay[p]; ok {
		if rel := relSlash(f.r.t.root, p); rel != "" && f.r.t.files[rel] != nil {
			f.read = append(f.read, rel) // the file the prepared one stands for
		}
		return b, nil
	}
	root := f.root
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return nil, fmt.Errorf("security; file '%s' is not in or below '%s'", p, root)
	}
	if rel := relSlash(f.r.t.root, p); rel != "" && !strings.HasPrefix(rel, "../") {
		b, ok := f.r.t.files[rel]
		if !ok {
			return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
		}
		if f.only != nil && !f.only[rel] {
			return nil, fmt.Errorf("security; file '%s' is not in the artifact, which holds only the *.yaml files of '%s'", p, root)
		}
		f.read = append(f.read, rel)
		return b, nil
	}
	return f.FileSystem.ReadFile(p)
}

func (f *buildFS) Exists(p string) bool {
	if _, ok := f.overlay[filepath.Clean(p)]; ok {
		return true
	}
	return f.FileSystem.Exists(p)
}

// remoteRef returns the first reference of a kustomization that kustomize
// would fetch over the network: what kustomize's loader takes for a URL or a
// Git repository (a scheme, user@host, or github.com/). verify never
// fetches them.
func remoteRef(data []byte) string {
	docs, err := yamlx.Parse(data)
	if err != nil || len(docs) == 0 {
		return ""
	}
	k := docs[0].Root
	items := func(f string) []*node {
		if l := k.Get(f); l != nil && l.Kind == yamlx.SeqNode {
			return l.Kids
		}
		return nil
	}
	var refs []string
	for _, f := range []string{"resources", "components", "bases", "patchesStrategicMerge", "configurations", "crds", "generators", "transformers", "validators"} {
		for _, item := range items(f) {
			refs = append(refs, item.Text())
		}
	}
	refs = append(refs, k.Get("openapi").Get("path").Text())
	for _, f := range []string{"patches", "patchesJson6902", "replacements"} {
		for _, item := range items(f) {
			refs = append(refs, item.Get("path").Text())
		}
	}
	for _, s := range refs {
		if isRemote(s) {
			return s
		}
	}
	return ""
}

var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

func isRemote(s string) bool {
	l := strings.ToLower(s)
	l = strings.TrimPrefix(l, "git::")
	for _, scheme := range []string{"ssh://", "https://", "http://", "file://"} {
		if strings.HasPrefix(l, scheme) {
			return true
		}
	}
	return scpUser.MatchString(l) || strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:")
}
