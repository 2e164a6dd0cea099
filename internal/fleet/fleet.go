// Package fleet writes a generated fleet to a folder the way a careful
// person would: it compares bytes and rewrites only files that changed
// (each through a temporary file and an atomic rename), removes generated
// files that are no longer generated, and never touches files it did not
// generate. All new content is staged before the first rename, so a failure
// while writing leaves the tree as it was; a journal (see JournalName) lets
// the next run finish or undo a change that a killed process left half done.
package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fleetwright/fleetwright/internal/manifest"
)

// Op is what a change does to a file.
type Op string

// Operations.
const (
	Add    Op = "add"
	Update Op = "update"
	Delete Op = "delete"
)

// Change is one file that differs between the folder and the desired fleet.
type Change struct {
	Path     string // slash path relative to the fleet root
	Op       Op
	Old, New []byte
}

// Plan is what Apply would do.
type Plan struct {
	Changes []Change
	// Unmanaged lists files in managed folders that render did not generate
	// (no DO NOT EDIT header); they are left alone.
	Unmanaged []string
	Unchanged int
}

// Empty reports whether the folder already holds the desired fleet.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Compute compares the folder root with desired (slash path → bytes).
// Generated files under the managed folders that are not desired are
// deleted.
func Compute(root string, desired map[string][]byte, managed []string) (*Plan, error) {
	return (*Index)(nil).Compute(root, desired, managed)
}

// Compute is the package's Compute that trusts x for files whose stat data
// it vouches for and records what it reads. The files of apps that x found
// in place (see InPlace) count as unchanged. A nil x reads every file.
func (x *Index) Compute(root string, desired map[string][]byte, managed []string) (*Plan, error) {
	paths := make([]string, 0, len(desired))
	for p := range desired {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	type result struct {
		change *Change
		err    error
	}
	results := make([]result, len(paths))
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		// A first render: every file is new, no need to look for each.
		plan := &Plan{Changes: make([]Change, len(paths))}
		for i, p := range paths {
			plan.Changes[i] = Change{Path: p, Op: Add, New: desired[p]}
		}
		return plan, nil
	}
	var wg sync.WaitGroup
	work := make(chan int, 256)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			var buf []byte
			for i := range work {
				p := paths[i]
				name := filepath.Join(root, filepath.FromSlash(p))
				var st indexEntry
				var stOK bool
				if x != nil {
					if fi, err := os.Lstat(name); err == nil {
						if st, stOK = statOf(fi); stOK && x.unchanged(p, st, desired[p]) {
							continue
						}
					}
				}
				var same bool
				var err error
				if same, buf, err = sameContent(name, desired[p], buf); same {
					if stOK {
						x.record(p, st, desired[p])
					}
					continue
				}
				var old []byte
				if err == nil {
					old, err = os.ReadFile(name)
				}
				switch {
				case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
					results[i].change = &Change{Path: p, Op: Add, New: desired[p]}
				case err != nil:
					results[i].err = err
				case !bytes.Equal(old, desired[p]):
					results[i].change = &Change{Path: p, Op: Update, Old: old, New: desired[p]}
				}
			}
		})
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()

	plan := &Plan{Unchanged: x.keptCount()}
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		if r.change != nil {
			plan.Changes = append(plan.Changes, *r.change)
		} else {
			plan.Unchanged++
		}
	}
	w := &walker{x: x, root: filepath.Clean(root), desired: desired, plan: plan, dirs: map[string]dirRecord{}}
	for _, dir := range managed {
		if err := w.walk(path.Clean(dir)); err != nil {
			return nil, fmt.Errorf("reading %s: %w", dir, err)
		}
	}
	x.setDirs(w.dirs)
	slices.SortFunc(plan.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	plan.Changes = slices.CompactFunc(plan.Changes, func(a, b Change) bool { return a.Path == b.Path })
	return plan, nil
}

// walker looks through managed folders for generated files that are no
// longer desired. A folder whose index record vouches for its listing is
// not read: its stat data say no entry was added, removed or renamed since
// the record was made, so the files it lists are all there is.
type walker struct {
	x       *Index
	root    string
	desired map[string][]byte
	plan    *Plan
	dirs    map[string]dirRecord // the records that hold after this walk
}

func (w *walker) wanted(p string) bool {
	_, ok := w.desired[p]
	return ok || w.x.isKept(p)
}

// walk looks through the folder at rel (a slash path under the root).
func (w *walker) walk(rel string) error {
	full := filepath.Join(w.root, filepath.FromSlash(rel))
	now := time.Now().UnixNano()
	fi, err := os.Lstat(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	st, _ := statData(fi)
	st.size = 0 // a folder's size says nothing more than its times
	if rec, ok := w.x.dirRecord(rel); ok && rec.stat.sameStat(st) && w.x.trusted(rec.stat) &&
		!slices.ContainsFunc(rec.files, func(name string) bool { return !w.wanted(childPath(rel, name)) }) {
		w.dirs[rel] = rec
		for _, d := range rec.dirs {
			if err := w.walk(childPath(rel, d)); err != nil {
				return err
			}
		}
		return nil
	}
	entries, err := readDir(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	// The listing can be vouched for later only when it holds nothing but
	// wanted files and folders, and did not change just before the stat.
	clean := st.ctime < now-racyMargin
	rec := dirRecord{stat: st}
	for _, e := range entries {
		name := e.Name()
		p := childPath(rel, name)
		switch {
		case e.IsDir():
			if strings.HasPrefix(name, tmpPrefix) { // staging left by an interrupted run
				clean = false
				continue
			}
			rec.dirs = append(rec.dirs, name)
			if err := w.walk(p); err != nil {
				return err
			}
		case !e.Type().IsRegular():
			clean = false
		default:
			rec.files = append(rec.files, name)
			if w.wanted(p) {
				continue
			}
			clean = false
			if strings.HasPrefix(name, tmpPrefix) {
				continue
			}
			old, err := os.ReadFile(filepath.Join(full, name))
			if err != nil {
				return err
			}
			if !bytes.HasPrefix(old, []byte(manifest.Header)) {
				w.plan.Unmanaged = append(w.plan.Unmanaged, p)
				continue
			}
			w.plan.Changes = append(w.plan.Changes, Change{Path: p, Op: Delete, Old: old})
		}
	}
	if clean {
		w.dirs[rel] = rec
	}
	return nil
}

// readDir is os.ReadDir; tests count the folders a walk reads.
var readDir = os.ReadDir

func childPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// sameContent reports whether the file name holds exactly want, reading at
// most one byte more than want into buf (grown as needed and returned for
// reuse), without the stat and the allocation of os.ReadFile. A file that
// differs is read again whole by the caller.
func sameContent(name string, want, buf []byte) (bool, []byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return false, buf, err
	}
	defer f.Close()
	if cap(buf) < len(want)+1 {
		buf = make([]byte, len(want)+1+len(want)/4)
	}
	b := buf[:len(want)+1]
	// Read until the end, or until the file is known to be longer.
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	return n == len(want) && bytes.Equal(b[:n], want), buf, nil
}

// Apply carries out the plan in root. Every new file is staged first:
// files in folders that exist go to a temporary file beside their target;
// folders that do not exist yet are built whole under a temporary name.
// Only when everything is staged are the temporaries renamed into place
// (a folder is one rename), then deleted files are removed and emptied
// folders pruned. A failure while staging leaves the tree as it was.
func Apply(root string, plan *Plan) error {
	return (*Index)(nil).Apply(root, plan)
}

// Apply is the package's Apply that also records every file it writes in
// x, and forgets the files it removes.
func (x *Index) Apply(root string, plan *Plan) error {
	if err := apply(root, plan); err != nil {
		return err
	}
	if x == nil {
		return nil
	}
	root = filepath.Clean(root)
	return inParallel(len(plan.Changes), func(i int) error {
		c := &plan.Changes[i]
		if c.Op == Delete {
			x.forget(c.Path)
			return nil
		}
		return x.recordFile(root, c.Path, c.New)
	})
}

// inParallel calls do for 0 to n-1 on as many goroutines as there are
// cores, at least two (creating and reading files is kernel work that two
// cores share), and joins the errors in the order of i.
func inParallel(n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func apply(root string, plan *Plan) error { return applyStopping(root, plan, nil) }

// errStopped is what apply returns when a test's stop function stops it.
var errStopped = errors.New("stopped")

// applyStopping is apply that, for tests of recovery, stops dead (as a
// killed process would, cleaning nothing up) where stop, called at each
// step ("staged", "sealed", "renamed" after each rename, "deleted" after
// each deletion), returns true.
func applyStopping(root string, plan *Plan, stop func(step string) bool) error {
	if stop == nil {
		stop = func(string) bool { return false }
	}
	root = filepath.Clean(root)
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return err
	}
	s := &stager{root: root, exists: map[string]bool{}, made: map[string]bool{}, newRoots: map[string]string{}, stop: stop}
	// A folder that does not exist yet is staged whole and moved into place
	// in one rename: that needs no journal.
	journaled := s.dirExists(root)
	jobs, deletes, err := s.placeAll(plan)
	if err != nil {
		s.abort()
		return err
	}
	if len(jobs) == 0 && len(deletes) == 0 {
		return nil
	}
	var jr *journal
	if journaled {
		renames, err := s.renames()
		if err == nil {
			jr, err = beginJournal(root, renames, deletes)
		}
		if err != nil {
			return err
		}
	}
	if err := s.write(jobs); err != nil {
		s.abort()
		if jr != nil {
			jr.discard(root)
		}
		return err
	}
	if stop("staged") {
		if jr != nil {
			jr.f.Close()
		}
		return errStopped
	}
	if jr != nil {
		if err := jr.commit(); err != nil {
			s.abort()
			jr.discard(root)
			return err
		}
		// From here on a failure leaves the journal for the next run to
		// carry out.
		s.keep = true
	}
	if stop("sealed") {
		return errStopped
	}
	if err := s.commit(); err != nil {
		if jr != nil && !s.keep {
			jr.discard(root)
		}
		return err
	}
	if err := removeAll(root, deletes, stop); err != nil {
		return err
	}
	if jr != nil {
		return done(root)
	}
	return nil
}

// stagedFile is a new file of a plan: the temporary path it is written to
// before it moves into place, its path in the plan and its content.
type stagedFile struct {
	src, path string
	data      []byte
}

// placeAll gives every file the plan writes its temporary path, and lists
// the paths the plan deletes.
func (s *stager) placeAll(plan *Plan) ([]stagedFile, []string, error) {
	var jobs []stagedFile
	var deletes []string
	for _, c := range plan.Changes {
		if c.Op == Delete {
			deletes = append(deletes, c.Path)
			continue
		}
		dst := filepath.Join(s.root, filepath.FromSlash(c.Path))
		tmp, err := s.place(dst)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, stagedFile{tmp, c.Path, c.New})
	}
	return jobs, deletes, nil
}

// write writes the staged files to their temporary paths, in parallel,
// making their folders first.
func (s *stager) write(jobs []stagedFile) error {
	return inParallel(len(jobs), func(i int) error {
		j := jobs[i]
		if err := s.mkdir(filepath.Dir(j.src)); err != nil {
			return err
		}
		if err := writeNew(j.src, j.data); err != nil {
			return fmt.Errorf("writing %s: %w", j.path, err)
		}
		return nil
	})
}

// removeAll removes the files deletes names in root, one already gone
// being no error, then the folders that left empty, deepest first, never
// root. It stops dead where stop("deleted") says so after a removal.
func removeAll(root string, deletes []string, stop func(step string) bool) error {
	dirs := make([]string, 0, len(deletes))
	for _, d := range deletes {
		p := filepath.Join(root, filepath.FromSlash(d))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", d, err)
		}
		if stop("deleted") {
			return errStopped
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	pruneEmpty(root, dirs)
	return nil
}

const tmpPrefix = ".fleetwright-tmp-"

// writeNew writes data to the file name, created or truncated, as
// os.WriteFile does but with the three system calls it takes and no more
// (os.OpenFile also offers every file to the network poller, which refuses
// regular files): a full render creates a hundred thousand files.
func writeNew(name string, data []byte) error {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o644)
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 {
		var n int
		err = ignoringEINTR(func() (err error) {
			n, err = syscall.Write(fd, data)
			return err
		})
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			syscall.Close(fd)
			return &fs.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// stager decides where each new file is first written.
type stager struct {
	root     string
	mu       sync.Mutex
	exists   map[string]bool   // folder → it exists on disk (before Apply)
	made     map[string]bool   // folders made while staging
	newRoots map[string]string // topmost missing folder → its staging folder
	files    [][2]string       // temporary file → target
	keep     bool              // a sealed journal lists the temporaries: a failure keeps them
	stop     func(step string) bool
}

// renames lists the renames commit makes, in its order, as slash paths
// relative to the root.
func (s *stager) renames() ([][2]string, error) {
	rel := func(p string) (string, error) {
		r, err := filepath.Rel(s.root, p)
		return filepath.ToSlash(r), err
	}
	var out [][2]string
	add := func(from, to string) error {
		f, err := rel(from)
		if err != nil {
			return err
		}
		t, err := rel(to)
		if err != nil {
			return err
		}
		out = append(out, [2]string{f, t})
		return nil
	}
	tops := make([]string, 0, len(s.newRoots))
	for top := range s.newRoots {
		tops = append(tops, top)
	}
	slices.Sort(tops)
	for _, top := range tops {
		if err := add(s.newRoots[top], top); err != nil {
			return nil, err
		}
	}
	for _, f := range s.files {
		if err := add(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dirExists reports whether the folder d existed before Apply. It looks
// from the top down, so that below a missing folder nothing is looked up:
// a first render stats a handful of folders, not one per component.
func (s *stager) dirExists(d string) bool {
	if e, ok := s.exists[d]; ok {
		return e
	}
	e := false
	if parent := filepath.Dir(d); parent == d || s.dirExists(parent) {
		st, err := os.Stat(d)
		e = err == nil && st.IsDir()
	}
	s.exists[d] = e
	return e
}

// place returns the path to write dst's content to.
func (s *stager) place(dst string) (string, error) {
	dir := filepath.Dir(dst)
	if s.dirExists(dir) {
		tmp := filepath.Join(dir, tmpPrefix+filepath.Base(dst))
		s.files = append(s.files, [2]string{tmp, dst})
		return tmp, nil
	}
	// The topmost missing folder is built whole under a temporary name.
	top := dir
	for {
		parent := filepath.Dir(top)
		if parent == top || s.dirExists(parent) {
			break
		}
		top = parent
	}
	if parent := filepath.Dir(top); !s.dirExists(parent) {
		return "", fmt.Errorf("cannot create %s", top)
	}
	stage, ok := s.newRoots[top]
	if !ok {
		stage = filepath.Join(filepath.Dir(top), tmpPrefix+filepath.Base(top))
		if err := os.RemoveAll(stage); err != nil { // left by an interrupted run
			return "", err
		}
		s.newRoots[top] = stage
	}
	rel, err := filepath.Rel(top, dst)
	if err != nil {
		return "", err
	}
	return filepath.Join(stage, rel), nil
}

// mkdir makes the folder d and any missing parents: one mkdir call for a
// folder whose parent exists, where os.MkdirAll stats first.
func (s *stager) mkdir(d string) error {
	s.mu.Lock()
	done := s.made[d] || s.exists[d]
	s.mu.Unlock()
	if done {
		return nil
	}
	err := os.Mkdir(d, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if parent := filepath.Dir(d); parent != d {
			if err := s.mkdir(parent); err != nil {
				return err
			}
		}
		err = os.Mkdir(d, 0o755)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) { // another worker made it, or a file is in the way (the write says)
		return err
	}
	s.mu.Lock()
	s.made[d] = true
	s.mu.Unlock()
	return nil
}

func (s *stager) commit() error {
	tops := make([]string, 0, len(s.newRoots))
	for top := range s.newRoots {
		tops = append(tops, top)
	}
	slices.Sort(tops)
	// A failure before the first rename leaves the old tree: the journal,
	// if any, is given up with the temporaries.
	first := true
	for _, top := range tops {
		if err := os.Rename(s.newRoots[top], top); err != nil {
			s.keep = s.keep && !first
			s.abort()
			return fmt.Errorf("moving %s into place: %w", top, err)
		}
		delete(s.newRoots, top)
		first = false
		if s.stop("renamed") {
			return errStopped
		}
	}
	for i, f := range s.files {
		if err := os.Rename(f[0], f[1]); err != nil {
			s.files = s.files[i:]
			s.keep = s.keep && !first
			s.abort()
			return fmt.Errorf("renaming %s: %w", f[1], err)
		}
		first = false
		if s.stop("renamed") {
			return errStopped
		}
	}
	s.files = nil
	return nil
}

func (s *stager) abort() {
	if s.keep {
		return
	}
	for _, f := range s.files {
		_ = os.Remove(f[0])
	}
	for _, stage := range s.newRoots {
		_ = os.RemoveAll(stage)
	}
}

// Diff returns a unified diff of the changes, labelled with prefix/path.
func Diff(changes []Change, prefix string) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(FileDiff(c, prefix))
	}
	return b.String()
}

// FileDiff returns the unified diff of one change.
func FileDiff(c Change, prefix string) string {
	from, to := path.Join(prefix, c.Path), path.Join(prefix, c.Path)
	switch c.Op {
	case Add:
		from = "/dev/null"
	case Delete:
		to = "/dev/null"
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(c.Old), B: lines(c.New),
		FromFile: from, ToFile: to, Context: 3,
	})
	return d
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	l := strings.SplitAfter(string(b), "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	} else {
		l[len(l)-1] += "\n\\ No newline at end of file\n"
	}
	return l
}
