package load

import (
	"io/fs"
	"strings"
)

// escapingFileLinks reports each symbolic link under apps/ (a file link, or
// a link to nothing) whose target leaves the repository: a build could
// otherwise mount or read the build machine's file through it (a
// committed `token -> /home/runner/.netrc`). Hidden names are checked too.
// A link a spec names (files[].from) is reported there already.
func (l *Loader) escapingFileLinks(fsys fs.FS, links []string, ps *Problems) {
	for _, p := range links {
		named := false
		for _, q := range *ps {
			if strings.Contains(q.Message, l.display(p)+" is a symbolic link") {
				named = true
				break
			}
		}
		if !named {
			l.checkLinks(fsys, p, true, ps)
		}
	}
}
