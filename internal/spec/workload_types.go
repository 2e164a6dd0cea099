package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/invopop/jsonschema"
)

// The fields of real applications: ports, probes, volumes, files, extra
// containers, pod settings, jobs and patches (DESIGN.md, "The spec for real
// applications").

// Port protocols.
const (
	ProtocolTCP  = "TCP"
	ProtocolUDP  = "UDP"
	ProtocolSCTP = "SCTP"
)

// Service types. Headless is a ClusterIP Service without a cluster IP.
const (
	ServiceClusterIP    = "ClusterIP"
	ServiceLoadBalancer = "LoadBalancer"
	ServiceNodePort     = "NodePort"
	ServiceHeadless     = "Headless"
)

// Port is one port a container listens on.
type Port struct {
	// Name of the port, unique within the container: an IANA service name (lowercase letters, digits and '-', at most 15 characters), such as http, grpc or metrics.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=15,pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$,example=grpc"`
	// Port number the container listens on.
	Port int `json:"port" jsonschema:"required,minimum=1,maximum=65535,example=50051"`
	// Protocol of the port: TCP (default), UDP or SCTP.
	Protocol string `json:"protocol,omitempty" jsonschema:"enum=TCP,enum=UDP,enum=SCTP,default=TCP"`
	// ServicePort is the port callers use on the Service (default: the container port).
	ServicePort int `json:"service_port,omitempty" jsonschema:"minimum=1,maximum=65535,example=5000"`
	// Expose puts the port on the Service (default true); false keeps it on the pod only, such as a metrics port scraped from the pod.
	Expose *bool `json:"expose,omitempty" jsonschema:"default=true"`
	// NodePort is the port every node opens for it, with service.type NodePort or LoadBalancer (default: one Kubernetes picks from its node port range).
	NodePort int `json:"node_port,omitempty" jsonschema:"minimum=1,maximum=65535,example=30001"`
}

// Service configures the Service in front of a workload's exposed ports.
type Service struct {
	// Type of the Service: ClusterIP (default), LoadBalancer, NodePort, or Headless (no cluster IP: DNS names the pods).
	Type string `json:"type,omitempty" jsonschema:"enum=ClusterIP,enum=LoadBalancer,enum=NodePort,enum=Headless,default=ClusterIP"`
	// Name of the Service, the host name callers use in the project namespace (default <app>-<component>): a DNS-1035 label.
	Name string `json:"name,omitempty" jsonschema:"maxLength=63,example=api"`
	// Annotations of the Service, such as a load balancer's settings or prometheus.io/scrape.
	Annotations map[string]string `json:"annotations,omitempty"`
	// IPFamilyPolicy of the Service: SingleStack (the cluster's default), PreferDualStack or RequireDualStack.
	IPFamilyPolicy string `json:"ip_family_policy,omitempty" jsonschema:"enum=SingleStack,enum=PreferDualStack,enum=RequireDualStack"`
}

// Strategy is how a Deployment replaces its pods.
type Strategy struct {
	// Type is RollingUpdate (the default: new pods before old ones go) or Recreate (every old pod goes first, for an app that cannot run two versions at once).
	Type string `json:"type,omitempty" jsonschema:"enum=RollingUpdate,enum=Recreate,default=RollingUpdate"`
	// MaxSurge is how many pods above the count a rolling update may start: a number or a percentage (default 25%).
	MaxSurge *IntOrPercent `json:"max_surge,omitempty"`
	// MaxUnavailable is how many pods below the count a rolling update may stop: a number or a percentage (default 25%).
	MaxUnavailable *IntOrPercent `json:"max_unavailable,omitempty"`
}

// EnvFrom imports every key of a ConfigMap or a Secret of the project namespace as environment variables.
type EnvFrom struct {
	// ConfigMap whose keys become variables.
	ConfigMap string `json:"config_map,omitempty" jsonschema:"example=shared-settings"`
	// Secret whose keys become variables. Its values never pass through Git.
	Secret string `json:"secret,omitempty" jsonschema:"example=api-env"`
	// Prefix added to every imported name.
	Prefix string `json:"prefix,omitempty"`
	// Optional lets the pod start when the ConfigMap or Secret does not exist.
	Optional bool `json:"optional,omitempty"`
}

// Probes are the container's readiness, liveness and startup checks.
type Probes struct {
	// Readiness decides whether the pod receives traffic (and whether a deploy is healthy).
	Readiness *Probe `json:"readiness,omitempty"`
	// Liveness restarts the container when it fails.
	Liveness *Probe `json:"liveness,omitempty"`
	// Startup holds back the other probes until the container has started: for slow starters.
	Startup *Probe `json:"startup,omitempty"`
}

// Probe is one check: exactly one of http, grpc, tcp or exec, and its timings.
type Probe struct {
	// HTTP is a GET request; a status from 200 to 399 passes.
	HTTP *HTTPProbe `json:"http,omitempty"`
	// GRPC calls the standard gRPC health checking protocol.
	GRPC *GRPCProbe `json:"grpc,omitempty"`
	// TCP opens a connection.
	TCP *TCPProbe `json:"tcp,omitempty"`
	// Exec runs a command in the container; exit status 0 passes.
	Exec *ExecProbe `json:"exec,omitempty"`
	// InitialDelaySeconds before the first check (Kubernetes' default 0).
	InitialDelaySeconds *int32 `json:"initial_delay_seconds,omitempty" jsonschema:"minimum=0"`
	// PeriodSeconds between checks (Kubernetes' default 10).
	PeriodSeconds *int32 `json:"period_seconds,omitempty" jsonschema:"minimum=1"`
	// TimeoutSeconds a check may take (Kubernetes' default 1).
	TimeoutSeconds *int32 `json:"timeout_seconds,omitempty" jsonschema:"minimum=1"`
	// FailureThreshold: consecutive failures that fail the probe (Kubernetes' default 3).
	FailureThreshold *int32 `json:"failure_threshold,omitempty" jsonschema:"minimum=1"`
	// SuccessThreshold: consecutive successes that pass it again (Kubernetes' default 1; must be 1 for liveness and startup).
	SuccessThreshold *int32 `json:"success_threshold,omitempty" jsonschema:"minimum=1"`
}

// HTTPProbe is an HTTP GET check.
type HTTPProbe struct {
	// Path of the request, such as /healthz.
	Path string `json:"path" jsonschema:"required,minLength=1,example=/healthz"`
	// Port of the request: a port the container declares (default: the first exposed TCP port).
	Port int `json:"port,omitempty" jsonschema:"minimum=1,maximum=65535"`
	// Scheme of the request: HTTP (default) or HTTPS (the certificate is not checked).
	Scheme string `json:"scheme,omitempty" jsonschema:"enum=HTTP,enum=HTTPS,default=HTTP"`
	// Headers sent with the request.
	Headers map[string]string `json:"headers,omitempty"`
}

// GRPCProbe is a gRPC health check.
type GRPCProbe struct {
	// Port of the gRPC server: a port the container declares.
	Port int `json:"port" jsonschema:"required,minimum=1,maximum=65535,example=50051"`
	// Service name sent in the health check request (default: the server's overall health).
	Service string `json:"service,omitempty"`
}

// TCPProbe is a TCP connect check.
type TCPProbe struct {
	// Port to connect to: a port the container declares.
	Port int `json:"port" jsonschema:"required,minimum=1,maximum=65535"`
}

// ExecProbe runs a command in the container.
type ExecProbe struct {
	// Command and its arguments, run without a shell.
	Command []string `json:"command" jsonschema:"required,minItems=1"`
}

// SecurityContext hardens a container. Fields left out take platform.yaml's defaults.security_context.
type SecurityContext struct {
	// RunAsNonRoot refuses to start the container as user 0.
	RunAsNonRoot *bool `json:"run_as_non_root,omitempty"`
	// RunAsUser is the user id the processes run as.
	RunAsUser *int64 `json:"run_as_user,omitempty" jsonschema:"minimum=0,maximum=2147483647"`
	// RunAsGroup is the primary group id of the processes.
	RunAsGroup *int64 `json:"run_as_group,omitempty" jsonschema:"minimum=0,maximum=2147483647"`
	// FSGroup owns mounted volumes, so a non-root user can write them (pod-wide).
	FSGroup *int64 `json:"fs_group,omitempty" jsonschema:"minimum=0,maximum=2147483647"`
	// ReadOnlyRootFilesystem mounts the image read-only: write to volumes instead.
	ReadOnlyRootFilesystem *bool `json:"read_only_root_filesystem,omitempty"`
	// AllowPrivilegeEscalation lets a process gain more privileges than its parent (setuid binaries).
	AllowPrivilegeEscalation *bool `json:"allow_privilege_escalation,omitempty"`
	// Capabilities added to and dropped from the container's Linux capabilities.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	// SeccompProfile: RuntimeDefault, Unconfined, or Localhost/<profile path on the node>.
	SeccompProfile string `json:"seccomp_profile,omitempty" jsonschema:"pattern=^(RuntimeDefault|Unconfined|Localhost/.+)$,example=RuntimeDefault"`
}

// Capabilities are Linux capabilities, such as NET_BIND_SERVICE, or ALL.
type Capabilities struct {
	// Drop removes capabilities (ALL removes every one).
	Drop []string `json:"drop,omitempty"`
	// Add grants capabilities.
	Add []string `json:"add,omitempty"`
}

// ServiceAccount is the Kubernetes identity the pods run as.
type ServiceAccount struct {
	// Name of the ServiceAccount in the project namespace (default <app>-<component> when create is true).
	Name string `json:"name,omitempty" jsonschema:"maxLength=253,example=api"`
	// Create renders the ServiceAccount with the app; otherwise it must exist.
	Create bool `json:"create,omitempty"`
	// Annotations of a created ServiceAccount, such as a cloud identity binding.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Volume is storage mounted into the workload's container: persistent (size set), shared (an app-wide claim), claim (an existing one), empty_dir, secret or config_map.
type Volume struct {
	// Name of the volume, unique within the component: a DNS-1123 label. Extra containers mount it by this name.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=data"`
	// MountPath in the workload's container; leave it out to mount the volume only in init containers or sidecars.
	MountPath string `json:"mount_path,omitempty" jsonschema:"example=/var/lib/api"`
	// SubPath mounts one path inside the volume instead of its root.
	SubPath string `json:"sub_path,omitempty"`
	// ReadOnly mounts the volume read-only (secret and config_map volumes always are).
	ReadOnly bool `json:"read_only,omitempty"`
	// Size of a persistent volume: each replica gets its own claim of this size, and the workload renders as a StatefulSet.
	Size *Quantity `json:"size,omitempty"`
	// StorageClass of a persistent volume (default: the cluster's default class).
	StorageClass string `json:"storage_class,omitempty" jsonschema:"example=fast"`
	// AccessModes of a persistent volume (default ReadWriteOnce).
	AccessModes []string `json:"access_modes,omitempty" jsonschema:"enum=ReadWriteOnce,enum=ReadOnlyMany,enum=ReadWriteMany,enum=ReadWriteOncePod"`
	// Retain keeps the claims of a persistent volume when replicas shrink or the app is deleted (default true); false deletes them with it.
	Retain *bool `json:"retain,omitempty" jsonschema:"default=true"`
	// Shared mounts an app-wide volume, named in the app's volumes: one claim that every component naming it mounts.
	Shared string `json:"shared,omitempty" jsonschema:"example=media"`
	// Claim mounts a PersistentVolumeClaim that already exists in the project namespace, by its name.
	Claim string `json:"claim,omitempty" jsonschema:"example=legacy-data"`
	// EmptyDir is scratch space that lives as long as the pod.
	EmptyDir *EmptyDir `json:"empty_dir,omitempty"`
	// Secret mounts the keys of a Secret of the project namespace as files.
	Secret *SecretVolume `json:"secret,omitempty"`
	// ConfigMap mounts the keys of an existing ConfigMap of the project namespace as files (for files kept in Git, use files).
	ConfigMap *ConfigMapVolume `json:"config_map,omitempty"`
}

// EmptyDir is a volume created empty with the pod.
type EmptyDir struct {
	// Medium: empty for the node's disk, Memory for a tmpfs.
	Medium string `json:"medium,omitempty" jsonschema:"enum=,enum=Memory"`
	// SizeLimit caps the volume's size.
	SizeLimit *Quantity `json:"size_limit,omitempty"`
}

// SecretVolume mounts a Secret.
type SecretVolume struct {
	// Name of the Secret.
	Name string `json:"name" jsonschema:"required,minLength=1,example=api-tls"`
	// Items picks keys and the file names they get (default: every key, named by the key).
	Items []KeyPath `json:"items,omitempty"`
	// Optional lets the pod start when the Secret does not exist.
	Optional bool `json:"optional,omitempty"`
	// DefaultMode is the permission of the files, such as 0o400 (256) (default 0o644).
	DefaultMode *int32 `json:"default_mode,omitempty" jsonschema:"minimum=0,maximum=511"`
}

// ConfigMapVolume mounts an existing ConfigMap.
type ConfigMapVolume struct {
	// Name of the ConfigMap.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Items picks keys and the file names they get (default: every key, named by the key).
	Items []KeyPath `json:"items,omitempty"`
	// Optional lets the pod start when the ConfigMap does not exist.
	Optional bool `json:"optional,omitempty"`
	// DefaultMode is the permission of the files (default 0o644).
	DefaultMode *int32 `json:"default_mode,omitempty" jsonschema:"minimum=0,maximum=511"`
}

// KeyPath maps a key of a Secret or ConfigMap to a file.
type KeyPath struct {
	// Key in the Secret or ConfigMap.
	Key string `json:"key" jsonschema:"required,minLength=1"`
	// Path of the file, relative to the mount path.
	Path string `json:"path" jsonschema:"required,minLength=1"`
}

// File is a config file kept in Git and mounted read-only into the workload's container.
type File struct {
	// Path of the file in the container, absolute, such as /etc/api/config.yaml.
	Path string `json:"path" jsonschema:"required,minLength=2,pattern=^/,example=/etc/api/config.yaml"`
	// Content of the file. Exactly one of content and from.
	Content *string `json:"content,omitempty"`
	// From is a file beside app.yaml (a path relative to its folder) whose content is used.
	From string `json:"from,omitempty" jsonschema:"example=config/nginx.conf"`
	// Mode is the file's permission, such as 0o644 (420) (default 0o644).
	Mode *int32 `json:"mode,omitempty" jsonschema:"minimum=0,maximum=511"`
}

// VolumeMount mounts a volume of the component, by name, into an init container or sidecar.
type VolumeMount struct {
	// Name of a volume in the component's volumes.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// MountPath in the container.
	MountPath string `json:"mount_path" jsonschema:"required,minLength=1"`
	// SubPath mounts one path inside the volume instead of its root.
	SubPath string `json:"sub_path,omitempty"`
	// ReadOnly mounts the volume read-only.
	ReadOnly bool `json:"read_only,omitempty"`
}

// Container is an init container or a sidecar of a workload.
type Container struct {
	// Name of the container, unique within the pod: a DNS-1123 label.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=proxy"`
	// Image of the container.
	Image string `json:"image" jsonschema:"required,minLength=1,example=busybox:1.36"`
	// Command overrides the image's entrypoint.
	Command []string `json:"command,omitempty"`
	// Args overrides the image's command (its arguments).
	Args []string `json:"args,omitempty"`
	// Env lists environment variables, as for the workload.
	Env []EnvVar `json:"env,omitempty"`
	// EnvFrom imports ConfigMaps and Secrets as environment variables.
	EnvFrom []EnvFrom `json:"env_from,omitempty"`
	// Ports the container listens on; exposed ones are added to the Service.
	Ports []Port `json:"ports,omitempty"`
	// Resources are CPU and memory requests and limits.
	Resources *Resources `json:"resources,omitempty"`
	// Probes of the container (sidecars only: init containers run to completion).
	Probes *Probes `json:"probes,omitempty"`
	// SecurityContext of the container; unset fields take the platform defaults.
	SecurityContext *SecurityContext `json:"security_context,omitempty"`
	// VolumeMounts mount the component's volumes by name.
	VolumeMounts []VolumeMount `json:"volume_mounts,omitempty"`
}

// Pod holds settings of the workload's pods.
type Pod struct {
	// Annotations added to the pod template, such as a metrics scrape setting.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Labels added to the pod template (they cannot override fleetwright's own labels).
	Labels map[string]string `json:"labels,omitempty"`
	// NodeSelector restricts the pods to nodes with these labels.
	NodeSelector map[string]string `json:"node_selector,omitempty"`
	// Tolerations let the pods run on tainted nodes.
	Tolerations []Toleration `json:"tolerations,omitempty"`
	// PriorityClass names a PriorityClass of the cluster.
	PriorityClass string `json:"priority_class,omitempty"`
	// TerminationGracePeriodSeconds between SIGTERM and SIGKILL (Kubernetes' default 30).
	TerminationGracePeriodSeconds *int64 `json:"termination_grace_period_seconds,omitempty" jsonschema:"minimum=0"`
}

// Toleration tolerates a node taint.
type Toleration struct {
	// Key of the taint; empty with operator Exists tolerates every taint.
	Key string `json:"key,omitempty"`
	// Operator: Equal (default: the value must match) or Exists.
	Operator string `json:"operator,omitempty" jsonschema:"enum=Equal,enum=Exists,default=Equal"`
	// Value the taint must have (operator Equal).
	Value string `json:"value,omitempty"`
	// Effect tolerated: NoSchedule, PreferNoSchedule or NoExecute (default: all).
	Effect string `json:"effect,omitempty" jsonschema:"enum=NoSchedule,enum=PreferNoSchedule,enum=NoExecute"`
	// TolerationSeconds a NoExecute taint is tolerated before the pod is evicted.
	TolerationSeconds *int64 `json:"toleration_seconds,omitempty"`
}

// DisruptionBudget limits voluntary disruptions (node drains): set one of max_unavailable and min_available.
type DisruptionBudget struct {
	// MaxUnavailable pods at a time: a number or a percentage such as 25%.
	MaxUnavailable *IntOrPercent `json:"max_unavailable,omitempty"`
	// MinAvailable pods at all times: a number or a percentage such as 50%.
	MinAvailable *IntOrPercent `json:"min_available,omitempty"`
}

// Patch is a kustomize patch applied to this component's objects in the fleet.
type Patch struct {
	// Target selects the objects patched (default: every object the patch names by kind and name).
	Target *PatchTarget `json:"target,omitempty"`
	// Patch is a strategic merge patch or a JSON 6902 patch (a list of operations), as YAML. It may not carry secret values.
	Patch string `json:"patch" jsonschema:"required,minLength=1"`
}

// PatchTarget selects objects as kustomize does.
type PatchTarget struct {
	// Group of the objects' API, such as apps.
	Group string `json:"group,omitempty"`
	// Version of the objects' API, such as v1.
	Version string `json:"version,omitempty"`
	// Kind of the objects, such as Deployment.
	Kind string `json:"kind,omitempty"`
	// Name of the object (a regular expression, as in kustomize).
	Name string `json:"name,omitempty"`
	// LabelSelector the objects' labels match.
	LabelSelector string `json:"label_selector,omitempty"`
	// AnnotationSelector the objects' annotations match.
	AnnotationSelector string `json:"annotation_selector,omitempty"`
}

// Cron job concurrency policies.
const (
	ConcurrencyAllow   = "Allow"
	ConcurrencyForbid  = "Forbid"
	ConcurrencyReplace = "Replace"
)

// IntOrPercent is a count (3) or a percentage ("25%").
type IntOrPercent struct {
	s string
}

// NewIntOrPercent returns the value written as s.
func NewIntOrPercent(s string) *IntOrPercent { return &IntOrPercent{s: s} }

// String returns the value as written.
func (v IntOrPercent) String() string { return v.s }

// Int returns the count and true when the value is not a percentage.
func (v IntOrPercent) Int() (int, bool) {
	n, err := strconv.Atoi(v.s)
	return n, err == nil
}

// UnmarshalJSON accepts a JSON integer or a string such as "25%".
func (v *IntOrPercent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &v.s)
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("must be an integer or a percentage")
	}
	v.s = strconv.Itoa(n)
	return nil
}

// MarshalJSON writes a count as a number and a percentage as a string.
func (v IntOrPercent) MarshalJSON() ([]byte, error) {
	if n, ok := v.Int(); ok {
		return json.Marshal(n)
	}
	return json.Marshal(v.s)
}

// JSONSchema describes the value for the generated schema.
func (IntOrPercent) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: json.Number("0")},
			{Type: "string", Pattern: `^[0-9]+%$`},
		},
		Examples: []any{1, "25%"},
	}
}

// UnmarshalString sets the value to s as written, as UnmarshalJSON of
// a JSON string does; the spec loader decodes strings through it.
func (v *IntOrPercent) UnmarshalString(s string) { v.s = s }

// ExposedPorts reports whether a workload has a port on its Service: port,
// or an exposed entry of ports (its own or a sidecar's).
func (w *WorkloadSpec) ExposedPorts() bool {
	if w.Port > 0 {
		return true
	}
	for _, p := range w.Ports {
		if p.Expose == nil || *p.Expose {
			return true
		}
	}
	for _, s := range w.Sidecars {
		for _, p := range s.Ports {
			if p.Expose == nil || *p.Expose {
				return true
			}
		}
	}
	return false
}

// Persistent reports whether a workload has a persistent volume, which
// makes it a StatefulSet.
func (w *WorkloadSpec) Persistent() bool {
	return slices.ContainsFunc(w.Volumes, func(v Volume) bool { return v.Size != nil })
}

// IntValue is v.Int(), and false when v is not set.
func (v *IntOrPercent) IntValue() (int, bool) {
	if v == nil {
		return 0, false
	}
	return v.Int()
}
