package exports

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kind says how an export's value is obtained.
type Kind int

// Export kinds.
const (
	// Plain is a literal value that is safe to write to Git.
	Plain Kind = iota + 1
	// Secret is a key of a Kubernetes Secret.
	Secret
	// Composed is a value built from parts with Kubernetes $(VAR) expansion.
	Composed
)

// String returns "plain", "secret" or "composed".
func (k Kind) String() string {
	switch k {
	case Plain:
		return "plain"
	case Secret:
		return "secret"
	case Composed:
		return "composed"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// MarshalText encodes the kind by name.
func (k Kind) MarshalText() ([]byte, error) {
	if k < Plain || k > Composed {
		return nil, fmt.Errorf("unknown export kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// SecretKeyRef names a key of a Secret in the consumer's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Part is one piece of a Composed export. It becomes a hidden env var (see
// HiddenName) listed before the composed one.
type Part struct {
	// Name is the part's suffix, such as PASSWORD; Template refers to it as $(Name).
	Name string `json:"name"`
	// Value is the literal value of the part, when Secret is nil.
	Value string `json:"value,omitempty"`
	// Secret is where the part's value is read from.
	Secret *SecretKeyRef `json:"secret,omitempty"`
}

// Export is one value that a component publishes.
type Export struct {
	// Key is the export key, as written in export_ref.export_key.
	Key string `json:"key"`
	// Kind says which of Value, Secret or Parts and Template hold the export.
	Kind Kind `json:"kind"`
	// Sensitive is true when the value holds a credential.
	Sensitive bool `json:"sensitive,omitempty"`
	// Value is the literal value of a Plain export, exactly as the consumer
	// should see it (Wire escapes it for Kubernetes expansion).
	Value string `json:"value,omitempty"`
	// Secret is the Secret key of a Secret export.
	Secret *SecretKeyRef `json:"secret,omitempty"`
	// Parts are the hidden pieces of a Composed export.
	Parts []Part `json:"parts,omitempty"`
	// Template builds a Composed export: it refers to each part as
	// $(Name) and writes every other "$" as "$$", the Kubernetes escape.
	Template string `json:"template,omitempty"`
	// Description says what the export is, for docs and messages.
	Description string `json:"description,omitempty"`
}

// Declared is an export that a generic addon declares. Value is read with
// Kubernetes expansion syntax: $(key) refers to another declared export
// (which must not itself refer to others), and $$ is a literal "$". A Value
// that refers to a Secret export becomes a Composed export. Secret and a
// non-empty Value are exclusive.
type Declared struct {
	Key         string
	Value       string
	Secret      *SecretKeyRef
	Description string
}

// AddonInput describes one installed addon.
type AddonInput struct {
	// Type is the addon type: a catalog type (see Types) or "generic".
	Type string
	// Release is the Helm release name; render names it <app>-<component>.
	Release string
	// Namespace is the namespace the release is installed in.
	Namespace string
	// Chart is the chart name; empty means the type's chart (the type name).
	// It matters only when the values set no fullnameOverride.
	Chart string
	// Values are the chart values the release is installed with. Render
	// passes them through WithFullnameOverride first, as it writes them.
	Values map[string]any
	// Declared are the exports of a generic addon.
	Declared []Declared
}

// Errors that callers branch on. Returned errors wrap them.
var (
	// ErrUnknownType means the addon type is neither a catalog type nor generic.
	ErrUnknownType = errors.New("unknown addon type")
	// ErrUnknownKey means the type publishes no export of that key.
	ErrUnknownKey = errors.New("unknown export key")
	// ErrUnavailable means the type publishes the key, but not with these values.
	ErrUnavailable = errors.New("export unavailable")
)

// Generic is the addon type whose exports are declared in the spec.
const Generic = "generic"

// DefaultClusterDomain is the cluster DNS domain used in in-cluster host names
// unless the chart's clusterDomain value says otherwise.
const DefaultClusterDomain = "cluster.local"

// Chart describes how the catalog knows one addon type.
type Chart struct {
	// Type is the addon type, which is also the chart's name.
	Type string
	// Repository is the Helm repository the catalog's facts come from.
	Repository string
	// Keys are the export keys the type publishes, sorted.
	Keys []string
	// Port is the Service port the chart exposes by default.
	Port int
	// PortValue is the values path that overrides Port.
	PortValue string
}

// BitnamiRepository is the Helm repository of the catalog's charts.
const BitnamiRepository = "https://charts.bitnami.com/bitnami"

// find returns the catalog entry of a type. Entries are built per call so
// that callers can never alter the catalog.
func find(addonType string) (entry, bool) {
	if addonType == Generic {
		return entry{chart: Chart{Type: Generic}}, true
	}
	e, ok := catalog[addonType]
	if !ok {
		return entry{}, false
	}
	return e(), true
}

// catalog holds each chart's entry; each chart's file (chart_<type>.go)
// holds its entry, its exports and its Services.
var catalog = map[string]func() entry{
	"mariadb":    mariadbEntry,
	"mongodb":    mongodbEntry,
	"mysql":      mysqlEntry,
	"postgresql": postgresqlEntry,
	"rabbitmq":   rabbitmqEntry,
	"redis":      redisEntry,
}

// Export keys of the catalog.
const (
	KeyAddress          = "address"
	KeyConnectionString = "connection_string"
	KeyDatabase         = "database"
	KeyHost             = "host"
	KeyPassword         = "password"
	KeyPort             = "port"
	KeyURL              = "url"
	KeyUsername         = "username"
)

func sqlKeys() []string {
	return []string{KeyConnectionString, KeyDatabase, KeyHost, KeyPassword, KeyPort, KeyUsername}
}

// entry is what the catalog knows of one chart: its facts, its exports
// (resolve) and the Services it creates (services: it adds their names,
// and returns the namespace they go to when the values move them out of
// the release's, else "").
type entry struct {
	chart    Chart
	resolve  func(c *chartContext) (*result, error)
	services func(c *chartContext, full string, add func(...string)) (namespace string, err error)
}

// Types returns the known addon types, sorted; "generic" is among them.
func Types() []string {
	out := append(slices.Collect(maps.Keys(catalog)), Generic)
	slices.Sort(out)
	return out
}

// Keys returns the export keys a catalog type publishes, sorted, and false
// for an unknown type. A generic addon's keys are those it declares, so
// Keys returns none for it.
func Keys(addonType string) ([]string, bool) {
	e, ok := find(addonType)
	if !ok {
		return nil, false
	}
	return slices.Clone(e.chart.Keys), true
}

// Info returns what the catalog knows of an addon type.
func Info(addonType string) (Chart, bool) {
	e, ok := find(addonType)
	if !ok {
		return Chart{}, false
	}
	c := e.chart
	c.Keys = slices.Clone(c.Keys)
	return c, true
}

// WithFullnameOverride returns values with fullnameOverride set to name
// unless values already set it (even to ""), in which case the user's
// choice stands. The input map is not modified.
func WithFullnameOverride(values map[string]any, name string) map[string]any {
	out := maps.Clone(values)
	if out == nil {
		out = map[string]any{}
	}
	if _, ok := out["fullnameOverride"]; !ok {
		out["fullnameOverride"] = name
	}
	return out
}

// ForAddon returns the exports of an addon, by key. Keys of the type that
// these values cannot provide (for example password when the chart runs
// without authentication) are absent; Lookup explains why. Values that the
// chart itself would reject or that name invalid objects are an error.
func ForAddon(in AddonInput) (map[string]Export, error) {
	r, err := resolve(in)
	if err != nil {
		return nil, err
	}
	return r.exports, nil
}

// Lookup returns one export of an addon. The error wraps ErrUnknownType,
// ErrUnknownKey (listing the valid keys) or ErrUnavailable (saying why).
func Lookup(in AddonInput, key string) (Export, error) {
	r, err := resolve(in)
	if err != nil {
		return Export{}, err
	}
	if e, ok := r.exports[key]; ok {
		return e, nil
	}
	if reason, ok := r.unavailable[key]; ok {
		return Export{}, fmt.Errorf("%w: %s export %q: %s", ErrUnavailable, in.Type, key, reason)
	}
	valid := slices.Sorted(maps.Keys(r.exports))
	for k := range r.unavailable {
		valid = append(valid, k)
	}
	slices.Sort(valid)
	return Export{}, fmt.Errorf("%w: %s has no export %q (valid: %s)", ErrUnknownKey, in.Type, key, joinKeys(valid))
}

func joinKeys(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

// result is the outcome of resolving one addon.
type result struct {
	exports     map[string]Export
	unavailable map[string]string
}

func (r *result) add(e Export) {
	if r.exports == nil {
		r.exports = make(map[string]Export, 8)
	}
	r.exports[e.Key] = e
}

func (r *result) missing(key, reason string) {
	if r.unavailable == nil {
		r.unavailable = map[string]string{}
	}
	r.unavailable[key] = reason
}

// chartContext is what a chart resolver reads.
type chartContext struct {
	v         values
	release   string
	namespace string
	chart     string
}

func resolve(in AddonInput) (*result, error) {
	e, ok := find(in.Type)
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownType, in.Type, joinKeys(Types()))
	}
	if in.Type == Generic {
		return resolveGeneric(in.Declared)
	}
	if len(in.Declared) > 0 {
		return nil, fmt.Errorf("addon type %s publishes catalog exports; only generic addons declare exports", in.Type)
	}
	if in.Release == "" {
		return nil, errors.New("addon release name is empty")
	}
	if !isDNSLabel(in.Namespace) {
		return nil, fmt.Errorf("addon namespace %q is not a DNS label", in.Namespace)
	}
	chart := in.Chart
	if chart == "" {
		chart = in.Type
	}
	r, err := e.resolve(&chartContext{v: values{in.Values}, release: in.Release, namespace: in.Namespace, chart: chart})
	if err != nil {
		return nil, fmt.Errorf("%s addon %s: %w", in.Type, in.Release, err)
	}
	for _, k := range e.chart.Keys {
		_, have := r.exports[k]
		_, explained := r.unavailable[k]
		if have == explained {
			return nil, fmt.Errorf("%s addon %s: export %q resolved inconsistently", in.Type, in.Release, k)
		}
	}
	return r, nil
}

// ForWorkload returns the exports of a workload whose Service is name in
// namespace: url (http://name.namespace.svc.cluster.local:port), host, port
// and address (host:port, for clients that dial rather than fetch, such as
// gRPC). port is the Service's port, which may differ from the container's.
// A workload without a port (port ≤ 0) publishes only host.
func ForWorkload(name, namespace string, port int) map[string]Export {
	host := serviceHost(name, namespace, DefaultClusterDomain)
	out := map[string]Export{
		KeyHost: {Key: KeyHost, Kind: Plain, Value: host, Description: "in-cluster DNS name of the workload's Service"},
	}
	if port > 0 {
		p := strconv.Itoa(port)
		out[KeyPort] = Export{Key: KeyPort, Kind: Plain, Value: p, Description: "port of the workload's Service"}
		out[KeyURL] = Export{Key: KeyURL, Kind: Plain, Value: "http://" + host + ":" + p, Description: "in-cluster HTTP URL of the workload"}
		out[KeyAddress] = Export{Key: KeyAddress, Kind: Plain, Value: host + ":" + p, Description: "host:port of the workload's Service"}
	}
	return out
}

// WorkloadKeys returns the export keys of a workload, sorted.
func WorkloadKeys() []string {
	return []string{KeyAddress, KeyHost, KeyPort, KeyURL}
}

func serviceHost(service, namespace, clusterDomain string) string {
	return service + "." + namespace + ".svc." + clusterDomain
}
