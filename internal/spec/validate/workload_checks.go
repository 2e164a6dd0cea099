package validate

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time_zone is checked the same on every machine

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// The checks of the fields of real applications (DESIGN.md, "The spec for
// real applications"), each problem at the field it is about. What they
// guarantee, generate relies on: port and ports, health_check and probes
// are not both set; a probe has one handler, on a port its container
// declares; volume names are unique and a path is mounted once; $(NAME)
// names an earlier env entry; files have one of content and from; patches
// parse; job and cronjob fields are only on their types.

// containerPort is a port of a container as the checks see it.
type containerPort struct {
	name        string
	port        int
	protocol    string
	exposed     bool
	servicePort int
	container   load.Path // the container's path
	index       int       // in its ports; -1 for port
}

// at is the port's path: built only for a problem.
func (p containerPort) at() load.Path {
	if p.index < 0 {
		return p.container.Child("port")
	}
	return p.container.Child("ports").Child(p.index)
}

// sameContainer reports whether two ports are of one container.
func (p containerPort) sameContainer(q containerPort) bool {
	return slices.Equal(p.container, q.container)
}

// portsOf returns the ports of a container: port (one TCP port named http)
// or ports.
func portsOf(port int, ports []spec.Port, at load.Path) []containerPort {
	if port > 0 {
		return []containerPort{{name: "http", port: port, protocol: spec.ProtocolTCP, exposed: true, servicePort: port, container: at, index: -1}}
	}
	if len(ports) == 0 {
		return nil
	}
	out := make([]containerPort, 0, len(ports))
	for i, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = spec.ProtocolTCP
		}
		sp := p.ServicePort
		if sp == 0 {
			sp = p.Port
		}
		out = append(out, containerPort{name: p.Name, port: p.Port, protocol: proto, exposed: p.Expose == nil || *p.Expose,
			servicePort: sp, container: at, index: i})
	}
	return out
}

// hasExposedTCP reports whether a workload's own container has an exposed
// TCP port, which an ingress can route to.
func hasExposedTCP(w *spec.WorkloadSpec) bool {
	if w.Port > 0 {
		return true
	}
	for _, p := range w.Ports {
		if (p.Expose == nil || *p.Expose) && (p.Protocol == "" || p.Protocol == spec.ProtocolTCP) {
			return true
		}
	}
	return false
}

// hasTCP reports whether the workload's container declares a TCP port,
// exposed or not.
func hasTCP(w *spec.WorkloadSpec) bool {
	return w.Port > 0 || slices.ContainsFunc(w.Ports, func(p spec.Port) bool { return p.Protocol == "" || p.Protocol == spec.ProtocolTCP })
}

// checkImage checks an image reference and the forbid_latest policy.
func checkImage(doc *load.Document, at load.Path, image string, plat *spec.Platform, ps *load.Problems) {
	if _, err := name.ParseReference(image); err != nil {
		ps.Add(doc, at, "%q is not a valid image reference: %v", image, err)
		return
	}
	if UsesLatestTag(image) {
		// verify's forbid_latest on the fleet, applied to the spec: a
		// tag that moves renders a different image each time.
		switch plat.Policy.ForbidLatestSeverity() {
		case spec.SeverityError:
			ps.Add(doc, at, "%s", ForbidLatestMessage(image))
		case spec.SeverityWarning:
			ps.Warn(doc, at, "%s", ForbidLatestMessage(image))
		}
	}
}

// checkKindFields refuses fields that the component's type does not use.
func checkKindFields(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	isJob := c.Type == spec.TypeJob || c.Type == spec.TypeCronJob
	only := func(set bool, field, msg string) {
		if set {
			ps.AddKey(doc, at.Child(field), "%s", msg)
		}
	}
	if isJob {
		what := "a " + c.Type
		only(w.Ingress != nil, "ingress", what+" runs to completion and takes no ingress; use a workload component")
		only(w.Autoscaling != nil, "autoscaling", what+" takes no autoscaling")
		only(w.Replicas != nil, "replicas", what+" runs one pod at a time and takes no replicas")
		only(w.DisruptionBudget != nil, "disruption_budget", what+"'s pods run to completion and take no disruption_budget")
		only(w.Service != nil, "service", what+" has no Service; use a workload component")
		only(w.HealthCheck != nil, "health_check", what+" takes no health_check; use probes")
		only(w.Strategy != nil, "strategy", what+" runs its pods to completion and takes no strategy")
		only(w.RevisionHistoryLimit != nil, "revision_history_limit", what+" keeps no revisions; use a workload component")
	} else {
		only(w.BackoffLimit != nil, "backoff_limit", "backoff_limit is for job and cronjob components")
		only(w.ActiveDeadlineSeconds != nil, "active_deadline_seconds", "active_deadline_seconds is for job and cronjob components")
		only(w.RestartPolicy != "", "restart_policy", "restart_policy is for job and cronjob components (a workload's pods always restart)")
	}
	if c.Type != spec.TypeCronJob {
		only(w.Schedule != "", "schedule", "schedule is for cronjob components")
		only(w.TimeZone != "", "time_zone", "time_zone is for cronjob components")
		only(w.ConcurrencyPolicy != "", "concurrency_policy", "concurrency_policy is for cronjob components")
		only(w.StartingDeadlineSeconds != nil, "starting_deadline_seconds", "starting_deadline_seconds is for cronjob components")
		only(w.SuccessfulJobsHistoryLimit != nil, "successful_jobs_history_limit", "successful_jobs_history_limit is for cronjob components")
		only(w.FailedJobsHistoryLimit != nil, "failed_jobs_history_limit", "failed_jobs_history_limit is for cronjob components")
		return
	}
	switch {
	case w.Schedule == "" && !doc.Has(at.Child("schedule")):
		ps.Add(doc, at, "a cronjob needs schedule, such as \"0 3 * * *\" (03:00 every day)")
	case w.Schedule != "":
		if m := cronProblem(w.Schedule); m != "" {
			ps.Add(doc, at.Child("schedule"), "%s", m)
		}
	}
	if tz := w.TimeZone; tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" || strings.HasPrefix(tz, "/") {
			ps.Add(doc, at.Child("time_zone"), "%q is not a time zone of the IANA database, such as Europe/Berlin or UTC", tz)
		}
	}
}

// fieldChecks are the checks of one field or a few of a workload, job or
// cronjob that need nothing but the component: each lives in the file of
// its fields and adds itself here (see docs/contributing.md).
var fieldChecks []func(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems)

// checkWorkloadFields checks the fields of real applications of a
// workload, job or cronjob.
func (l *checker) checkWorkloadFields(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w, doc := c.WorkloadSpec, a.Doc
	checkKindFields(doc, c, w, at, ps)
	for _, check := range fieldChecks {
		check(doc, c, w, at, ps)
	}
	checkPolicy(a, c, at, plat, ps)
	checkWorkloadPorts(doc, c, w, at, ps)

	checkEnvRefs(doc, w.Env, at, a.Spec.Env, ps)
	if len(w.EnvFrom) > 0 {
		checkEnvFrom(doc, w.EnvFrom, at.Child("env_from"), ps)
	}
	if len(w.Volumes) == 0 && len(w.Files) == 0 && len(w.InitContainers) == 0 && len(w.Sidecars) == 0 &&
		w.SecurityContext == nil && w.Pod == nil && w.DisruptionBudget == nil && len(w.Patches) == 0 && w.ServiceAccount == nil {
		return // none of the rest is set: the common case costs nothing
	}

	volumes := l.checkVolumes(doc, c, w, at, ps)
	checkMounts(doc, w, at, ps)

	names := map[string]load.Path{c.Name: nil}
	for _, kind := range []string{"init_containers", "sidecars"} {
		list := w.InitContainers
		if kind == "sidecars" {
			list = w.Sidecars
		}
		for i := range list {
			l.checkContainer(a, c, &list[i], kind, at.Child(kind).Child(i), names, volumes, plat, ps)
		}
	}
	if w.SecurityContext != nil {
		checkSecurityContext(doc, w.SecurityContext, at.Child("security_context"), ps)
		checkPodSecurity(doc, w.SecurityContext, at.Child("security_context"), podSecurityProfile(plat, a.Project), ps)
	}
	if w.Pod != nil {
		checkPod(doc, w.Pod, at.Child("pod"), ps)
	}
	checkDisruptionBudget(doc, w, at, ps)
	if len(w.Patches) > 0 {
		checkPatches(doc, a, c, w, at.Child("patches"), ps)
	}
	checkServiceAccount(doc, w, at, ps)
}

// checkWorkloadPorts checks the ports of the workload's container, its
// probes' ports, and the Service made of every container's exposed ports.
func checkWorkloadPorts(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	if w.Port > 0 && len(w.Ports) > 0 {
		ps.AddKey(doc, at.Child("ports"), "set port or ports, not both: port is one TCP port named http, ports lists them all")
	}
	if w.HealthCheck != nil && w.Probes != nil {
		ps.AddKey(doc, at.Child("probes"), "set health_check or probes, not both: health_check is one HTTP check used for readiness and liveness")
	}
	main := portsOf(w.Port, w.Ports, at)
	if w.Port > 0 && len(w.Ports) > 0 {
		checkPorts(doc, portsOf(0, w.Ports, at), ps)
	} else {
		checkPorts(doc, main, ps)
	}
	if len(w.Ports) > 0 {
		if hc := w.HealthCheck; hc != nil && hc.Port > 0 && !slices.ContainsFunc(main, func(p containerPort) bool { return p.port == hc.Port }) {
			ps.Add(doc, at.Child("health_check").Child("port"), "%s", undeclaredPort(hc.Port, main, "the container"))
		}
	}
	if w.Probes != nil {
		checkProbes(doc, w.Probes, main, at.Child("probes"), false, ps)
	}

	// The pod's Service: the exposed ports of every container.
	exposed := main
	if len(w.Sidecars) > 0 || len(w.Ports) > 0 {
		exposed = nil
		for _, p := range main {
			if p.exposed {
				exposed = append(exposed, p)
			}
		}
		for i, s := range w.Sidecars {
			for _, p := range portsOf(0, s.Ports, at.Child("sidecars").Child(i)) {
				if p.exposed {
					exposed = append(exposed, p)
				}
			}
		}
		checkServicePorts(doc, exposed, ps)
	}
	if s := w.Service; s != nil && c.Type == spec.TypeWorkload {
		if s.Name != "" {
			if m := load.CheckLabel(s.Name, 63); m != "" {
				ps.Add(doc, at.Child("service").Child("name"), "%s", m)
			}
		}
		if len(exposed) == 0 && s.Type != spec.ServiceHeadless {
			ps.AddKey(doc, at.Child("service"), "a Service needs an exposed port: add port, or ports without expose: false (only a Headless one may have none)")
		}
	}

}

// checkMounts checks the paths the workload's container mounts: each once,
// volumes mounted somewhere, and nothing mounted inside a file.
func checkMounts(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	mounts := map[string]load.Path{}
	mount := func(p string, where load.Path) {
		if p == "" {
			return
		}
		p = path.Clean(p)
		if prev, dup := mounts[p]; dup {
			ps.Add(doc, where, "%s is already mounted in this container (%s); mount each path once", p, shortPath(prev))
			return
		}
		mounts[p] = where
	}
	for i, v := range w.Volumes {
		if v.MountPath != "" {
			va := at.Child("volumes").Child(i).Child("mount_path")
			if checkMountPath(doc, va, v.MountPath, ps) {
				mount(v.MountPath, va)
			}
		}
	}
	for i, v := range w.Volumes {
		if v.MountPath != "" || v.Name == "" {
			continue
		}
		used := false
		for _, k := range slices.Concat(w.InitContainers, w.Sidecars) {
			used = used || slices.ContainsFunc(k.VolumeMounts, func(m spec.VolumeMount) bool { return m.Name == v.Name })
		}
		if !used {
			ps.Warn(doc, at.Child("volumes").Child(i), "volume %q is mounted nowhere: give it mount_path, or mount it in an init container or sidecar", v.Name)
		}
	}
	checkFiles(doc, w, at, mount, ps)
	// A file is mounted as a file: nothing can be mounted inside it.
	for i, f := range w.Files {
		if f.Path == "" || !strings.HasPrefix(f.Path, "/") {
			continue
		}
		fp := path.Clean(f.Path)
		for p, where := range mounts {
			if strings.HasPrefix(p, fp+"/") {
				ps.Add(doc, where, "%s is inside %s, which files[%d] mounts as a file", p, fp, i)
			}
		}
	}

}

// checkServiceAccount checks the account the pods run as: a valid name,
// and annotations only on one that is created.
func checkServiceAccount(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	if sa := w.ServiceAccount; sa != nil && sa.Name != "" && !load.IsSubdomain(sa.Name) {
		ps.Add(doc, at.Child("service_account").Child("name"), "%q is not a valid ServiceAccount name (a DNS-1123 subdomain)", sa.Name)
	} else if sa != nil && !sa.Create && sa.Name == "" {
		ps.AddKey(doc, at.Child("service_account"), "name the existing ServiceAccount, or set create: true to have one made as <app>-<component>")
	}
	if sa := w.ServiceAccount; sa != nil && !sa.Create && len(sa.Annotations) > 0 {
		ps.AddKey(doc, at.Child("service_account").Child("annotations"), "annotations are set on a created ServiceAccount only; set create: true, or annotate the existing one")
	}
}

// checkPorts refuses ports of one container that share a name, or a
// number and protocol.
func checkPorts(doc *load.Document, ports []containerPort, ps *load.Problems) {
	if len(ports) < 2 && (len(ports) == 0 || ports[0].exposed) {
		return
	}
	for i, p := range ports {
		if !p.exposed && p.servicePort != p.port && doc.Has(p.at().Child("service_port")) {
			ps.AddKey(doc, p.at().Child("service_port"), "is unused: expose: false keeps the port off the Service")
		}
		for _, q := range ports[:i] {
			if p.name != "" && q.name == p.name {
				ps.Add(doc, p.at().Child("name"), "port name %q is used twice in this container (also %s)", p.name, shortPath(q.at()))
				break
			}
		}
		for _, q := range ports[:i] {
			if p.port > 0 && q.port == p.port && q.protocol == p.protocol {
				ps.Add(doc, p.at().Child("port"), "port %d/%s is declared twice in this container (also %s)", p.port, p.protocol, shortPath(q.at()))
				break
			}
		}
	}
}

// checkServicePorts refuses Service ports that share a name or a number and
// protocol, across the containers of the pod (checkPorts tells of those of
// one container).
func checkServicePorts(doc *load.Document, ports []containerPort, ps *load.Problems) {
	for i, p := range ports {
		for _, q := range ports[:i] {
			if p.name != "" && q.name == p.name && !p.sameContainer(q) {
				ps.Add(doc, p.at().Child("name"), "the Service has a port named %q already (%s); name the ports of the pod's containers apart, or set expose: false", p.name, shortPath(q.at()))
				break
			}
		}
		for _, q := range ports[:i] {
			if p.servicePort > 0 && q.servicePort == p.servicePort && q.protocol == p.protocol && !p.sameContainer(q) {
				at := p.at().Child("service_port")
				if !doc.Has(at) {
					at = p.at().Child("port")
				}
				ps.Add(doc, at, "the Service has port %d/%s already (%s); give one a different service_port, or set expose: false", p.servicePort, p.protocol, shortPath(q.at()))
				break
			}
		}
	}
}

// shortPath writes a path inside a workload_spec from there: what a
// message about another field of the same component names.
func shortPath(p load.Path) string {
	if len(p) > 3 && p[0] == "components" && p[2] == "workload_spec" {
		return p[3:].String()
	}
	return p.String()
}

func undeclaredPort(port int, ports []containerPort, who string) string {
	if len(ports) == 0 {
		return fmt.Sprintf("port %d is not declared: %s has no port; declare it in ports (expose: false keeps it off the Service)", port, who)
	}
	var list []string
	for _, p := range ports {
		list = append(list, strconv.Itoa(p.port))
	}
	return fmt.Sprintf("port %d is not a port %s declares (%s); declare it in ports (expose: false keeps it off the Service)", port, who, strings.Join(list, ", "))
}

// posixName is the shape of the variables shells and most programs use.
var posixName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var httpHeaderName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// checkProbes checks the probes of one container whose ports are ports.
func checkProbes(doc *load.Document, pr *spec.Probes, ports []containerPort, at load.Path, initContainer bool, ps *load.Problems) {
	if pr == nil {
		return
	}
	if initContainer {
		ps.AddKey(doc, at, "an init container runs to completion before the others start and takes no probes; probe a sidecar or the main container")
		return
	}
	for _, k := range []struct {
		name string
		p    *spec.Probe
	}{{"readiness", pr.Readiness}, {"liveness", pr.Liveness}, {"startup", pr.Startup}} {
		p := k.p
		if p == nil {
			continue
		}
		pa := at.Child(k.name)
		n := 0
		for _, set := range []bool{p.HTTP != nil, p.GRPC != nil, p.TCP != nil, p.Exec != nil} {
			if set {
				n++
			}
		}
		switch {
		case n == 0:
			ps.Add(doc, pa, "a %s probe needs one of http, grpc, tcp or exec", k.name)
		case n > 1:
			ps.Add(doc, pa, "a %s probe takes one of http, grpc, tcp or exec, not %d", k.name, n)
		}
		if p.SuccessThreshold != nil && *p.SuccessThreshold != 1 && k.name != "readiness" {
			ps.Add(doc, pa.Child("success_threshold"), "must be 1 for a %s probe (Kubernetes allows more only for readiness)", k.name)
		}
		probePort := func(port int, where load.Path) {
			if port == 0 {
				return
			}
			i := slices.IndexFunc(ports, func(cp containerPort) bool { return cp.port == port && cp.protocol != spec.ProtocolUDP })
			switch {
			case i >= 0:
			case slices.ContainsFunc(ports, func(cp containerPort) bool { return cp.port == port }):
				ps.Add(doc, where, "port %d is a UDP port; probes connect over TCP", port)
			default:
				ps.Add(doc, where, "%s", undeclaredPort(port, ports, "the container"))
			}
		}
		if h := p.HTTP; h != nil {
			hp := pa.Child("http")
			if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
				ps.Add(doc, hp.Child("path"), "must start with /")
			}
			if h.Port == 0 && !doc.Has(hp.Child("port")) && !slices.ContainsFunc(ports, func(cp containerPort) bool { return cp.exposed && cp.protocol == spec.ProtocolTCP }) {
				ps.Add(doc, hp, "an http probe needs a port: set http.port, or declare an exposed TCP port")
			}
			probePort(h.Port, hp.Child("port"))
			for _, name := range sortedKeys(h.Headers) {
				if !httpHeaderName.MatchString(name) {
					ps.AddKey(doc, hp.Child("headers").Child(name), "%q is not a valid HTTP header name", name)
				} else if strings.EqualFold(name, "Host") {
					ps.AddKey(doc, hp.Child("headers").Child(name), "the kubelet sets Host from the pod; leave it out")
				}
			}
		}
		if g := p.GRPC; g != nil {
			probePort(g.Port, pa.Child("grpc").Child("port"))
		}
		if t := p.TCP; t != nil {
			probePort(t.Port, pa.Child("tcp").Child("port"))
		}
	}
}

// checkEnvRefs checks the $(NAME) references of literal values: each names
// an earlier entry of the same list. A name no entry has is an error when
// it has the shape of a variable (DB_HOST), a warning when it is only a
// valid Kubernetes name (not-a-ref), and text otherwise ($(date +%s)).
func checkEnvRefs(doc *load.Document, env []spec.EnvVar, container load.Path, inherited []spec.EnvVar, ps *load.Problems) {
	if !slices.ContainsFunc(env, func(e spec.EnvVar) bool { return e.Value != nil && strings.Contains(*e.Value, "$(") }) {
		return
	}
	at := container.Child("env")
	index := map[string]int{}
	for _, e := range inherited {
		index[e.Name] = -1 // the app's entries come before the container's own
	}
	for i, e := range env {
		if _, dup := index[e.Name]; !dup && e.Name != "" {
			index[e.Name] = i
		}
	}
	for i, e := range env {
		if e.Value == nil {
			continue
		}
		for _, ref := range envRefs(*e.Value) {
			j, ok := index[ref]
			switch {
			case !ok && posixName.MatchString(ref):
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names no env entry of this container; Kubernetes expands only earlier entries: add %s before this one, or write $$(%s) for a literal $(%s)", ref, ref, ref, ref)
			case !ok && load.EnvName.MatchString(ref):
				// Not the shape of a variable a shell could name: more
				// likely text than a reference, so a warning.
				ps.Warn(doc, at.Child(i).Child("value"), "$(%s) names no env entry of this container and stays as it is; write $$(%s) to say it is literal text", ref, ref)
			case j == i:
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names this entry itself; write $$(%s) for a literal $(%s)", ref, ref, ref)
			case j > i:
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names env[%d], which comes after this one; Kubernetes expands only earlier entries: move %s up", ref, j, ref)
			}
		}
	}
}

// envRefs returns the names that a value's $(NAME) references name, as
// Kubernetes expands them: $$ is a literal $, and $( without a closing )
// is left as it is.
func envRefs(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		if v[i] != '$' || i+1 >= len(v) {
			continue
		}
		switch v[i+1] {
		case '$':
			i++
		case '(':
			end := strings.IndexByte(v[i+2:], ')')
			if end < 0 {
				return out
			}
			out = append(out, v[i+2:i+2+end])
			i += 2 + end
		}
	}
	return out
}

// checkEnvFrom checks env_from entries: one of config_map and secret each.
func checkEnvFrom(doc *load.Document, list []spec.EnvFrom, at load.Path, ps *load.Problems) {
	for i, e := range list {
		ea := at.Child(i)
		switch {
		case e.ConfigMap == "" && e.Secret == "":
			ps.Add(doc, ea, "needs one of config_map or secret")
		case e.ConfigMap != "" && e.Secret != "":
			ps.Add(doc, ea, "takes one of config_map or secret, not both; list them as two entries")
		case e.ConfigMap != "" && !load.IsSubdomain(e.ConfigMap):
			ps.Add(doc, ea.Child("config_map"), "%q is not a valid ConfigMap name", e.ConfigMap)
		case e.Secret != "" && !load.IsSubdomain(e.Secret):
			ps.Add(doc, ea.Child("secret"), "%q is not a valid Secret name", e.Secret)
		}
		if e.Prefix != "" && !load.EnvName.MatchString(e.Prefix) {
			ps.Add(doc, ea.Child("prefix"), "%q cannot start an environment variable name", e.Prefix)
		}
	}
}

// checkMountPath checks a container path; false means it is not usable.
func checkMountPath(doc *load.Document, at load.Path, p string, ps *load.Problems) bool {
	switch {
	case !strings.HasPrefix(p, "/"):
		ps.Add(doc, at, "%q must be an absolute path, such as /var/lib/data", p)
	case p == "/":
		ps.Add(doc, at, "cannot mount over the container's root")
	case slices.Contains(strings.Split(p, "/"), ".."):
		ps.Add(doc, at, "%q must not contain ..", p)
	default:
		return true
	}
	return false
}

func checkSubPath(doc *load.Document, at load.Path, p string, ps *load.Problems) {
	if p != "" && (path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..")) {
		ps.Add(doc, at, "%q must be a relative path inside the volume, without ..", p)
	}
}

// checkVolumes checks the volumes of a component and returns their names.
func (l *checker) checkVolumes(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) map[string]bool {
	names := map[string]bool{}
	seen := map[string]int{}
	for i, v := range w.Volumes {
		va := at.Child("volumes").Child(i)
		if v.Name != "" {
			if j, dup := seen[v.Name]; dup {
				ps.Add(doc, va.Child("name"), "volume %q is declared twice (also volumes[%d])", v.Name, j)
			} else {
				seen[v.Name] = i
			}
			if m := load.CheckNamespace(v.Name); m != "" {
				ps.Add(doc, va.Child("name"), "%s", m)
			} else if strings.HasPrefix(v.Name, "fleetwright-") {
				ps.Add(doc, va.Child("name"), "volume names starting with fleetwright- are reserved for the volumes fleetwright adds (its files)")
			}
			names[v.Name] = true
		}
		n := 0
		for _, set := range []bool{v.Size != nil, v.Shared != "", v.Claim != "", v.EmptyDir != nil, v.Secret != nil, v.ConfigMap != nil} {
			if set {
				n++
			}
		}
		switch {
		case n == 0:
			ps.Add(doc, va, "volume %q needs one of size (persistent), shared, claim, empty_dir, secret or config_map", v.Name)
		case n > 1:
			ps.Add(doc, va, "volume %q takes one of size (persistent), shared, claim, empty_dir, secret or config_map, not %d", v.Name, n)
		}
		if v.Claim != "" && !load.IsSubdomain(v.Claim) {
			ps.Add(doc, va.Child("claim"), "%q is not a valid PersistentVolumeClaim name", v.Claim)
		}
		if v.Size == nil {
			for _, f := range []struct {
				set   bool
				field string
			}{{v.Retain != nil, "retain"}, {v.StorageClass != "", "storage_class"}, {len(v.AccessModes) > 0, "access_modes"}} {
				switch {
				case f.set && v.Shared != "":
					ps.AddKey(doc, va.Child(f.field), "%s of a shared volume is set on the app's volume %s", f.field, v.Shared)
				case f.set:
					ps.AddKey(doc, va.Child(f.field), "%s is for a persistent volume (one with size)", f.field)
				}
			}
		} else {
			if q, err := v.Size.Parse(); err != nil {
				ps.Add(doc, va.Child("size"), "%q is not a quantity (such as 10Gi)", v.Size.String())
			} else if q.Sign() <= 0 {
				ps.Add(doc, va.Child("size"), "must be more than 0")
			}
			if c.Type != spec.TypeWorkload {
				ps.AddKey(doc, va.Child("size"), "a %s cannot have a persistent volume: claims per replica are a StatefulSet's; use empty_dir, or a workload", c.Type)
			}
			if v.StorageClass != "" && !load.IsSubdomain(v.StorageClass) {
				ps.Add(doc, va.Child("storage_class"), "%q is not a valid StorageClass name", v.StorageClass)
			}
			for k, m := range v.AccessModes {
				if slices.Index(v.AccessModes, m) < k {
					ps.Add(doc, va.Child("access_modes").Child(k), "%s is listed twice", m)
				}
			}
		}
		if e := v.EmptyDir; e != nil && e.SizeLimit != nil {
			if q, err := e.SizeLimit.Parse(); err != nil {
				ps.Add(doc, va.Child("empty_dir").Child("size_limit"), "%q is not a quantity (such as 64Mi)", e.SizeLimit.String())
			} else if q.Sign() <= 0 {
				ps.Add(doc, va.Child("empty_dir").Child("size_limit"), "must be more than 0")
			}
		}
		if s := v.Secret; s != nil {
			if s.Name != "" && !load.IsSubdomain(s.Name) {
				ps.Add(doc, va.Child("secret").Child("name"), "%q is not a valid Secret name", s.Name)
			}
			checkKeyPaths(doc, s.Items, va.Child("secret").Child("items"), ps)
		}
		if s := v.ConfigMap; s != nil {
			if s.Name != "" && !load.IsSubdomain(s.Name) {
				ps.Add(doc, va.Child("config_map").Child("name"), "%q is not a valid ConfigMap name", s.Name)
			}
			checkKeyPaths(doc, s.Items, va.Child("config_map").Child("items"), ps)
		}
		checkSubPath(doc, va.Child("sub_path"), v.SubPath, ps)
		if v.SubPath != "" && v.MountPath == "" {
			ps.AddKey(doc, va.Child("sub_path"), "sub_path applies to mount_path, which is not set")
		}
	}
	return names
}

func checkKeyPaths(doc *load.Document, items []spec.KeyPath, at load.Path, ps *load.Problems) {
	seen := map[string]bool{}
	for i, it := range items {
		if it.Key != "" && !load.SecretKey.MatchString(it.Key) {
			ps.Add(doc, at.Child(i).Child("key"), "%q is not a valid key", it.Key)
		}
		if it.Path != "" {
			if path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
				ps.Add(doc, at.Child(i).Child("path"), "%q must be a relative path without ..", it.Path)
			} else if seen[it.Path] {
				ps.Add(doc, at.Child(i).Child("path"), "%q is used twice", it.Path)
			}
			seen[it.Path] = true
		}
	}
}

// checkFiles checks config files: one of content and from each, absolute
// paths mounted once, a size the ConfigMap holds, no credentials.
func checkFiles(doc *load.Document, w *spec.WorkloadSpec, at load.Path, mount func(string, load.Path), ps *load.Problems) {
	total := 0
	for i, f := range w.Files {
		fa := at.Child("files").Child(i)
		switch {
		case f.Content != nil && f.From != "":
			ps.Add(doc, fa, "file %s takes one of content or from, not both", f.Path)
		case f.Content == nil && f.From == "" && !doc.Has(fa.Child("content")):
			ps.Add(doc, fa, "file %s needs content, or from (a file beside app.yaml)", f.Path)
		}
		if f.Path != "" {
			switch {
			case !strings.HasPrefix(f.Path, "/"):
				// the schema's pattern says it
			case strings.HasSuffix(f.Path, "/") || path.Clean(f.Path) != f.Path:
				ps.Add(doc, fa.Child("path"), "%q must be a clean path to a file, such as %s", f.Path, strings.TrimSuffix(path.Clean(f.Path), "/"))
			default:
				mount(f.Path, fa.Child("path"))
			}
		}
		if f.Content != nil {
			total += len(*f.Content)
			if m := load.ContentSecret(*f.Content); m != "" {
				ps.Add(doc, fa.Child("content"), "%s", m)
			}
		}
		if f.Path != "" && (f.Content != nil || f.From != "") && secretscan.IsCredentialName(path.Base(f.Path)) {
			ps.Add(doc, fa.Child("path"), "file %s looks like a credential, and files are kept in Git; mount it from a Secret (volumes: [{…, secret: {name: <secret>}}]) instead", path.Base(f.Path))
		}
	}
	if total > load.MaxComponentFiles {
		ps.AddKey(doc, at.Child("files"), "the files hold %d bytes together; their ConfigMap holds at most about 1 MiB: mount big files from a volume", total)
	}
}

// checkContainer checks an init container or a sidecar.
func (l *checker) checkContainer(a *load.LoadedApp, c *spec.Component, k *spec.Container, kind string, at load.Path, names map[string]load.Path, volumes map[string]bool, plat *spec.Platform, ps *load.Problems) {
	doc := a.Doc
	if k.Name != "" {
		switch prev, dup := names[k.Name]; {
		case dup && prev == nil:
			ps.Add(doc, at.Child("name"), "%q is the name of the component's own container; name this one apart", k.Name)
		case dup:
			ps.Add(doc, at.Child("name"), "container %q is declared twice in the pod (also %s)", k.Name, shortPath(prev))
		default:
			names[k.Name] = at
		}
		if m := load.CheckNamespace(k.Name); m != "" {
			ps.Add(doc, at.Child("name"), "%s", m)
		}
	}
	if k.Image != "" {
		checkImage(doc, at.Child("image"), k.Image, plat, ps)
	}
	ports := portsOf(0, k.Ports, at)
	checkPorts(doc, ports, ps)
	if kind == "init_containers" {
		for _, p := range ports {
			if p.exposed {
				ps.Add(doc, p.at(), "an init container stops before the pod serves; its port cannot be on the Service: set expose: false, or move it to a sidecar")
			}
		}
	}
	checkProbes(doc, k.Probes, ports, at.Child("probes"), kind == "init_containers", ps)
	checkResources(k.Resources, doc, at.Child("resources"), true, ps)
	checkSecurityContext(doc, k.SecurityContext, at.Child("security_context"), ps)
	checkPodSecurity(doc, k.SecurityContext, at.Child("security_context"), podSecurityProfile(plat, a.Project), ps)
	checkWords(doc, at, k.Command, k.Args, ps)
	l.checkEnvList(a, c, k.Env, at.Child("env"), plat, ps)
	checkEnvRefs(doc, k.Env, at, nil, ps)
	checkEnvFrom(doc, k.EnvFrom, at.Child("env_from"), ps)
	mounts := map[string]load.Path{}
	known := slices.Sorted(mapKeys(volumes))
	for i, m := range k.VolumeMounts {
		ma := at.Child("volume_mounts").Child(i)
		if m.Name != "" && !volumes[m.Name] {
			msg := fmt.Sprintf("no volume %q in the component's volumes", m.Name)
			if sug := load.Suggest(m.Name, known); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else if len(known) > 0 {
				msg += "; volumes: " + strings.Join(known, ", ")
			}
			ps.Add(doc, ma.Child("name"), "%s", msg)
		}
		checkSubPath(doc, ma.Child("sub_path"), m.SubPath, ps)
		if m.MountPath == "" || !checkMountPath(doc, ma.Child("mount_path"), m.MountPath, ps) {
			continue
		}
		p := path.Clean(m.MountPath)
		if prev, dup := mounts[p]; dup {
			ps.Add(doc, ma.Child("mount_path"), "%s is already mounted in this container (%s); mount each path once", p, shortPath(prev))
		} else {
			mounts[p] = ma.Child("mount_path")
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(mapKeys(m)) }

var capabilityName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// foldCapability is a capability as Kubernetes names it: upper case,
// without CAP_. The checks compare names folded, so that one word written
// another way (all, cap_net_raw) is one problem, not one per check.
func foldCapability(c string) string {
	u := strings.ToUpper(c)
	return strings.TrimPrefix(u, "CAP_")
}

// checkSecurityContext checks a container's security settings.
func checkSecurityContext(doc *load.Document, s *spec.SecurityContext, at load.Path, ps *load.Problems) {
	if s == nil {
		return
	}
	if s.RunAsNonRoot != nil && *s.RunAsNonRoot && s.RunAsUser != nil && *s.RunAsUser == 0 {
		ps.Add(doc, at.Child("run_as_user"), "user 0 is root, which run_as_non_root: true refuses to start")
	}
	if s.Capabilities != nil {
		for _, list := range []struct {
			field string
			caps  []string
		}{{"add", s.Capabilities.Add}, {"drop", s.Capabilities.Drop}} {
			for i, cp := range list.caps {
				ca := at.Child("capabilities").Child(list.field).Child(i)
				switch folded := foldCapability(cp); {
				case strings.HasPrefix(strings.ToUpper(cp), "CAP_") && capabilityName.MatchString(folded):
					ps.Add(doc, ca, "write %s without CAP_, as Kubernetes names capabilities", folded)
				case cp != folded && capabilityName.MatchString(folded):
					ps.Add(doc, ca, "write %s in upper case, as Kubernetes names capabilities", folded)
				case !capabilityName.MatchString(cp):
					ps.Add(doc, ca, "%q is not a capability name, such as NET_BIND_SERVICE or ALL", cp)
				case slices.Index(list.caps, cp) < i:
					ps.Add(doc, ca, "%s is listed twice", cp)
				}
			}
		}
		for i, cp := range s.Capabilities.Add {
			if slices.Contains(s.Capabilities.Drop, cp) && cp != "ALL" {
				ps.Add(doc, at.Child("capabilities").Child("add").Child(i), "%s is both added and dropped", cp)
			}
		}
	}
}

var (
	qualifiedName = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValue    = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// labelKeyProblem says why k is not a label or annotation key, or "".
func labelKeyProblem(k string) string {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		name, prefix = prefix, ""
	}
	switch {
	case ok && (prefix == "" || !load.IsSubdomain(prefix)):
		return fmt.Sprintf("%q has a prefix that is not a DNS subdomain", k)
	case len(name) > 63 || !qualifiedName.MatchString(name):
		return fmt.Sprintf("%q is not a valid key: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, after an optional DNS prefix and /", k)
	}
	return ""
}

// checkPod checks the pod settings.
func checkPod(doc *load.Document, p *spec.Pod, at load.Path, ps *load.Problems) {
	if p == nil {
		return
	}
	for _, set := range []struct {
		field  string
		m      map[string]string
		values bool
	}{{"labels", p.Labels, true}, {"node_selector", p.NodeSelector, true}, {"annotations", p.Annotations, false}} {
		for _, k := range sortedKeys(set.m) {
			ka := at.Child(set.field).Child(k)
			switch {
			case set.field == "labels" && layout.ReservedLabel(k):
				// generate keeps its own: the pods are selected and
				// tracked by them.
				ps.WarnKey(doc, ka, "%s is fleetwright's own label, which selects and tracks the pods; this value is ignored: choose another key", k)
			case set.field == "annotations" && layout.ReservedLabel(k):
				ps.WarnKey(doc, ka, "%s is in fleetwright's own prefix, whose annotations it sets itself; choose another key", k)
			case labelKeyProblem(k) != "":
				ps.AddKey(doc, ka, "%s", labelKeyProblem(k))
			case set.values && (len(set.m[k]) > 63 || !labelValue.MatchString(set.m[k])):
				ps.Add(doc, ka, "%q is not a valid label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit", set.m[k])
			}
		}
	}
	for i, t := range p.Tolerations {
		ta := at.Child("tolerations").Child(i)
		switch {
		case t.Operator == "Exists" && t.Value != "":
			ps.Add(doc, ta.Child("value"), "operator Exists matches any value; leave value out, or use operator Equal")
		case t.Operator != "Exists" && t.Key == "":
			ps.Add(doc, ta, "operator Equal needs a key; to tolerate every taint, use operator: Exists without a key")
		}
		if t.Key != "" && labelKeyProblem(t.Key) != "" {
			ps.Add(doc, ta.Child("key"), "%s", labelKeyProblem(t.Key))
		}
		if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
			ps.AddKey(doc, ta.Child("toleration_seconds"), "toleration_seconds applies to effect NoExecute only")
		}
	}
	if p.PriorityClass != "" && !load.IsSubdomain(p.PriorityClass) {
		ps.Add(doc, at.Child("priority_class"), "%q is not a valid PriorityClass name", p.PriorityClass)
	}
}

// checkDisruptionBudget checks a workload's disruption budget.
func checkDisruptionBudget(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	b := w.DisruptionBudget
	if b == nil {
		return
	}
	ba := at.Child("disruption_budget")
	switch {
	case b.MaxUnavailable == nil && b.MinAvailable == nil:
		ps.Add(doc, ba, "needs one of max_unavailable or min_available")
		return
	case b.MaxUnavailable != nil && b.MinAvailable != nil:
		ps.Add(doc, ba, "takes one of max_unavailable or min_available, not both")
		return
	}
	for _, f := range []struct {
		field string
		v     *spec.IntOrPercent
	}{{"max_unavailable", b.MaxUnavailable}, {"min_available", b.MinAvailable}} {
		if f.v == nil {
			continue
		}
		checkIntOrPercent(doc, ba.Child(f.field), f.v, true, ps)
	}
	if n, ok := b.MaxUnavailable.IntValue(); ok && n == 0 || b.MaxUnavailable != nil && b.MaxUnavailable.String() == "0%" {
		ps.Warn(doc, ba.Child("max_unavailable"), "0 blocks every node drain until the budget changes")
	}
	if n, ok := b.MinAvailable.IntValue(); ok && w.Autoscaling == nil {
		replicas := 1
		if w.Replicas != nil {
			replicas = int(*w.Replicas)
		}
		if n >= replicas && replicas > 0 {
			ps.Warn(doc, ba.Child("min_available"), "%d of %d replicas blocks every node drain; keep it below the replicas", n, replicas)
		}
	}
}
