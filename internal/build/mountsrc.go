package build

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// mountSource returns the context entry a RUN --mount=type=bind source
// names (rel, slash-separated, "" for the context). A symbolic link on the
// way, the source itself included, is followed only inside the context: a
// link out of it (to a host file, to /proc) is an error, never a mount of
// what it points to.
func (bc *buildContext) mountSource(rel string) (ctxFile, error) {
	if f, ok := bc.lookup(rel); ok && f.mode&fs.ModeSymlink == 0 {
		return f, nil
	}
	// Walk the components, following each link inside the context only.
	comps := strings.Split(rel, "/")
	cur := ""
	for hops, i := 0, 0; i < len(comps); i++ {
		if comps[i] == "" || comps[i] == "." {
			continue
		}
		next := path.Join(cur, comps[i])
		f, ok := bc.lookup(next)
		if !ok {
			return ctxFile{}, fmt.Errorf("%s is not in the build context", rel)
		}
		if f.mode&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return ctxFile{}, fmt.Errorf("%s: too many levels of symbolic links", rel)
		}
		target := filepath.ToSlash(f.link)
		if path.IsAbs(target) {
			return ctxFile{}, fmt.Errorf("%s is a symbolic link to %s, outside the build context", next, f.link)
		}
		joined := path.Join(path.Dir(next), target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return ctxFile{}, fmt.Errorf("%s is a symbolic link to %s, outside the build context", next, f.link)
		}
		comps = append(strings.Split(joined, "/"), comps[i+1:]...)
		cur, i = "", -1
	}
	f, ok := bc.lookup(cur)
	if !ok {
		return ctxFile{}, fmt.Errorf("%s is not in the build context", rel)
	}
	return f, nil
}
