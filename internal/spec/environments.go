package spec

import (
	"time"

	"github.com/invopop/jsonschema"
)

// Environments: platform.yaml lists the stages every app deploys through
// (each a cluster), and an app's environments block tailors it per stage
// with a JSON merge patch per component. The loader turns each app into
// one LoadedApp per environment it deploys to, its components merged with
// that environment's overrides, so that everything after loading (the
// graph, generate, verify, review) sees ordinary apps on their clusters.

// Environment is one stage of platform.yaml environments.
type Environment struct {
	// Name of the environment: a DNS-1123 label, such as staging or production. It labels every Flux object of its apps (fleetwright.io/environment) and their events.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=staging"`
	// Cluster the environment deploys to, one of clusters; an environment is a cluster, and no two environments share one.
	Cluster string `json:"cluster" jsonschema:"required,minLength=1,maxLength=63,example=stage-eu"`
	// PromoteFrom names an earlier environment: this one then changes only by promotion (render promote --to <name>) of the release that runs there, never by a render of the apps repository.
	PromoteFrom string `json:"promote_from,omitempty" jsonschema:"example=staging"`
	// AutoPromote opens and merges the promotion as soon as the webhook reports the release running, every check green, in the promote_from environment (the auto-promote workflow of docs/environments.md).
	AutoPromote bool `json:"auto_promote,omitempty"`
}

// Previews configure the short-lived copies of the apps a pull request on
// the apps repository changes (render preview --pr N): each runs as
// environment pr-<N> on the previews' cluster, in the namespace
// <project>-pr<N>, with hosts under apps_domain (docs/environments.md,
// "Previews").
type Previews struct {
	// Cluster the previews deploy to: one of clusters (or of the environments' clusters). Their files go under previews/<cluster>/ in the fleet, apart from every environment's.
	Cluster string `json:"cluster" jsonschema:"required,minLength=1,maxLength=63,example=stage-eu"`
	// AppsDomain is the domain of the previews' hosts: an app's main host becomes <app>-<project>-pr<N>.<apps_domain>, another workload's <component>-<app>-<project>-pr<N>.<apps_domain>; a host the spec names is never used in a preview.
	AppsDomain string `json:"apps_domain" jsonschema:"required,minLength=1,example=preview.example.com"`
	// TTL is how long a preview lives after its last update, as a duration of at least 1h such as 72h (default 72h): any render removes the previews older than that.
	TTL string `json:"ttl,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$,example=72h,default=72h"`
	// Max is the number of previews that may exist at once (default 20): a new one beyond it is refused, naming the open ones; an update of an open one is not.
	Max int `json:"max,omitempty" jsonschema:"minimum=1,example=20,default=20"`
}

// Defaults of platform.yaml previews.
const (
	DefaultPreviewTTL = 72 * time.Hour
	DefaultPreviewMax = 20
	// MinPreviewTTL is the shortest previews.ttl: a preview must outlive
	// the pull request's review of it.
	MinPreviewTTL = time.Hour
)

// JSONSchemaExtend gives the schema an example.
func (Previews) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"cluster": "stage-eu", "apps_domain": "preview.example.com", "ttl": "72h", "max": 20}}
}

// TTLDuration is previews.ttl as a duration, with its default.
func (p *Previews) TTLDuration() time.Duration {
	if d, err := time.ParseDuration(p.TTL); err == nil && d > 0 {
		return d
	}
	return DefaultPreviewTTL
}

// MaxOpen is previews.max, with its default.
func (p *Previews) MaxOpen() int {
	if p.Max > 0 {
		return p.Max
	}
	return DefaultPreviewMax
}

// PreviewEnvironment is the key of an app's environments block that opts
// the app in or out of previews.
const PreviewEnvironment = "preview"

// AppEnvironment tailors an app to one environment.
type AppEnvironment struct {
	// Enabled: false keeps the app out of the environment (default true).
	Enabled *bool `json:"enabled,omitempty"`
	// Components are overrides by component name: each a JSON merge patch (RFC 7386) over the component as written (keys replace, maps merge, lists are replaced whole, null removes a field), validated as if the merged component were written there.
	Components map[string]map[string]any `json:"components,omitempty"`
}

// JSONSchemaExtend gives the schema an example.
func (AppEnvironment) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"components": map[string]any{
		"api": map[string]any{"workload_spec": map[string]any{"replicas": 4, "ingress": map[string]any{"host": "api.example.com"}}},
	}}}
}

// JSONSchemaExtend gives the schema an example.
func (Environment) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"name": "production", "cluster": "prod-eu", "promote_from": "staging"}}
}

// EnvironmentByName returns the platform's environment of that name, or
// nil.
func (p *Platform) EnvironmentByName(name string) *Environment {
	for i := range p.Environments {
		if p.Environments[i].Name == name {
			return &p.Environments[i]
		}
	}
	return nil
}

// EnvironmentNames returns the platform's environments' names, in order.
func (p *Platform) EnvironmentNames() []string {
	var out []string
	for _, e := range p.Environments {
		out = append(out, e.Name)
	}
	return out
}

// EnvironmentOfCluster returns the environment that deploys to cluster, or
// nil.
func (p *Platform) EnvironmentOfCluster(cluster string) *Environment {
	for i := range p.Environments {
		if p.Environments[i].Cluster == cluster {
			return &p.Environments[i]
		}
	}
	return nil
}

// Rendered reports whether a render of the apps repository writes the
// environment: one without promote_from. The others change only by
// promotion.
func (e *Environment) Rendered() bool { return e.PromoteFrom == "" }

// EnvironmentClusters gives a platform that lists environments and no
// clusters the environments' clusters, in order.
func EnvironmentClusters(p *Platform) {
	if len(p.Clusters) > 0 {
		return
	}
	for _, e := range p.Environments {
		if e.Cluster != "" && p.ClusterByName(e.Cluster) == nil {
			p.Clusters = append(p.Clusters, Cluster{Name: e.Cluster})
		}
	}
	if p.DefaultCluster == "" && len(p.Clusters) > 0 {
		p.DefaultCluster = p.Clusters[0].Name
	}
}
