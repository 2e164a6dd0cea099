package build

import (
	"archive/tar"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	"github.com/moby/patternmatcher"
)

// copySpec is a COPY or ADD after expansion.
type copySpec struct {
	line     int
	code     string
	sources  []string
	contents []instructions.SourceContent
	dest     string
	from     string
	chown    string
	chmod    string
	excludes []string
	add      bool
	unpack   *bool
}

func (cs copySpec) instr() string {
	if cs.add {
		return "ADD"
	}
	return "COPY"
}

// srcItem is one source of a COPY: a file, or a directory whose contents
// are copied.
type srcItem struct {
	name    string       // base name, used when the destination is a directory
	dir     bool         // entries are a directory's contents, relative to it
	entries []*fileEntry // a directory's contents, or the one file (path "")
	archive bool         // ADD of a local archive: unpack it
}

// copy executes a COPY or ADD: it gathers the sources, places them under
// the destination with the owner and mode asked for, adds the folders
// the layer needs and adds the layer to the stage.
func (x *executor) copy(ctx context.Context, df *dockerfile, p *plan, st *stageState, cs copySpec, done map[int]*stageState) error {
	fail := func(err error) error {
		var ue *UnsupportedError
		if errors.As(err, &ue) || errors.Is(err, context.Canceled) {
			return err
		}
		return df.errorf(cs.line, "%s: %w", cs.instr(), err)
	}
	t := &copyTree{out: map[string]*fileEntry{}, known: st.known}
	if err := t.setOptions(st, cs); err != nil {
		return fail(err)
	}
	items, err := x.copyItems(ctx, df, p, st, cs, done)
	if err != nil {
		return fail(err)
	}
	dest := cs.dest
	if !path.IsAbs(dest) {
		wd := st.cfg.Config.WorkingDir
		if wd == "" {
			wd = "/"
		}
		dest = path.Join(wd, dest)
	}
	dest = path.Clean(dest)
	destIsDir := strings.HasSuffix(cs.dest, "/") || cs.dest == "." || strings.HasSuffix(cs.dest, "/.") ||
		dest == "/" || len(items) > 1
	needDest, err := t.place(items, dest, destIsDir, cs.from != "")
	if err != nil {
		return fail(err)
	}
	// Directories: the destination, and in a stage built on scratch alone
	// every missing parent, so the layer stands on its own.
	if needDest {
		t.ensureDir(dest, true)
	}
	for _, p := range slices.Sorted(maps.Keys(t.out)) {
		for _, a := range ancestors(p) {
			t.ensureDir(a, false)
		}
	}
	if err := x.addCopyLayer(st, cs, slices.Collect(maps.Values(t.out))); err != nil {
		return fail(err)
	}
	return nil
}

// copyItems gathers the sources of a COPY or ADD: from the build context,
// or from the stage or image of --from; then the heredocs; less what
// --exclude names.
func (x *executor) copyItems(ctx context.Context, df *dockerfile, p *plan, st *stageState, cs copySpec, done map[int]*stageState) ([]srcItem, error) {
	var items []srcItem
	var err error
	if cs.from == "" {
		items, err = x.contextItems(df, cs)
	} else {
		var sfs *stageFS
		if sfs, err = x.fromFS(ctx, df, p, st, cs, done); err == nil {
			items, err = fsItems(sfs, cs.sources)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, c := range cs.contents {
		items = append(items, srcItem{name: c.Path, entries: []*fileEntry{{mode: 0o644, data: []byte(c.Data)}}})
	}
	if len(cs.excludes) > 0 {
		return exclude(items, cs.excludes)
	}
	return items, nil
}

// copyTree is what a COPY or ADD writes, by path, with the owner and mode
// its --chown and --chmod give.
type copyTree struct {
	out   map[string]*fileEntry
	own   *owner                // --chown, nil for none
	chmod *fs.FileMode          // --chmod, nil for none
	known map[string]*fileEntry // the stage's files, in a stage built on scratch alone
}

// setOptions reads --chown (the names in the stage's /etc/passwd and
// /etc/group) and --chmod.
func (t *copyTree) setOptions(st *stageState, cs copySpec) error {
	if cs.chown != "" {
		o, err := resolveChown(cs.chown, func(name string) ([]byte, bool, error) { return readStageFile(st.fs, name) })
		if err != nil {
			return err
		}
		t.own = &o
	}
	if cs.chmod != "" {
		bits, err := parseChmod(cs.chmod)
		if err != nil {
			return err
		}
		m := fileMode(&tar.Header{Mode: int64(bits)})
		t.chmod = &m
	}
	return nil
}

// put writes e at target: owned as --chown says, else by root unless
// keepOwner, with --chmod's mode but on links.
func (t *copyTree) put(target string, e *fileEntry, keepOwner bool) {
	n := *e
	n.path = target
	switch {
	case t.own != nil:
		n.uid, n.gid = t.own.uid, t.own.gid
	case !keepOwner:
		n.uid, n.gid = 0, 0
	}
	if t.chmod != nil && !n.isSymlink() {
		n.mode = n.mode&fs.ModeType | *t.chmod
	}
	t.out[target] = &n
}

// place puts the items at dest (into it if destIsDir), unpacking the
// archives of ADD; keep keeps the owners of the files of another stage.
// It reports whether dest is a folder that must exist.
func (t *copyTree) place(items []srcItem, dest string, destIsDir, keep bool) (bool, error) {
	needDest := false
	for _, it := range items {
		switch {
		case it.archive:
			entries, err := unpackArchive(it.entries[0].data)
			if err != nil {
				return false, fmt.Errorf("%s: %w", it.name, err)
			}
			for _, e := range entries {
				t.put(path.Join(dest, e.path), e, true)
			}
			needDest = true
		case it.dir:
			for _, e := range it.entries {
				t.put(path.Join(dest, e.path), e, keep)
			}
			needDest = true
		case destIsDir:
			t.put(path.Join(dest, it.name), it.entries[0], keep)
			needDest = true
		default:
			t.put(dest, it.entries[0], keep)
		}
	}
	return needDest, nil
}

// ensureDir adds the folder d unless it is written already: in a stage
// built on scratch alone, where it is not known yet; elsewhere only to
// give it --chown's owner, if withOwner.
func (t *copyTree) ensureDir(d string, withOwner bool) {
	if d == "/" || t.out[d] != nil {
		return
	}
	o := owner{}
	if withOwner && t.own != nil {
		o = *t.own
	}
	if t.known != nil {
		if _, ok := t.known[d]; !ok {
			t.out[d] = &fileEntry{path: d, mode: fs.ModeDir | 0o755, uid: o.uid, gid: o.gid}
		}
		return
	}
	if withOwner && t.own != nil {
		t.out[d] = &fileEntry{path: d, mode: fs.ModeDir | 0o755, uid: o.uid, gid: o.gid}
	}
}

// addCopyLayer adds the layer of entries to the stage, and entries to
// what the stage's filesystem knows of.
func (x *executor) addCopyLayer(st *stageState, cs copySpec, entries []*fileEntry) error {
	raw, err := writeTar(entries, x.epoch)
	if err != nil {
		return err
	}
	layer, err := x.layerFor(raw, st.layerType)
	if err != nil {
		return err
	}
	st.adds = append(st.adds, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: x.epoch}, CreatedBy: cs.code},
	})
	st.fs.addOwn(entries)
	if st.known != nil {
		for _, e := range entries {
			st.known[e.path] = e
		}
	}
	return nil
}

// readStageFile reads a regular file of a stage's filesystem, following
// symbolic links.
func readStageFile(sfs *stageFS, p string) ([]byte, bool, error) {
	e, sure, err := sfs.findFile(p)
	if err != nil {
		return nil, false, err
	}
	if sure {
		if e == nil || !e.mode.IsRegular() {
			return nil, false, nil
		}
		return e.data, true, nil
	}
	idx, err := sfs.index()
	if err != nil {
		return nil, false, err
	}
	ie, err := idx.resolve(p, true)
	if err != nil || ie == nil || !ie.mode.IsRegular() {
		return nil, false, err
	}
	if err := sfs.load([]*idxEntry{ie}); err != nil {
		return nil, false, err
	}
	return ie.data, true, nil
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[\\") }

// contextItems resolves COPY sources in the build context.
func (x *executor) contextItems(df *dockerfile, cs copySpec) ([]srcItem, error) {
	var items []srcItem
	for _, src := range cs.sources {
		if cs.add {
			if kind := remoteSource(src); kind != "" {
				return nil, &UnsupportedError{File: df.file, Line: cs.line, Instruction: "ADD " + kind, Reason: "needs a container runtime"}
			}
		}
		clean := path.Clean(src)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("source %s %w of the build context", src, ErrOutsideRoot)
		}
		rel := strings.TrimPrefix(path.Clean("/"+clean), "/")
		var matches []ctxFile
		if hasGlob(rel) {
			if _, err := path.Match(rel, ""); err != nil {
				return nil, fmt.Errorf("source %s: %w", src, err)
			}
			for _, f := range x.bc.files {
				if ok, _ := path.Match(rel, f.rel); ok {
					matches = append(matches, f)
				}
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("source %s matches no file in the build context", src)
			}
		} else {
			f, ok := x.bc.lookup(rel)
			if !ok {
				return nil, fmt.Errorf("source %s: not in the build context (missing, or excluded by .dockerignore)", src)
			}
			matches = []ctxFile{f}
		}
		for _, f := range matches {
			it, err := x.contextItem(f, cs)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
	}
	return items, nil
}

func (x *executor) contextItem(f ctxFile, cs copySpec) (srcItem, error) {
	it := srcItem{name: path.Base(f.rel)}
	if f.mode&fs.ModeSymlink != 0 {
		t, err := x.bc.followLink(f.rel)
		if err != nil {
			return it, err
		}
		f = t
	}
	if !f.mode.IsDir() {
		data, err := x.readFile(f.rel)
		if err != nil {
			return it, err
		}
		it.entries = []*fileEntry{{mode: f.mode, data: data}}
		if cs.add && (cs.unpack == nil || *cs.unpack) {
			it.archive = isArchive(data)
		}
		return it, nil
	}
	it.dir = true
	prefix := ""
	if f.rel != "." {
		prefix = f.rel + "/"
	}
	for _, c := range x.bc.below(f.rel) {
		e := &fileEntry{path: strings.TrimPrefix(c.rel, prefix), mode: c.mode, link: c.link}
		if c.mode.IsRegular() {
			data, err := x.readFile(c.rel)
			if err != nil {
				return it, err
			}
			e.data = data
		}
		it.entries = append(it.entries, e)
	}
	return it, nil
}

// fromFS returns the filesystem COPY --from reads: an earlier stage's, or a
// registry image's for the plan's platform.
func (x *executor) fromFS(ctx context.Context, df *dockerfile, p *plan, st *stageState, cs copySpec, done map[int]*stageState) (*stageFS, error) {
	lex := shell.NewLex(df.escape)
	from, _, err := lex.ProcessWord(cs.from, env{args: p.meta})
	if err != nil {
		return nil, fmt.Errorf("--from=%s: %w", cs.from, err)
	}
	if j, ok := df.stageByName(from, st.plan.index); ok {
		if src, ok := done[j]; ok {
			return src.fs, nil
		}
		return nil, fmt.Errorf("--from=%s: stage not built", from)
	}
	key := from + "@" + platformString(p.platform)
	if sfs, ok := x.images[key]; ok {
		return sfs, nil
	}
	b, err := x.base(ctx, df, imageUse{ref: from, platform: p.platform, line: cs.line})
	if err != nil {
		return nil, err
	}
	img, err := b.forPlatform(p.platform)
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("--from=%s: %w", from, err)
	}
	sfs := &stageFS{}
	for _, l := range layers {
		sfs.layers = append(sfs.layers, fsLayer{remote: l})
	}
	x.images[key] = sfs
	return sfs, nil
}

// fsItems resolves COPY --from sources in a stage's filesystem.
func fsItems(sfs *stageFS, sources []string) ([]srcItem, error) {
	var items []srcItem
	for _, src := range sources {
		abs := cleanAbs(src)
		if hasGlob(abs) {
			idx, err := sfs.index()
			if err != nil {
				return nil, err
			}
			matches, err := idx.glob(abs)
			if err != nil {
				return nil, err
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("source %s matches no file", src)
			}
			for _, m := range matches {
				it, err := indexItem(sfs, idx, m, src)
				if err != nil {
					return nil, err
				}
				items = append(items, it)
			}
			continue
		}
		e, sure, err := sfs.findFile(abs)
		if err != nil {
			return nil, err
		}
		if sure && e == nil {
			return nil, fmt.Errorf("source %s: no such file or directory", src)
		}
		if sure && !e.isDir() {
			items = append(items, srcItem{name: path.Base(abs), entries: []*fileEntry{e}})
			continue
		}
		idx, err := sfs.index()
		if err != nil {
			return nil, err
		}
		it, err := indexItem(sfs, idx, abs, src)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

func indexItem(sfs *stageFS, idx *fsIndex, p, src string) (srcItem, error) {
	it := srcItem{name: path.Base(p)}
	e, err := idx.resolve(p, true)
	if err != nil {
		return it, err
	}
	if e == nil {
		return it, fmt.Errorf("source %s: no such file or directory", src)
	}
	if !e.isDir() {
		if err := sfs.load([]*idxEntry{e}); err != nil {
			return it, err
		}
		f := e.fileEntry
		it.entries = []*fileEntry{&f}
		return it, nil
	}
	it.dir = true
	below := idx.below(e.path)
	if err := sfs.load(below); err != nil {
		return it, err
	}
	prefix := strings.TrimSuffix(e.path, "/") + "/"
	for _, c := range below {
		f := c.fileEntry
		f.path = strings.TrimPrefix(c.path, prefix)
		it.entries = append(it.entries, &f)
	}
	return it, nil
}

// exclude drops the entries matching --exclude patterns, matched against
// paths relative to each source directory (or a file's name).
func exclude(items []srcItem, patterns []string) ([]srcItem, error) {
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, fmt.Errorf("--exclude: %w", err)
	}
	var out []srcItem
	for _, it := range items {
		if !it.dir {
			if m, err := pm.MatchesOrParentMatches(it.name); err != nil {
				return nil, err
			} else if !m {
				out = append(out, it)
			}
			continue
		}
		kept := it
		kept.entries = nil
		for _, e := range it.entries {
			m, err := pm.MatchesOrParentMatches(e.path)
			if err != nil {
				return nil, err
			}
			if !m {
				kept.entries = append(kept.entries, e)
			}
		}
		out = append(out, kept)
	}
	return out, nil
}

// decompress returns a reader of data's uncompressed content, by its magic
// bytes, and whether data was compressed.
func decompress(data []byte) (io.Reader, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return gzip.NewReader(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte("BZh")):
		return bzip2.NewReader(bytes.NewReader(data)), nil
	case bytes.HasPrefix(data, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return nil, errors.New("xz archives are not supported by the built-in builder")
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return nil, errors.New("zstd archives are not supported by the built-in builder")
	}
	return bytes.NewReader(data), nil
}

// isArchive reports whether ADD would unpack data: a tar stream, plain or
// compressed.
func isArchive(data []byte) bool {
	r, err := decompress(data)
	if err != nil {
		// An archive kind that cannot be read here: let unpacking report it.
		return true
	}
	_, err = tar.NewReader(r).Next()
	return err == nil
}

// unpackArchive lists a tar archive's entries, paths relative to where it
// is unpacked. Paths are confined below that point.
func unpackArchive(data []byte) ([]*fileEntry, error) {
	r, err := decompress(data)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(r)
	byPath := map[string]*fileEntry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("unpacking: %w", err)
		}
		p := cleanAbs(h.Name)
		if p == "/" {
			continue
		}
		e := entryFromHeader(h, strings.TrimPrefix(p, "/"))
		switch h.Typeflag {
		case tar.TypeReg:
			if e.data, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("unpacking %s: %w", h.Name, err)
			}
		case tar.TypeLink:
			t, ok := byPath[strings.TrimPrefix(cleanAbs(h.Linkname), "/")]
			if !ok || !t.mode.IsRegular() {
				return nil, fmt.Errorf("unpacking %s: hard link to unknown file %s", h.Name, h.Linkname)
			}
			e.data, e.link = t.data, ""
		case tar.TypeDir, tar.TypeSymlink:
		default:
			continue
		}
		byPath[e.path] = e
	}
	return slices.Collect(maps.Values(byPath)), nil
}
