package layout

import "strings"

// The labels and annotations render writes on the objects of the fleet.
// generate writes them; review, verify, the probes and the webhook read
// them; spec reserves them (ReservedLabel). Nowhere else are they spelled.
const (
	// LabelApp, LabelProject and LabelComponent name the app, project and
	// component an object belongs to.
	LabelApp       = labelPrefix + "app"
	LabelProject   = labelPrefix + "project"
	LabelComponent = labelPrefix + "component"
	// LabelEnvironment names the environment (platform.yaml environments)
	// an object was rendered for; the Flux objects of an app carry it as
	// an event annotation too (EventAnnotationPrefix + EventEnvironment),
	// so that every event of the app says where it ran.
	LabelEnvironment = labelPrefix + "environment"
	// EventEnvironment is the event metadata key that holds it.
	EventEnvironment = "environment"
	// The event metadata keys (and, under EventAnnotationPrefix, the
	// annotations of an app's Flux objects) naming the app, its project and
	// component and the apps-repository commit it was rendered from.
	EventApp          = "app"
	EventProject      = "project"
	EventComponent    = "component"
	EventSpecRevision = "spec-revision"
	// LabelShard is Flux's sharding label, on the Flux objects of an app
	// whose platform shards its controllers.
	LabelShard = "sharding.fluxcd.io/key"
	// Kubernetes' recommended labels.
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value on every object render writes.
	ManagedBy = "fleetwright"

	// EventAnnotationPrefix is Flux's: notification-controller copies the
	// annotations of a Flux object under it into the object's events as
	// metadata (app, project, component, spec-revision).
	EventAnnotationPrefix = "event.toolkit.fluxcd.io/"

	// AnnotationSpecRevision is the apps-repository commit an object was
	// rendered from.
	AnnotationSpecRevision = labelPrefix + "spec-revision"
	// AnnotationExportsSum is the checksum of the exports a workload reads,
	// so that it restarts when one changes.
	AnnotationExportsSum = labelPrefix + "exports-checksum"
	// AnnotationFilesSum is the checksum of the files a workload mounts,
	// on its pod template: a changed file rolls the pods, which then read
	// it (files are mounted with subPath, which Kubernetes does not update
	// in place).
	AnnotationFilesSum = labelPrefix + "files-checksum"
	// AnnotationPausedCount is the replica count a paused workload goes
	// back to.
	AnnotationPausedCount = labelPrefix + "paused-replicas"
	// AnnotationArtifactPath is the fleet folder a component's OCI
	// artifact is built from.
	AnnotationArtifactPath = labelPrefix + "artifact-path"

	labelPrefix = "fleetwright.io/"
	// otherLabelPrefix, under the project's other domain (that of its
	// schemas), is reserved too.
	otherLabelPrefix = "fleetwright.dev/"
)

// ReservedLabel reports whether a label or annotation key is one that
// render writes or may write: a spec cannot set it.
func ReservedLabel(k string) bool {
	switch k {
	case LabelName, LabelInstance, LabelPartOf, LabelManagedBy:
		return true
	}
	return strings.HasPrefix(k, labelPrefix) || strings.HasPrefix(k, otherLabelPrefix)
}
