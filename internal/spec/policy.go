package spec

// ResourcesFor is a container's resources as its pods get them: its own
// over the defaults of its project (DefaultsFor), quantity by quantity;
// none removes a default and is never in the answer.
func (p *Platform) ResourcesFor(project string, own *Resources) Resources {
	var out Resources
	merge := func(dst **ResourceList, l *ResourceList) {
		if l == nil {
			return
		}
		if *dst == nil {
			*dst = &ResourceList{}
		}
		for _, f := range []struct{ dst, src **Quantity }{{&(*dst).CPU, &l.CPU}, {&(*dst).Memory, &l.Memory}} {
			switch q := *f.src; {
			case q == nil:
			case q.IsNone():
				*f.dst = nil
			default:
				*f.dst = q
			}
		}
	}
	if d := p.DefaultsFor(project); d != nil && d.Resources != nil {
		merge(&out.Requests, d.Resources.Requests)
		merge(&out.Limits, d.Resources.Limits)
	}
	if own != nil {
		merge(&out.Requests, own.Requests)
		merge(&out.Limits, own.Limits)
	}
	return out
}

// The checks of platform.yaml's policy block, by their names there.
const (
	PolicyRequireDigests     = "require_digests"
	PolicyForbidLatest       = "forbid_latest"
	PolicyRequireRequests    = "require_requests"
	PolicyRequireTLS         = "require_tls"
	PolicyRequireProbes      = "require_probes"
	PolicyProductionReplicas = "production_replicas"
)

// Severity is the severity platform.yaml gives a policy check (p may be
// nil): when unset, forbid_latest is an error and the others warn, so that
// a platform team turns each into an error when its fleet is ready.
func (p *Policy) Severity(check string) Severity {
	if check == PolicyForbidLatest {
		return p.ForbidLatestSeverity()
	}
	v := ""
	if p != nil {
		switch check {
		case PolicyRequireDigests:
			v = p.RequireDigests
		case PolicyRequireRequests:
			v = p.RequireRequests
		case PolicyRequireTLS:
			v = p.RequireTLS
		case PolicyRequireProbes:
			v = p.RequireProbes
		case PolicyProductionReplicas:
			v = p.ProductionReplicas
		}
	}
	if v == "" {
		return SeverityWarning
	}
	return Severity(v)
}

// requestSets are the answers of requested, shared: read only.
var requestSets = [4][]string{nil, {"cpu"}, {"memory"}, {"cpu", "memory"}}

// Requested names the resources a container requests: its own over the
// defaults of its project (as ResourcesFor merges them, without building
// the merged lists: it runs on every container).
func (p *Platform) Requested(project string, own *Resources) []string {
	cpu, mem := false, false
	set := func(l *ResourceList) {
		if l == nil {
			return
		}
		if l.CPU != nil {
			cpu = !l.CPU.IsNone()
		}
		if l.Memory != nil {
			mem = !l.Memory.IsNone()
		}
	}
	if d := p.DefaultsFor(project); d != nil && d.Resources != nil {
		set(d.Resources.Requests)
	}
	if own != nil {
		set(own.Requests)
	}
	i := 0
	if cpu {
		i |= 1
	}
	if mem {
		i |= 2
	}
	return requestSets[i]
}

// PolicyOff turns a policy check off.
const PolicyOff Severity = "off"

// DefaultForbidLatest is forbid_latest's severity when platform.yaml does
// not set it.
const DefaultForbidLatest = SeverityError

// ForbidLatestSeverity is the severity platform.yaml gives forbid_latest
// (p may be nil).
func (p *Policy) ForbidLatestSeverity() Severity {
	if p == nil || p.ForbidLatest == "" {
		return DefaultForbidLatest
	}
	return Severity(p.ForbidLatest)
}
