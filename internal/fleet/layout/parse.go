package layout

import (
	"path"
	"strings"
)

// Location is what a fleet file's path says of it; Parse reads it. Each
// folder's field is set only when the path goes on below that folder: the
// file apps/<cluster>/<project>/<app>/release.yaml has an App and no
// Component.
type Location struct {
	// Preview is the pull request whose preview folder,
	// previews/<cluster>/pr-<N>/, holds the file (0: none). The fields
	// below are then read from the path inside that folder, where a
	// preview's files are laid out as the fleet's.
	Preview int
	// Cluster is the cluster of apps/<cluster>/… or of
	// clusters/<cluster>/… (the folder of a cluster whose platform.yaml
	// entry names no path: ClusterOf knows the others).
	Cluster string
	// Project is the project of apps/<cluster>/<project>/….
	Project string
	// App is the app of apps/<cluster>/<project>/<app>/…; a project's own
	// folders (_flux, _project) are no app's: Folder names them.
	App, Folder string
	// Component is the component of apps/<cluster>/<project>/<app>/<component>/….
	Component string
	// Rest is the path below the deepest folder named above.
	Rest string
}

// Parse reads a fleet path (a slash path relative to the fleet folder).
// It allocates nothing: verify passes every object of a fleet here.
func Parse(p string) Location {
	var l Location
	if _, pr, rest, ok := SplitPreview(p); ok {
		l.Preview, p = pr, rest
	}
	top, rest, ok := strings.Cut(p, "/")
	if !ok || (top != AppsDir && top != path.Dir(DefaultClusterDir("x"))) {
		l.Rest = p
		return l
	}
	if l.Cluster, l.Rest, ok = cutFolder(rest); !ok || top != AppsDir {
		return l
	}
	if l.Project, l.Rest, ok = cutFolder(l.Rest); !ok {
		return l
	}
	var app string
	if app, l.Rest, ok = cutFolder(l.Rest); !ok {
		return l
	}
	if projectLevel(app) {
		l.Folder = app
		return l
	}
	l.App = app
	l.Component, l.Rest, _ = cutFolder(l.Rest)
	return l
}

// cutFolder cuts the first folder off p: its name and the path below it,
// or "" and p when p names a file.
func cutFolder(p string) (folder, rest string, ok bool) {
	folder, rest, ok = strings.Cut(p, "/")
	if !ok {
		return "", p, false
	}
	return folder, rest, true
}

// AppKey is the app of the location as App.Key writes it ("" for none).
func (l Location) AppKey() string {
	if l.App == "" {
		return ""
	}
	return App{Cluster: l.Cluster, AppRef: AppRef{Project: l.Project, Name: l.App}}.Key()
}

// SplitPreview cuts a preview's folder, previews/<cluster>/pr-<N>/, off
// the front of the fleet path p: the preview's cluster and pull request,
// and the path inside the folder. ok is false when no preview's folder
// holds p.
func SplitPreview(p string) (cluster string, pr int, rest string, ok bool) {
	rest, ok = strings.CutPrefix(p, PreviewsDir+"/")
	if !ok {
		return "", 0, "", false
	}
	cluster, rest, ok1 := strings.Cut(rest, "/")
	env, rest, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 || cluster == "" {
		return "", 0, "", false
	}
	if pr, ok = PreviewOf(env); !ok {
		return "", 0, "", false
	}
	return cluster, pr, rest, true
}
