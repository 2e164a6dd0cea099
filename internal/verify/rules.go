package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// The rules of the API server's validation that the Go types cannot say,
// for the workload kinds and what goes with them (pod templates, Services,
// claims, disruption budgets, ConfigMaps): the mistakes a hand edit or a
// kustomize patch makes and the API server rejects. Each is reported at its
// field, with the API server's sense of it.

// enum checks that a scalar, when set, is one of the values.
func enum(n *node, field string, add func(string, string, ...any), values ...string) {
	if n == nil || n.IsNull() || n.Kind != yamlx.ScalarNode {
		return
	}
	if !slices.Contains(values, n.Str) {
		add(field, "unsupported value %q: must be %s", n.Str, orList(values))
	}
}

func orList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// items returns the items of a list node, or nil.
func items(n *node) []*node {
	if n == nil || n.Kind != yamlx.SeqNode {
		return nil
	}
	return n.Kids
}

// podTemplateRules checks a pod spec at sp, whose restartPolicy may be one
// of policies (a Job's pods must not restart in place: OnFailure or Never;
// the first value is the default).
func podTemplateRules(sp string, policies ...string) func(*node, func(string, string, ...any)) {
	return func(root *node, add func(string, string, ...any)) {
		ps, _ := root.Path(sp)
		podSpecRules(ps, sp, nil, add, policies...)
	}
}

// podSpecRules checks a pod spec: restart policy, container names, ports,
// probes, sidecars and volume mounts. claims are the volume claim
// templates' names (a StatefulSet's containers mount them as volumes).
func podSpecRules(ps *node, sp string, claims []string, add func(string, string, ...any), policies ...string) {
	if ps == nil || ps.Kind != yamlx.MapNode {
		return
	}
	rp := ps.Get("restartPolicy")
	switch {
	case rp.IsNull() && policies[0] != "Always":
		add(sp+".restartPolicy", "required: a Job's pods need restartPolicy %s", orList(policies))
	default:
		enum(rp, sp+".restartPolicy", add, policies...)
	}
	volumes := slices.Clone(claims)
	for i, v := range items(ps.Get("volumes")) {
		p := fmt.Sprintf("%s.volumes[%d]", sp, i)
		name := v.Get("name").Text()
		if slices.Contains(volumes, name) {
			add(p+".name", "duplicate volume name %q", name)
		}
		volumes = append(volumes, name)
		if n := volumeSources(v); n > 1 {
			add(p, "a volume has exactly one source (emptyDir, configMap, secret, persistentVolumeClaim, …), not %d", n)
		}
	}
	var names []string
	for _, list := range []string{"initContainers", "containers"} {
		for i, c := range items(ps.Get(list)) {
			p := fmt.Sprintf("%s.%s[%d]", sp, list, i)
			name := c.Get("name").Text()
			if name != "" && slices.Contains(names, name) {
				add(p+".name", "duplicate container name %q: names are unique across containers and init containers", name)
			}
			names = append(names, name)
			containerRules(c, p, list == "initContainers", volumes, add)
		}
	}
}

// volumeSources counts the sources a volume names.
func volumeSources(v *node) int {
	n := 0
	for i := 0; v != nil && v.Kind == yamlx.MapNode && i < len(v.Kids); i += 2 {
		if v.Kids[i].Str != "name" && !v.Kids[i+1].IsNull() {
			n++
		}
	}
	return n
}

var probeHandlers = []string{"exec", "httpGet", "tcpSocket", "grpc"}

// containerRules checks one container: its ports, its probes (none on an
// init container unless it is a native sidecar, restartPolicy Always),
// and that it mounts volumes the pod has, each at its own path.
func containerRules(c *node, p string, init bool, volumes []string, add func(string, string, ...any)) {
	if c == nil || c.Kind != yamlx.MapNode {
		return
	}
	sidecar := false
	if rp := c.Get("restartPolicy"); !rp.IsNull() {
		if init {
			enum(rp, p+".restartPolicy", add, "Always")
			sidecar = rp.Text() == "Always"
		}
	}
	var portNames []string
	for i, port := range items(c.Get("ports")) {
		pp := fmt.Sprintf("%s.ports[%d]", p, i)
		if name := port.Get("name").Text(); name != "" {
			for _, msg := range validation.IsValidPortName(name) {
				add(pp+".name", "%q is not a valid port name: %s", name, msg)
			}
			if slices.Contains(portNames, name) {
				add(pp+".name", "duplicate port name %q", name)
			}
			portNames = append(portNames, name)
		}
		portNumber(port.Get("containerPort"), pp+".containerPort", add)
		enum(port.Get("protocol"), pp+".protocol", add, "TCP", "UDP", "SCTP")
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		pr := c.Get(probe)
		if pr.IsNull() {
			continue
		}
		pp := p + "." + probe
		if init && !sidecar {
			add(pp, "an init container may not have a %s: it runs to completion (only a sidecar, restartPolicy Always, may)", probe)
			continue
		}
		probeRules(pr, pp, probe, portNames, add)
	}
	var paths []string
	for i, m := range items(c.Get("volumeMounts")) {
		mp := fmt.Sprintf("%s.volumeMounts[%d]", p, i)
		if name := m.Get("name").Text(); name != "" && !slices.Contains(volumes, name) {
			add(mp+".name", "no volume named %q in the pod (volumes%s)", name, claimNote(volumes))
		}
		if path := m.Get("mountPath").Text(); path != "" {
			if slices.Contains(paths, path) {
				add(mp+".mountPath", "%s is mounted twice in this container", path)
			}
			paths = append(paths, path)
		}
	}
	for i, e := range items(c.Get("env")) {
		ep := fmt.Sprintf("%s.env[%d]", p, i)
		vf := e.Get("valueFrom")
		if vf.IsNull() {
			continue
		}
		if !e.Get("value").IsNull() && e.Get("value").Text() != "" {
			add(ep, "value and valueFrom may not both be set")
		}
		if n := volumeSources(vf); n != 1 {
			add(ep+".valueFrom", "must name exactly one source (secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, fileKeyRef), not %d", n)
		}
	}
}

func claimNote(volumes []string) string {
	if len(volumes) == 0 {
		return ": none"
	}
	return ": " + strings.Join(volumes, ", ")
}

// probeRules checks a probe: exactly one handler, a valid port, and a
// success threshold of 1 for liveness and startup probes.
func probeRules(pr *node, pp, probe string, portNames []string, add func(string, string, ...any)) {
	if pr.Kind != yamlx.MapNode {
		return
	}
	var set []string
	for _, h := range probeHandlers {
		if !pr.Get(h).IsNull() {
			set = append(set, h)
		}
	}
	switch len(set) {
	case 0:
		add(pp, "a probe needs one handler: exec, httpGet, tcpSocket or grpc")
	case 1:
	default:
		add(pp+"."+set[1], "a probe has exactly one handler, not %s", strings.Join(set, " and "))
	}
	for _, h := range []string{"httpGet", "tcpSocket"} {
		port := pr.Get(h).Get("port")
		if port == nil {
			continue
		}
		if port.Tag == yamlx.StrTag {
			if !slices.Contains(portNames, port.Str) {
				add(pp+"."+h+".port", "the container declares no port named %q", port.Str)
			}
			continue
		}
		portNumber(port, pp+"."+h+".port", add)
	}
	portNumber(pr.Get("grpc").Get("port"), pp+".grpc.port", add)
	if st := pr.Get("successThreshold"); probe != "readinessProbe" && st != nil && st.Tag == yamlx.IntTag && st.Str != "1" {
		add(pp+".successThreshold", "must be 1 for a %s", probe)
	}
}

// portNumber checks a port number, when it is a number.
func portNumber(n *node, field string, add func(string, string, ...any)) {
	if n == nil || n.Tag != yamlx.IntTag {
		return
	}
	if v, err := strconv.Atoi(n.Str); err != nil || v < 1 || v > 65535 {
		add(field, "port %s is not between 1 and 65535", n.Str)
	}
}

// statefulSetRules checks a StatefulSet: its claim templates and its pod
// template, whose containers may mount the claims.
func statefulSetRules(root *node, add func(string, string, ...any)) {
	sp := root.Get("spec")
	var claims []string
	for i, t := range items(sp.Get("volumeClaimTemplates")) {
		p := fmt.Sprintf("spec.volumeClaimTemplates[%d]", i)
		name := t.Get("metadata").Get("name").Text()
		if name == "" {
			add(p+".metadata.name", "required field is missing")
		} else if slices.Contains(claims, name) {
			add(p+".metadata.name", "duplicate claim template name %q", name)
		}
		claims = append(claims, name)
		claimSpecRules(t.Get("spec"), p+".spec", add)
	}
	enum(sp.Get("podManagementPolicy"), "spec.podManagementPolicy", add, "OrderedReady", "Parallel")
	enum(sp.Get("updateStrategy").Get("type"), "spec.updateStrategy.type", add, "RollingUpdate", "OnDelete")
	rp := sp.Get("persistentVolumeClaimRetentionPolicy")
	enum(rp.Get("whenDeleted"), "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", add, "Retain", "Delete")
	enum(rp.Get("whenScaled"), "spec.persistentVolumeClaimRetentionPolicy.whenScaled", add, "Retain", "Delete")
	ps, _ := root.Path("spec.template.spec")
	podSpecRules(ps, "spec.template.spec", claims, add, "Always")
}

// claimSpecRules checks the spec of a claim or claim template: access
// modes and a storage request.
func claimSpecRules(sp *node, p string, add func(string, string, ...any)) {
	if sp == nil || sp.Kind != yamlx.MapNode {
		add(p, "required field is missing")
		return
	}
	modes := items(sp.Get("accessModes"))
	if len(modes) == 0 {
		add(p+".accessModes", "at least one access mode is required")
	}
	for i, m := range modes {
		enum(m, fmt.Sprintf("%s.accessModes[%d]", p, i), add, "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
	}
	if sp.Get("dataSource").IsNull() && sp.Get("dataSourceRef").IsNull() && sp.Get("volumeName").IsNull() {
		if st, _ := sp.Path("resources.requests.storage"); st.IsNull() {
			add(p+".resources.requests.storage", "required field is missing")
		}
	}
	enum(sp.Get("volumeMode"), p+".volumeMode", add, "Filesystem", "Block")
}

// cronJobRules checks a CronJob: a schedule the API server parses, its
// concurrency policy and its job's pod template.
func cronJobRules(root *node, add func(string, string, ...any)) {
	sp := root.Get("spec")
	if s := sp.Get("schedule"); s != nil && s.Kind == yamlx.ScalarNode && s.Text() != "" {
		switch {
		case strings.Contains(s.Str, "TZ"):
			add("spec.schedule", "cannot use TZ or CRON_TZ in the schedule: set spec.timeZone")
		default:
			if _, err := cron.ParseStandard(s.Str); err != nil {
				add("spec.schedule", "%q is not a valid cron schedule: %s", s.Str, err)
			}
		}
	}
	enum(sp.Get("concurrencyPolicy"), "spec.concurrencyPolicy", add, "Allow", "Forbid", "Replace")
	podTemplateRules("spec.jobTemplate.spec.template.spec", "OnFailure", "Never")(root, add)
}

// serviceRules checks a Service: named ports when there are several, each
// name and port/protocol once, a known type, and headless only for
// ClusterIP.
func serviceRules(root *node, add func(string, string, ...any)) {
	sp := root.Get("spec")
	typ := sp.Get("type")
	enum(typ, "spec.type", add, "ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
	if sp.Get("clusterIP").Text() == "None" && typ.Text() != "" && typ.Text() != "ClusterIP" {
		add("spec.clusterIP", "may be None (headless) only for type ClusterIP, not %s", typ.Text())
	}
	ports := items(sp.Get("ports"))
	var names, pairs []string
	for i, port := range ports {
		pp := fmt.Sprintf("spec.ports[%d]", i)
		name := port.Get("name").Text()
		switch {
		case name == "" && len(ports) > 1:
			add(pp+".name", "required when a Service has more than one port")
		case name != "" && slices.Contains(names, name):
			add(pp+".name", "duplicate port name %q", name)
		}
		names = append(names, name)
		enum(port.Get("protocol"), pp+".protocol", add, "TCP", "UDP", "SCTP")
		portNumber(port.Get("port"), pp+".port", add)
		proto := port.Get("protocol").Text()
		if proto == "" {
			proto = "TCP"
		}
		pair := port.Get("port").Text() + "/" + proto
		if slices.Contains(pairs, pair) {
			add(pp, "duplicate port %s", pair)
		}
		pairs = append(pairs, pair)
		if tp := port.Get("targetPort"); tp != nil && tp.Tag == yamlx.StrTag {
			for _, msg := range validation.IsValidPortName(tp.Str) {
				add(pp+".targetPort", "%q is not a valid port name: %s", tp.Str, msg)
			}
		} else {
			portNumber(tp, pp+".targetPort", add)
		}
	}
}

// pdbRules checks a PodDisruptionBudget: at most one of minAvailable and
// maxUnavailable, each a count or a percentage.
func pdbRules(root *node, add func(string, string, ...any)) {
	sp := root.Get("spec")
	minA, maxU := sp.Get("minAvailable"), sp.Get("maxUnavailable")
	if !minA.IsNull() && !maxU.IsNull() {
		add("spec", "minAvailable and maxUnavailable cannot both be set")
	}
	for _, f := range []struct {
		n    *node
		name string
	}{{minA, "minAvailable"}, {maxU, "maxUnavailable"}} {
		if f.n == nil || f.n.Kind != yamlx.ScalarNode {
			continue
		}
		switch f.n.Tag {
		case yamlx.IntTag:
			if strings.HasPrefix(f.n.Str, "-") {
				add("spec."+f.name, "must not be negative")
			}
		case yamlx.StrTag:
			v, ok := strings.CutSuffix(f.n.Str, "%")
			if p, err := strconv.Atoi(v); !ok || err != nil || p < 0 || p > 100 {
				add("spec."+f.name, "%q must be a number of pods or a percentage from 0%% to 100%%", f.n.Str)
			}
		}
	}
}

// maxConfigMapSize is the most data a ConfigMap may hold.
const maxConfigMapSize = 1 << 20

// configMapRules checks a ConfigMap's keys (file names: letters, digits,
// '-', '_' and '.'), that no key is in both data and binaryData, and its
// size.
func configMapRules(root *node, add func(string, string, ...any)) {
	seen := map[string]bool{}
	size := 0
	for _, field := range []string{"data", "binaryData"} {
		m := root.Get(field)
		if m == nil || m.Kind != yamlx.MapNode {
			continue
		}
		for i := 0; i < len(m.Kids); i += 2 {
			key := m.Kids[i].Str
			p := field + "." + key
			if len(validation.IsConfigMapKey(key)) > 0 {
				add(p, "%q is not a valid ConfigMap key: at most 253 letters, digits, '-', '_' and '.' (a file name, without '/')", key)
			}
			if seen[key] {
				add(p, "key %q is in both data and binaryData", key)
			}
			seen[key] = true
			if field == "binaryData" {
				size += len(key) + len(m.Kids[i+1].Str)*3/4 // base64
			} else {
				size += len(key) + len(m.Kids[i+1].Str)
			}
		}
	}
	if size > maxConfigMapSize {
		add("data", "the ConfigMap holds %d bytes; at most %d fit (1 MiB)", size, maxConfigMapSize)
	}
}
