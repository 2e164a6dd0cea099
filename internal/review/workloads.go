package review

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// podSpecPaths are where each workload kind keeps its pod spec.
var podSpecPaths = map[string][]any{
	"Deployment":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":         {"spec"},
}

// longRunning are the workload kinds whose pods run all the time, and so
// count in the resource totals.
var longRunning = map[string]bool{"Deployment": true, "StatefulSet": true}

// Container roles.
const (
	roleMain    = ""        // a container of spec.containers
	roleInit    = "init"    // an init container that runs to completion
	roleSidecar = "sidecar" // an init container with restartPolicy Always: runs beside the others
)

// ctr is one container of a pod template.
type ctr struct {
	role     string
	name     string
	image    string
	cpu, mem resource.Quantity // requests
}

// label names a container in tables: the name, after its role.
func (c ctr) label() string {
	if c.role == roleMain {
		return c.name
	}
	return c.role + " " + c.name
}

// podSpec returns a workload's pod spec, or nil for other kinds.
func podSpec(o object) any {
	p, ok := podSpecPaths[o.Kind]
	if !ok {
		return nil
	}
	return get(o.Obj, p...)
}

// containersOf returns the init containers (and native sidecars) and the
// containers of a workload, in pod order.
func containersOf(o object) []ctr {
	ps := podSpec(o)
	if ps == nil {
		return nil
	}
	var out []ctr
	for _, list := range []string{"initContainers", "containers"} {
		l, _ := get(ps, list).([]any)
		for _, c := range l {
			role := roleMain
			if list == "initContainers" {
				role = roleInit
				if str(get(c, "restartPolicy")) == "Always" {
					role = roleSidecar
				}
			}
			k := ctr{role: role, name: str(get(c, "name")), image: str(get(c, "image"))}
			k.cpu = quantity(get(c, "resources", "requests", "cpu"))
			k.mem = quantity(get(c, "resources", "requests", "memory"))
			out = append(out, k)
		}
	}
	return out
}

// quantity reads a resource quantity; anything else is zero.
func quantity(v any) resource.Quantity {
	switch v := v.(type) {
	case string:
		if q, err := resource.ParseQuantity(v); err == nil {
			return q
		}
	case float64:
		if q, err := resource.ParseQuantity(fmt.Sprint(v)); err == nil {
			return q
		}
	}
	return resource.Quantity{}
}

// podRequests returns what the scheduler reserves for one pod: the larger
// of what its long-running containers (containers and sidecars) request
// together and what each init container needs while it runs (its own
// request plus the sidecars started before it), as Kubernetes computes a
// pod's effective request.
func podRequests(cs []ctr) (cpu, mem resource.Quantity) {
	var sideCPU, sideMem resource.Quantity // sidecars started so far
	var initCPU, initMem resource.Quantity // the largest init-time need
	var runCPU, runMem resource.Quantity   // containers and sidecars
	for _, c := range cs {
		switch c.role {
		case roleSidecar:
			sideCPU.Add(c.cpu)
			sideMem.Add(c.mem)
			runCPU.Add(c.cpu)
			runMem.Add(c.mem)
		case roleInit:
			ic, im := c.cpu.DeepCopy(), c.mem.DeepCopy()
			ic.Add(sideCPU)
			im.Add(sideMem)
			if ic.Cmp(initCPU) > 0 {
				initCPU = ic
			}
			if im.Cmp(initMem) > 0 {
				initMem = im
			}
		default:
			runCPU.Add(c.cpu)
			runMem.Add(c.mem)
		}
	}
	if initCPU.Cmp(runCPU) > 0 {
		runCPU = initCPU
	}
	if initMem.Cmp(runMem) > 0 {
		runMem = initMem
	}
	return runCPU, runMem
}

// replicasOf returns the replicas a workload runs: spec.replicas, else the
// minimum of the HorizontalPodAutoscaler that scales it, else 1.
func replicasOf(o object, all map[string]object) int64 {
	if r, ok := get(o.Obj, "spec", "replicas").(float64); ok {
		return int64(r)
	}
	if h, ok := all[fleet.ObjectKey(o.OnCluster(), "HorizontalPodAutoscaler", o.Namespace, o.Name)]; ok {
		if m, ok := get(h.Obj, "spec", "minReplicas").(float64); ok {
			return int64(m)
		}
	}
	return 1
}

// claimTemplates returns the volume claim templates of a StatefulSet by
// name, with their storage requests.
func claimTemplates(o object) map[string]any {
	out := map[string]any{}
	if o.Kind != "StatefulSet" {
		return out
	}
	l, _ := get(o.Obj, "spec", "volumeClaimTemplates").([]any)
	for _, t := range l {
		out[str(get(t, "metadata", "name"))] = t
	}
	return out
}

// storageOf returns the storage a workload or claim holds: a StatefulSet's
// claim templates times its replicas, a PersistentVolumeClaim's request.
func storageOf(o object, all map[string]object) resource.Quantity {
	var q resource.Quantity
	switch o.Kind {
	case "StatefulSet":
		for _, t := range claimTemplates(o) {
			q.Add(quantity(get(t, "spec", "resources", "requests", "storage")))
		}
		q.Set(q.Value() * replicasOf(o, all))
	case "PersistentVolumeClaim":
		q = quantity(get(o.Obj, "spec", "resources", "requests", "storage"))
	}
	return q
}

// workloadKey pairs a component's workload across a change that renames
// it or changes its kind: a Job's name carries a hash of its template, and
// a workload that gains a persistent volume turns from a Deployment into a
// StatefulSet. Workloads fleetwright labels are keyed by namespace, app,
// component and whether they run once (Job) or on a schedule (CronJob);
// others by kind and name.
func workloadKey(o object) string {
	app, comp := labelOf(o, layout.LabelApp), labelOf(o, layout.LabelComponent)
	if app == "" || comp == "" {
		return o.Key()
	}
	class := "service"
	switch o.Kind {
	case "Job":
		class = "job"
	case "CronJob":
		class = "cronjob"
	}
	return inCluster(o.OnCluster(), class+"/"+o.Namespace+"/"+app+"/"+comp)
}

// workloads returns the objects with a pod template by workloadKey.
func workloads(objs map[string]object) map[string]object {
	out := map[string]object{}
	for _, o := range objs {
		if _, ok := podSpecPaths[o.Kind]; !ok {
			continue
		}
		k := workloadKey(o)
		if prev, ok := out[k]; !ok || o.Key() < prev.Key() {
			out[k] = o
		}
	}
	return out
}
