package verify

import (
	"bytes"
	"path"
	"sync"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// listItems indexes the objects that fleet files hold in Lists (kind List,
// or any kind …List with items), which kustomize applies one by one: the
// build knows no source document for them.
type listItems struct {
	once  sync.Once
	items []listItem
}

type listItem struct {
	file string
	n    *node
}

// locateInList gives an object built without a known source document the
// List item it came from, so that its findings point at that item rather
// than at the Flux Kustomization. It prefers an item in the Kustomization's
// folder, then one in the object's namespace.
func (r *run) locateInList(o *object) {
	if o.src != nil || o.ks == nil || o.name == "" {
		return
	}
	r.lists.once.Do(func() {
		for _, p := range r.t.paths {
			data := r.t.files[p]
			if !isYAML(p) || !bytes.Contains(data, []byte("items:")) || !bytes.Contains(data, []byte("List")) {
				continue
			}
			docs, err := yamlx.Parse(data)
			if err != nil {
				continue
			}
			for _, d := range docs {
				if d.Root == nil || !bytes.HasSuffix([]byte(d.Root.Get("kind").Text()), []byte("List")) {
					continue
				}
				if items := d.Root.Get("items"); items != nil && items.Kind == yamlx.SeqNode {
					for _, it := range items.Kids {
						if it.Kind == yamlx.MapNode {
							r.lists.items = append(r.lists.items, listItem{p, it})
						}
					}
				}
			}
		}
	})
	dir := r.ksDir(o.ks)
	best, score := -1, 0
	for i, it := range r.lists.items {
		md := it.n.Get("metadata")
		if it.n.Get("kind").Text() != o.kind || md.Get("name").Text() != o.name {
			continue
		}
		s := 1
		if ns := md.Get("namespace").Text(); ns == o.namespace || ns == "" {
			s++
		}
		if dir == "." || dir == "" || path.Dir(it.file) == dir || len(it.file) > len(dir) && it.file[:len(dir)+1] == dir+"/" {
			s += 2
		}
		if s > score {
			best, score = i, s
		}
	}
	if best >= 0 {
		o.file, o.src = r.lists.items[best].file, r.lists.items[best].n
	}
}
