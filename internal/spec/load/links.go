package load

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Symbolic links. The loader reads files through links whose targets stay
// inside the repository, as Git and a checkout do. It refuses a link whose
// target is outside the repository (the file would not be in the commit
// that Flux and a review see), and a linked folder under apps/ wherever it
// points: the walk does not follow folder links, so the specs below one
// would be left out without a word.

// maxLinkHops bounds the links followed for one path; more is a loop, and
// reading the file then reports it.
const maxLinkHops = 40

// escapingLink returns the first symbolic link on the way to p whose target
// is outside fsys, or "" when there is none or fsys has no links
// (fs.ReadLinkFS). realDir says that p's folder and those above it are
// known to be no links (fs.WalkDir found p), which spares their look-ups.
func escapingLink(fsys fs.FS, p string, realDir bool) string {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return ""
	}
	rest := strings.Split(p, "/")
	cur := "."
	if realDir {
		cur, rest = path.Dir(p), rest[len(rest)-1:]
	}
	for hops := 0; len(rest) > 0; {
		next := path.Join(cur, rest[0])
		rest = rest[1:]
		fi, err := rl.Lstat(next)
		if err != nil {
			return "" // reading p reports it
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return ""
		}
		target, err := rl.ReadLink(next)
		if err != nil {
			return ""
		}
		if filepath.IsAbs(target) || path.IsAbs(filepath.ToSlash(target)) {
			return next
		}
		joined := path.Join(cur, filepath.ToSlash(target))
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return next
		}
		// Resolve the target's own components again: they may be links.
		rest = append(strings.Split(joined, "/"), rest...)
		cur = "."
	}
	return ""
}

// checkLinks reports, at the link, a link on the way to the file p that
// leaves the repository; false means p must not be read. realDir is as for
// escapingLink.
func (l *Loader) checkLinks(fsys fs.FS, p string, realDir bool, ps *Problems) bool {
	link := escapingLink(fsys, p, realDir)
	if link == "" {
		return true
	}
	what := "file"
	if link != p {
		what = "folder"
	}
	*ps = append(*ps, problem(l.display(link), Pos{1, 1}, fmt.Sprintf("%s is a symbolic link to a path outside the repository; copy the %s instead", l.display(link), what)))
	return false
}

// linkedFolder reports a symbolic link to a folder found under apps/.
func (l *Loader) linkedFolder(fsys fs.FS, p string, ps *Problems) {
	msg := fmt.Sprintf("%s is a symbolic link to a folder; the specs below it are not read: move or copy the folder here instead", l.display(p))
	if escapingLink(fsys, p, false) != "" {
		msg = fmt.Sprintf("%s is a symbolic link to a path outside the repository; copy the folder instead", l.display(p))
	}
	*ps = append(*ps, problem(l.display(p), Pos{1, 1}, msg))
}
