package spec

// App is one application: a named bundle of components deployed together. It is
// the content of an apps/<project>/<app>/app.yaml file. The JSON body of the App
// API that fleetwright replaces is valid as it is.
type App struct {
	// Name of the app: a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, at most 63 characters).
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=my-api"`
	// Project the app belongs to: its Kubernetes namespace and isolation unit. Defaults to the folder under apps/.
	Project string `json:"project,omitempty" jsonschema:"maxLength=63,example=shop"`
	// ProjectID is accepted for compatibility with the App API; platform.yaml may map it to a project name. Ignored when project is set.
	ProjectID string `json:"project_id,omitempty" jsonschema:"maxLength=63"`
	// Cluster the app is deployed to (a cluster or virtual cluster named in platform.yaml). Defaults to platform.yaml's default_cluster.
	Cluster string `json:"cluster,omitempty" jsonschema:"example=prod-eu"`
	// Timeout is how long a deploy may take before the app is failed, as a duration such as 15m or 1h30m. Default 10m.
	Timeout string `json:"timeout,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$,example=15m"`
	// Paused apps render their workloads with 0 replicas and no autoscaler; the spec keeps the real counts. Addons keep running.
	Paused bool `json:"paused,omitempty"`
	// Template instantiates a stack template from templates/<name>/ instead of listing components.
	Template *TemplateRef `json:"template,omitempty"`
	// Environments tailor the app per platform environment (platform.yaml environments), by name: enabled, and a JSON merge patch per component. An environment not listed gets the app as written.
	Environments map[string]*AppEnvironment `json:"environments,omitempty"`
	// Env lists environment variables every workload, job and cronjob of the app gets before its own; a component's entry of the same name wins. Each has exactly one of value, secret_ref or export_ref.
	Env []EnvVar `json:"env,omitempty"`
	// EnvFrom imports every key of ConfigMaps and Secrets of the project namespace into every workload, job and cronjob of the app, before the component's own env_from.
	EnvFrom []EnvFrom `json:"env_from,omitempty"`
	// Volumes are app-wide persistent volumes: one PersistentVolumeClaim each, which workloads mount with a volume's shared.
	Volumes []AppVolume `json:"volumes,omitempty"`
	// Components of the app: workloads (containers) and addons (Helm charts such as databases).
	Components []Component `json:"components,omitempty"`
}

// AppVolume is an app-wide PersistentVolumeClaim that the app's workloads share.
type AppVolume struct {
	// Name of the volume, unique within the app: a DNS-1123 label. The claim is named <app>-<name>.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=media"`
	// Size of the claim.
	Size *Quantity `json:"size" jsonschema:"required,example=100Gi"`
	// AccessModes of the claim (default ReadWriteOnce). Workloads on different nodes need ReadWriteMany.
	AccessModes []string `json:"access_modes,omitempty" jsonschema:"enum=ReadWriteOnce,enum=ReadOnlyMany,enum=ReadWriteMany,enum=ReadWriteOncePod"`
	// StorageClass of the claim (default: the cluster's default class).
	StorageClass string `json:"storage_class,omitempty" jsonschema:"example=nfs"`
	// Retain keeps the claim when the volume or the app is deleted (default true); false deletes it with them.
	Retain *bool `json:"retain,omitempty" jsonschema:"default=true"`
}

// TemplateRef selects a stack template and the values of its parameters.
type TemplateRef struct {
	// Name of the template: the folder templates/<name>/ of the apps repository.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Version the app expects; must equal the template's version when set.
	Version string `json:"version,omitempty"`
	// Parameters of the template, by name.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Component is one part of an app: a workload or an addon.
type Component struct {
	// Name of the component, unique within the app: a DNS-1035 label.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=api"`
	// Type of the component: workload (a long-running container), job (runs to completion before its dependents are applied), cronjob (runs on a schedule) or addon (a Helm chart such as a database).
	Type string `json:"type" jsonschema:"required,enum=workload,enum=job,enum=cronjob,enum=addon"`
	// DependsOn names components of the same app that must be healthy (a job: completed) before this one is applied.
	DependsOn []string `json:"depends_on,omitempty"`
	// WorkloadSpec configures a workload, job or cronjob component.
	WorkloadSpec *WorkloadSpec `json:"workload_spec,omitempty"`
	// AddonSpec configures an addon component.
	AddonSpec *AddonSpec `json:"addon_spec,omitempty"`
}

// Build modes of a workload.
const (
	BuildModeImage      = "image"
	BuildModeDockerfile = "dockerfile"
	BuildModeBuildpack  = "buildpack"
)

// HostAlias is one line of the pods' /etc/hosts.
type HostAlias struct {
	// IP is an IPv4 or IPv6 address, such as 10.1.2.3.
	IP string `json:"ip" jsonschema:"example=10.1.2.3"`
	// Hostnames that resolve to ip, such as legacy-db.internal.
	Hostnames []string `json:"hostnames" jsonschema:"minItems=1,example=legacy-db.internal"`
}

// Component types.
const (
	TypeWorkload = "workload"
	TypeJob      = "job"
	TypeCronJob  = "cronjob"
	TypeAddon    = "addon"
)

// WorkloadSpec describes a containerized workload.
type WorkloadSpec struct {
	// BuildMode says where the image comes from: image (a registry image), dockerfile (built from build.dockerfile) or buildpack.
	BuildMode string `json:"build_mode,omitempty" jsonschema:"enum=image,enum=dockerfile,enum=buildpack,default=image"`
	// Image reference for build_mode image, such as myorg/my-api:v1.2.0 or ghcr.io/org/app@sha256:….
	Image string `json:"image,omitempty" jsonschema:"example=myorg/my-api:v1.2.0"`
	// Build settings for build_mode dockerfile and buildpack.
	Build *BuildSpec `json:"build,omitempty"`
	// Replicas of the workload (default 1). Ignored while autoscaling is set, except as the paused snapshot.
	Replicas *int32 `json:"replicas,omitempty" jsonschema:"minimum=0,maximum=1000"`
	// Port the container listens on, as one TCP port named http that a Service exposes. Use ports for more than one port, other protocols or a different Service port.
	Port int `json:"port,omitempty" jsonschema:"minimum=1,maximum=65535,example=8000"`
	// Ports the container listens on, each with a name; exposed ones are on the Service. Instead of port.
	Ports []Port `json:"ports,omitempty"`
	// Service configures the Service in front of the exposed ports: its type and name.
	Service *Service `json:"service,omitempty"`
	// Strategy is how new pods replace old ones: RollingUpdate (the default) or Recreate. A workload with a volume of its own (a StatefulSet) always rolls one pod at a time.
	Strategy *Strategy `json:"strategy,omitempty"`
	// RevisionHistoryLimit is how many old ReplicaSets the Deployment keeps for rollbacks (Kubernetes' default: 10).
	RevisionHistoryLimit *int32 `json:"revision_history_limit,omitempty" jsonschema:"minimum=0,maximum=100"`
	// Command overrides the image's entrypoint.
	Command []string `json:"command,omitempty"`
	// Args overrides the image's command (its arguments).
	Args []string `json:"args,omitempty"`
	// Env lists environment variables: each has exactly one of value, secret_ref or export_ref. A value may use $(NAME) of an earlier entry; $$(NAME) is a literal $(NAME).
	Env []EnvVar `json:"env,omitempty"`
	// EnvFrom imports every key of ConfigMaps and Secrets of the project namespace as environment variables.
	EnvFrom []EnvFrom `json:"env_from,omitempty"`
	// Resources are CPU and memory requests and limits; platform.yaml supplies defaults.
	Resources *Resources `json:"resources,omitempty"`
	// Autoscaling adds a HorizontalPodAutoscaler between min_replicas and max_replicas.
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	// Ingress exposes the workload over HTTP(S); TLS is on unless tls is false.
	Ingress *Ingress `json:"ingress,omitempty"`
	// ImagePullSecrets names Secrets in the project namespace used to pull private images.
	ImagePullSecrets []string `json:"image_pull_secrets,omitempty"`
	// HealthCheck configures readiness and liveness probes (HTTP GET on the container port). Use probes for other kinds, a startup probe or different checks.
	HealthCheck *HealthCheck `json:"health_check,omitempty"`
	// Probes are the readiness, liveness and startup checks, each http, grpc, tcp or exec. Instead of health_check.
	Probes *Probes `json:"probes,omitempty"`
	// SecurityContext hardens the container; unset fields take platform.yaml's defaults.security_context.
	SecurityContext *SecurityContext `json:"security_context,omitempty"`
	// ServiceAccount the pods run as, created with the app or existing.
	ServiceAccount *ServiceAccount `json:"service_account,omitempty"`
	// Volumes mounted into the container. A persistent one (with size) makes the workload a StatefulSet that gives each replica its own claim.
	Volumes []Volume `json:"volumes,omitempty"`
	// Files are config files kept in Git, in a ConfigMap mounted read-only; a change rolls the pods.
	Files []File `json:"files,omitempty"`
	// InitContainers run to completion, in order, before the workload's container starts.
	InitContainers []Container `json:"init_containers,omitempty"`
	// Sidecars run beside the workload's container for the pod's lifetime.
	Sidecars []Container `json:"sidecars,omitempty"`
	// Pod holds settings of the pods: annotations, labels, node selector, tolerations, priority class, termination grace.
	Pod *Pod `json:"pod,omitempty"`
	// HostAliases add lines to the pods' /etc/hosts, each an IP address and the host names it answers for: for a name that DNS does not resolve, such as a legacy database or a partner's endpoint.
	HostAliases []HostAlias `json:"host_aliases,omitempty"`
	// DisruptionBudget limits voluntary disruptions; workloads with more than one replica get max_unavailable 1 by default.
	DisruptionBudget *DisruptionBudget `json:"disruption_budget,omitempty"`
	// Patches are kustomize patches on this component's generated objects: the escape hatch for what the spec cannot say.
	Patches []Patch `json:"patches,omitempty"`
	// Schedule of a cronjob, in cron syntax, such as "0 3 * * *".
	Schedule string `json:"schedule,omitempty" jsonschema:"example=0 3 * * *"`
	// TimeZone of a cronjob's schedule, such as Europe/Berlin (default: the controller's, usually UTC).
	TimeZone string `json:"time_zone,omitempty"`
	// ConcurrencyPolicy of a cronjob: Allow (default), Forbid (skip a run while one is active) or Replace.
	ConcurrencyPolicy string `json:"concurrency_policy,omitempty" jsonschema:"enum=Allow,enum=Forbid,enum=Replace,default=Allow"`
	// StartingDeadlineSeconds: a cronjob run that could not start within this time after its schedule is skipped.
	StartingDeadlineSeconds *int64 `json:"starting_deadline_seconds,omitempty" jsonschema:"minimum=0"`
	// BackoffLimit is how many times a job (or a cronjob's run) is retried before it fails (Kubernetes' default 6).
	BackoffLimit *int32 `json:"backoff_limit,omitempty" jsonschema:"minimum=0"`
	// ActiveDeadlineSeconds a job (or a cronjob's run) may run before it is stopped and failed.
	ActiveDeadlineSeconds *int64 `json:"active_deadline_seconds,omitempty" jsonschema:"minimum=1"`
	// SuccessfulJobsHistoryLimit: how many finished successful runs a cronjob keeps (Kubernetes' default 3).
	SuccessfulJobsHistoryLimit *int32 `json:"successful_jobs_history_limit,omitempty" jsonschema:"minimum=0"`
	// FailedJobsHistoryLimit: how many failed runs a cronjob keeps, for their logs (Kubernetes' default 1).
	FailedJobsHistoryLimit *int32 `json:"failed_jobs_history_limit,omitempty" jsonschema:"minimum=0"`
	// RestartPolicy of a job's pods: OnFailure (default) or Never.
	RestartPolicy string `json:"restart_policy,omitempty" jsonschema:"enum=OnFailure,enum=Never,default=OnFailure"`
}

// BuildSpec locates the sources of an image that render builds.
type BuildSpec struct {
	// Context folder of the build, relative to the app.yaml's folder (default ".").
	Context string `json:"context,omitempty" jsonschema:"default=."`
	// Dockerfile path relative to the context (default Dockerfile).
	Dockerfile string `json:"dockerfile,omitempty" jsonschema:"default=Dockerfile"`
	// Args are build arguments (ARG values).
	Args map[string]string `json:"args,omitempty"`
	// Target stage of a multi-stage Dockerfile.
	Target string `json:"target,omitempty"`
}

// EnvVar is one environment variable of a workload.
type EnvVar struct {
	// Name of the variable.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Value is a literal value, written to Git as it is: never put a credential here.
	Value *string `json:"value,omitempty"`
	// SecretRef takes the value from a key of a Secret that exists in the project namespace.
	SecretRef *EnvSecretRef `json:"secret_ref,omitempty"`
	// ExportRef takes the value from an export of another component (or of another app of the same project).
	ExportRef *ExportRef `json:"export_ref,omitempty"`
}

// SecretRef points at a key of a Kubernetes Secret.
type SecretRef struct {
	// Name of the Secret.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Key in the Secret.
	Key string `json:"key" jsonschema:"required,minLength=1"`
}

// EnvSecretRef is the key of a Secret an environment variable takes its value from.
type EnvSecretRef struct {
	// Name of the Secret.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Key in the Secret.
	Key string `json:"key" jsonschema:"required,minLength=1"`
	// Optional lets the pod start when the Secret or the key does not exist (the variable is then unset).
	Optional bool `json:"optional,omitempty"`
}

// ExportRef points at an export of a component.
type ExportRef struct {
	// Component whose export is used: a component of this app, or of the app named by app.
	Component string `json:"component,omitempty"`
	// App of the same project that holds component (for cross-app references).
	App string `json:"app,omitempty"`
	// AddonInstanceID names a shared addon instance declared in platform.yaml's addon_instances instead of a component.
	AddonInstanceID string `json:"addon_instance_id,omitempty"`
	// ExportKey is the export to use, such as connection_string, host, password or url.
	ExportKey string `json:"export_key" jsonschema:"required,minLength=1,example=connection_string"`
}

// Resources are compute requests and limits.
type Resources struct {
	// Requests are what the scheduler reserves.
	Requests *ResourceList `json:"requests,omitempty"`
	// Limits are the most the container may use.
	Limits *ResourceList `json:"limits,omitempty"`
}

// ResourceList holds CPU and memory quantities.
type ResourceList struct {
	// CPU quantity, such as 100m or 0.5.
	CPU *Quantity `json:"cpu,omitempty"`
	// Memory quantity, such as 128Mi.
	Memory *Quantity `json:"memory,omitempty"`
}

// Autoscaling configures a HorizontalPodAutoscaler.
type Autoscaling struct {
	// MinReplicas is the lower bound (default 1).
	MinReplicas int32 `json:"min_replicas,omitempty" jsonschema:"minimum=1,maximum=1000"`
	// MaxReplicas is the upper bound.
	MaxReplicas int32 `json:"max_replicas" jsonschema:"required,minimum=1,maximum=1000"`
	// CPUTarget is the average CPU utilization to aim for, in percent of the request (default 80).
	CPUTarget int32 `json:"cpu_target,omitempty" jsonschema:"minimum=1,maximum=100"`
	// MemoryTarget is the average memory utilization to aim for, in percent of the request.
	MemoryTarget int32 `json:"memory_target,omitempty" jsonschema:"minimum=1,maximum=100"`
}

// Ingress exposes a workload over HTTP(S).
type Ingress struct {
	// Enabled turns the ingress on.
	Enabled bool `json:"enabled"`
	// Host name; defaults to <app>-<project>.<apps_domain> from platform.yaml.
	Host string `json:"host,omitempty" jsonschema:"example=api.example.com"`
	// Path prefix routed to the workload (default /). Use routes for several paths.
	Path string `json:"path,omitempty" jsonschema:"default=/"`
	// Routes send path prefixes of the host to this workload or to other workloads of the app, on one Ingress with one certificate. Instead of path.
	Routes []Route `json:"routes,omitempty"`
	// TLS issues a certificate through cert-manager; on unless set to false.
	TLS *bool `json:"tls,omitempty"`
}

// Route sends a path prefix of an ingress's host to a workload's Service.
type Route struct {
	// Path prefix, such as /api/v1/streaming; the longest prefix that matches a request wins.
	Path string `json:"path" jsonschema:"required,minLength=1,example=/api/v1/streaming"`
	// Component whose Service receives the requests: a workload of this app (default: the one whose ingress this is).
	Component string `json:"component,omitempty" jsonschema:"example=streaming"`
	// Port of that Service, by name (default: the port named http, else its first TCP port).
	Port string `json:"port,omitempty" jsonschema:"example=http"`
}

// HealthCheck configures HTTP probes.
type HealthCheck struct {
	// Path of the HTTP GET, such as /healthz.
	Path string `json:"path" jsonschema:"required,minLength=1,example=/healthz"`
	// Port to probe; defaults to the workload's port.
	Port int `json:"port,omitempty" jsonschema:"minimum=1,maximum=65535"`
	// InitialDelaySeconds before the first liveness probe (default 10).
	InitialDelaySeconds int32 `json:"initial_delay_seconds,omitempty" jsonschema:"minimum=0"`
	// PeriodSeconds between probes (default 10).
	PeriodSeconds int32 `json:"period_seconds,omitempty" jsonschema:"minimum=1"`
}

// AddonSpec describes a backing service installed from a Helm chart.
type AddonSpec struct {
	// Type of the addon: a type the exports catalog knows (postgresql, mysql, mariadb, redis, mongodb, rabbitmq) or generic with declared exports.
	Type string `json:"type" jsonschema:"required,minLength=1,example=postgresql"`
	// Chart to install.
	Chart Chart `json:"chart" jsonschema:"required"`
	// Values passed to the chart. Never put a credential here: charts generate passwords into Secrets.
	Values map[string]any `json:"values,omitempty"`
	// Exports declared by a generic addon.
	Exports []DeclaredExport `json:"exports,omitempty"`
}

// Chart names a Helm chart in a repository.
type Chart struct {
	// Repo is the chart repository URL: https://… or oci://….
	Repo string `json:"repo" jsonschema:"required,minLength=1,example=https://charts.bitnami.com/bitnami"`
	// Name of the chart.
	Name string `json:"name" jsonschema:"required,minLength=1,example=postgresql"`
	// Version of the chart (a semver version or range).
	Version string `json:"version" jsonschema:"required,minLength=1,example=13.4.4"`
}

// DeclaredExport is an export of a generic addon.
type DeclaredExport struct {
	// Key of the export, used in export_ref.export_key.
	Key string `json:"key" jsonschema:"required,minLength=1"`
	// Value is a literal value (safe for Git); it may refer to other exports as $(key).
	Value *string `json:"value,omitempty"`
	// SecretRef takes the export from a Secret the chart creates.
	SecretRef *SecretRef `json:"secret_ref,omitempty"`
	// Description of the export.
	Description string `json:"description,omitempty"`
}
