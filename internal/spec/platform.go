package spec

// Platform is the repository-wide platform.yaml: what the platform team owns.
type Platform struct {
	// AppsDomain is the domain of default app addresses: <app>-<project>.<apps_domain>.
	AppsDomain string `json:"apps_domain,omitempty" jsonschema:"example=apps.example.com"`
	// CertIssuer is the cert-manager issuer that signs app certificates.
	CertIssuer *Issuer `json:"cert_issuer,omitempty"`
	// IngressClass sets spec.ingressClassName on generated Ingresses.
	IngressClass string `json:"ingress_class,omitempty" jsonschema:"example=nginx"`
	// Registry is where built images are pushed: <registry>/<project>/<app>-<component>.
	Registry string `json:"registry,omitempty" jsonschema:"example=ghcr.io/myorg"`
	// DefaultCluster is used by apps that name no cluster.
	DefaultCluster string `json:"default_cluster,omitempty"`
	// Clusters the fleet deploys to.
	Clusters []Cluster `json:"clusters,omitempty"`
	// Fleet says where and how render writes the fleet.
	Fleet *Fleet `json:"fleet,omitempty"`
	// Defaults apply to every app that does not set the field.
	Defaults *Defaults `json:"defaults,omitempty"`
	// Policy switches checked by verify.
	Policy *Policy `json:"policy,omitempty"`
	// Environments are the stages every app deploys through, in order (such as staging, then production): each is a cluster; one with promote_from changes only by promotion (render promote) of what runs in the environment it names. Unset: an app deploys once, to its cluster.
	Environments []Environment `json:"environments,omitempty"`
	// Previews give a pull request on the apps repository a short-lived copy of the apps it changes and the apps they reference (render preview --pr N), as environment pr-<N> in namespaces <project>-pr<N> of one cluster; an app opts out with environments.preview.enabled: false.
	Previews *Previews `json:"previews,omitempty"`
	// Projects holds settings the platform team grants one project: its pod security level and its defaults, over the platform's.
	Projects map[string]*ProjectSettings `json:"projects,omitempty"`
	// Build configures image builds.
	Build *BuildConfig `json:"build,omitempty"`
	// ProjectIDs maps project ids (as sent by the App API's project_id) to project names.
	ProjectIDs map[string]string `json:"project_ids,omitempty"`
	// AddonInstances are shared addons, managed outside any app, that export_ref.addon_instance_id can name.
	AddonInstances []AddonInstance `json:"addon_instances,omitempty"`
	// Prices per hour of requested CPU and memory: the webhook's status pages show each app's cost with them.
	Prices *Prices `json:"prices,omitempty"`
}

// Issuer names a cert-manager issuer.
type Issuer struct {
	// Name of the issuer.
	Name string `json:"name" jsonschema:"required,minLength=1,example=letsencrypt"`
	// Kind is ClusterIssuer (default) or Issuer.
	Kind string `json:"kind,omitempty" jsonschema:"enum=ClusterIssuer,enum=Issuer,default=ClusterIssuer"`
}

// Cluster is a target cluster or virtual cluster.
type Cluster struct {
	// Name of the cluster, used in fleet paths: a DNS-1123 label.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63"`
	// Path of the cluster's Flux entry folder in the fleet (default clusters/<name>).
	Path string `json:"path,omitempty"`
	// KubeconfigSecret names a Secret in the Flux namespace holding the kubeconfig of a remote or virtual cluster; Flux applies through it.
	KubeconfigSecret *SecretRef `json:"kubeconfig_secret,omitempty"`
	// ServiceAccount that Flux impersonates when applying apps to this cluster, for a cluster reached through kubeconfig_secret (tenant isolation); on a cluster Flux runs in, each project's Flux objects run as the project's own service account (flux-reconciler, bound to admin in its namespace), which render writes.
	ServiceAccount string `json:"service_account,omitempty"`
	// Production marks the cluster's apps as production for policy checks.
	Production bool `json:"production,omitempty"`
	// Shards are the keys of the cluster's kustomize-controller shards (Flux's sharding.fluxcd.io/key): each app's Flux Kustomizations carry the label of one, picked by a hash of the app's project and name.
	Shards []string `json:"shards,omitempty" jsonschema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$,maxLength=63"`
}

// Fleet configures the fleet repository.
type Fleet struct {
	// Path is the folder the fleet is written to, relative to the apps repository (default fleet), or inside repo when repo is set.
	Path string `json:"path,omitempty"`
	// Repo is the fleet repository URL, when the fleet is a separate repository.
	Repo string `json:"repo,omitempty"`
	// Branch of the fleet repository (default main).
	Branch string `json:"branch,omitempty"`
	// Mode is how changes land: dir (write the folder), push (commit and push), pull-request (commit to a branch and open a pull request).
	Mode string `json:"mode,omitempty" jsonschema:"enum=dir,enum=push,enum=pull-request"`
	// SourceName is the Flux GitRepository that holds the fleet (default flux-system).
	SourceName string `json:"source_name,omitempty"`
	// SourceNamespace is the namespace of that GitRepository and of the Flux Kustomizations (default flux-system).
	SourceNamespace string `json:"source_namespace,omitempty"`
	// Artifacts, when set, gives each component its own Flux source: render pushes the component's folder as an OCI artifact to this registry, and the fleet pins it by digest in an OCIRepository, so that a fleet commit makes Flux reconcile only the components it changed.
	Artifacts *FleetArtifacts `json:"artifacts,omitempty"`
	// Notifications, when set, makes render write in each project's file, on a cluster Flux runs in, a notification-controller Alert (in the Flux namespace) for the Flux objects of the project's namespace, so that adding a project needs no edit of the Alerts (docs/install.md).
	Notifications *FleetNotifications `json:"notifications,omitempty"`
}

// FleetNotifications says where the projects' Alerts send Flux's events.
type FleetNotifications struct {
	// Provider is the notification-controller Provider in the Flux namespace that the projects' Alerts name (default fleetwright, the one of deploy/notifications).
	Provider string `json:"provider,omitempty" jsonschema:"example=fleetwright"`
}

// FleetArtifacts says where the components' OCI artifacts go and how Flux's source-controller pulls them.
type FleetArtifacts struct {
	// Repository is the OCI repository the artifacts are pushed to, as host/path without a scheme or tag; every artifact is tagged sha256-<digest>.
	Repository string `json:"repository" jsonschema:"required,minLength=1,example=ghcr.io/myorg/fleet"`
	// SecretRef is a docker-registry Secret that source-controller pulls with (spec.secretRef of the OCIRepositories), in each project's namespace, where its OCIRepositories are (in the Flux namespace for a cluster reached through kubeconfig_secret).
	SecretRef string `json:"secret_ref,omitempty"`
	// Provider is the OCIRepository's cloud provider for credentials (generic, aws, azure or gcp; default generic).
	Provider string `json:"provider,omitempty" jsonschema:"enum=generic,enum=aws,enum=azure,enum=gcp"`
	// ServiceAccount is a service account, in the namespace of the OCIRepositories (as for secret_ref), whose image pull secrets source-controller pulls with.
	ServiceAccount string `json:"service_account,omitempty"`
	// CertSecretRef is a Secret with the registry's CA (ca.crt), for a registry with a private CA, in the namespace of the OCIRepositories (as for secret_ref).
	CertSecretRef string `json:"cert_secret_ref,omitempty"`
	// Insecure lets source-controller pull over plain HTTP: for a registry on a trusted network only.
	Insecure bool `json:"insecure,omitempty"`
	// Interval is how often source-controller checks an OCIRepository (default 10m); a digest pin makes that check local.
	Interval string `json:"interval,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"`
}

// Defaults for apps.
type Defaults struct {
	// Resources used where a workload sets none.
	Resources *Resources `json:"resources,omitempty"`
	// Timeout of deploys (default 10m).
	Timeout string `json:"timeout,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"`
	// SecurityContext applied to every container (workloads, jobs, init containers, sidecars) for the fields it does not set itself.
	SecurityContext *SecurityContext `json:"security_context,omitempty"`
}

// ProjectSettings are what the platform team grants one project.
type ProjectSettings struct {
	// PodSecurity overrides policy.pod_security for this project's namespace.
	PodSecurity string `json:"pod_security,omitempty" jsonschema:"enum=privileged,enum=baseline,enum=restricted"`
	// Defaults override the platform's defaults for this project's apps, field by field (a JSON merge patch over them); a resource set to none removes the platform's default.
	Defaults *Defaults `json:"defaults,omitempty"`

	merged *Defaults // DefaultsFor's answer, made as the platform is loaded
}

// Policy holds the checks verify runs on the fleet, each with a severity.
type Policy struct {
	// RequireDigests: every image is pinned by digest.
	RequireDigests string `json:"require_digests,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// ForbidLatest: no image uses the latest tag (or no tag).
	ForbidLatest string `json:"forbid_latest,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// RequireRequests: every container sets CPU and memory requests.
	RequireRequests string `json:"require_requests,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// RequireTLS: every Ingress has TLS.
	RequireTLS string `json:"require_tls,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// RequireProbes: every container has readiness and liveness probes.
	RequireProbes string `json:"require_probes,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// ProductionReplicas: production apps run at least 2 replicas or autoscale.
	ProductionReplicas string `json:"production_replicas,omitempty" jsonschema:"enum=off,enum=warning,enum=error"`
	// PodSecurity is the Pod Security Standard the project namespaces enforce (their pod-security.kubernetes.io labels): privileged, baseline or restricted. Unset: no labels.
	PodSecurity string `json:"pod_security,omitempty" jsonschema:"enum=privileged,enum=baseline,enum=restricted"`
	// ChartRepositories are the only places addon charts may come from: https:// or oci:// URL prefixes, each matching at a path boundary (https://charts.example.com allows https://charts.example.com/stable). Unset: any https:// or oci:// repository; a plain http:// one is never allowed.
	ChartRepositories []string `json:"chart_repositories,omitempty" jsonschema:"minItems=1,example=https://charts.bitnami.com/bitnami"`
}

// BuildConfig configures image builds.
type BuildConfig struct {
	// Platforms built when a base image is multi-platform (default linux/amd64 and linux/arm64).
	Platforms []string `json:"platforms,omitempty"`
	// Pin resolves every image to a digest (default true).
	Pin *bool `json:"pin,omitempty"`
	// External is a command (docker buildx, BuildKit, ...) that builds the Dockerfiles with RUN instead of the built-in builder, and those the built-in builder cannot (ADD of a URL, RUN --mount=type=ssh).
	External *ExternalBuilder `json:"external,omitempty"`
	// Network is the network RUN gets: none (the default: a loopback interface only) or host (the build machine's network, for package managers; RUN --network=host is allowed only then).
	Network string `json:"network,omitempty" jsonschema:"enum=none,enum=host"`
	// Secrets are what RUN --mount=type=secret,id=<id> can mount: each read on the build machine from an environment variable or a file, never written to an image, a cache or a log.
	Secrets []BuildSecret `json:"secrets,omitempty"`
	// Timeout bounds one image build, its RUN commands included, as a duration such as 20m (default 1h); a command still running then is killed.
	Timeout string `json:"timeout,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$,example=20m"`
	// Limits bound the memory, processes and CPU of each RUN.
	Limits *BuildLimits `json:"limits,omitempty"`
}

// BuildSecret names where the value of one build secret comes from.
type BuildSecret struct {
	// ID is what RUN --mount=type=secret,id=<id> names.
	ID string `json:"id" jsonschema:"required,pattern=^[A-Za-z0-9._-]+$"`
	// Env is the environment variable of the build machine that holds the value.
	Env string `json:"env,omitempty"`
	// File is a file of the build machine that holds the value: absolute, or relative to the apps repository.
	File string `json:"file,omitempty"`
	// Projects whose components may mount the secret; none listed: none may.
	Projects []string `json:"projects,omitempty"`
}

// ExternalBuilder is a command that builds and pushes an image.
type ExternalBuilder struct {
	// Command and its arguments; {context}, {dockerfile}, {tag}, {target} and {platforms} are replaced.
	Command []string `json:"command" jsonschema:"required,minItems=1"`
}

// AddonInstance is a shared addon that apps may reference by id.
type AddonInstance struct {
	// ID referenced by export_ref.addon_instance_id.
	ID string `json:"id" jsonschema:"required,minLength=1"`
	// Type of the addon, as in addon_spec.type.
	Type string `json:"type" jsonschema:"required,minLength=1"`
	// Namespace the instance runs in.
	Namespace string `json:"namespace" jsonschema:"required,minLength=1"`
	// Release is the Helm release name of the instance.
	Release string `json:"release" jsonschema:"required,minLength=1"`
	// Cluster the instance runs in (default: the default cluster).
	Cluster string `json:"cluster,omitempty"`
	// Values the instance was installed with (those that change names and keys, such as auth.username).
	Values map[string]any `json:"values,omitempty"`
	// Exports declared for a generic instance.
	Exports []DeclaredExport `json:"exports,omitempty"`
}

// ClusterNames are the platform's clusters, in its order (for
// layout.Platform).
func (p *Platform) ClusterNames() []string {
	names := make([]string, len(p.Clusters))
	for i := range p.Clusters {
		names[i] = p.Clusters[i].Name
	}
	return names
}

// ClusterPath is a cluster's folder in the fleet, false for a cluster the
// platform does not list (for layout.Platform).
func (p *Platform) ClusterPath(name string) (string, bool) {
	if c := p.ClusterByName(name); c != nil {
		return c.Path, true
	}
	return "", false
}

// ClusterByName returns the platform's cluster of that name, or nil.
func (p *Platform) ClusterByName(name string) *Cluster {
	for i := range p.Clusters {
		if p.Clusters[i].Name == name {
			return &p.Clusters[i]
		}
	}
	return nil
}

// Pinning reports whether images are resolved to digests.
func (p *Platform) Pinning() bool { return p.Build == nil || p.Build.Pin == nil || *p.Build.Pin }
