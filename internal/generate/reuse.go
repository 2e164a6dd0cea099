package generate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Digest identifies everything an app's files are generated from: when two
// renders give an app the same digest, they give it the same files.
type Digest [sha256.Size]byte

// An app's files depend on the program (see engineID: it changes whenever
// the code does), the platform settings and fleet path, the app's spec
// value after template expansion and the file it was read from (the folder
// names project and cluster), its spec revision, the images of its
// workloads, its components' order and graph dependencies (edges to other
// apps' components included) and the spec values of the apps it takes
// exports from. These, and only these, go into its digest.

// engineID identifies the running program: its Go build ID, else (a build
// with -buildid= has none) a SHA-256 of the executable; nil when neither
// can be read, and then nothing is reused.
var engineID = sync.OnceValue(func() []byte {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	// The Go toolchain puts the build ID near the start of the executable:
	// in an ELF note, or as a marked string in other formats.
	head := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, head)
	if id := parseBuildID(head[:n]); id != nil {
		return id
	}
	h := sha256.New()
	h.Write(head[:n])
	if _, err := io.Copy(h, f); err != nil {
		return nil
	}
	return h.Sum([]byte("sha256:"))
})

// parseBuildID finds the Go build ID in the first bytes of an executable.
func parseBuildID(head []byte) []byte {
	// ELF note: name size 4, description size, type 4, "Go\0\0", the ID.
	for off := 0; ; {
		i := bytes.Index(head[off:], []byte("Go\x00\x00"))
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		if i < 12 || i+4 > len(head) {
			continue
		}
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			h := head[i-12 : i]
			size := int(bo.Uint32(h[4:]))
			if bo.Uint32(h) == 4 && bo.Uint32(h[8:]) == 4 && size > 0 && size <= 1024 && i+4+size <= len(head) {
				return bytes.Clone(head[i+4 : i+4+size])
			}
		}
	}
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	i := bytes.Index(head, []byte(prefix))
	if i < 0 {
		return nil
	}
	rest := head[i+len(prefix):]
	j := bytes.Index(rest, []byte(suffix))
	if j <= 0 {
		return nil
	}
	return bytes.Clone(rest[:j])
}

// digester computes the digests of one render.
type digester struct {
	base []byte             // program and options, shared by every app
	own  map[string]*Digest // app key → digest of its spec value and file; nil entry: value cannot be digested
}

// newDigester returns nil when digests cannot be computed (the build ID is
// unknown or the options do not encode).
func newDigester(r *renderer, apps []*load.LoadedApp, workers int) *digester {
	id := engineID()
	if id == nil {
		return nil
	}
	plat, err := json.Marshal(r.opts.Platform)
	if err != nil {
		return nil
	}
	d := &digester{own: make(map[string]*Digest, len(apps))}
	d.base = appendField(d.base, id)
	d.base = appendField(d.base, plat)
	d.base = appendField(d.base, []byte(r.opts.FleetPath))
	sums := make([]*Digest, len(apps))
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for range workers {
		wg.Go(func() {
			for i := range next {
				sums[i] = ownDigest(apps[i])
			}
		})
	}
	for i := range apps {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, a := range apps {
		d.own[a.Key()] = sums[i]
	}
	return d
}

func ownDigest(a *load.LoadedApp) *Digest {
	if a.Doc == nil {
		return nil
	}
	v, ok := a.Doc.Sum()
	if !ok {
		return nil
	}
	var b []byte
	b = appendField(b, v[:])
	b = appendField(b, []byte(a.File))
	d := Digest(sha256.Sum256(b))
	return &d
}

// digest returns the app's digest, or false when one of its inputs cannot
// be digested.
func (d *digester) digest(r *renderer, a *load.LoadedApp) (Digest, bool) {
	own := d.own[a.Key()]
	if own == nil {
		return Digest{}, false
	}
	b := append([]byte(nil), d.base...)
	b = appendField(b, own[:])
	rev := ""
	if r.opts.SpecRevision != nil {
		rev = r.opts.SpecRevision(a)
	}
	b = appendField(b, []byte(rev))
	for _, c := range r.order(a) {
		node := load.NodeID(a, c.Name)
		b = appendField(append(b, 'c'), []byte(c.Name))
		img, ok := r.opts.Images[node]
		if ok {
			img = "=" + img
		}
		b = appendField(b, []byte(img))
		deps := r.repo.Graph.Deps(node)
		b = binary.AppendUvarint(b, uint64(len(deps)))
		for _, dep := range deps {
			b = appendField(b, []byte(dep))
		}
		if c.WorkloadSpec == nil {
			continue
		}
		for _, e := range workloadEnv(&a.Spec, c.WorkloadSpec) {
			if e.ExportRef == nil || e.ExportRef.App == "" || e.ExportRef.App == a.Spec.Name {
				continue
			}
			key := a.App().Sibling(e.ExportRef.App).Key()
			b = appendField(append(b, 'r'), []byte(key))
			if t, ok := d.own[key]; ok {
				if t == nil {
					return Digest{}, false
				}
				b = appendField(b, t[:])
			} else {
				b = appendField(b, nil)
			}
		}
	}
	return Digest(sha256.Sum256(b)), true
}

// appendField appends p with its length, so that fields never run into
// each other.
func appendField(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

// workloadEnv lists the env vars of a workload's containers: its own (with
// those it inherits from the app's env), its init containers' and its
// sidecars'.
func workloadEnv(s *spec.App, w *spec.WorkloadSpec) []spec.EnvVar {
	env := s.WorkloadEnv(w)
	if len(w.InitContainers) == 0 && len(w.Sidecars) == 0 {
		return env
	}
	out := slices.Clone(env)
	for _, x := range w.InitContainers {
		out = append(out, x.Env...)
	}
	for _, x := range w.Sidecars {
		out = append(out, x.Env...)
	}
	return out
}
