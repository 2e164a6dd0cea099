package generate

import (
	"cmp"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// NotificationProvider is the Provider the projects' Alerts name when
// platform.yaml fleet.notifications names none: deploy/notifications'.
const NotificationProvider = "fleetwright"

// projectAlert is the Alert of a project's Flux objects, for the project's
// file (platform.yaml fleet.notifications): in the Flux namespace, beside
// the Provider it names, with the project's namespace as the namespace of
// each event source, since notification-controller matches an event
// source's namespace literally and an Alert that names none sees its own
// namespace only. It forwards the Kustomizations', HelmReleases' and
// OCIRepositories' events, so that the webhook sees Helm's verdicts and
// new artifacts without an edit of the Alerts when a project is added;
// deleting the project deletes its Alert with its file. nil without
// fleet.notifications.
//
// The Alert is the platform's: render writes it, in the cluster folder the
// root Kustomization applies; a team cannot write one (its objects are
// its components', in its namespace), so no project reads another's
// events through it.
func projectAlert(plat *spec.Platform, project string, lbls map[string]string) []any {
	n := plat.Fleet.Notifications
	if n == nil {
		return nil
	}
	sources := []any{}
	for _, kind := range []string{"Kustomization", "HelmRelease", "OCIRepository"} {
		sources = append(sources, map[string]any{"kind": kind, "name": "*", "namespace": project})
	}
	labels := map[string]any{}
	for k, v := range lbls {
		labels[k] = v
	}
	return []any{map[string]any{
		"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
		"kind":       "Alert",
		"metadata": map[string]any{
			"name":      "fleetwright-" + project,
			"namespace": plat.Fleet.SourceNamespace,
			"labels":    labels,
		},
		"spec": map[string]any{
			"providerRef":   map[string]any{"name": cmp.Or(n.Provider, NotificationProvider)},
			"eventSeverity": "info",
			"eventSources":  sources,
		},
	}}
}
