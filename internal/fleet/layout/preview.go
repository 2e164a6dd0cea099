package layout

import (
	"path"
	"strconv"
	"strings"
)

// A pull request's preview is an environment of its own: its name is
// "pr-<N>", the GitHub deployment environment it is reported as, and its
// objects live in the namespace "<project>-pr<N>" on the platform's
// previews cluster, apart from the project's own namespace.
const previewPrefix = "pr-"

// PreviewEnvironment is the environment name of pull request pr's
// preview.
func PreviewEnvironment(pr int) string { return previewPrefix + strconv.Itoa(pr) }

// PreviewOf reports which pull request's preview an environment name
// names, and whether it names one: "pr-" and a positive number without
// leading zeros.
func PreviewOf(env string) (int, bool) {
	digits, ok := strings.CutPrefix(env, previewPrefix)
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 9 {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// PreviewNamespace is the namespace of a project's preview for pull
// request pr.
func PreviewNamespace(project string, pr int) string {
	return project + namespacePreviewInfix + strconv.Itoa(pr)
}

const namespacePreviewInfix = "-pr"

// ParsePreviewNamespace reads a namespace back as PreviewNamespace made
// it: the project and pull request whose preview it holds, if it holds
// one.
func ParsePreviewNamespace(ns string) (project string, pr int, ok bool) {
	i := strings.LastIndex(ns, namespacePreviewInfix)
	if i <= 0 {
		return "", 0, false
	}
	project = ns[:i]
	pr, ok = PreviewOfNamespace(project, ns)
	return project, pr, ok
}

// PreviewOfNamespace reports which pull request's preview of project the
// namespace ns holds, and whether it holds one: exactly
// PreviewNamespace(project, pr) for a pull request pr.
func PreviewOfNamespace(project, ns string) (int, bool) {
	digits, ok := strings.CutPrefix(ns, project+namespacePreviewInfix)
	if !ok {
		return 0, false
	}
	return PreviewOf(previewPrefix + digits)
}

// A preview's files sit apart from every environment's, under
//
//	previews/<cluster>/pr-<N>/preview.yaml                      its record (PreviewRecordFile)
//	previews/<cluster>/pr-<N>/<the fleet layout>                the apps' files, as the fleet lays an environment's out
//	<cluster path>/previews/pr-<N>.yaml                         the Flux Kustomization that applies the preview
//
// The cluster's root Kustomization applies the last file, which applies
// the preview's own cluster folder (PreviewDir joined with the cluster's
// folder): its projects' Namespaces, accounts and bindings, and its apps'
// Flux Kustomizations. render's managed folders (ManagedDirs) hold none of
// these: a render of the environments leaves previews alone, and a
// preview writes only its own folder and file.

// PreviewsDir holds the previews of every cluster.
const PreviewsDir = "previews"

// PreviewRecordFileName is the name of a preview's record in its folder.
const PreviewRecordFileName = "preview.yaml"

// PreviewDir is the folder of pull request pr's preview on cluster.
func PreviewDir(cluster string, pr int) string {
	return path.Join(PreviewsDir, cluster, PreviewEnvironment(pr))
}

// PreviewRecordFile is the record of pull request pr's preview on cluster.
func PreviewRecordFile(cluster string, pr int) string {
	return path.Join(PreviewDir(cluster, pr), PreviewRecordFileName)
}

// PreviewFilesDir is the folder, in a cluster's folder, of the Flux
// Kustomizations of the cluster's previews.
func PreviewFilesDir(p Platform, cluster string) string {
	return path.Join(ClusterDir(p, cluster), PreviewsDir)
}

// PreviewFile is the file of the Flux Kustomization that applies pull
// request pr's preview on cluster.
func PreviewFile(p Platform, cluster string, pr int) string {
	return path.Join(PreviewFilesDir(p, cluster), PreviewEnvironment(pr)+".yaml")
}

// PreviewOfFile returns the pull request whose Flux Kustomization file
// (PreviewFile) file is on cluster, and whether it is one.
func PreviewOfFile(p Platform, cluster, file string) (int, bool) {
	name, ok := strings.CutSuffix(path.Base(file), ".yaml")
	if !ok {
		return 0, false
	}
	pr, ok := PreviewOf(name)
	if !ok || PreviewFile(p, cluster, pr) != file {
		return 0, false
	}
	return pr, true
}

// PreviewPaths are the fleet paths that pull request pr's preview on
// cluster owns, a folder and a file: what writing, updating or removing
// it changes, and nothing else.
func PreviewPaths(p Platform, cluster string, pr int) []string {
	return []string{PreviewDir(cluster, pr), PreviewFile(p, cluster, pr)}
}

// PreviewFluxName is the name of the Flux Kustomization (in the Flux
// namespace) that applies pull request pr's preview.
func PreviewFluxName(pr int) string { return "preview-" + PreviewEnvironment(pr) }

// PreviewOfPath returns the cluster and pull request of the preview whose
// folder (PreviewDir) holds the fleet file p, and whether one does.
func PreviewOfPath(p string) (cluster string, pr int, ok bool) {
	cluster, pr, _, ok = SplitPreview(p)
	return cluster, pr, ok
}
