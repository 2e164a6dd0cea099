package fleet

import (
	"bytes"
	"iter"
	"path"
	"strconv"
	"sync"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// ObjectID is what names a Kubernetes object of a fleet: where its file
// is (layout.Parse of the file's path) and what the object says it is.
type ObjectID struct {
	// Preview, Cluster, Project, App, Folder and Component are the
	// location of the object's file, as layout.Location has them.
	Preview                          int
	Cluster, Project, App, Component string
	Folder                           string
	// APIVersion, Kind, Namespace and Name are the object's own.
	APIVersion, Kind, Namespace, Name string
}

// IdentifyObject is the identity of an object of kind, namespace and name
// in the fleet file p.
func IdentifyObject(p, apiVersion, kind, namespace, name string) ObjectID {
	l := layout.Parse(p)
	return ObjectID{
		Preview: l.Preview, Cluster: l.Cluster, Project: l.Project, App: l.App, Component: l.Component, Folder: l.Folder,
		APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name,
	}
}

// OnCluster is the cluster the object is applied to: its file's cluster
// folder, apps/<cluster>/… or clusters/<cluster>/…; "" for a file
// elsewhere (a cluster whose platform.yaml path is another folder) and
// for a preview's file, which layout places on no cluster of the fleet.
func (id ObjectID) OnCluster() string {
	if id.Preview != 0 {
		return ""
	}
	return id.Cluster
}

// AppKey is the app whose folder holds the object (layout.AppOf), "" for
// none.
func (id ObjectID) AppKey() string {
	if id.Preview != 0 || id.App == "" {
		return ""
	}
	return layout.App{Cluster: id.Cluster, AppRef: layout.AppRef{Project: id.Project, Name: id.App}}.Key()
}

// ComponentDir is the component folder that holds the object
// (layout.ComponentDirOf), "" for none.
func (id ObjectID) ComponentDir() string {
	if id.Preview != 0 || id.Component == "" {
		return ""
	}
	return layout.ComponentDir(id.Cluster, id.Project, id.App, id.Component)
}

// FluxDir is the project's Flux folder (layout.FluxDir) that holds the
// object (layout.FluxDirAbove), "" for none.
func (id ObjectID) FluxDir() string {
	if id.Preview != 0 || id.Folder == "" {
		return ""
	}
	if d := layout.FluxDir(id.Cluster, id.Project); path.Base(d) == id.Folder {
		return d
	}
	return ""
}

// Key is what pairs an object with itself in another fleet: its kind,
// namespace and name on its cluster (ObjectKey). The rest of its identity
// says where the fleet writes it, which a change may move: two objects of
// one key in two fleets are the same object, moved or not. Two
// environments' copies of an app are objects of one kind, namespace and
// name on two clusters: two keys.
func (id ObjectID) Key() string { return ObjectKey(id.OnCluster(), id.Kind, id.Namespace, id.Name) }

// ObjectKey is the key (ObjectID.Key) of the object of kind, namespace
// and name on cluster.
func ObjectKey(cluster, kind, namespace, name string) string {
	k := kind + "/" + namespace + "/" + name
	if cluster == "" {
		return k
	}
	return cluster + ":" + k
}

// Object is one Kubernetes object of a fleet, with its identity: the file
// that holds it, and the object as encoding/json would decode it.
type Object struct {
	ObjectID
	File string
	Obj  map[string]any
	key  string
}

// Key is the object's key (ObjectID.Key), made once by the reader.
func (o Object) Key() string {
	if o.key == "" { // an Object not made by the reader
		return o.ObjectID.Key()
	}
	return o.key
}

// NewObject identifies the object m, decoded already (built by kustomize,
// rendered by a chart), as an object of the fleet file p.
func NewObject(p string, m map[string]any) Object {
	md, _ := m["metadata"].(map[string]any)
	str := func(v any) string { s, _ := v.(string); return s }
	id := IdentifyObject(p, str(m["apiVersion"]), str(m["kind"]), str(md["namespace"]), str(md["name"]))
	return Object{ObjectID: id, File: p, Obj: m, key: id.Key()}
}

// ReadObjects reads the objects of a fleet's files (path → bytes, as
// render writes them or as read from Git), each with its identity, in no
// particular order; skip, when not nil, leaves files out.
func ReadObjects(files map[string][]byte, skip func(p string) bool) iter.Seq[Object] {
	return func(yield func(Object) bool) {
		for p, b := range files {
			if skip != nil && skip(p) {
				continue
			}
			for doc := range bytes.SplitSeq(b, []byte(DocumentSeparator)) {
				if o, ok := ReadObject(p, doc); ok && !yield(o) {
					return
				}
			}
		}
	}
}

// DocumentSeparator is the line render writes between the objects of a
// file, where ReadObjects splits it into documents.
const DocumentSeparator = "\n---\n"

// ReadObject reads one document of the fleet file p (a part of the file
// between DocumentSeparators) as an object; ok is false when the document
// is not a YAML mapping.
func ReadObject(p string, doc []byte) (Object, bool) {
	docs, err := yamlx.Parse(doc)
	if err != nil || len(docs) == 0 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return Object{}, false
	}
	return NewObject(p, Value(docs[0].Root).(map[string]any)), true
}

// fastReaders read scanned documents with yamlx's fast reader, reusing
// its memory from one document to the next.
var fastReaders = sync.Pool{New: func() any { return new(yamlx.Reader) }}

// ScanObject reads one document as ReadObject does, but only the fields
// at the paths fields (each a list of map keys; apiVersion, kind and
// metadata's name and namespace are always read) when yamlx's fast reader
// reads the document and each of them is a scalar: a fleet of 10,000 apps
// holds objects that a review needs only a few fields of, and converting
// the whole of each would cost it most of its time. Otherwise it reads
// the whole document.
func ScanObject(p string, doc []byte, fields [][]string) (Object, bool) {
	if m, ok := scanFields(doc, fields); ok {
		return NewObject(p, m), true
	}
	return ReadObject(p, doc)
}

// identityFields are the fields ScanObject always reads.
var identityFields = [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"}}

// scanFields reads the fields of one YAML document into a map as Value
// would give them; ok is false when the fast reader does not read the
// text or a field is not a scalar.
func scanFields(doc []byte, fields [][]string) (obj map[string]any, ok bool) {
	r := fastReaders.Get().(*yamlx.Reader)
	defer fastReaders.Put(r)
	docs, ok := r.Fast(doc)
	if !ok || len(docs) != 1 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return nil, false
	}
	obj = map[string]any{}
	for _, list := range [2][][]string{identityFields, fields} {
		for _, path := range list {
			if !scanField(docs[0].Root, obj, path) {
				return nil, false
			}
		}
	}
	return obj, true
}

// scanField copies the scalar at path in root into obj; false when it is
// not a scalar.
func scanField(root *yamlx.Node, obj map[string]any, path []string) bool {
	n := root
	for _, k := range path {
		n = n.Get(k)
	}
	if n == nil {
		return true
	}
	if n.Kind != yamlx.ScalarNode {
		return false
	}
	m := obj
	for _, k := range path[:len(path)-1] {
		next, _ := m[k].(map[string]any)
		if next == nil {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = Value(n)
	return true
}

// Value returns n as encoding/json would decode its JSON: maps, lists,
// strings, float64, bools and nil.
func Value(n *yamlx.Node) any {
	switch n.Kind {
	case yamlx.MapNode:
		m := make(map[string]any, len(n.Kids)/2)
		for i := 0; i < len(n.Kids); i += 2 {
			m[n.Kids[i].Str] = Value(n.Kids[i+1])
		}
		return m
	case yamlx.SeqNode:
		l := make([]any, len(n.Kids))
		for i, k := range n.Kids {
			l[i] = Value(k)
		}
		return l
	}
	switch n.Tag {
	case yamlx.NullTag:
		return nil
	case yamlx.BoolTag:
		return n.Str == "true"
	case yamlx.IntTag, yamlx.FloatTag:
		f, _ := strconv.ParseFloat(n.Str, 64)
		return f
	}
	return n.Str
}
