// Package review writes the pull request comment that shows what a change
// to the apps repository does to the fleet: a danger list, a summary of apps
// and objects per kind, image changes (init containers and sidecars
// included), the resource and storage delta, the dependency graph of each
// changed app as a Mermaid diagram, and per-object diffs (ConfigMaps file by
// file, patches as text and patched objects as kustomize builds them) — kept under
// GitHub's comment size limit, with what was cut named. With
// fleet.artifacts it says what Flux reconciles (components, and the
// project Kustomizations of a source per project), checks every pinned
// digest against its folder, and names the moves of the apps' Flux files
// between the cluster folder and their projects' Flux folders, step by
// step, and the moves that would lose objects. ReadEvent reads
// the pull request of a GitHub Actions job, StepSummary the job summary,
// and Post keeps the one comment up to date.
package review
