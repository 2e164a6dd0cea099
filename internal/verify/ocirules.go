package verify

import (
	"regexp"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// What source.toolkit.fluxcd.io/v1's CustomResourceDefinition refuses in
// an OCIRepository beyond its Go type: its patterns and enums
// (TestOCIRepositoryRulesMatchCRD keeps them in step with the CRD).
const (
	ociURLPattern      = `^oci://.*$`
	ociIntervalPattern = `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	ociTimeoutPattern  = `^([0-9]+(\.[0-9]+)?(ms|s|m))+$`
)

var (
	ociProviders  = []string{"generic", "aws", "azure", "gcp"}
	ociOperations = []string{"extract", "copy"}

	ociURL      = regexp.MustCompile(ociURLPattern)
	ociInterval = regexp.MustCompile(ociIntervalPattern)
	ociTimeout  = regexp.MustCompile(ociTimeoutPattern)
	// ociDigest is what source-controller takes as a pinned digest: it
	// pulls <url>@<digest>.
	ociDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// ociRepositoryRules checks an OCIRepository: an oci:// url, an interval
// and timeout in the units the CRD allows, a known provider and layer
// operation, and a digest that source-controller can pull.
func ociRepositoryRules(root *node, add func(string, string, ...any)) {
	sp := root.Get("spec")
	match := func(field string, re *regexp.Regexp, pattern, what string) {
		v := sp.Get(field)
		if v == nil || v.Kind != yamlx.ScalarNode || v.Tag != yamlx.StrTag {
			return // missing or of the wrong type: reported already
		}
		if !re.MatchString(v.Str) {
			add("spec."+field, "%q %s (the CRD's pattern %s)", v.Str, what, pattern)
		}
	}
	match("url", ociURL, ociURLPattern, "must start with oci://")
	match("interval", ociInterval, ociIntervalPattern, "is not a duration in ms, s, m or h")
	match("timeout", ociTimeout, ociTimeoutPattern, "is not a duration in ms, s or m")
	enum(sp.Get("provider"), "spec.provider", add, ociProviders...)
	enum(sp.Get("layerSelector").Get("operation"), "spec.layerSelector.operation", add, ociOperations...)
	if d := sp.Get("ref").Get("digest"); d != nil && d.Kind == yamlx.ScalarNode && d.Tag == yamlx.StrTag && !ociDigest.MatchString(d.Str) {
		add("spec.ref.digest", "%q is not a digest sha256:<64 hex digits>: source-controller cannot pull it", d.Str)
	}
}
