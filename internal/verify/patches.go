package verify

import (
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/fleetwright/fleetwright/internal/tenancy"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// A patchRef is one patch of a kustomization.yaml that kustomize applied
// to an object: findings about what it changed point at it, since the
// object's own file does not hold the value Flux applies.
type patchRef struct {
	file      string // the fleet file the patch is written in
	line, col int
	ops       []string // the JSON pointers a JSON6902 patch changes
	smp       *node    // a strategic-merge patch's object
	root      *node    // the patch as parsed
	// target selects the objects it applies to.
	group, version, kind, name, namespace string
	// selectors is whether the target selects by labels or annotations,
	// which are not compared: such a patch may apply to any object of its
	// kind.
	selectors bool
}

// kustomizationPatches reads the patches of a folder's kustomization file.
func (r *run) kustomizationPatches(dir string) []patchRef {
	var kfile string
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, ok := r.t.files[path.Join(dir, n)]; ok {
			kfile = path.Join(dir, n)
			break
		}
	}
	if kfile == "" {
		return nil
	}
	docs, err := yamlx.Parse(r.t.files[kfile])
	if err != nil || len(docs) == 0 || docs[0].Root == nil {
		return nil
	}
	var out []patchRef
	for _, item := range items(docs[0].Root.Get("patches")) {
		if item.Kind != yamlx.MapNode {
			continue
		}
		p := patchRef{file: kfile, line: int(item.Line), col: int(item.Col)}
		if k := item.Get("patch"); k != nil {
			p.line, p.col = int(k.Line), int(k.Col)
		}
		t := item.Get("target")
		p.group, p.version, p.kind = t.Get("group").Text(), t.Get("version").Text(), t.Get("kind").Text()
		p.name, p.namespace = t.Get("name").Text(), t.Get("namespace").Text()
		p.selectors = t.Get("labelSelector").Text() != "" || t.Get("annotationSelector").Text() != ""
		text := []byte(item.Get("patch").Text())
		if f := item.Get("path").Text(); f != "" {
			pf := path.Join(dir, f)
			if b, ok := r.t.files[pf]; ok {
				text, p.file, p.line, p.col = b, pf, 1, 1
			}
		}
		if pd, err := yamlx.Parse(bytes.TrimSpace(text)); err == nil && len(pd) > 0 && pd[0].Root != nil {
			p.root = pd[0].Root
			switch root := pd[0].Root; root.Kind {
			case yamlx.SeqNode:
				for _, op := range root.Kids {
					for _, k := range []string{"path", "from"} {
						if v := op.Get(k).Text(); v != "" {
							p.ops = append(p.ops, v)
						}
					}
				}
			case yamlx.MapNode:
				p.smp = root
				if t == nil {
					p.kind = root.Get("kind").Text()
					p.name = root.Get("metadata").Get("name").Text()
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// applies reports whether a patch's target selects an object.
func (p patchRef) applies(o *object) bool {
	gvk := gvkOf(o.root)
	for _, c := range [][2]string{{p.group, gvk.Group}, {p.version, gvk.Version}, {p.kind, gvk.Kind}, {p.name, o.name}, {p.namespace, o.namespace}} {
		if c[0] == "" {
			continue
		}
		// kustomize matches target fields as anchored regular expressions.
		re, err := regexp.Compile("^(?:" + c[0] + ")$")
		if err != nil || !re.MatchString(c[1]) {
			return false
		}
	}
	return true
}

// touches reports whether a patch changes a field (a verify field path).
func (p patchRef) touches(field string) bool {
	ptr := tenancy.Pointer(field)
	for _, op := range p.ops {
		if op == ptr || strings.HasPrefix(ptr, op+"/") || strings.HasPrefix(op, ptr+"/") {
			return true
		}
	}
	if p.smp != nil {
		val, key := p.smp.Path(field)
		return val != nil || key != nil
	}
	return false
}

// patchAt returns the patch that made a field what it is in the built
// object, when the object's source document does not hold that value: the
// patch that names the field, else the first that applies to the object.
func (o *object) patchAt(field string) (patchRef, bool) {
	if len(o.patches) == 0 || o.src == nil {
		return patchRef{}, false
	}
	built, _ := o.root.Path(field)
	orig, _ := o.src.Path(field)
	if built == nil && orig == nil {
		// Neither has it (a required field missing from both): the
		// source is to blame, unless a patch names it.
		for _, p := range o.patches {
			if field != "" && p.touches(field) {
				return p, true
			}
		}
		return patchRef{}, false
	}
	if built != nil && orig != nil && bytes.Equal(yamlx.AppendJSON(nil, built), yamlx.AppendJSON(nil, orig)) {
		return patchRef{}, false
	}
	if built != nil && orig == nil && field == "metadata.namespace" {
		return patchRef{}, false // the target namespace, not a patch
	}
	for _, p := range o.patches {
		if p.touches(field) {
			return p, true
		}
	}
	return o.patches[0], true
}
