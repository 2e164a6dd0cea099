package load

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"
)

// Config files given by `from`: the loader reads them, through the same
// file system as the spec (a folder, or a Git tree), and stores their
// content in File.Content, so that what follows the loader sees only
// content. A file is read only from the apps/ tree: a Git source reads
// apps/, templates/ and the platform file and nothing else, so a file
// outside apps/ would load from a folder and not from a ref.

// MaxConfigFile is the largest file a `from` may name, and the most that
// the files of one component may hold together: they go into one
// ConfigMap, which Kubernetes caps at 1 MiB with its metadata.
const MaxConfigFile = 1 << 20

// MaxComponentFiles leaves room in the ConfigMap for its keys and metadata.
const MaxComponentFiles = MaxConfigFile - 16<<10

// fromPath returns the repository path of a file's `from`, relative to the
// app file's folder, or why it is refused.
func fromPath(appFile, from string) (string, string) {
	switch {
	case path.IsAbs(from) || strings.HasPrefix(from, `\`) || (len(from) > 1 && from[1] == ':'):
		return "", fmt.Sprintf("%q must be a path relative to the folder of %s, such as config/nginx.conf", from, path.Base(appFile))
	case strings.Contains(from, `\`):
		return "", fmt.Sprintf("%q must use / between folders", from)
	}
	p := path.Join(path.Dir(appFile), from)
	switch {
	case p == ".." || strings.HasPrefix(p, "../"):
		return "", fmt.Sprintf("%q leaves the apps repository", from)
	case p != "apps" && !strings.HasPrefix(p, "apps/"):
		return "", fmt.Sprintf("%q is %s, outside apps/: render reads config files only from the apps/ tree; keep it beside %s", from, p, path.Base(appFile))
	case p == path.Dir(appFile) || p == "apps":
		return "", fmt.Sprintf("%q is a folder, not a file", from)
	}
	return p, ""
}

// readFromFiles reads the `from` of every file that has no content into
// its content, and adds it to the document's digest. Problems are at the
// `from`.
func (l *Loader) readFromFiles(fsys fs.FS, a *LoadedApp, ps *Problems) {
	for i := range a.Spec.Components {
		w := a.Spec.Components[i].WorkloadSpec
		if w == nil {
			continue
		}
		for j := range w.Files {
			f := &w.Files[j]
			if f.From == "" || f.Content != nil {
				continue
			}
			at := Path{"components", i, "workload_spec", "files", j, "from"}
			data, msg := l.readFrom(fsys, a.File, f.From)
			if msg != "" {
				ps.Add(a.Doc, at, "%s", msg)
				continue
			}
			s := string(data)
			f.Content = &s
			a.Doc.addInput(f.From, data)
			if m := ContentSecret(s); m != "" {
				ps.Add(a.Doc, at, "%s %s", f.From, m)
			}
		}
	}
}

// readFrom reads the file that `from` names, or says why it cannot.
func (l *Loader) readFrom(fsys fs.FS, appFile, from string) ([]byte, string) {
	p, msg := fromPath(appFile, from)
	if msg != "" {
		return nil, msg
	}
	if link := escapingLink(fsys, p, false); link != "" {
		return nil, fmt.Sprintf("%s is a symbolic link to a path outside the repository; copy the file instead", l.display(link))
	}
	fi, err := fs.Stat(fsys, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("no file %s", l.display(p))
	case err != nil:
		return nil, fmt.Sprintf("%s: %v", l.display(p), err)
	case fi.IsDir():
		return nil, fmt.Sprintf("%s is a folder; name a file", l.display(p))
	case !fi.Mode().IsRegular():
		return nil, fmt.Sprintf("%s is not a regular file", l.display(p))
	case fi.Size() > MaxConfigFile:
		return nil, fmt.Sprintf("%s is %d bytes; a config file may have at most %d (a ConfigMap holds 1 MiB)", l.display(p), fi.Size(), MaxConfigFile)
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", l.display(p), err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigFile+1))
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%s: %v", l.display(p), err)
	case len(data) > MaxConfigFile:
		return nil, fmt.Sprintf("%s is more than %d bytes; a config file may have at most that (a ConfigMap holds 1 MiB)", l.display(p), MaxConfigFile)
	case !utf8.Valid(data):
		return nil, fmt.Sprintf("%s is not UTF-8 text; a ConfigMap's data holds text (mount binary files from a Secret or an image)", l.display(p))
	}
	return data, ""
}

// fromFiles returns the repository paths that the specs' files[].from name,
// as far as the spec's value tells without loading it: what ReadFiles must
// read besides the specs.
func fromFiles(specFile string, v any) []string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxDepth {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if list, ok := v["files"].([]any); ok {
				for _, it := range list {
					if m, ok := it.(map[string]any); ok {
						if from, ok := m["from"].(string); ok && from != "" {
							if p, msg := fromPath(specFile, from); msg == "" {
								out = append(out, p)
							}
						}
					}
				}
			}
			for _, x := range v {
				walk(x, depth+1)
			}
		case []any:
			for _, x := range v {
				walk(x, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}
